//! The ACP server edge: `agent-adaptor acp` is an Agent Client Protocol agent (JSON-RPC 2.0, one
//! frame per line, over stdio) backed by a local [`Agent`]. Sessions are threads, prompts are runs,
//! approvals are `session/request_permission`s answered exactly once, `session/cancel` cancels the
//! run, and `session/load` replays the session's history from the store's event log.
//!
//! Files: [`wire`] (ACP types), [`rpc`] (framing, errors, the peer), [`session`] (threads and runs;
//! new, load, resume, fork), [`listing`] (`session/list`), [`translate`] (events → updates),
//! [`permission`] (approvals), [`history`] (the durable log).
//! Bad input is a JSON-RPC error and the loop goes on; stdout carries protocol frames only.

pub mod history;
pub mod listing;
pub mod permission;
pub mod session;
pub mod translate;

/// The protocol itself (wire types, JSON-RPC framing) is core's, shared with the ACP client driver.
pub use agent_adaptor_core::acp::{rpc, wire};

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use crate::driver::Policy;
use crate::runtime::Agent;
use rpc::{Incoming, METHOD_NOT_FOUND, PARSE_ERROR, Peer, RpcError};
use session::Sessions;
use wire::{
    AgentCapabilities, CancelParams, Implementation, InitializeParams, InitializeResponse,
    ListSessionsParams, LoadSessionParams, McpCapabilities, NewSessionParams, NewSessionResponse,
    PROTOCOL_VERSION, PromptCapabilities, PromptParams, ResumeSessionParams, SessionCapabilities,
};

/// The longest frame read (longer lines are answered with a parse error and skipped).
pub const MAX_FRAME: usize = 16 * 1024 * 1024;

/// How the edge serves.
#[derive(Clone, Default)]
pub struct Config {
    /// The approval policy of every prompt (timeouts and fallbacks included).
    pub policy: Policy,
    /// The tenant the sessions, their threads and their history belong to (`None`: the default
    /// tenant, as for a local editor).
    pub tenant: Option<String>,
    /// The client is remote (the service's `/v1/acp`): its `cwd` is recorded (and listed) but is
    /// not the run's workspace (the agent's configured one is), and it may not start commands on
    /// this machine (stdio MCP servers are refused).
    pub remote: bool,
    /// A remote client may add HTTP and SSE MCP servers to its sessions (the agent's
    /// `allow_request.mcp`). Ignored for a local client, which may add any.
    pub remote_mcp: bool,
    /// Admission of each prompt (the service's run limits); `None` admits every prompt.
    pub gate: Option<Arc<dyn Gate>>,
    /// Leave the agent open when the input closes (the service shares its agents between
    /// connections); by default the edge owns the agent and closes it.
    pub keep_agent: bool,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("policy", &self.policy)
            .field("tenant", &self.tenant)
            .field("remote", &self.remote)
            .field("remote_mcp", &self.remote_mcp)
            .field("gate", &self.gate.is_some())
            .field("keep_agent", &self.keep_agent)
            .finish()
    }
}

/// Admission of one prompt: a guard held until the prompt's run ends, or the JSON-RPC error the
/// prompt is answered with (a full replica, a tenant at its run limit, a draining service).
pub trait Gate: Send + Sync {
    /// Admits one prompt of `tenant`.
    fn admit(&self, tenant: &str) -> Result<Box<dyn std::any::Any + Send>, RpcError>;
}

fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(RpcError::invalid_params)
}

/// Serves ACP on `input`/`output` until the input closes, then cancels running prompts and closes
/// the agent.
pub async fn serve<R, W>(agent: Agent, config: Config, input: R, mut output: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(mut line) = rx.recv().await {
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let peer = Arc::new(Peer::new(tx));
    let keep_agent = config.keep_agent;
    let sessions = Arc::new(Sessions::new(agent.clone(), config, peer.clone()));
    let mut lines = FramedRead::new(input, LinesCodec::new_with_max_length(MAX_FRAME));
    let mut tasks = tokio::task::JoinSet::new();
    while let Some(line) = lines.next().await {
        let line = match line {
            Ok(l) => l,
            Err(LinesCodecError::MaxLineLengthExceeded) => {
                peer.respond(Value::Null, Err(RpcError::new(PARSE_ERROR, "frame too long")));
                continue;
            }
            Err(LinesCodecError::Io(e)) => {
                tracing::warn!(error = %e, "acp: input failed");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match rpc::classify(&line) {
            Incoming::Invalid { id, error } => peer.respond(id, Err(error)),
            Incoming::Response { id, outcome } => {
                if !peer.complete(&id, outcome) {
                    tracing::info!(?id, "acp: a response to no request");
                }
            }
            Incoming::Notification { method, params } => match method.as_str() {
                "session/cancel" => match parse::<CancelParams>(params) {
                    Ok(p) => sessions.cancel(&p.session_id),
                    Err(e) => tracing::info!(error = %e, "acp: bad session/cancel"),
                },
                other => tracing::info!(method = other, "acp: unknown notification ignored"),
            },
            Incoming::Request { id, method, params } => {
                dispatch(&sessions, &peer, &mut tasks, id, &method, params);
            }
        }
        while tasks.try_join_next().is_some() {}
    }
    sessions.cancel_all();
    peer.close();
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if !keep_agent && let Err(e) = agent.close(Duration::from_secs(10)).await {
        tracing::warn!(error = %e, "acp: agent close");
    }
    drop(sessions);
    drop(peer);
    match writer.await {
        Ok(r) => r,
        Err(e) => Err(std::io::Error::other(e)),
    }
}

fn dispatch(
    sessions: &Arc<Sessions>,
    peer: &Arc<Peer>,
    tasks: &mut tokio::task::JoinSet<()>,
    id: Value,
    method: &str,
    params: Value,
) {
    let answer = |outcome: Result<Value, RpcError>| peer.respond(id.clone(), outcome);
    let json = |v: Result<Value, serde_json::Error>| {
        v.map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e.to_string()))
    };
    match method {
        "initialize" => answer(parse::<InitializeParams>(params).and_then(|p| {
            let _ = p.client_capabilities;
            json(serde_json::to_value(initialize(
                sessions.agent(),
                p.protocol_version,
            )))
        })),
        "authenticate" => answer(Ok(serde_json::json!({}))),
        "session/new" => match parse::<NewSessionParams>(params) {
            Err(e) => answer(Err(e)),
            Ok(p) => {
                let (sessions, peer) = (sessions.clone(), peer.clone());
                tasks.spawn(async move {
                    let outcome = match sessions.create(&p.cwd, &p.mcp_servers).await {
                        Ok(session_id) => serde_json::to_value(NewSessionResponse { session_id })
                            .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e.to_string())),
                        Err(e) => Err(e),
                    };
                    peer.respond(id, outcome);
                });
            }
        },
        "session/load" => match parse::<LoadSessionParams>(params) {
            Err(e) => answer(Err(e)),
            Ok(p) => {
                let (sessions, peer) = (sessions.clone(), peer.clone());
                tasks.spawn(async move {
                    let outcome = sessions
                        .load(&p.session_id, &p.cwd, &p.mcp_servers)
                        .await
                        .map(|()| serde_json::json!({}));
                    peer.respond(id, outcome);
                });
            }
        },
        "session/resume" => match parse::<ResumeSessionParams>(params) {
            Err(e) => answer(Err(e)),
            Ok(p) => {
                let (sessions, peer) = (sessions.clone(), peer.clone());
                tasks.spawn(async move {
                    let outcome = sessions
                        .resume(&p.session_id, &p.cwd, &p.mcp_servers)
                        .await
                        .map(|()| serde_json::json!({}));
                    peer.respond(id, outcome);
                });
            }
        },
        "session/fork" if sessions.agent().descriptor().sessions.fork => {
            match parse::<ResumeSessionParams>(params) {
                Err(e) => answer(Err(e)),
                Ok(p) => {
                    let (sessions, peer) = (sessions.clone(), peer.clone());
                    tasks.spawn(async move {
                        let outcome = sessions
                            .fork(&p.session_id, &p.cwd, &p.mcp_servers)
                            .await
                            .and_then(|session_id| {
                                serde_json::to_value(NewSessionResponse { session_id })
                                    .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e.to_string()))
                            });
                        peer.respond(id, outcome);
                    });
                }
            }
        }
        "session/close" => answer(
            parse::<CancelParams>(params)
                .and_then(|p| sessions.close(&p.session_id))
                .map(|()| serde_json::json!({})),
        ),
        "session/list" => {
            let params = if params.is_null() {
                serde_json::json!({})
            } else {
                params
            };
            match parse::<ListSessionsParams>(params) {
                Err(e) => answer(Err(e)),
                Ok(p) => {
                    let (sessions, peer) = (sessions.clone(), peer.clone());
                    tasks.spawn(async move {
                        let outcome = sessions.list(&p).await.and_then(|page| {
                            serde_json::to_value(page)
                                .map_err(|e| RpcError::new(rpc::INTERNAL_ERROR, e.to_string()))
                        });
                        peer.respond(id, outcome);
                    });
                }
            }
        }
        "session/prompt" => match parse::<PromptParams>(params)
            .and_then(|p| sessions.start_prompt(&p.session_id, &p.prompt))
        {
            Err(e) => answer(Err(e)),
            Ok(run) => {
                let peer = peer.clone();
                tasks.spawn(async move {
                    let outcome = run.await;
                    peer.respond(id, outcome);
                });
            }
        },
        other => answer(Err(RpcError::new(METHOD_NOT_FOUND, "Method not found")
            .with_data(serde_json::json!({ "method": other })))),
    }
}

/// The `initialize` answer: version 1, `loadSession` (implemented over the store's log), the
/// session methods `list`, `resume` and `close` (and `fork` when the agent's driver forks), text and
/// embedded text resources in prompts, and the MCP transports the agent's driver declares.
pub fn initialize(agent: &Agent, _requested: u16) -> InitializeResponse {
    let mcp = &agent.descriptor().mcp;
    InitializeResponse {
        protocol_version: PROTOCOL_VERSION,
        agent_capabilities: AgentCapabilities {
            load_session: true,
            prompt_capabilities: PromptCapabilities {
                image: false,
                audio: false,
                embedded_context: true,
            },
            mcp_capabilities: McpCapabilities {
                http: mcp.http,
                sse: mcp.sse,
            },
            session_capabilities: SessionCapabilities {
                list: Some(serde_json::json!({})),
                resume: Some(serde_json::json!({})),
                fork: agent.descriptor().sessions.fork.then(|| serde_json::json!({})),
                close: Some(serde_json::json!({})),
            },
        },
        auth_methods: Vec::new(),
        agent_info: Implementation {
            name: "agent-adaptor".into(),
            title: format!("agent-adaptor ({})", agent.descriptor().display_name),
            version: env!("CARGO_PKG_VERSION").into(),
        },
    }
}
