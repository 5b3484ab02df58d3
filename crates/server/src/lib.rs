//! The HTTP/SSE/AG-UI service (`agent-adaptor serve`): axum routes over the runtime, the store and the
//! recorder. This layer may import everything; nothing imports it. This crate (`agent-adaptor-server`) also
//! holds the ACP server edge ([`acp`]) and the provider registry ([`providers::registry`]); the facade
//! re-exports them as `agent_adaptor::{server, acp, providers}`.
//!
//! | file | owns |
//! |---|---|
//! | `config` | [`ServerConfig`], [`AgentSpec`], the AG-UI busy policy |
//! | `file` | the TOML configuration file (`serve --config`) |
//! | `histograms` | latency histograms for `/metrics` (requests, time to first event, run duration) |
//! | `auth` | tenants, hashed API keys, the [`Tenant`] extractor and the `/v1` guard (401, rate limit) |
//! | `limits` | per-tenant limits: concurrent runs and request rate (429 + `Retry-After`); `max_active` (503) |
//! | `capacity` | `[processes]`: the kept-process cap and the admission limit, their metrics |
//! | `ip_limits` | per-client-IP request rate of unauthenticated traffic, in a bounded table |
//! | `proxies` | trusted proxies: the client address from `X-Forwarded-For`, only from configured peers |
//! | `connections` | connection limits (timeouts, global and per-IP bounds) and the table enforcing them |
//! | `listen`, `conn_io` | the accept loop (back-off on fd exhaustion) and each connection's timeouts |
//! | `retention` | the background task that applies the event-log retention policy |
//! | `recovery` | crash recovery: a dead process's runs end `interrupted`, their approvals and threads freed |
//! | `agents` | building agents from specs and discovering CLIs (adding a provider = one match arm) |
//! | `runs` | the run registry, the per-run pump (every run's and every Standby execution's), live approvals |
//! | `runlog`, `record` | a run's live log (a bounded window over the durable log); its writer to the store |
//! | `reader` | the one reader of a run's log by cursor (window, then store; `lag`/`gap` notices) |
//! | `listing` | `GET /v1/runs` and a thread's runs: newest first, filtered, cursor-paged, tenant-scoped |
//! | `idempotency` | `Idempotency-Key` on the POSTs that start work: replay, mismatch, in progress |
//! | `usage` | `GET /v1/usage`: usage per tenant, agent and thread (an operator key sees every tenant) |
//! | `metering`, `budget` | each run's usage (tokens, cost from `[[prices]]`, CLI wall and CPU time); budgets that refuse (402) and stop runs |
//! | `rest` | agents, runs, run events, approvals, messages, health |
//! | `agui` | the AG-UI route |
//! | `threads` | threads (create, list, get, fork, archive), thread history across runs, `/metrics` |
//! | `declared` | threads declared through the service: run defaults, fork parents |
//! | `standby` | Standby over HTTP: open, send, cancel, SSE events, release |
//! | `inspect` | the driver's inspection report, each probe under a timeout |
//! | `console` | `GET /` and `GET /console/{file}`: the zero-build run-history console |
//! | `views` | every response body as a `Serialize + ToSchema` type |
//! | `sse` | SSE framing, the stream of a run's log reader |
//! | `body`, `error`, `error_code` | strict JSON bodies, the one JSON error shape, every error code with its status |
//! | `ranges` | the range of every duration and count of a request or the configuration |
//! | `extract` | `Query`, `Path` and raw-body extractors whose rejections are that JSON error shape |
//! | `openapi` | the OpenAPI 3.1 document (`/openapi.json`) and the docs page (`/docs`) |
//! | `telemetry` | request and run spans, the log subscriber (text or JSON lines, `RUST_LOG`) |
//! | `webhooks` | per-tenant webhooks: subscriptions, the signed, retried delivery worker, the delivery log |
//!
//! [`Server::start`] binds, opens the store, builds the agents and serves until
//! [`RunningServer::shutdown`]: stop accepting, end SSE streams with a terminal event, cancel runs and wait
//! for them within the grace period, close the agents (reaping their children).

pub mod acp;
pub mod acp_http;
pub mod agents;
mod agui;
pub mod auth;
mod body;
pub mod budget;
pub mod capacity;
pub mod config;
mod conn_io;
pub mod connections;
pub mod console;
pub mod declared;
pub mod error;
mod error_code;
mod extract;
pub mod file;
pub mod histograms;
mod hyper_errors;
pub mod idempotency;
mod inspect;
pub mod ip_limits;
pub mod limits;
mod listen;
pub mod listing;
mod location;
pub mod metering;
pub mod openapi;
pub mod otel;
mod paths;
pub mod proxies;
pub mod ranges;
pub mod reader;
mod record;
pub mod recovery;
pub mod resources;
mod rest;
pub mod retention;
pub mod runlog;
pub mod runs;
mod sse;
pub mod standby;
pub mod telemetry;
mod threads;
pub mod usage;
pub mod views;
pub mod webhooks;

/// The provider drivers (`agent-adaptor-providers`) and the registry that builds them by name.
pub mod providers {
    pub use agent_adaptor_providers::*;
    pub mod registry;
}

// The core modules and the store at this crate's root, so service code keeps its `crate::runtime::…` paths.
pub(crate) use agent_adaptor_core::{driver, profile, recorder, runtime, skills, tools, vocab, workspace};
pub(crate) use agent_adaptor_store as store;
#[cfg(feature = "testkit")]
pub(crate) use agent_adaptor_testkit as testkit;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, HeaderValue, Method};
use axum::middleware;
use axum::routing::{get, post};

use declared::DeclaredThreads;
use standby::Standbys;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::TraceLayer;

pub use agents::{AgentEntry, AgentError, Agents};
pub use auth::{AuthConfigError, Tenant, TenantSpec};
pub use config::{AgentSpec, BusyPolicy, EventsSpec, ServerConfig};
pub use conn_io::BodyTimedOut;
pub use connections::{ConnectionTable, Connections};
pub use error::{ApiError, ErrorCode};
pub use file::{ConfigError, FileConfig};
pub use ip_limits::IpLimits;
pub use limits::Limits;
pub use proxies::TrustedProxies;
pub use retention::RetentionSettings;
pub use telemetry::LogFormat;

use crate::store::{StoreError, ThreadStore};
use auth::Auth;
use ip_limits::IpLimiter;
use limits::Limiter;
use retention::RetentionMetrics;
use runs::RunRegistry;

/// Why the service could not start or stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The store could not be opened.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// An agent could not be built.
    #[error("agents: {0}")]
    Agents(#[from] AgentError),
    /// The address could not be bound.
    #[error("cannot bind {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The tenants or limits of the configuration are unusable.
    #[error("config: {0}")]
    Config(String),
    /// A non-loopback address was asked for while the service has no authentication (dev mode).
    #[error(
        "refusing to serve {0} without authentication: configure tenants with API keys, bind a loopback \
         address, or pass --allow-remote-without-auth to expose an unauthenticated service on purpose"
    )]
    InsecureBind(SocketAddr),
    /// Serving failed.
    #[error("serve: {0}")]
    Serve(std::io::Error),
    /// Runs did not finish within the shutdown grace period.
    #[error("{0} run(s) did not finish within the shutdown grace period")]
    Undrained(usize),
}

/// The state every handler shares.
pub struct AppState {
    /// The configuration.
    pub config: ServerConfig,
    /// The agents.
    pub agents: Agents,
    /// The store.
    pub store: Arc<dyn ThreadStore>,
    /// The runs of this process.
    pub runs: Arc<RunRegistry>,
    /// Threads declared through the service (create, fork).
    pub declared: DeclaredThreads,
    /// The open Standbys.
    pub standbys: Standbys,
    /// Fires when shutdown begins.
    pub shutdown: CancellationToken,
    /// Fires when a drain begins (SIGTERM): new runs are refused, active ones may finish.
    pub draining: CancellationToken,
    /// The API keys and their tenants.
    pub auth: Auth,
    /// The per-tenant limits.
    pub limits: Arc<Limiter>,
    /// The per-IP limit of unauthenticated requests.
    pub ip_limits: IpLimiter,
    /// What the retention task did.
    pub retention: Arc<RetentionMetrics>,
    /// The open connections, against the connection limits.
    pub connections: Arc<ConnectionTable>,
    /// The webhooks: subscriptions, the outbox, the delivery worker's wake-up and counters.
    pub webhooks: Arc<webhooks::Webhooks>,
    /// The open ACP-over-HTTP connections.
    pub acp: Arc<acp_http::AcpConnections>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState").finish_non_exhaustive()
    }
}

impl AppState {
    /// True once a drain or the shutdown began: new runs answer `503 shutting_down`.
    pub fn refuses_runs(&self) -> bool {
        self.shutdown.is_cancelled() || self.draining.is_cancelled()
    }

    /// Replaces the tenants, their API keys and their limits while serving (what SIGHUP does in
    /// `agent-adaptor serve`): new requests authenticate against the new table; open connections, SSE
    /// streams and running runs go on. Refused — the old table stays — when the tenants are invalid,
    /// when a limit is out of range, or when the new set has no key (a reload never turns
    /// authentication off). Only the tenants are reloaded; every other setting needs a restart.
    /// Returns how many keys the new table holds.
    pub fn reload_tenants(&self, tenants: &[TenantSpec]) -> Result<usize, ServerError> {
        let next = Auth::new(tenants).map_err(|e| ServerError::Config(e.to_string()))?;
        for t in tenants {
            t.limits.validate().map_err(ServerError::Config)?;
        }
        let keys = next.key_count();
        self.auth
            .replace(next)
            .map_err(|e| ServerError::Config(e.to_string()))?;
        self.limits.set_tenants(tenants);
        Ok(keys)
    }
}

/// The service entry point.
#[derive(Debug)]
pub struct Server;

/// A started service: its address, and the handle that shuts it down.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    state: Arc<AppState>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    retention: Option<tokio::task::JoinHandle<()>>,
    deliveries: Option<tokio::task::JoinHandle<()>>,
}

/// The request headers a browser client may send cross-origin: JSON bodies, both API-key forms, SSE
/// resumption, trace context and a client's own request id.
pub const CORS_ALLOW_HEADERS: [&str; 10] = [
    "content-type",
    "idempotency-key",
    "x-request-id",
    "authorization",
    "x-api-key",
    "last-event-id",
    "accept",
    "traceparent",
    acp_http::CONNECTION_HEADER,
    acp_http::SESSION_HEADER,
];

fn cors(origins: &[String]) -> Option<CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let allow = if origins.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        AllowOrigin::list(origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()))
    };
    Some(
        CorsLayer::new()
            .allow_origin(allow)
            .allow_methods([Method::GET, Method::POST, Method::DELETE, Method::OPTIONS])
            // Listed, not `*`: the wildcard does not cover `Authorization` (Fetch standard), so a browser
            // client with a tenant key would be refused.
            .allow_headers(CORS_ALLOW_HEADERS.map(HeaderName::from_static))
            .expose_headers([
                HeaderName::from_static("retry-after"),
                HeaderName::from_static("x-request-id"),
                HeaderName::from_static("location"),
                HeaderName::from_static(idempotency::REPLAYED),
                HeaderName::from_static(acp_http::CONNECTION_HEADER),
                HeaderName::from_static(acp_http::SESSION_HEADER),
            ]),
    )
}

/// The router over `state`. Every `/v1/*` route sits behind [`auth::guard`] (API key -> tenant, request
/// rate); health, readiness, metrics and the OpenAPI document stay open.
pub fn router(state: Arc<AppState>) -> Router {
    let limit = state.config.body_limit;
    let cors = cors(&state.config.cors_origins);
    let v1 = Router::new()
        .route("/v1/agents", get(rest::list_agents))
        .route("/v1/agents/{agent}", get(rest::get_agent))
        .route("/v1/agents/{agent}/inspect", get(inspect::inspect))
        .route("/v1/agents/{agent}/agui", post(agui::named))
        .route("/v1/agui", post(agui::default_agent))
        .route(
            "/v1/agents/{agent}/acp",
            post(acp_http::post_named)
                .get(acp_http::get_named)
                .delete(acp_http::delete_named),
        )
        .route(
            "/v1/acp",
            post(acp_http::post_default)
                .get(acp_http::get_default)
                .delete(acp_http::delete_default),
        )
        .route("/v1/agents/{agent}/runs", post(rest::start_stateless))
        .route(
            "/v1/agents/{agent}/threads/{key}/runs",
            get(listing::list_thread).post(rest::start_on_thread),
        )
        .route(
            "/v1/agents/{agent}/threads",
            get(threads::list).post(threads::create),
        )
        .route("/v1/agents/{agent}/threads/{key}", get(threads::get))
        .route("/v1/agents/{agent}/threads/{key}/fork", post(threads::fork))
        .route(
            "/v1/agents/{agent}/threads/{key}/standby",
            get(standby::get).post(standby::open).delete(standby::release),
        )
        .route(
            "/v1/agents/{agent}/threads/{key}/standby/messages",
            post(standby::send),
        )
        .route(
            "/v1/agents/{agent}/threads/{key}/standby/cancel",
            post(standby::cancel),
        )
        .route(
            "/v1/agents/{agent}/threads/{key}/standby/events",
            get(standby::events),
        )
        .route("/v1/agents/{agent}/threads/{key}/archive", post(threads::archive))
        .route("/v1/agents/{agent}/threads/{key}/events", get(threads::history))
        .route("/v1/runs", get(listing::list))
        .route("/v1/runs/{run_id}", get(rest::get_run))
        .route("/v1/runs/{run_id}/cancel", post(rest::cancel_run))
        .route("/v1/runs/{run_id}/events", get(rest::run_events))
        .route("/v1/runs/{run_id}/messages", post(rest::post_message))
        .route("/v1/runs/{run_id}/approvals", get(rest::list_approvals))
        .route("/v1/runs/{run_id}/approvals/{id}", post(rest::decide))
        .route("/v1/usage", get(usage::list))
        .route(
            "/v1/webhooks",
            get(webhooks::routes::list).post(webhooks::routes::create),
        )
        .route(
            "/v1/webhooks/{id}",
            get(webhooks::routes::get).delete(webhooks::routes::delete),
        )
        .route("/v1/webhooks/{id}/deliveries", get(webhooks::routes::deliveries))
        .route(
            "/v1/webhooks/{id}/deliveries/{delivery}/retry",
            post(webhooks::routes::retry),
        )
        // Inside the guard: an idempotency key is the authenticated tenant's.
        .route_layer(middleware::from_fn_with_state(state.clone(), idempotency::guard))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::guard));
    let r = Router::new()
        .route("/", get(console::page))
        .route("/console/{file}", get(console::file))
        .route("/healthz", get(rest::healthz))
        .route("/readyz", get(rest::readyz))
        .route("/metrics", get(threads::metrics))
        .merge(v1)
        .merge(openapi::routes({
            let state = state.clone();
            move || state.auth.enabled()
        }))
        .fallback(|| async { ApiError::not_found("no such route") })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(DefaultBodyLimit::max(limit))
        .layer(middleware::from_fn_with_state(
            state.runs.metrics.latency.clone(),
            histograms::time_requests,
        ))
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(telemetry::make_span)
                .on_response(telemetry::on_response),
        )
        // Outermost: every request gets an `x-request-id` (the client's own, else a fresh UUID) before its
        // span is made, and every response carries it back, errors and rejections included.
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .with_state(state);
    match cors {
        Some(c) => r.layer(c),
        None => r,
    }
}

/// The agents `config` describes (its `agents`, plus one per provider whose CLI is found when
/// `discover_clis` is on) over `store`, built exactly as [`Server::start`] builds them, without serving
/// them. The command line's `run` and `agents` use it, so they offer what `serve` offers.
pub fn build_agents(config: &ServerConfig, store: Arc<dyn ThreadStore>) -> Result<Agents, AgentError> {
    agents::build(config, &store, HostResources::default())
}

/// What a host embedding the service gives its agents beyond the (serializable) configuration, by
/// agent name: host tools (served to the CLI through the Agent's authenticated loopback MCP server,
/// like [`AgentBuilder::tools`](crate::runtime::AgentBuilder::tools)), a service manager (ensures the
/// agent's declared `services`) and run-scoped service providers. Naming an agent the configuration
/// does not have fails the start.
#[derive(Clone, Default)]
pub struct HostResources {
    tools: BTreeMap<String, Vec<crate::tools::Tool>>,
    managers: BTreeMap<String, Arc<dyn crate::runtime::ServiceManager>>,
    providers: BTreeMap<String, Vec<Arc<dyn crate::runtime::RunServiceProvider>>>,
}

impl std::fmt::Debug for HostResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostResources")
            .field("tools_for", &self.tools.keys().collect::<Vec<_>>())
            .field("managers_for", &self.managers.keys().collect::<Vec<_>>())
            .field("providers_for", &self.providers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl HostResources {
    /// Adds host tools to the agent called `agent`.
    pub fn tools(mut self, agent: &str, tools: impl IntoIterator<Item = crate::tools::Tool>) -> Self {
        self.tools.entry(agent.to_owned()).or_default().extend(tools);
        self
    }

    /// Sets the service manager of the agent called `agent` (it ensures the agent's `services` and
    /// the catalog services a request names, and releases them after each run).
    pub fn service_manager(mut self, agent: &str, manager: Arc<dyn crate::runtime::ServiceManager>) -> Self {
        self.managers.insert(agent.to_owned(), manager);
        self
    }

    /// Adds a run-scoped service provider to the agent called `agent` (attached to each of its runs;
    /// its event source folds into the run's stream).
    pub fn run_service_provider(
        mut self,
        agent: &str,
        provider: Arc<dyn crate::runtime::RunServiceProvider>,
    ) -> Self {
        self.providers.entry(agent.to_owned()).or_default().push(provider);
        self
    }

    /// Takes what the host gives the agent called `agent`.
    pub(crate) fn take(&mut self, agent: &str) -> agents::HostParts {
        agents::HostParts {
            tools: self.tools.remove(agent),
            manager: self.managers.remove(agent),
            providers: self.providers.remove(agent).unwrap_or_default(),
        }
    }

    /// An agent name given resources but not configured (after every configured agent took its own).
    pub(crate) fn leftover(&self) -> Option<String> {
        self.tools
            .keys()
            .chain(self.managers.keys())
            .chain(self.providers.keys())
            .next()
            .cloned()
    }
}

/// Ends the runs a dead process left behind (`recovery`) before the listener accepts; a store that
/// cannot list them is logged, not fatal.
async fn recover_at_start(store: &Arc<dyn ThreadStore>, owner: &str) {
    match recovery::recover(store, owner, true).await {
        Ok(r) if r.runs > 0 => tracing::warn!(
            runs = r.runs,
            approvals = r.approvals,
            leases = r.leases,
            "ended the runs a previous process left mid-flight"
        ),
        Ok(_) => {}
        Err(e) => tracing::error!(error = %e, "crash recovery could not list unfinished runs"),
    }
}

/// Validates the configuration; the tenants' key table.
fn checked(config: &ServerConfig) -> Result<Auth, ServerError> {
    let auth = Auth::new(&config.tenants).map_err(|e| ServerError::Config(e.to_string()))?;
    for l in std::iter::once(&config.limits).chain(config.tenants.iter().map(|t| &t.limits)) {
        l.validate().map_err(ServerError::Config)?;
    }
    config.ip_limits.validate().map_err(ServerError::Config)?;
    config
        .processes
        .validate()
        .map_err(|(field, m)| ServerError::Config(format!("{field}: {m}")))?;
    ranges::check_config(config).map_err(|e| ServerError::Config(e.to_string()))?;
    config
        .webhooks
        .validate()
        .map_err(|(field, m)| ServerError::Config(format!("{field}: {m}")))?;
    if !auth.enabled() && !config.bind.ip().is_loopback() && !config.allow_remote_without_auth {
        return Err(ServerError::InsecureBind(config.bind));
    }
    Ok(auth)
}

impl Server {
    /// Opens the store, builds the agents, binds `config.bind` and starts serving.
    pub async fn start(config: ServerConfig) -> Result<RunningServer, ServerError> {
        Server::start_with(config, HostResources::default()).await
    }

    /// [`Server::start`] with the host's own resources (host tools per agent).
    pub async fn start_with(config: ServerConfig, host: HostResources) -> Result<RunningServer, ServerError> {
        let auth = checked(&config)?;
        let store = crate::store::open(&config.store_url).await?;
        Server::serve(config, store, auth, host).await
    }

    /// Like [`Server::start`] on a store the caller opened (`config.store_url` is not used): a store
    /// wrapped for instrumentation or tests.
    pub async fn start_with_store(
        config: ServerConfig,
        store: Arc<dyn ThreadStore>,
    ) -> Result<RunningServer, ServerError> {
        let auth = checked(&config)?;
        Server::serve(config, store, auth, HostResources::default()).await
    }

    async fn serve(
        config: ServerConfig,
        store: Arc<dyn ThreadStore>,
        auth: Auth,
        host: HostResources,
    ) -> Result<RunningServer, ServerError> {
        let (max_kept, max_active) = config.processes.resolve();
        tracing::debug!(max_kept, max_active, "capacity");
        let limits = Arc::new(Limiter::new(config.limits, &config.tenants).with_max_active(max_active));
        let agents = agents::build(&config, &store, host)?;
        let shutdown = CancellationToken::new();
        recover_at_start(&store, &config.owner).await;
        if store.backend() == "postgres" {
            match recovery::spawn_heartbeat(store.clone(), config.owner.clone(), shutdown.clone()).await {
                Ok(_task) => {}
                Err(e) => tracing::error!(error = %e, "could not take the replica heartbeat lease"),
            }
        }
        let listener = TcpListener::bind(config.bind)
            .await
            .map_err(|source| ServerError::Bind {
                addr: config.bind,
                source,
            })?;
        let addr = listener.local_addr().map_err(|source| ServerError::Bind {
            addr: config.bind,
            source,
        })?;
        let declared = DeclaredThreads::new(store.clone());
        let config_ip_limits = config.ip_limits;
        let config_connections = config.connections;
        let config_proxies = config.trusted_proxies.clone();
        let config_acp_idle = config.acp_idle;
        let metering = metering::Metering::new(config.prices.clone(), config.budgets.clone());
        let hooks = Arc::new(webhooks::Webhooks::new(
            &store,
            config.webhooks.clone(),
            auth.enabled(),
        ));
        let runs = Arc::new(
            RunRegistry::with_metering(config.record_backlog, config.live_window, Arc::new(metering))
                .with_webhooks(hooks.clone()),
        );
        let state = Arc::new(AppState {
            config,
            agents,
            store,
            runs,
            declared,
            standbys: Standbys::default(),
            shutdown,
            draining: CancellationToken::new(),
            auth,
            limits,
            ip_limits: IpLimiter::new(config_ip_limits),
            retention: Arc::new(RetentionMetrics::default()),
            connections: Arc::new(ConnectionTable::new(&config_connections).exempting(config_proxies)),
            webhooks: hooks,
            acp: Arc::new(acp_http::AcpConnections::new(config_acp_idle)),
        });
        let deliveries = state.webhooks.spawn(state.shutdown.clone());
        let retention = retention::spawn(
            state.store.clone(),
            state.config.retention.clone(),
            state.retention.clone(),
            state.shutdown.clone(),
        );
        let app = router(state.clone());
        let token = state.shutdown.clone();
        let task = tokio::spawn(listen::serve(
            listener,
            app,
            state.config.connections,
            state.connections.clone(),
            token,
        ));
        Ok(RunningServer {
            addr,
            state,
            task,
            retention,
            deliveries,
        })
    }
}

impl RunningServer {
    /// The bound address.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, `http://<addr>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The shared state (agents, store, runs).
    pub fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Drains (what SIGTERM does in `serve`): new runs are refused (`503 shutting_down`, `/readyz` 503)
    /// while the runs already admitted go on for at most `grace`; a run still going then is
    /// interrupted: it ends `interrupted`, with an `infrastructure_error` terminal whose
    /// `details.code` is `run_interrupted`, and its lease is released as it ends. Returns how many runs
    /// were interrupted. Connections, SSE streams and reads keep being served; [`shutdown`](Self::shutdown)
    /// follows.
    pub async fn drain(&self, grace: Duration) -> usize {
        self.state.draining.cancel();
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let live = self.state.runs.live();
            if live.is_empty() {
                return 0;
            }
            if tokio::time::Instant::now() >= deadline {
                let mut details = crate::driver::JsonMap::new();
                details.insert("code".into(), recovery::RUN_INTERRUPTED.into());
                details.insert("drain_grace_ms".into(), (grace.as_millis() as u64).into());
                let message = "the service is stopping and the run did not finish within the drain grace \
                               period; the run was interrupted";
                for run in &live {
                    // The log says why in an event of its own: the exposure policy keeps only the
                    // code, reason and message of the terminal's error, not its details.
                    let notice = crate::driver::Notice::new(crate::driver::notice_kind::LIFECYCLE, message)
                        .with_meta("code", recovery::RUN_INTERRUPTED)
                        .with_data("reason", "infrastructure_error")
                        .with_data("drain_grace_ms", grace.as_millis() as u64);
                    run.stream.notice(notice);
                    run.stream.fail(
                        crate::runtime::FailureReason::InfrastructureError,
                        message,
                        details.clone(),
                    );
                }
                tracing::warn!(
                    runs = live.len(),
                    "drain: interrupted the runs left at the grace period's end"
                );
                // Their terminal events are recorded and published before the shutdown ends the streams.
                let ended = tokio::time::Instant::now() + self.state.config.shutdown_grace;
                while !self.state.runs.live().is_empty() && tokio::time::Instant::now() < ended {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                return live.len();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Graceful shutdown: stop accepting, end SSE streams with a terminal event, cancel every run, wait for
    /// them within the grace period, close the agents (reaping children). `Err(Undrained)` when runs were
    /// still going at the deadline.
    pub async fn shutdown(self) -> Result<(), ServerError> {
        let grace = self.state.config.shutdown_grace;
        self.state.shutdown.cancel();
        self.state.standbys.release_all();
        self.state.acp.end_all();
        let live = self.state.runs.live();
        for run in &live {
            run.stream.cancel();
        }
        let drained = self.state.runs.drain(grace).await;
        self.state.agents.close(grace).await;
        if let Some(r) = self.retention {
            let _ = tokio::time::timeout(grace, r).await;
        }
        if let Some(d) = self.deliveries {
            let _ = tokio::time::timeout(grace, d).await;
        }
        let served = tokio::time::timeout(grace, self.task).await;
        if !drained {
            return Err(ServerError::Undrained(self.state.runs.live().len()));
        }
        match served {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(ServerError::Serve(e)),
            Ok(Err(join)) => Err(ServerError::Serve(std::io::Error::other(join.to_string()))),
            Err(_) => Err(ServerError::Serve(std::io::Error::other(
                "connections did not close in time",
            ))),
        }
    }

    /// Replaces the tenants, their keys and their limits while serving; see
    /// [`AppState::reload_tenants`].
    pub fn reload_tenants(&self, tenants: &[TenantSpec]) -> Result<usize, ServerError> {
        self.state.reload_tenants(tenants)
    }

    /// Serves until `signal` resolves, then drains (for `drain_grace`) and shuts down gracefully.
    pub async fn run_until(self, signal: impl std::future::Future<Output = ()>) -> Result<(), ServerError> {
        signal.await;
        self.drain(self.state.config.drain_grace).await;
        self.shutdown().await
    }
}
