//! Request extractors whose rejections are the service's one JSON error shape ([`ApiError`]) instead of
//! axum's plain-text bodies: [`Query`] (400 `invalid_query`), [`Path`] (400 `invalid_path`) and
//! [`RawBody`] (413 `body_too_large`, 400 `unreadable_body`). Handlers import these in place of
//! `axum::extract::{Query, Path}`, so a malformed query string or path segment answers like every other
//! failure. Strict JSON bodies are [`super::body::JsonBody`].

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// A query string parsed into `T`; a malformed one is `400 invalid_query`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<T>(pub T);

/// Path parameters parsed into `T`; a malformed one (e.g. invalid UTF-8) is `400 invalid_path`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Path<T>(pub T);

/// The raw request body; one over the body limit is `413 body_too_large`.
#[derive(Debug, Clone, Default)]
pub struct RawBody(pub Bytes);

/// The field named in a serde message (`unknown field `x``, `x: invalid digit …`), when there is one.
fn field_of(message: &str) -> Option<String> {
    if let Some(rest) = message.split("unknown field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    if let Some(rest) = message.split("missing field `").nth(1) {
        return rest.split('`').next().map(str::to_owned);
    }
    // axum reports `Failed to deserialize query string: <field>: <why>`.
    let tail = message.split_once(": ").map(|(_, t)| t)?;
    let (field, _) = tail.split_once(": ")?;
    (!field.is_empty()
        && field
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.'))
    .then(|| field.to_owned())
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> Self {
        let message = e.body_text();
        let err = ApiError::new(StatusCode::BAD_REQUEST, "invalid_query", message.clone());
        match field_of(&message) {
            Some(f) => err.field(f),
            None => err,
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        let status = e.status();
        let code = if status.is_server_error() {
            "internal_error"
        } else {
            "invalid_path"
        };
        ApiError::new(status, code, e.body_text())
    }
}

impl From<BytesRejection> for ApiError {
    fn from(e: BytesRejection) -> Self {
        let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            "body_too_large"
        } else {
            "unreadable_body"
        };
        ApiError::new(e.status(), code, e.body_text())
    }
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Query(v) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(Query(v))
    }
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(v) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(Path(v))
    }
}

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Ok(RawBody(Bytes::from_request(req, state).await?))
    }
}

#[cfg(test)]
mod tests {
    use super::field_of;

    #[test]
    fn the_field_is_found_in_serde_and_axum_messages() {
        assert_eq!(
            field_of("Failed to deserialize query string: limit: invalid digit found in string").as_deref(),
            Some("limit")
        );
        assert_eq!(
            field_of("Failed to deserialize query string: unknown field `foo`, expected `after`").as_deref(),
            Some("foo")
        );
        assert_eq!(field_of("Failed to deserialize query string"), None);
    }
}
