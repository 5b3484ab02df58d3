//! The one JSON error body of the service: `{"error":{"code","message","field"?}}` with a stable machine
//! code ([`ErrorCode`]) that fixes the HTTP status.
//!
//! A 5xx never shows its cause: [`ApiError::new`] logs the cause with `tracing::error!` (in the request's
//! span) under a fresh error id of 32 hex characters and tells the client the code's generic message and
//! the id.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

pub use super::error_code::ErrorCode;
use super::views::{ErrorBody, ErrorDetail};
use crate::runtime::{ApprovalError, MessageError, MessageErrorKind};
use crate::store::StoreError;

/// Logs an internal failure's own text (SQL, table and index names, database messages, runtime errors)
/// with `tracing::error!` under a fresh error id (32 hex characters) and returns the id: clients are told
/// the code and the id, never the text. Every path that reports an internal failure to a client (error
/// bodies, SSE and AG-UI notices) goes through here.
pub fn log_internal_error(what: &str, error: &dyn std::fmt::Display) -> String {
    let id = uuid::Uuid::now_v7().simple().to_string();
    tracing::error!(error_id = %id, error = %error, "{what}");
    id
}

/// The client's message for a fault `code` ([`ErrorCode::is_fault`]) whose cause is `cause`: the cause is logged under an error id,
/// the message is the code's generic text and the id.
fn internal_message(code: ErrorCode, cause: &str) -> String {
    let id = log_internal_error(code.generic_message(), &cause);
    format!("{}; see the service log (error id {id})", code.generic_message())
}

/// A failure answered as the JSON error body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// The stable machine code; it fixes the HTTP status ([`ApiError::status`]).
    pub code: ErrorCode,
    /// A human-readable message (for a 5xx: generic, with an error id).
    pub message: String,
    /// The offending request field, when one is known.
    pub field: Option<String>,
    /// Seconds to wait before retrying (429, 503).
    pub retry_after: Option<u64>,
    /// The `WWW-Authenticate` challenge of a 401.
    pub challenge: Option<String>,
}

impl ApiError {
    /// An error with `code` and `message`; its status is `code`'s. For a 5xx code `message` is the
    /// cause: it is logged under an error id and the client gets the code's generic message and the id.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = if code.is_fault() {
            internal_message(code, &message)
        } else {
            message
        };
        ApiError {
            code,
            message,
            field: None,
            retry_after: None,
            challenge: None,
        }
    }

    /// The HTTP status (the code's).
    pub fn status(&self) -> StatusCode {
        self.code.status()
    }

    /// 401 `unauthorized` with a Bearer challenge (`error="invalid_token"` when a key was presented).
    pub fn unauthorized(message: impl Into<String>, presented: bool) -> Self {
        let mut e = ApiError::new(ErrorCode::Unauthorized, message);
        e.challenge = Some(if presented {
            r#"Bearer realm="agent-adaptor", error="invalid_token""#.to_owned()
        } else {
            r#"Bearer realm="agent-adaptor""#.to_owned()
        });
        e
    }

    /// `code` (a 429) with `Retry-After: retry_after` seconds (at least 1).
    pub fn too_many(code: ErrorCode, message: impl Into<String>, retry_after: u64) -> Self {
        let mut e = ApiError::new(code, message);
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
        ApiError::new(ErrorCode::NotFound, what)
    }

    /// 422 `invalid_request` about `field`.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::InvalidRequest, message).field(field)
    }

    /// 503 `shutting_down`.
    pub fn shutting_down() -> Self {
        let mut e = ApiError::new(
            ErrorCode::ShuttingDown,
            "a request arrived while the service shuts down",
        );
        e.retry_after = Some(1);
        e
    }

    /// 500 `internal_error`: `what` failed with `cause` (logged; the client gets an error id).
    pub fn internal(what: &str, cause: &dyn std::fmt::Display) -> Self {
        ApiError::new(ErrorCode::InternalError, format!("{what}: {cause}"))
    }

    /// 503 `capacity_exhausted`: `max` runs are admitted across tenants; `Retry-After: 5`.
    pub fn capacity_exhausted(max: usize) -> Self {
        let mut e = ApiError::new(
            ErrorCode::CapacityExhausted,
            format!("this replica runs {max} run(s) already (max_active); retry later"),
        );
        e.retry_after = Some(5);
        e
    }

    /// A store failure: unavailable -> 503, otherwise 500; the store's own text (SQL, table and index
    /// names, database messages) goes to the log under an error id.
    pub fn store(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => ApiError::not_found(e.to_string()),
            StoreError::Unavailable { .. } => {
                let mut err = ApiError::new(ErrorCode::StoreUnavailable, e.to_string());
                err.retry_after = Some(1);
                err
            }
            // The store refused a value the edge let through: input, not a server error.
            StoreError::Invalid { .. } => ApiError::new(ErrorCode::InvalidRequest, e.to_string()),
            StoreError::Unsupported { .. } => ApiError::new(ErrorCode::NotImplemented, e.to_string()),
            other => ApiError::store_failure(other),
        }
    }

    /// 500 `store_error`: the store failed or holds something unreadable (`cause`, logged).
    pub fn store_failure(cause: impl std::fmt::Display) -> Self {
        ApiError::new(ErrorCode::StoreError, cause.to_string())
    }

    /// 405 `method_not_allowed`: the route exists, not with this method.
    pub fn method_not_allowed() -> Self {
        ApiError::new(
            ErrorCode::MethodNotAllowed,
            "this route does not answer this method",
        )
    }

    /// An approval answer refused: duplicate 409, expired 410, wrong kind 422, no responder 410.
    pub fn approval(e: &ApprovalError) -> Self {
        match e {
            ApprovalError::Resolved => ApiError::new(ErrorCode::ApprovalResolved, e.to_string()),
            ApprovalError::Expired => ApiError::new(ErrorCode::ApprovalExpired, e.to_string()),
            ApprovalError::KindMismatch { .. } => {
                ApiError::new(ErrorCode::ApprovalKindMismatch, e.to_string()).field("decision")
            }
            ApprovalError::Unavailable => ApiError::new(ErrorCode::ApprovalUnavailable, e.to_string()),
        }
    }

    /// A supplemental message refused.
    pub fn message(e: &MessageError) -> Self {
        let text = e.to_string();
        match &e.kind {
            MessageErrorKind::RunFinished => ApiError::new(ErrorCode::RunFinished, text),
            MessageErrorKind::Unsupported(_) => {
                ApiError::new(ErrorCode::MessageUnsupported, text).field("timing")
            }
            MessageErrorKind::Disabled => ApiError::new(ErrorCode::MessagesDisabled, text),
            MessageErrorKind::TooLarge { .. } => {
                ApiError::new(ErrorCode::MessageTooLarge, text).field("text")
            }
            MessageErrorKind::Cancelled => ApiError::new(ErrorCode::RunCancelled, text),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: self.message,
                field: self.field,
            },
        };
        let mut resp = (status, Json(body)).into_response();
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
