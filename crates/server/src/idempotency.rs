//! `Idempotency-Key` on the POSTs that start work (run starts, thread create, fork, Standby open and
//! messages, run messages, approval answers): a retried request replays the first answer instead of
//! doing the work twice.
//!
//! The middleware sits inside the `/v1` auth guard, so keys are per tenant. A request with the header
//! claims `(tenant, key)` in the store ([`crate::store::idempotency`]) with the SHA-256 of its method,
//! path and canonical JSON body (keys sorted, whitespace dropped), then:
//! * it won the claim: the handler runs; a 2xx JSON answer (status, `Content-Type`, `Location`, body) is
//!   stored for [`KEEP`] and sent; any other answer releases the key, so the client may retry;
//! * the same request completed before: the stored answer is replayed with `Idempotent-Replayed: true`;
//! * a different request used the key: 422 `idempotency_mismatch`;
//! * the same request is still in flight: 409 `idempotency_in_progress` with `Retry-After: 1`. A claim
//!   neither completed nor released within [`CLAIM_LAPSE`] (its process died) lapses.
//!
//! The retention task purges keys older than [`KEEP`] hourly.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::AppState;
use super::auth::Tenant;
use super::error::{ApiError, ErrorCode};
use crate::store::{ClaimOutcome, IdempotencyClaim, StoredAnswer};

/// The request header.
pub const HEADER: &str = "idempotency-key";
/// The header of a replayed answer.
pub const REPLAYED: &str = "idempotent-replayed";
/// How long an uncompleted claim holds its key.
pub const CLAIM_LAPSE: Duration = Duration::from_secs(120);
/// How long a completed key is kept and replayed.
pub const KEEP: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest key accepted.
pub const MAX_KEY_LEN: usize = 255;

/// The route templates whose POST honours the header.
pub const ROUTES: &[&str] = &[
    "/v1/agents/{agent}/runs",
    "/v1/agents/{agent}/threads/{key}/runs",
    "/v1/agents/{agent}/threads",
    "/v1/agents/{agent}/threads/{key}/fork",
    "/v1/agents/{agent}/threads/{key}/standby",
    "/v1/agents/{agent}/threads/{key}/standby/messages",
    "/v1/runs/{run_id}/messages",
    "/v1/runs/{run_id}/approvals/{id}",
    "/v1/webhooks",
];

/// The key of a request, if it has one; 422 for a malformed one.
fn key_of(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let Some(raw) = headers.get(HEADER) else {
        return Ok(None);
    };
    let bad = || {
        ApiError::invalid(
            "Idempotency-Key",
            format!("Idempotency-Key must be 1 to {MAX_KEY_LEN} visible ASCII characters"),
        )
    };
    let key = raw.to_str().map_err(|_| bad())?;
    if key.is_empty() || key.len() > MAX_KEY_LEN || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad());
    }
    Ok(Some(key.to_owned()))
}

/// The SHA-256 (hex) of the method, the path with its query, and the body in canonical form (JSON
/// re-serialized with sorted keys; anything else as sent).
pub fn request_hash(method: &Method, path: &str, body: &[u8]) -> String {
    let canonical = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| serde_json::to_vec(&v).ok())
        .unwrap_or_else(|| body.to_vec());
    let mut h = Sha256::new();
    h.update(method.as_str().as_bytes());
    h.update(b"\n");
    h.update(path.as_bytes());
    h.update(b"\n");
    h.update(&canonical);
    hex::encode(h.finalize())
}

/// True when `e` or one of its sources is a body over the length limit.
fn too_large(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut at = Some(e);
    while let Some(err) = at {
        if err.to_string().contains("length limit exceeded") {
            return true;
        }
        at = err.source();
    }
    false
}

/// The request body, read under the body limit, with the errors the JSON extractors give.
async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let inner = e.into_inner();
        if super::extract::timed_out(inner.as_ref()) {
            ApiError::new(
                ErrorCode::BodyTimeout,
                "the request body did not arrive within the body read timeout",
            )
        } else if too_large(inner.as_ref()) {
            ApiError::new(
                ErrorCode::BodyTooLarge,
                format!("the request body is larger than {limit} bytes"),
            )
        } else {
            ApiError::new(ErrorCode::UnreadableBody, "the request body could not be read")
        }
    })
}

/// The middleware (a route layer inside [`super::auth::guard`]).
pub async fn guard(State(state): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let honoured = req.method() == Method::POST
        && req
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| ROUTES.contains(&p.as_str()));
    if !honoured {
        return next.run(req).await;
    }
    let key = match key_of(req.headers()) {
        Ok(Some(key)) => key,
        Ok(None) => return next.run(req).await,
        Err(e) => return e.into_response(),
    };
    let Some(tenant) = req.extensions().get::<Tenant>().cloned() else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let bytes = match read_body(body, state.config.body_limit).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    let path = parts
        .uri
        .path_and_query()
        .map_or(parts.uri.path(), |p| p.as_str());
    let claim = IdempotencyClaim {
        tenant: tenant.as_str().to_owned(),
        key,
        request_hash: request_hash(&parts.method, path, &bytes),
        token: uuid::Uuid::new_v4().simple().to_string(),
        at: crate::store::now(),
        lapse: CLAIM_LAPSE,
        keep: KEEP,
    };
    match state.store.claim_idempotency(&claim).await {
        Err(e) => ApiError::store(e).into_response(),
        Ok(ClaimOutcome::Claimed) => {
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            finish(&state, &claim, response).await
        }
        Ok(ClaimOutcome::Completed(answer)) => replay(answer),
        Ok(ClaimOutcome::Mismatch) => ApiError::new(
            ErrorCode::IdempotencyMismatch,
            "this Idempotency-Key was used for a different request",
        )
        .field("Idempotency-Key")
        .into_response(),
        Ok(ClaimOutcome::InProgress) => {
            let mut e = ApiError::new(
                ErrorCode::IdempotencyInProgress,
                "a request with this Idempotency-Key is still in progress",
            );
            e.retry_after = Some(1);
            e.into_response()
        }
    }
}

/// Stores a 2xx JSON answer under the claim, or releases the key; sends the answer either way.
async fn finish(state: &AppState, claim: &IdempotencyClaim, response: Response) -> Response {
    let header_text = |h: &HeaderMap, name: header::HeaderName| {
        h.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    };
    let content_type = header_text(response.headers(), header::CONTENT_TYPE);
    let json = content_type
        .as_deref()
        .is_some_and(|c| c.starts_with("application/json"));
    if !response.status().is_success() || !json {
        release(state, claim).await;
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, usize::MAX).await {
        Ok(b) => b,
        Err(e) => {
            release(state, claim).await;
            let id = super::error::log_internal_error("could not read an idempotent answer", &e);
            return ApiError::store_failure(format!("the answer could not be recorded (error id {id})"))
                .into_response();
        }
    };
    let answer = StoredAnswer {
        status: parts.status.as_u16(),
        content_type,
        location: header_text(&parts.headers, header::LOCATION),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    let stored = state
        .store
        .complete_idempotency(&claim.tenant, &claim.key, &claim.token, &answer)
        .await;
    match stored {
        Ok(true) => {}
        Ok(false) => tracing::warn!("an idempotency claim lapsed before its answer was stored"),
        Err(e) => {
            tracing::warn!(error = %e, "could not store an idempotent answer");
            release(state, claim).await;
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Frees the key after an answer that is not replayed.
async fn release(state: &AppState, claim: &IdempotencyClaim) {
    if let Err(e) = state
        .store
        .release_idempotency(&claim.tenant, &claim.key, &claim.token)
        .await
    {
        tracing::warn!(error = %e, "could not release an idempotency key; its claim lapses");
    }
}

/// The stored answer, marked as a replay.
fn replay(answer: StoredAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let mut response = (status, answer.body).into_response();
    let headers = response.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    for (name, value) in [
        (header::CONTENT_TYPE, answer.content_type),
        (header::LOCATION, answer.location),
    ] {
        if let Some(v) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            headers.insert(name, v);
        }
    }
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_ignores_key_order_and_whitespace_but_not_the_path() {
        let a = request_hash(&Method::POST, "/v1/x", br#"{"a":1,"b":[1,2]}"#);
        let b = request_hash(&Method::POST, "/v1/x", b"{ \"b\": [1, 2], \"a\": 1 }");
        assert_eq!(a, b);
        assert_ne!(a, request_hash(&Method::POST, "/v1/y", br#"{"a":1,"b":[1,2]}"#));
        assert_ne!(a, request_hash(&Method::POST, "/v1/x", br#"{"a":2,"b":[1,2]}"#));
    }

    #[test]
    fn keys_are_visible_ascii_of_bounded_length() {
        let mut h = HeaderMap::new();
        assert_eq!(key_of(&h).unwrap(), None);
        h.insert(HEADER, HeaderValue::from_static("abc-123"));
        assert_eq!(key_of(&h).unwrap().as_deref(), Some("abc-123"));
        h.insert(HEADER, HeaderValue::from_static("a b"));
        assert_eq!(key_of(&h).unwrap_err().code.as_str(), "invalid_request");
        h.insert(HEADER, HeaderValue::from_str(&"k".repeat(256)).unwrap());
        assert_eq!(key_of(&h).unwrap_err().code.as_str(), "invalid_request");
    }
}
