//! The one JSON error body of the service: `{"error":{"code","message","field"?}}` with a stable machine code
//! per failure and the matching HTTP status.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::views::{ErrorBody, ErrorDetail};
use crate::runtime::{ApprovalError, MessageError, MessageErrorKind};
use crate::store::StoreError;

/// Logs a store failure's own text (SQL, table and index names, database messages) under a fresh error id
/// and returns the id: clients are told the code and the id, never the text. Every path that reports a
/// store failure to a client (error bodies, SSE and AG-UI notices) goes through here.
pub fn log_store_failure(what: &str, error: &dyn std::fmt::Display) -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    tracing::error!(error_id = %id, error = %error, "{what}");
    id
}

/// A failure answered as the JSON error body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable machine code (`not_found`, `invalid_json`, `thread_busy`, ...).
    pub code: &'static str,
    /// A human-readable message.
    pub message: String,
    /// The offending request field, when one is known.
    pub field: Option<String>,
    /// Seconds to wait before retrying (429, 503).
    pub retry_after: Option<u64>,
    /// The `WWW-Authenticate` challenge of a 401.
    pub challenge: Option<String>,
}

impl ApiError {
    /// An error with `status`, `code` and `message`.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            field: None,
            retry_after: None,
            challenge: None,
        }
    }

    /// 401 `unauthorized` with a Bearer challenge (`error="invalid_token"` when a key was presented).
    pub fn unauthorized(message: impl Into<String>, presented: bool) -> Self {
        let mut e = ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message);
        e.challenge = Some(if presented {
            r#"Bearer realm="agent-adaptor", error="invalid_token""#.to_owned()
        } else {
            r#"Bearer realm="agent-adaptor""#.to_owned()
        });
        e
    }

    /// 429 with `code` and `Retry-After: retry_after` seconds (at least 1).
    pub fn too_many(code: &'static str, message: impl Into<String>, retry_after: u64) -> Self {
        let mut e = ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, message);
        e.retry_after = Some(retry_after.max(1));
        e
    }

    /// Names the offending field.
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// 404 `not_found`.
    pub fn not_found(what: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, "not_found", what)
    }

    /// 422 `invalid_request` about `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", message).field(field)
    }

    /// 503 `shutting_down`.
    pub fn shutting_down() -> Self {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "shutting_down",
            "the service is shutting down",
        );
        e.retry_after = Some(1);
        e
    }

    /// 503 `capacity_exhausted`: `max` runs are admitted across tenants; `Retry-After: 5`.
    pub fn capacity_exhausted(max: usize) -> Self {
        let mut e = ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "capacity_exhausted",
            format!("this replica runs {max} run(s) already (max_active); retry later"),
        );
        e.retry_after = Some(5);
        e
    }

    /// A store failure: unavailable -> 503, otherwise 500.
    pub fn store(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::not_found(e.to_string()),
            StoreError::Unavailable { .. } => {
                let id = log_store_failure("the store is unavailable", &e);
                let mut err = ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    format!("the store is unavailable; retry (error id {id})"),
                );
                err.retry_after = Some(1);
                err
            }
            // The store refused a value the edge let through: input, not a server error.
            StoreError::Invalid { .. } => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid_request", e.to_string())
            }
            // The store's own text (SQL, table and index names, database messages) goes to the log
            // under an error id; the client gets the code and the id.
            other => {
                let id = log_store_failure("a store operation failed", &other);
                ApiError::store_failure(format!("the store failed; see the service log (error id {id})"))
            }
        }
    }

    /// 500 `store_error`: the store failed or holds something unreadable.
    pub fn store_failure(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "store_error", message)
    }

    /// 405 `method_not_allowed`: the route exists, not with this method.
    pub fn method_not_allowed() -> Self {
        ApiError::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this route does not answer this method",
        )
    }

    /// An approval answer refused: duplicate 409, expired 410, wrong kind 422, no responder 409.
    pub fn approval(e: &ApprovalError) -> Self {
        match e {
            ApprovalError::Resolved => {
                ApiError::new(StatusCode::CONFLICT, "approval_resolved", e.to_string())
            }
            ApprovalError::Expired => ApiError::new(StatusCode::GONE, "approval_expired", e.to_string()),
            ApprovalError::KindMismatch { .. } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "approval_kind_mismatch",
                e.to_string(),
            )
            .field("decision"),
            ApprovalError::Unavailable => {
                ApiError::new(StatusCode::GONE, "approval_unavailable", e.to_string())
            }
        }
    }

    /// A supplemental message refused.
    pub fn message(e: &MessageError) -> Self {
        let text = e.to_string();
        match &e.kind {
            MessageErrorKind::RunFinished => ApiError::new(StatusCode::CONFLICT, "run_finished", text),
            MessageErrorKind::Unsupported(_) => {
                ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "message_unsupported", text).field("timing")
            }
            MessageErrorKind::Disabled => ApiError::new(StatusCode::FORBIDDEN, "messages_disabled", text),
            MessageErrorKind::TooLarge { .. } => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "message_too_large", text).field("text")
            }
            MessageErrorKind::Cancelled => ApiError::new(StatusCode::CONFLICT, "run_cancelled", text),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code.to_owned(),
                message: self.message,
                field: self.field,
            },
        };
        let mut resp = (self.status, Json(body)).into_response();
        if let Some(secs) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if let Some(c) = &self.challenge
            && let Ok(v) = HeaderValue::from_str(c)
        {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        resp
    }
}
