//! [`ErrorCode`]: every machine code the service answers in its JSON error body, each with exactly one
//! HTTP status. One table below defines the variants, their wire names and their statuses, so
//! [`ErrorCode::ALL`] cannot miss one; the OpenAPI document enumerates the same names (`ErrorDetail.code`).

use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;

/// Defines [`ErrorCode`] from `Variant = ("wire_name", STATUS)` rows: the enum, [`ErrorCode::ALL`],
/// [`ErrorCode::as_str`] and [`ErrorCode::status`].
macro_rules! error_codes {
    ($($(#[doc = $doc:literal])+ $variant:ident = ($name:literal, $status:ident),)+) => {
        /// The stable machine code of an error answer; each code has exactly one HTTP status.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum ErrorCode {
            $($(#[doc = $doc])+ $variant,)+
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)+];

            /// The wire name (`not_found`, `thread_busy`, ...), the same as its JSON form.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $name,)+
                }
            }

            /// The one HTTP status every answer with this code has.
            pub const fn status(self) -> StatusCode {
                match self {
                    $(ErrorCode::$variant => StatusCode::$status,)+
                }
            }
        }
    };
}

error_codes! {
    /// The body is not JSON, or a value does not parse as its type (`field` names it).
    InvalidJson = ("invalid_json", BAD_REQUEST),
    /// The query string does not decode or a parameter does not parse.
    InvalidQuery = ("invalid_query", BAD_REQUEST),
    /// A path segment does not parse.
    InvalidPath = ("invalid_path", BAD_REQUEST),
    /// The request body could not be read.
    UnreadableBody = ("unreadable_body", BAD_REQUEST),
    /// The request is not valid HTTP/1.1 (answered by the listener, before any route).
    MalformedRequest = ("malformed_request", BAD_REQUEST),
    /// No API key, or one that is not valid (`WWW-Authenticate`).
    Unauthorized = ("unauthorized", UNAUTHORIZED),
    /// A budget of the tenant, agent or thread is spent.
    BudgetExceeded = ("budget_exceeded", PAYMENT_REQUIRED),
    /// The key may not do this (a tenant key naming another tenant).
    Forbidden = ("forbidden", FORBIDDEN),
    /// The request adds a resource the agent's `allow_request` does not allow.
    ResourceNotAllowed = ("resource_not_allowed", FORBIDDEN),
    /// The agent takes no supplemental messages.
    MessagesDisabled = ("messages_disabled", FORBIDDEN),
    /// No such agent, run, thread, approval, Standby or route.
    NotFound = ("not_found", NOT_FOUND),
    /// The route exists, not with this method.
    MethodNotAllowed = ("method_not_allowed", METHOD_NOT_ALLOWED),
    /// A stream was asked for without `Accept: text/event-stream`.
    NotAcceptable = ("not_acceptable", NOT_ACCEPTABLE),
    /// The body did not arrive within the body read timeout.
    BodyTimeout = ("body_timeout", REQUEST_TIMEOUT),
    /// A run or a Standby is active on the thread.
    ThreadBusy = ("thread_busy", CONFLICT),
    /// The thread key is taken (or exists with other defaults).
    ThreadExists = ("thread_exists", CONFLICT),
    /// An `Idempotency-Key` whose first request is still in flight (`Retry-After: 1`).
    IdempotencyInProgress = ("idempotency_in_progress", CONFLICT),
    /// The run already finished.
    RunFinished = ("run_finished", CONFLICT),
    /// The run was cancelled.
    RunCancelled = ("run_cancelled", CONFLICT),
    /// The approval was already answered.
    ApprovalResolved = ("approval_resolved", CONFLICT),
    /// An ACP stream (`GET /v1/acp`) has a receiver already, or no longer holds the messages after
    /// `Last-Event-ID` (the client reattaches the session with `session/load`).
    AcpStreamConflict = ("acp_stream_conflict", CONFLICT),
    /// The approval's deadline passed.
    ApprovalExpired = ("approval_expired", GONE),
    /// The approval can no longer be answered (its run ended).
    ApprovalUnavailable = ("approval_unavailable", GONE),
    /// The body is over the server's `body_limit`.
    BodyTooLarge = ("body_too_large", PAYLOAD_TOO_LARGE),
    /// The supplemental message is over the driver's size limit.
    MessageTooLarge = ("message_too_large", PAYLOAD_TOO_LARGE),
    /// The request target is too long (answered by the listener).
    UriTooLong = ("uri_too_long", URI_TOO_LONG),
    /// The body is not `application/json`.
    UnsupportedMediaType = ("unsupported_media_type", UNSUPPORTED_MEDIA_TYPE),
    /// A well-formed value the service refuses (out of range, against its pattern).
    InvalidRequest = ("invalid_request", UNPROCESSABLE_ENTITY),
    /// An `Idempotency-Key` reused for a different request.
    IdempotencyMismatch = ("idempotency_mismatch", UNPROCESSABLE_ENTITY),
    /// The runtime refused the run's options.
    RunRefused = ("run_refused", UNPROCESSABLE_ENTITY),
    /// The driver cannot fork sessions.
    ForkUnsupported = ("fork_unsupported", UNPROCESSABLE_ENTITY),
    /// The answer does not fit the approval's kind.
    ApprovalKindMismatch = ("approval_kind_mismatch", UNPROCESSABLE_ENTITY),
    /// The driver does not take a message with this timing.
    MessageUnsupported = ("message_unsupported", UNPROCESSABLE_ENTITY),
    /// No such skill in the agent's skill library.
    UnknownSkill = ("unknown_skill", UNPROCESSABLE_ENTITY),
    /// No such service in the agent's service catalog.
    UnknownService = ("unknown_service", UNPROCESSABLE_ENTITY),
    /// Too many requests (`Retry-After`).
    RateLimited = ("rate_limited", TOO_MANY_REQUESTS),
    /// The tenant's `max_concurrent_runs` is reached (`Retry-After`).
    TooManyRuns = ("too_many_runs", TOO_MANY_REQUESTS),
    /// The tenant's `max_standbys` is reached (`Retry-After`).
    TooManyStandbys = ("too_many_standbys", TOO_MANY_REQUESTS),
    /// An ACP bound was reached: connections of the tenant, sessions of a connection, or requests
    /// waiting on one (`Retry-After`).
    AcpLimit = ("acp_limit", TOO_MANY_REQUESTS),
    /// The request's header fields are too large or too many (answered by the listener).
    HeadersTooLarge = ("headers_too_large", REQUEST_HEADER_FIELDS_TOO_LARGE),
    /// The service failed; the message names an error id to find the cause in its log.
    InternalError = ("internal_error", INTERNAL_SERVER_ERROR),
    /// The store failed or holds something unreadable; the message names an error id.
    StoreError = ("store_error", INTERNAL_SERVER_ERROR),
    /// The service's store does not implement what the request needs (idempotency keys, run listing,
    /// metering): a store a library user plugged in that implements only the required methods.
    NotImplemented = ("not_implemented", NOT_IMPLEMENTED),
    /// The store is unavailable (`Retry-After`); the message names an error id.
    StoreUnavailable = ("store_unavailable", SERVICE_UNAVAILABLE),
    /// The service is shutting down (`Retry-After`).
    ShuttingDown = ("shutting_down", SERVICE_UNAVAILABLE),
    /// 503: the replica admits `max_active` runs already (`Retry-After: 5`); another replica may have room.
    CapacityExhausted = ("capacity_exhausted", SERVICE_UNAVAILABLE),
    /// The listener has `max_connections` (or `max_connections_per_ip`) open (`Retry-After`).
    TooManyConnections = ("too_many_connections", SERVICE_UNAVAILABLE),
}

impl ErrorCode {
    /// Whether an answer with this code is the service's own fault, whose message would carry internals:
    /// then the message is logged under an error id and the client gets [`ErrorCode::generic_message`].
    /// The 503 refusals a healthy service gives under load or at shutdown (`shutting_down`,
    /// `too_many_connections`, `capacity_exhausted`) are not faults: their message is the client's.
    pub const fn is_fault(self) -> bool {
        matches!(
            self,
            ErrorCode::InternalError | ErrorCode::StoreError | ErrorCode::StoreUnavailable
        )
    }

    /// What a client is told of a 5xx with this code; the cause goes to the log under an error id.
    pub const fn generic_message(self) -> &'static str {
        match self {
            ErrorCode::StoreError => "the store failed",
            ErrorCode::StoreUnavailable => "the store is unavailable; retry",
            ErrorCode::ShuttingDown => "the service is shutting down; retry",
            ErrorCode::TooManyConnections => "the service has too many connections open; retry",
            _ => "the service failed",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
