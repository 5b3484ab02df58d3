//! ACP over HTTP (`/v1/agents/{agent}/acp`, and `/v1/acp` for the default agent): the ACP edge an
//! editor launches on stdio ([`crate::acp`]), served to remote clients over the Streamable HTTP
//! transport the ACP SDKs speak (`createHttpStream` in `@agentclientprotocol/sdk`,
//! `agent-client-protocol-http`):
//!
//! - `POST` with the `initialize` request opens a connection: the answer is the initialize response
//!   (JSON) with an `Acp-Connection-Id` header. Every later message is POSTed with that header (and
//!   `Acp-Session-Id` for a session's messages) and answered `202`; its response comes on a stream.
//! - `GET` (`Accept: text/event-stream`) with `Acp-Connection-Id` is the connection's stream; with
//!   `Acp-Session-Id` too, that session's stream (its updates, permission requests and the responses
//!   to its requests). One receiver per stream. Every message has an SSE `id:`; a receiver that
//!   reconnects with `Last-Event-ID` gets what it missed (each stream keeps its last
//!   [`outbox::MAX_MESSAGES`]) — the part ACP v1 leaves out.
//! - `DELETE` with `Acp-Connection-Id` ends the connection (its running prompts are cancelled).
//!   `session/close` ends one session's stream after its response (the session's slot is free again).
//!
//! A connection belongs to the tenant that opened it (another tenant's requests get 404), runs its
//! sessions under that tenant, counts each prompt against the tenant's run limits and the replica's
//! capacity, never takes the client's `cwd` as a workspace (it is recorded and listed only) and never
//! a stdio MCP server. A connection with no receiver and no request for [`IDLE`] ends.

mod connection;
pub mod outbox;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::Event as SseEvent;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use self::connection::{Connection, SendError, session_of};
use self::outbox::AttachError;
use super::AppState;
use super::auth::Tenant;
use super::error::{ApiError, ErrorCode};
use super::extract::{Path, RawBody};
use super::limits::Limiter;
use crate::acp;
use crate::acp::rpc::RpcError;
use crate::driver::{ApprovalPolicy, FallbackAction, Policy, QuestionMode};

/// The header naming a connection.
pub const CONNECTION_HEADER: &str = "acp-connection-id";
/// The header naming a session.
pub const SESSION_HEADER: &str = "acp-session-id";
/// How many connections one tenant may hold.
pub const MAX_PER_TENANT: usize = 16;
/// How many connections the replica holds.
pub const MAX_CONNECTIONS: usize = 256;
/// A connection with no receiver and no request for this long ends.
pub const IDLE: Duration = Duration::from_secs(600);
/// How long `initialize` may take.
const INITIALIZE_WAIT: Duration = Duration::from_secs(10);

/// The methods that act on one session: their messages name it (`Acp-Session-Id` or
/// `params.sessionId`).
const SESSION_METHODS: &[&str] = &[
    "session/prompt",
    "session/cancel",
    "session/close",
    "session/delete",
    "session/fork",
    "session/load",
    "session/resume",
    "session/set_config_option",
    "session/set_mode",
    "session/set_model",
];

/// The open ACP connections of the replica.
#[derive(Debug, Default)]
pub struct AcpConnections {
    by_id: Mutex<HashMap<String, Arc<Connection>>>,
    idle: Option<Duration>,
}

impl AcpConnections {
    /// A table whose connections end after `idle` without receiver or request (default [`IDLE`]).
    pub fn new(idle: Option<Duration>) -> Self {
        AcpConnections {
            by_id: Mutex::default(),
            idle,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Connection>>> {
        self.by_id.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many connections are open.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends every connection (the service stops).
    pub fn end_all(&self) {
        for c in self.lock().drain().map(|(_, c)| c) {
            c.end();
        }
    }

    fn find(&self, tenant: &str, agent: &str, id: &str) -> Result<Arc<Connection>, ApiError> {
        self.lock()
            .get(id)
            .filter(|c| c.tenant == tenant && c.agent == agent && !c.ended.is_cancelled())
            .cloned()
            .ok_or_else(|| ApiError::not_found("no such ACP connection (it ended, or it is not yours)"))
    }

    fn admit(&self, tenant: &str) -> Result<(), ApiError> {
        let open = self.lock();
        if open.len() >= MAX_CONNECTIONS {
            return Err(ApiError::too_many(
                ErrorCode::AcpLimit,
                format!("the replica holds {MAX_CONNECTIONS} ACP connections"),
                5,
            ));
        }
        if open.values().filter(|c| c.tenant == tenant).count() >= MAX_PER_TENANT {
            return Err(ApiError::too_many(
                ErrorCode::AcpLimit,
                format!("{MAX_PER_TENANT} ACP connections are open for this tenant"),
                5,
            ));
        }
        Ok(())
    }

    fn insert(self: &Arc<Self>, conn: Arc<Connection>, shutdown: CancellationToken) {
        self.lock().insert(conn.id.clone(), conn.clone());
        let table = self.clone();
        let idle = self.idle.unwrap_or(IDLE);
        tokio::spawn(async move {
            let tick = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
            loop {
                tokio::select! {
                    () = conn.ended.cancelled() => break,
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(tick) => {
                        if conn.is_idle(idle) {
                            tracing::info!(connection = %conn.id, "acp http: idle connection ended");
                            break;
                        }
                    }
                }
            }
            conn.end();
            table.lock().remove(&conn.id);
        });
    }
}

/// Admits each prompt of a connection like a REST run: refused while draining, counted against the
/// tenant's `max_concurrent_runs` and the replica's `max_active`.
struct ServiceGate {
    limits: Arc<Limiter>,
    draining: CancellationToken,
    shutdown: CancellationToken,
}

/// The JSON-RPC error of a refused prompt: the service's code and message in `data`.
fn refusal(e: &ApiError) -> RpcError {
    let mut data = serde_json::json!({ "code": e.code.as_str(), "status": e.code.status().as_u16() });
    if let Some(after) = e.retry_after {
        data["retryAfter"] = after.into();
    }
    RpcError::new(-32000, e.message.clone()).with_data(data)
}

impl acp::Gate for ServiceGate {
    fn admit(&self, tenant: &str) -> Result<Box<dyn std::any::Any + Send>, RpcError> {
        if self.draining.is_cancelled() || self.shutdown.is_cancelled() {
            return Err(refusal(&ApiError::shutting_down()));
        }
        let slot = self.limits.acquire_run(tenant).map_err(|e| refusal(&e))?;
        Ok(Box::new(slot))
    }
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ApiError> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v.to_str().map(Some).map_err(|_| {
            ApiError::new(
                ErrorCode::MalformedRequest,
                format!("{name} is not visible ASCII"),
            )
        }),
    }
}

fn connection_id(headers: &HeaderMap) -> Result<&str, ApiError> {
    header_text(headers, CONNECTION_HEADER)?.ok_or_else(|| {
        ApiError::new(
            ErrorCode::MalformedRequest,
            "Acp-Connection-Id is required (the first message of a connection is initialize)",
        )
    })
}

fn agent_of<'a>(state: &'a AppState, agent: Option<&str>) -> Result<&'a super::agents::AgentEntry, ApiError> {
    match agent {
        Some(name) => state
            .agents
            .get(name)
            .ok_or_else(|| ApiError::not_found(format!("no agent named {name:?}"))),
        None => state
            .agents
            .default_agent()
            .ok_or_else(|| ApiError::not_found("no agent is configured")),
    }
}

/// Puts the `Acp-Session-Id` header's session into a session method's params (a different
/// `params.sessionId` is refused), and refuses a session method that names no session.
fn apply_session(message: &mut Value, session: Option<&str>) -> Result<(), ApiError> {
    let Some(method) = message.get("method").and_then(Value::as_str).map(str::to_owned) else {
        return Ok(());
    };
    if let Some(session) = session {
        let params = message.as_object_mut().map(|m| {
            m.entry("params")
                .or_insert_with(|| Value::Object(Default::default()))
        });
        let Some(Value::Object(params)) = params else {
            return Err(ApiError::new(
                ErrorCode::MalformedRequest,
                "Acp-Session-Id needs object params",
            ));
        };
        match params.get("sessionId") {
            None => {
                params.insert("sessionId".into(), Value::String(session.to_owned()));
            }
            Some(Value::String(s)) if s == session => {}
            Some(_) => {
                return Err(ApiError::new(
                    ErrorCode::MalformedRequest,
                    "Acp-Session-Id does not match params.sessionId",
                ));
            }
        }
    }
    if SESSION_METHODS.contains(&method.as_str()) && session_of(message).is_none() {
        return Err(ApiError::new(
            ErrorCode::MalformedRequest,
            format!("{method} needs Acp-Session-Id or params.sessionId"),
        ));
    }
    Ok(())
}

/// The approval policy of ACP prompts: questions and permissions are asked of the client, a
/// rejection is told to the agent, and an unanswered request falls back after the service's
/// `approval_timeout`.
fn policy(state: &AppState) -> Policy {
    Policy {
        approvals: ApprovalPolicy {
            question: QuestionMode::Ask,
            on_reject: FallbackAction::Continue,
            ..Default::default()
        }
        .with_timeout(state.config.approval_timeout),
        ..Default::default()
    }
}

async fn post(
    state: Arc<AppState>,
    tenant: &Tenant,
    agent: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, ApiError> {
    let json_body = header_text(headers, header::CONTENT_TYPE.as_str())?.is_some_and(|ct| {
        ct.trim_start()
            .to_ascii_lowercase()
            .starts_with("application/json")
    });
    if !json_body {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            "an ACP message is application/json",
        ));
    }
    let mut message: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(ErrorCode::InvalidJson, format!("the body is not JSON: {e}")))?;
    if !message.is_object() {
        return Err(ApiError::new(
            ErrorCode::InvalidJson,
            "one JSON-RPC message (an object) per request; batches are not supported",
        ));
    }
    let entry = agent_of(&state, agent)?;
    let Some(conn_id) = header_text(headers, CONNECTION_HEADER)? else {
        return initialize(&state, tenant, entry, message).await;
    };
    let conn = state.acp.find(tenant.as_str(), &entry.name, conn_id)?;
    apply_session(&mut message, header_text(headers, SESSION_HEADER)?)?;
    let line =
        serde_json::to_string(&message).map_err(|e| ApiError::internal("serialize an ACP message", &e))?;
    match conn.send(&message, line).await {
        Ok(()) => Ok(StatusCode::ACCEPTED.into_response()),
        Err(SendError::Closed) => Err(ApiError::not_found("the ACP connection has ended")),
        Err(SendError::TooManyPending) => Err(ApiError::too_many(
            ErrorCode::AcpLimit,
            "too many requests of this connection await their responses",
            1,
        )),
        Err(SendError::TooManySessions) => Err(ApiError::too_many(
            ErrorCode::AcpLimit,
            format!("a connection holds at most {} sessions", connection::MAX_SESSIONS),
            5,
        )),
    }
}

async fn initialize(
    state: &Arc<AppState>,
    tenant: &Tenant,
    entry: &super::agents::AgentEntry,
    message: Value,
) -> Result<Response, ApiError> {
    let is_initialize = message.get("method").and_then(Value::as_str) == Some("initialize");
    let Some(id) = message.get("id").filter(|_| is_initialize).cloned() else {
        return Err(ApiError::new(
            ErrorCode::MalformedRequest,
            "a message without Acp-Connection-Id must be the initialize request",
        ));
    };
    if connection::id_key(&id).is_none() {
        return Err(ApiError::new(
            ErrorCode::MalformedRequest,
            "the initialize request's id must be a string or a number",
        ));
    }
    if state.refuses_runs() {
        return Err(ApiError::shutting_down());
    }
    state.acp.admit(tenant.as_str())?;
    let config = acp::Config {
        policy: policy(state),
        tenant: Some(tenant.as_str().to_owned()),
        remote: true,
        remote_mcp: entry.resources.view().request_mcp,
        gate: Some(Arc::new(ServiceGate {
            limits: state.limits.clone(),
            draining: state.draining.clone(),
            shutdown: state.shutdown.clone(),
        })),
        keep_agent: true,
    };
    let conn_id = format!("acpc-{}", uuid::Uuid::new_v4().simple());
    let conn = Connection::start(
        conn_id.clone(),
        tenant.as_str().to_owned(),
        entry.agent.clone(),
        config,
    );
    let line =
        serde_json::to_string(&message).map_err(|e| ApiError::internal("serialize an ACP message", &e))?;
    let Some(answer) = conn.initialize(&id, line, INITIALIZE_WAIT).await else {
        conn.end();
        return Err(ApiError::internal(
            "ACP initialize",
            &"the edge did not answer initialize",
        ));
    };
    let failed = serde_json::from_str::<Value>(&answer).is_ok_and(|v| v.get("error").is_some());
    if failed {
        conn.end();
    } else {
        state.acp.insert(conn, state.shutdown.clone());
    }
    let mut resp = (
        StatusCode::OK,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        answer,
    )
        .into_response();
    if !failed && let Ok(v) = HeaderValue::from_str(&conn_id) {
        resp.headers_mut().insert(CONNECTION_HEADER, v);
    }
    Ok(resp)
}

async fn get(
    state: Arc<AppState>,
    tenant: &Tenant,
    agent: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let accepts =
        header_text(headers, header::ACCEPT.as_str())?.is_some_and(|a| a.contains("text/event-stream"));
    if !accepts {
        return Err(ApiError::new(
            ErrorCode::NotAcceptable,
            "an ACP stream is text/event-stream (send Accept: text/event-stream)",
        ));
    }
    let entry = agent_of(&state, agent)?;
    let conn = state
        .acp
        .find(tenant.as_str(), &entry.name, connection_id(headers)?)?;
    let session = header_text(headers, SESSION_HEADER)?;
    let last = header_text(headers, "last-event-id")?
        .map(|v| super::ranges::decimal("Last-Event-ID", v))
        .transpose()?;
    let outbox = match session {
        None => conn.own(),
        Some(s) => conn.open_session(s).map_err(|_| {
            ApiError::too_many(
                ErrorCode::AcpLimit,
                format!("a connection holds at most {} sessions", connection::MAX_SESSIONS),
                5,
            )
        })?,
    };
    let receiver = outbox.attach(last.unwrap_or(0), last.is_some()).map_err(|e| match e {
        AttachError::Busy => ApiError::new(
            ErrorCode::AcpStreamConflict,
            "this stream has a receiver already (reconnect with Last-Event-ID to take it over)",
        ),
        AttachError::Lost { oldest } => ApiError::new(
            ErrorCode::AcpStreamConflict,
            format!(
                "the stream no longer holds the messages after {} (oldest kept: {oldest}); reattach the session with session/load",
                last.unwrap_or(0)
            ),
        ),
    })?;
    conn.touch();
    let stream = futures::stream::unfold(
        (receiver, state.shutdown.clone()),
        |(mut r, shutdown)| async move {
            let next = tokio::select! {
                () = shutdown.cancelled() => None,
                n = r.next() => n,
            };
            next.map(|(seq, msg)| {
                (
                    SseEvent::default().id(seq.to_string()).data(msg.as_ref()),
                    (r, shutdown),
                )
            })
        },
    );
    let mut resp = super::sse::stream_response(stream, state.config.keep_alive);
    if let Ok(v) = HeaderValue::from_str(&conn.id) {
        resp.headers_mut().insert(CONNECTION_HEADER, v);
    }
    if let Some(s) = session
        && let Ok(v) = HeaderValue::from_str(s)
    {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    Ok(resp)
}

async fn delete(
    state: Arc<AppState>,
    tenant: &Tenant,
    agent: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let entry = agent_of(&state, agent)?;
    let conn = state
        .acp
        .find(tenant.as_str(), &entry.name, connection_id(headers)?)?;
    conn.end();
    state.acp.lock().remove(&conn.id);
    Ok(StatusCode::ACCEPTED.into_response())
}

/// `POST /v1/agents/{agent}/acp`: one ACP message of a connection.
#[utoipa::path(post, path = "/v1/agents/{agent}/acp", tag = "acp", params(("agent" = String, Path, description = "The agent name"), ("Acp-Connection-Id" = Option<String>, Header, description = "The connection (absent only on the initialize request, whose answer carries it)"), ("Acp-Session-Id" = Option<String>, Header, description = "The session a session method acts on (or params.sessionId)")), request_body(content = Object, content_type = "application/json", description = "One JSON-RPC 2.0 message (request, notification or response to a permission request); batches are not supported"), responses((status = 200, description = "The initialize response (JSON-RPC), with the Acp-Connection-Id header", content_type = "application/json", body = Object), (status = 202, description = "Taken; a request's response comes on its stream (the session's, else the connection's)"), (status = 400, description = "invalid_json or malformed_request (no Acp-Connection-Id on a message other than initialize, a session method with no session, a mismatched Acp-Session-Id)", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent, or a connection that ended or is another tenant's", body = crate::views::ErrorBody), (status = 415, description = "unsupported_media_type: the body is not application/json", body = crate::views::ErrorBody), (status = 429, description = "acp_limit: connections of the tenant, sessions of the connection or requests awaiting responses", body = crate::views::ErrorBody), (status = 503, description = "shutting_down", body = crate::views::ErrorBody)))]
pub async fn post_named(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(agent): Path<String>,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    post(state, &tenant, Some(&agent), &headers, &body).await
}

/// `POST /v1/acp`: as [`post_named`], for the default agent.
#[utoipa::path(post, path = "/v1/acp", tag = "acp", params(("Acp-Connection-Id" = Option<String>, Header, description = "The connection (absent only on the initialize request)"), ("Acp-Session-Id" = Option<String>, Header, description = "The session a session method acts on")), request_body(content = Object, content_type = "application/json", description = "One JSON-RPC 2.0 message"), responses((status = 200, description = "The initialize response, with the Acp-Connection-Id header", content_type = "application/json", body = Object), (status = 202, description = "Taken; the response comes on a stream"), (status = 400, description = "invalid_json or malformed_request", body = crate::views::ErrorBody), (status = 404, description = "No agent is configured, or an unknown connection", body = crate::views::ErrorBody), (status = 415, description = "unsupported_media_type", body = crate::views::ErrorBody), (status = 429, description = "acp_limit", body = crate::views::ErrorBody), (status = 503, description = "shutting_down", body = crate::views::ErrorBody)))]
pub async fn post_default(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    headers: HeaderMap,
    RawBody(body): RawBody,
) -> Result<Response, ApiError> {
    post(state, &tenant, None, &headers, &body).await
}

/// `GET /v1/agents/{agent}/acp`: a connection's or a session's stream.
#[utoipa::path(get, path = "/v1/agents/{agent}/acp", tag = "acp", params(("agent" = String, Path, description = "The agent name"), ("Acp-Connection-Id" = String, Header, description = "The connection"), ("Acp-Session-Id" = Option<String>, Header, description = "A session: its stream instead of the connection's"), ("Last-Event-ID" = Option<String>, Header, description = "Resume after this message (takes the stream over from an older receiver)")), responses((status = 200, description = "The stream's JSON-RPC messages, one per SSE data frame, each with an id", content_type = "text/event-stream", body = String), (status = 400, description = "malformed_request: no Acp-Connection-Id", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent or connection", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: a Last-Event-ID that is not a decimal message number", body = crate::views::ErrorBody), (status = 406, description = "not_acceptable: no Accept: text/event-stream", body = crate::views::ErrorBody), (status = 409, description = "acp_stream_conflict: the stream has a receiver, or no longer holds the messages after Last-Event-ID", body = crate::views::ErrorBody), (status = 429, description = "acp_limit: too many sessions on the connection", body = crate::views::ErrorBody)))]
pub async fn get_named(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(agent): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    get(state, &tenant, Some(&agent), &headers).await
}

/// `GET /v1/acp`: as [`get_named`], for the default agent.
#[utoipa::path(get, path = "/v1/acp", tag = "acp", params(("Acp-Connection-Id" = String, Header, description = "The connection"), ("Acp-Session-Id" = Option<String>, Header, description = "A session: its stream"), ("Last-Event-ID" = Option<String>, Header, description = "Resume after this message")), responses((status = 200, description = "The stream's JSON-RPC messages over SSE", content_type = "text/event-stream", body = String), (status = 400, description = "malformed_request", body = crate::views::ErrorBody), (status = 404, description = "No agent is configured, or an unknown connection", body = crate::views::ErrorBody), (status = 422, description = "invalid_request: a Last-Event-ID that is not a decimal message number", body = crate::views::ErrorBody), (status = 406, description = "not_acceptable", body = crate::views::ErrorBody), (status = 409, description = "acp_stream_conflict", body = crate::views::ErrorBody), (status = 429, description = "acp_limit", body = crate::views::ErrorBody)))]
pub async fn get_default(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    get(state, &tenant, None, &headers).await
}

/// `DELETE /v1/agents/{agent}/acp`: ends a connection.
#[utoipa::path(delete, path = "/v1/agents/{agent}/acp", tag = "acp", params(("agent" = String, Path, description = "The agent name"), ("Acp-Connection-Id" = String, Header, description = "The connection")), responses((status = 202, description = "Ended: its running prompts are cancelled and its streams end"), (status = 400, description = "malformed_request: no Acp-Connection-Id", body = crate::views::ErrorBody), (status = 404, description = "Unknown agent or connection", body = crate::views::ErrorBody)))]
pub async fn delete_named(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    Path(agent): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    delete(state, &tenant, Some(&agent), &headers).await
}

/// `DELETE /v1/acp`: as [`delete_named`], for the default agent.
#[utoipa::path(delete, path = "/v1/acp", tag = "acp", params(("Acp-Connection-Id" = String, Header, description = "The connection")), responses((status = 202, description = "Ended"), (status = 400, description = "malformed_request", body = crate::views::ErrorBody), (status = 404, description = "No agent is configured, or an unknown connection", body = crate::views::ErrorBody)))]
pub async fn delete_default(
    State(state): State<Arc<AppState>>,
    tenant: Tenant,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    delete(state, &tenant, None, &headers).await
}
