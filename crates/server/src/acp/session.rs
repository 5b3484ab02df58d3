//! ACP sessions: one [`Thread`] per session (the session id is the thread key), one run per prompt;
//! `session/new`, `load` (history replayed), `resume` (no replay), `fork` and `list`.
//! A prompt starts synchronously (so a `session/cancel` read right after it always finds the run),
//! then its events are translated into `session/update`s, its approvals asked as permission
//! requests, and its outcome becomes the `stopReason`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde_json::{Value, json};

use super::history::{self, RunLog};
use super::listing;
use super::permission;
use super::rpc::{INTERNAL_ERROR, INVALID_PARAMS, Peer, RESOURCE_NOT_FOUND, RpcError};
use super::translate;
use super::wire::{
    ContentBlock, ListSessionsParams, ListSessionsResponse, McpServerSpec, PromptResponse, RemoteKind,
    SessionNotification, SessionUpdate, StopReason, TurnUsage,
};
use super::{Config, Gate};
use crate::driver::{Identity, Policy, Usage};
use crate::runtime::{
    Agent, CallOptions, DEFAULT_TENANT, FailureReason, MessageOptions, MessageState, Payload, RunOutcome,
    Stream, Thread,
};
use crate::store::Query;
use crate::vocab::{McpServer, McpTransport};

/// What every session of one connection shares.
pub struct Sessions {
    agent: Agent,
    policy: Policy,
    tenant: String,
    /// The caller identity of every prompt (set when the tenant is not the default one).
    identity: Option<Identity>,
    remote: bool,
    remote_mcp: bool,
    gate: Option<Arc<dyn Gate>>,
    peer: Arc<Peer>,
    open: Mutex<HashMap<String, Arc<Session>>>,
}

/// One ACP session.
pub struct Session {
    id: String,
    thread: Thread,
    cwd: PathBuf,
    mcp: Vec<McpServer>,
    active: Mutex<Option<Active>>,
}

struct Active {
    stream: Stream,
    cancelled: bool,
}

/// What a prompt does: start the session's turn (holding its admission), or join the running one.
enum Plan {
    Start(Stream, Option<Box<dyn std::any::Any + Send>>),
    Join(Stream),
}

impl Sessions {
    /// The sessions of a connection to `agent`, deciding approvals per the config's policy, under
    /// its tenant (the default tenant when none).
    pub fn new(agent: Agent, config: Config, peer: Arc<Peer>) -> Self {
        let tenant = config
            .tenant
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| DEFAULT_TENANT.to_owned());
        let identity = (tenant != DEFAULT_TENANT).then(|| Identity {
            tenant: tenant.clone(),
            ..Default::default()
        });
        Sessions {
            agent,
            policy: config.policy,
            tenant,
            identity,
            remote: config.remote,
            remote_mcp: config.remote_mcp,
            gate: config.gate,
            peer,
            open: Mutex::new(HashMap::new()),
        }
    }

    /// The agent.
    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// Opens session `id` in this connection. A session already open keeps its thread (a fork not
    /// yet prompted stays a fork); otherwise `thread` (or the session's thread) is used.
    fn insert(
        &self,
        id: &str,
        (cwd, mcp): (PathBuf, Vec<McpServer>),
        thread: Option<Thread>,
    ) -> Arc<Session> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let thread = open
            .get(id)
            .map(|s| s.thread.clone())
            .or(thread)
            .unwrap_or_else(|| self.agent.thread(id));
        let session = Arc::new(Session {
            id: id.to_owned(),
            thread,
            cwd,
            mcp,
            active: Mutex::new(None),
        });
        open.insert(id.to_owned(), session.clone());
        session
    }

    /// `session/new`: a fresh session and its id. Its working directory is recorded at once, so the
    /// session loads and resumes in another process before its first prompt (a client such as acpx
    /// creates a session in one process and prompts it from the next).
    pub async fn create(&self, cwd: &str, mcp: &[McpServerSpec]) -> Result<String, RpcError> {
        let setup = self.setup(cwd, mcp)?;
        let id = new_id();
        let run_id = format!("acp-new-{}", uuid::Uuid::now_v7());
        history::RunLog::new(
            self.agent.store().clone(),
            &self.tenant,
            self.agent.name(),
            &id,
            &run_id,
        )
        .append_meta(&setup.0.to_string_lossy())
        .await;
        self.insert(&id, setup, None);
        Ok(id)
    }

    /// `session/load`: replays the session's recorded history as `session/update`s, then keeps the
    /// session open for prompts (its thread continues from the stored checkpoint).
    pub async fn load(&self, id: &str, cwd: &str, mcp: &[McpServerSpec]) -> Result<(), RpcError> {
        check_id(id)?;
        let setup = self.setup(cwd, mcp)?;
        let updates = history::replay(self.agent.store().as_ref(), &self.tenant, self.agent.name(), id)
            .await
            .map_err(history_error)?;
        let Some(updates) = updates else {
            return Err(not_found(id));
        };
        self.refuse_busy(id)?;
        self.insert(id, setup, None);
        for update in updates {
            self.peer.notify(
                "session/update",
                SessionNotification {
                    session_id: id.to_owned(),
                    update,
                },
            );
        }
        Ok(())
    }

    /// `session/resume`: attaches to a recorded session (or one open in this connection) without
    /// replaying its history; prompts continue its thread.
    pub async fn resume(&self, id: &str, cwd: &str, mcp: &[McpServerSpec]) -> Result<(), RpcError> {
        check_id(id)?;
        let setup = self.setup(cwd, mcp)?;
        self.require_known(id).await?;
        self.refuse_busy(id)?;
        self.insert(id, setup, None);
        Ok(())
    }

    /// `session/fork`: a new session (a new `acp-` id) whose thread forks `parent`'s checkpoint at
    /// its first prompt ([`Thread::fork`]; a parent without one gives a fresh thread) and whose
    /// history starts as a copy of the parent's. The parent is not changed.
    pub async fn fork(&self, parent: &str, cwd: &str, mcp: &[McpServerSpec]) -> Result<String, RpcError> {
        check_id(parent)?;
        let setup = self.setup(cwd, mcp)?;
        self.require_known(parent).await?;
        let store = self.agent.store().clone();
        let checkpointed = store
            .resolve(&Query::key(&self.tenant, self.agent.name(), parent))
            .await
            .map_err(history_error)?
            .is_some();
        let id = new_id();
        let thread = if checkpointed {
            let parent_thread = self
                .get(parent)
                .map(|s| s.thread.clone())
                .unwrap_or_else(|_| self.agent.thread(parent));
            parent_thread.fork(&id)
        } else {
            self.agent.thread(&id)
        };
        history::copy(
            store.as_ref(),
            &self.tenant,
            self.agent.name(),
            parent,
            &id,
            &setup.0.to_string_lossy(),
        )
        .await
        .map_err(history_error)?;
        self.insert(&id, setup, Some(thread));
        Ok(id)
    }

    /// Not found unless `id` is open in this connection or has recorded history.
    async fn require_known(&self, id: &str) -> Result<(), RpcError> {
        if self.get(id).is_ok() {
            return Ok(());
        }
        let recorded = history::exists(self.agent.store().as_ref(), &self.tenant, self.agent.name(), id)
            .await
            .map_err(history_error)?;
        if recorded { Ok(()) } else { Err(not_found(id)) }
    }

    fn refuse_busy(&self, id: &str) -> Result<(), RpcError> {
        if self.get(id).is_ok_and(|s| s.is_busy()) {
            return Err(RpcError::new(
                INTERNAL_ERROR,
                "a prompt is running in this session",
            ));
        }
        Ok(())
    }

    /// `session/list`: one page of the sessions this edge recorded (see [`listing`]).
    pub async fn list(&self, params: &ListSessionsParams) -> Result<ListSessionsResponse, RpcError> {
        listing::list(
            self.agent.store().as_ref(),
            &self.tenant,
            self.agent.name(),
            params,
        )
        .await
    }

    fn get(&self, id: &str) -> Result<Arc<Session>, RpcError> {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
            .ok_or_else(|| not_found(id))
    }

    /// `session/prompt`, first half: starts the run (synchronously) and returns what drives it to
    /// its `stopReason`.
    pub fn start_prompt(
        self: &Arc<Self>,
        session_id: &str,
        prompt: &[ContentBlock],
    ) -> Result<impl Future<Output = Result<Value, RpcError>> + Send + use<>, RpcError> {
        let session = self.get(session_id)?;
        let text = prompt_text(prompt)?;
        let plan = {
            let mut active = session.active.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(running) = active.as_ref().filter(|a| a.stream.try_result().is_none()) {
                Plan::Join(running.stream.clone())
            } else {
                let admitted = match &self.gate {
                    Some(gate) => Some(gate.admit(&self.tenant)?),
                    None => None,
                };
                let mut opts = CallOptions::new()
                    .policy(self.policy.clone())
                    .approvals_as_events();
                if !self.remote {
                    opts = opts.workspace(session.cwd.clone());
                }
                if let Some(identity) = &self.identity {
                    opts = opts.identity(identity.clone());
                }
                if !session.mcp.is_empty() {
                    opts = opts.mcp(session.mcp.clone());
                }
                let stream = session.thread.send(&text, opts);
                *active = Some(Active {
                    stream: stream.clone(),
                    cancelled: false,
                });
                Plan::Start(stream, admitted)
            }
        };
        let sessions = self.clone();
        Ok(async move {
            match plan {
                Plan::Start(stream, admitted) => {
                    let outcome = sessions.drive(session, stream, text).await;
                    drop(admitted);
                    outcome
                }
                Plan::Join(stream) => sessions.join(session, stream, text).await,
            }
        })
    }

    /// A prompt sent while the session's turn runs joins it as a supplemental message (delivered
    /// when the driver can take it, then recorded in the history as the user's message); it ends with
    /// the turn's `stopReason`. A driver that takes no message now refuses it, and a message the turn
    /// ended without delivering fails it (`-32603`, the reason in `data`).
    async fn join(&self, session: Arc<Session>, stream: Stream, text: String) -> Result<Value, RpcError> {
        let id = match stream.send(text.clone(), MessageOptions::new()).await {
            Ok(id) => id,
            Err(e) => {
                return Err(RpcError::new(
                    INTERNAL_ERROR,
                    "a prompt is already running in this session and it takes no message now",
                )
                .with_data(json!({ "reason": e.to_string() })));
            }
        };
        let outcome = stream.result().await;
        if let Ok(result) = &outcome {
            let delivered = result
                .messages()
                .iter()
                .any(|m| m.id == id && m.state == MessageState::Delivered);
            if !delivered {
                return Err(RpcError::new(
                    INTERNAL_ERROR,
                    "the turn ended before the message was delivered; send it again as a prompt",
                )
                .with_data(json!({ "messageId": id })));
            }
        }
        RunLog::new(
            self.agent.store().clone(),
            &self.tenant,
            self.agent.name(),
            &session.id,
            &format!("acp-msg-{}", uuid::Uuid::now_v7()),
        )
        .append(&SessionUpdate::UserMessageChunk {
            content: ContentBlock::text(text),
        })
        .await;
        let cancelled = session
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|a| a.cancelled && a.stream.run_id() == stream.run_id());
        let response = stop(&outcome, cancelled)?;
        serde_json::to_value(response).map_err(|e| RpcError::new(INTERNAL_ERROR, e.to_string()))
    }

    async fn drive(&self, session: Arc<Session>, stream: Stream, text: String) -> Result<Value, RpcError> {
        let run_id = stream.run_id().to_owned();
        let mut log = RunLog::new(
            self.agent.store().clone(),
            &self.tenant,
            self.agent.name(),
            &session.id,
            &run_id,
        );
        log.append_meta(&session.cwd.to_string_lossy()).await;
        log.append(&SessionUpdate::UserMessageChunk {
            content: ContentBlock::text(text),
        })
        .await;
        let mut events = stream.events();
        while let Some(ev) = events.next().await {
            if let Payload::ApprovalRequest(req) = &ev.payload {
                if req.is_live() {
                    tokio::spawn(permission::ask(
                        self.peer.clone(),
                        session.id.clone(),
                        req.clone(),
                    ));
                }
                continue;
            }
            for update in translate::updates(&run_id, &ev) {
                self.peer.notify(
                    "session/update",
                    SessionNotification {
                        session_id: session.id.clone(),
                        update: update.clone(),
                    },
                );
                log.append(&update).await;
            }
        }
        let outcome = stream.result().await;
        let cancelled = session
            .active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|a| a.cancelled);
        let response = stop(&outcome, cancelled)?;
        serde_json::to_value(response).map_err(|e| RpcError::new(INTERNAL_ERROR, e.to_string()))
    }

    /// `session/cancel`: cancels the session's running prompt, if any (unknown sessions are ignored:
    /// a notification has no answer).
    pub fn cancel(&self, session_id: &str) {
        let Ok(session) = self.get(session_id) else {
            tracing::info!(session = session_id, "acp: cancel for an unknown session");
            return;
        };
        if let Some(active) = session.active.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            active.cancelled = true;
            active.stream.cancel();
        }
    }

    /// `session/close`: cancels the session's running prompt (its turn ends `cancelled`) and forgets
    /// the session in this connection; its thread and history stay in the store (it can be loaded or
    /// resumed again). A session not open here is not found.
    pub fn close(&self, session_id: &str) -> Result<(), RpcError> {
        let session = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(session_id)
            .ok_or_else(|| not_found(session_id))?;
        if let Some(active) = session.active.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            active.cancelled = true;
            active.stream.cancel();
        }
        Ok(())
    }

    /// Cancels every running prompt (the client went away).
    pub fn cancel_all(&self) {
        let open: Vec<_> = self
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for s in open {
            if let Some(a) = s.active.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                a.stream.cancel();
            }
        }
    }
}

fn new_id() -> String {
    format!("{}{}", listing::PREFIX, uuid::Uuid::now_v7())
}

fn check_id(id: &str) -> Result<(), RpcError> {
    if id.is_empty() || id.contains('\0') || id.len() > 512 {
        return Err(RpcError::invalid_params(
            "sessionId must be 1-512 bytes without NUL",
        ));
    }
    Ok(())
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(RESOURCE_NOT_FOUND, "Resource not found").with_data(json!({ "sessionId": id }))
}

fn history_error(e: crate::store::StoreError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, format!("cannot read the session's history: {e}"))
}

impl Sessions {
    /// A session's working directory (absolute) and MCP servers, checked. A remote client adds no
    /// stdio server (it would run a command on this machine) and remote ones only when allowed.
    fn setup(&self, cwd: &str, mcp: &[McpServerSpec]) -> Result<(PathBuf, Vec<McpServer>), RpcError> {
        let cwd = PathBuf::from(cwd);
        if !cwd.is_absolute() {
            return Err(RpcError::invalid_params("cwd must be an absolute path"));
        }
        if self.remote {
            for (i, spec) in mcp.iter().enumerate() {
                let refusal = match spec {
                    McpServerSpec::Stdio { .. } => Some(
                        "a remote client may add HTTP or SSE MCP servers only (stdio runs a command on the server)",
                    ),
                    McpServerSpec::Remote { .. } if !self.remote_mcp => {
                        Some("this agent takes no MCP servers from clients (allow_request.mcp)")
                    }
                    McpServerSpec::Remote { .. } => None,
                };
                if let Some(why) = refusal {
                    return Err(RpcError::invalid_params(why)
                        .with_data(json!({ "field": format!("mcpServers[{i}]") })));
                }
            }
        }
        Ok((cwd, mcp_servers(mcp)?))
    }
}

impl Session {
    fn is_busy(&self) -> bool {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|a| a.stream.try_result().is_none())
    }
}

/// The prompt text of `blocks`: text as is, resource links as `[name](uri)`, embedded text
/// resources inside `<resource uri="…">` tags. Images, audio and blob resources are refused (the
/// capabilities say so).
pub fn prompt_text(blocks: &[ContentBlock]) -> Result<String, RpcError> {
    if blocks.is_empty() {
        return Err(RpcError::invalid_params("prompt must not be empty"));
    }
    let mut parts = Vec::with_capacity(blocks.len());
    for b in blocks {
        parts.push(match b {
            ContentBlock::Text { text } => text.clone(),
            ContentBlock::ResourceLink { uri, name } => format!("[{name}]({uri})"),
            ContentBlock::Resource { resource } => match &resource.text {
                Some(text) => format!("<resource uri=\"{}\">\n{text}\n</resource>", resource.uri),
                None => return Err(RpcError::invalid_params("blob resources are not supported")),
            },
            ContentBlock::Image { .. } => {
                return Err(RpcError::invalid_params("image prompts are not supported"));
            }
            ContentBlock::Audio { .. } => {
                return Err(RpcError::invalid_params("audio prompts are not supported"));
            }
        });
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        return Err(RpcError::invalid_params("prompt has no text"));
    }
    Ok(text)
}

fn mcp_servers(specs: &[McpServerSpec]) -> Result<Vec<McpServer>, RpcError> {
    let pairs = |v: &[super::wire::NameValue]| v.iter().map(|p| (p.name.clone(), p.value.clone())).collect();
    specs
        .iter()
        .map(|s| {
            let (name, transport) = match s {
                McpServerSpec::Stdio {
                    name,
                    command,
                    args,
                    env,
                } => (
                    name,
                    McpTransport::Stdio {
                        command: command.clone(),
                        args: args.clone(),
                        env: pairs(env),
                    },
                ),
                McpServerSpec::Remote {
                    kind,
                    name,
                    url,
                    headers,
                } => (
                    name,
                    match kind {
                        RemoteKind::Http => McpTransport::Http {
                            url: url.clone(),
                            headers: pairs(headers),
                            bearer_token_env: None,
                        },
                        RemoteKind::Sse => McpTransport::Sse {
                            url: url.clone(),
                            headers: pairs(headers),
                            bearer_token_env: None,
                        },
                    },
                ),
            };
            if name.is_empty() {
                return Err(RpcError::new(INVALID_PARAMS, "an MCP server needs a name"));
            }
            Ok(McpServer {
                name: name.clone(),
                transport,
                required: false,
            })
        })
        .collect()
}

fn turn_usage(u: &Usage) -> TurnUsage {
    TurnUsage {
        total_tokens: u.tokens(),
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cached_read_tokens: (u.cached_input_tokens > 0).then_some(u.cached_input_tokens),
    }
}

/// The `session/prompt` answer for a run's outcome: a clean run ends the turn; a cancelled one (or
/// any failure after the client's `session/cancel`) is `cancelled`; an approval the policy turned into
/// an abort is `refusal`; a composite limit is `max_turn_requests`; any other failure is a JSON-RPC
/// error carrying the contract's reason.
pub fn stop(outcome: &RunOutcome, cancel_requested: bool) -> Result<PromptResponse, RpcError> {
    let (stop_reason, usage) = match outcome {
        Ok(r) => (StopReason::EndTurn, r.usage.as_ref()),
        Err(e) => {
            let reason = e.reason();
            let stop = match reason {
                _ if cancel_requested => StopReason::Cancelled,
                Some(FailureReason::Cancelled) => StopReason::Cancelled,
                Some(FailureReason::ApprovalDenied | FailureReason::ApprovalTimeout) => StopReason::Refusal,
                Some(FailureReason::LimitExceeded) => StopReason::MaxTurnRequests,
                _ => {
                    return Err(RpcError::new(INTERNAL_ERROR, e.to_string()).with_data(json!({
                        "reason": reason.as_ref().map(|r| r.as_str().to_owned()),
                    })));
                }
            };
            (stop, None)
        }
    };
    Ok(PromptResponse {
        stop_reason,
        usage: usage.map(turn_usage),
    })
}
