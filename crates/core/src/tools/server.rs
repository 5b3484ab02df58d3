//! [`HostedTools`]: the Agent-owned loopback MCP server that delivers host tools to a provider CLI.
//!
//! Streamable HTTP (rmcp) on `127.0.0.1`, port 0. Every request must carry `Authorization: Bearer
//! <token>` (a random 256-bit token, compared in constant time), a `Host` naming this loopback listener,
//! and no `Origin` (a CLI never sends one; a browser always does). The token reaches the CLI only through
//! an environment variable whose name is random per Agent; the MCP declaration names the variable, never
//! the value.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rand::RngExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

use super::define::Tool;
use super::error::ToolDefinitionError;
use crate::vocab::{McpServer, McpTransport};

/// The MCP server name host tools are declared under (a host MCP declaration may not reuse it).
pub const HOSTED_SERVER_NAME: &str = crate::vocab::HOSTED_TOOLS_SERVER;
/// Prefix of the per-Agent random variable that carries the bearer token.
pub const TOKEN_ENV_PREFIX: &str = "AGENT_ADAPTOR_TOOLS_TOKEN_";

/// The MCP handler over an immutable tool set.
#[derive(Clone)]
struct Handler {
    tools: Arc<Vec<Tool>>,
}

fn mcp_tool(t: &Tool) -> rmcp::model::Tool {
    let hints = t.hints();
    let mut out = rmcp::model::Tool::new(
        t.name().to_owned(),
        t.description().to_owned(),
        Arc::new(t.input_object()),
    );
    if let Some(o) = t.output_schema().and_then(|o| o.as_object()) {
        out = out.with_raw_output_schema(Arc::new(o.clone()));
    }
    let mut ann = ToolAnnotations::new();
    if hints.read_only {
        ann = ann.read_only(true);
    }
    if hints.idempotent {
        ann.idempotent_hint = Some(true);
    }
    out.with_annotations(ann)
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(HOSTED_SERVER_NAME, env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(mcp_tool).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tools.iter().find(|t| t.name() == name).map(mcp_tool)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.tools.iter().find(|t| t.name() == request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        };
        let args = serde_json::Value::Object(request.arguments.unwrap_or_default());
        let result = match tool.call(args).await {
            Ok(value) if tool.output_schema().is_some() => CallToolResult::structured(value),
            Ok(value) => {
                let text = match value {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                CallToolResult::success(vec![ContentBlock::text(text)])
            }
            Err(e) => {
                if e.as_rejection().is_none() {
                    tracing::warn!(tool = tool.name(), error = %e, "host tool failed (sanitized for the model)");
                }
                CallToolResult::error(vec![ContentBlock::text(e.model_text(tool.name()))])
            }
        };
        Ok(result.into())
    }
}

/// What the guard middleware checks.
#[derive(Clone)]
struct Guard {
    bearer: Arc<str>,
    hosts: Arc<[String]>,
}

fn ct_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn refuse(status: StatusCode, why: &'static str) -> Response {
    let mut r = (status, why).into_response();
    if status == StatusCode::UNAUTHORIZED {
        r.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer"),
        );
    }
    r
}

fn check(guard: &Guard, headers: &HeaderMap) -> Result<(), (StatusCode, &'static str)> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !guard.hosts.iter().any(|h| h == host) {
        return Err((StatusCode::FORBIDDEN, "host not allowed"));
    }
    if headers.contains_key(header::ORIGIN) {
        return Err((StatusCode::FORBIDDEN, "origin not allowed"));
    }
    let auth = headers
        .get(header::AUTHORIZATION)
        .map(|h| h.as_bytes())
        .unwrap_or_default();
    if !ct_eq(auth, guard.bearer.as_bytes()) {
        return Err((StatusCode::UNAUTHORIZED, "unauthorized"));
    }
    Ok(())
}

async fn guard_layer(State(guard): State<Guard>, req: Request, next: Next) -> Response {
    match check(&guard, req.headers()) {
        Ok(()) => next.run(req).await,
        Err((status, why)) => refuse(status, why),
    }
}

/// An Agent-owned loopback MCP server offering host tools. Dropping it stops the server.
pub struct HostedTools {
    addr: SocketAddr,
    token: String,
    env_name: String,
    tools: Arc<Vec<Tool>>,
    cancel: CancellationToken,
    pending: Mutex<Option<std::net::TcpListener>>,
    task: Mutex<Option<tokio::task::JoinHandle<Result<(), String>>>>,
}

impl std::fmt::Debug for HostedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedTools")
            .field("addr", &self.addr)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    rand::rng().fill(&mut b[..]);
    hex::encode(b)
}

impl HostedTools {
    /// Validates the tools and binds `127.0.0.1:0` without serving yet (no runtime needed); the first
    /// [`HostedTools::ensure_serving`] starts the server.
    pub fn bind(tools: Vec<Tool>) -> Result<HostedTools, BindError> {
        let mut names = std::collections::HashSet::new();
        for t in &tools {
            t.validate()?;
            if !names.insert(t.name().to_owned()) {
                return Err(ToolDefinitionError::DuplicateName(t.name().to_owned()).into());
            }
        }
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        Ok(HostedTools {
            addr: listener.local_addr()?,
            token: random_hex(32),
            env_name: format!("{TOKEN_ENV_PREFIX}{}", random_hex(8).to_uppercase()),
            tools: Arc::new(tools),
            cancel: CancellationToken::new(),
            pending: Mutex::new(Some(listener)),
            task: Mutex::new(None),
        })
    }

    /// Binds and starts serving at once.
    pub async fn start(tools: Vec<Tool>) -> Result<HostedTools, BindError> {
        let h = HostedTools::bind(tools)?;
        h.ensure_serving()?;
        Ok(h)
    }

    /// Starts serving if not yet started (must run inside a tokio runtime). Idempotent.
    pub fn ensure_serving(&self) -> Result<(), BindError> {
        let Some(std_listener) = self.pending.lock().unwrap_or_else(|p| p.into_inner()).take() else {
            return Ok(());
        };
        let listener = tokio::net::TcpListener::from_std(std_listener)?;
        let port = self.addr.port();
        let hosts: Vec<String> = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")];
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts.clone())
            .enforce_origin_validation()
            .with_cancellation_token(self.cancel.child_token());
        let handler = Handler {
            tools: self.tools.clone(),
        };
        let service = StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(LocalSessionManager::default()),
            config,
        );
        let guard = Guard {
            bearer: format!("Bearer {}", self.token).into(),
            hosts: hosts.into(),
        };
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .layer(axum::middleware::from_fn_with_state(guard, guard_layer));
        let cancel = self.cancel.clone();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router)
                .with_graceful_shutdown(async move { cancel.cancelled().await })
                .await;
            served.map_err(|e| {
                tracing::warn!(error = %e, "the host tools MCP server stopped");
                e.to_string()
            })
        });
        *self.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        Ok(())
    }

    /// The server's address (always on 127.0.0.1).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.addr.port())
    }

    /// The bearer token (never put it in a declaration; it travels in [`HostedTools::env`]).
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The random per-Agent name of the variable that carries the token.
    pub fn token_env(&self) -> &str {
        &self.env_name
    }

    /// The tools offered.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The MCP declaration a driver materializes: streamable HTTP with a bearer token from
    /// [`HostedTools::token_env`].
    pub fn declaration(&self) -> McpServer {
        McpServer {
            name: HOSTED_SERVER_NAME.into(),
            transport: McpTransport::Http {
                url: self.url(),
                headers: BTreeMap::new(),
                bearer_token_env: Some(self.env_name.clone()),
            },
            required: true,
        }
    }

    /// The environment a provider process needs: the token under its random name.
    pub fn env(&self) -> BTreeMap<String, String> {
        BTreeMap::from([(self.env_name.clone(), self.token.clone())])
    }

    /// Refuses host MCP declarations that reuse the hosted server's name or alias its token variable
    /// (as a bearer-token env, a stdio env key, or a `${VAR}` header reference).
    pub fn check_aliasing(&self, servers: &[McpServer]) -> Result<(), String> {
        let var = &self.env_name;
        let reference = |s: &str| s.contains(&format!("${{{var}}}")) || s.contains(&format!("${var}"));
        for s in servers {
            if s.name == HOSTED_SERVER_NAME {
                return Err(format!(
                    "MCP server name {HOSTED_SERVER_NAME:?} is reserved for host tools"
                ));
            }
            let aliased = match &s.transport {
                McpTransport::Stdio { env, args, .. } => {
                    env.contains_key(var)
                        || env.values().any(|v| reference(v))
                        || args.iter().any(|a| reference(a))
                }
                McpTransport::Http {
                    headers,
                    bearer_token_env,
                    url,
                }
                | McpTransport::Sse {
                    headers,
                    bearer_token_env,
                    url,
                } => {
                    bearer_token_env.as_deref() == Some(var.as_str())
                        || headers.values().any(|v| reference(v))
                        || reference(url)
                }
            };
            if aliased {
                return Err(format!(
                    "MCP server {:?} aliases the host tools token variable",
                    s.name
                ));
            }
        }
        Ok(())
    }

    /// Stops the server and waits for it (bounded by the caller). Idempotent. An error says why the
    /// server ended badly (its serve loop failed, or its task panicked).
    pub async fn shutdown(&self) -> Result<(), String> {
        self.cancel.cancel();
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).take();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        match task {
            None => Ok(()),
            Some(task) => match task.await {
                Ok(served) => served,
                Err(e) => Err(format!("the host tools server task failed: {e}")),
            },
        }
    }

    /// True once [`HostedTools::shutdown`] began.
    pub fn is_shut_down(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

impl Drop for HostedTools {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

/// Why the hosted server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// A tool definition is invalid.
    #[error(transparent)]
    Definition(#[from] ToolDefinitionError),
    /// Binding the loopback listener failed.
    #[error("binding the host tools listener failed: {0}")]
    Io(#[from] std::io::Error),
}
