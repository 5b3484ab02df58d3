//! Strict JSON request bodies: a size limit, `application/json` only, unknown fields refused, and errors
//! that name the offending field.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A JSON body parsed strictly into `T` (which should `deny_unknown_fields`).
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

/// Parses `bytes` as `T`, mapping a serde error to `400 invalid_json` with the field when serde names one.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let msg = e.to_string();
        let mut err = ApiError::new(StatusCode::BAD_REQUEST, "invalid_json", msg.clone());
        if let Some(field) = msg.split('`').nth(1)
            && (msg.starts_with("unknown field") || msg.starts_with("missing field"))
        {
            err = err.field(field);
        }
        err
    })
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json") || v.contains("+json"));
        if !json {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "expected Content-Type: application/json",
            ));
        }
        let bytes = Bytes::from_request(req, state).await?;
        let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
            Bytes::from_static(b"{}")
        } else {
            bytes
        };
        parse(&bytes).map(JsonBody)
    }
}
