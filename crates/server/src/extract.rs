//! Request extractors whose rejections are the service's one JSON error shape ([`ApiError`]) instead of
//! axum's plain-text bodies: [`Query`] (400 `invalid_query`), [`Path`] (400 `invalid_path`) and
//! [`RawBody`] (413 `body_too_large`, 408 `body_timeout`, 400 `unreadable_body`). Every path parameter is
//! also an identifier ([`check_id`]: 1 to 512 bytes, no NUL; else 422 naming it). Handlers import these in
//! place of `axum::extract::{Query, Path}`, so a malformed query string or path segment answers like every other
//! failure. Strict JSON bodies are [`super::body::JsonBody`].

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use super::error::{ApiError, ErrorCode};

/// A query string parsed into `T`; a malformed one is `400 invalid_query`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<T>(pub T);

/// Path parameters parsed into `T`; a malformed one (e.g. invalid UTF-8) is `400 invalid_path`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Path<T>(pub T);

/// The raw request body; one over the body limit is `413 body_too_large`.
#[derive(Debug, Clone, Default)]
pub struct RawBody(pub Bytes);

/// The longest identifier a request may name (thread keys, run, approval and AG-UI ids, agent names):
/// the store's indexes take it on every backend.
pub const MAX_ID: usize = 512;

/// Refuses an identifier that no store can hold alike: empty, longer than [`MAX_ID`] bytes, or with NUL
/// (U+0000) — 422 `invalid_request` naming `field`.
pub fn check_id(field: &str, value: &str) -> Result<(), ApiError> {
    if value.is_empty() || value.len() > MAX_ID {
        return Err(ApiError::invalid(
            field,
            format!("{field} must be 1 to {MAX_ID} bytes"),
        ));
    }
    if value.contains('\0') {
        return Err(ApiError::invalid(
            field,
            format!("{field} must not contain NUL (U+0000)"),
        ));
    }
    Ok(())
}

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
        let err = ApiError::new(ErrorCode::InvalidQuery, message.clone());
        match field_of(&message) {
            Some(f) => err.field(f),
            None => err,
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> Self {
        if e.status().is_server_error() {
            // A route whose path parameters do not fit its handler: the service's fault, logged.
            return ApiError::internal("a path did not fit its route", &e.body_text());
        }
        ApiError::new(ErrorCode::InvalidPath, e.body_text())
    }
}

/// True when `e` or one of its sources is the connection's body deadline.
pub(super) fn timed_out(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(err) = at {
        if err.is::<super::conn_io::BodyTimedOut>() {
            return true;
        }
        at = err.source();
    }
    false
}

impl From<BytesRejection> for ApiError {
    fn from(e: BytesRejection) -> Self {
        if timed_out(&e) {
            return ApiError::new(
                ErrorCode::BodyTimeout,
                "the request body did not arrive within the body read timeout",
            );
        }
        let code = if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ErrorCode::BodyTooLarge
        } else {
            ErrorCode::UnreadableBody
        };
        ApiError::new(code, e.body_text())
    }
}

/// Percent-decodes one `application/x-www-form-urlencoded` component (`+` is a space); `None` when the
/// bytes are not UTF-8 (axum's own decoding would replace them with U+FFFD and go on).
fn form_decode(component: &str) -> Option<String> {
    let raw = component.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match raw[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < raw.len() => {
                let hex = std::str::from_utf8(&raw[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// Refuses a query string whose keys or values do not percent-decode to UTF-8 (`?after=%FF`):
/// `400 invalid_query` naming the key.
fn strict_query(query: &str) -> Result<(), ApiError> {
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let name = form_decode(key);
        if name.is_none() || form_decode(value).is_none() {
            let err = ApiError::new(
                ErrorCode::InvalidQuery,
                "the query string does not percent-decode to UTF-8",
            );
            return Err(match name {
                Some(n) => err.field(n),
                None => err,
            });
        }
    }
    Ok(())
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        strict_query(parts.uri.query().unwrap_or_default())?;
        let axum::extract::Query(v) = axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(Query(v))
    }
}

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let axum::extract::Path(v) = axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        if let Ok(raw) = axum::extract::RawPathParams::from_request_parts(parts, state).await {
            for (name, value) in &raw {
                check_id(name, value)?;
            }
        }
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

    #[test]
    fn queries_decode_strictly() {
        use super::{form_decode, strict_query};
        assert_eq!(form_decode("a+b%20c%2B").as_deref(), Some("a b c+"));
        assert_eq!(form_decode("%e2%82%ac").as_deref(), Some("€"));
        assert_eq!(form_decode("100%").as_deref(), Some("100%"));
        assert_eq!(form_decode("%4").as_deref(), Some("%4"));
        assert_eq!(form_decode("%zz").as_deref(), Some("%zz"));
        assert_eq!(form_decode("%FF"), None);
        assert_eq!(form_decode("%C3%28"), None);
        assert!(strict_query("after=1&limit=2").is_ok());
        assert_eq!(
            strict_query("limit=2&after=%FF").unwrap_err().field.as_deref(),
            Some("after")
        );
        assert_eq!(strict_query("%FF=1").unwrap_err().field, None);
    }
}
