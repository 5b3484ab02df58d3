//! `agent-adaptor serve`: run the HTTP/SSE/AG-UI service.
//!
//! With no arguments it binds 127.0.0.1:8080, opens an SQLite store under the data directory, and offers
//! the built-in `reference` agent plus one agent per supported CLI found on `PATH`. It prints exactly one
//! line to stdout, `agent-adaptor listening on http://<addr>`; everything else goes to stderr. `--config`
//! (or `AGENT_ADAPTOR_CONFIG`) reads a TOML file ([`FileConfig`](agent_adaptor::server::FileConfig)); flags override it. SIGINT or
//! SIGTERM drain it (new runs refused, active ones given `--drain-grace`, the rest interrupted), then
//! shut it down gracefully; the exit code is 0 for a clean shutdown, 1 otherwise. SIGHUP re-reads
//! the configuration (file and environment) and replaces the tenants, their keys and their limits without
//! dropping a connection; a configuration that does not load leaves the running one in place.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::server::file::parse_duration;
use agent_adaptor::server::{BusyPolicy, LogFormat, Server, ServerConfig, TrustedProxies, telemetry};
use clap::Args;

/// Arguments of `serve`. Flags (and their environment variables) override the `--config` file, which
/// overrides the built-in defaults.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// A TOML configuration file (see `examples/serve.toml`).
    #[arg(long, env = "AGENT_ADAPTOR_CONFIG")]
    config: Option<PathBuf>,
    /// Address to listen on (`127.0.0.1:0` picks a free port). Default: 127.0.0.1:8080.
    #[arg(long, env = "AGENT_ADAPTOR_BIND")]
    bind: Option<SocketAddr>,
    /// Store: `memory`, `sqlite://path`, or a `postgres://` URL. Default: SQLite under the data directory.
    #[arg(long, env = "AGENT_ADAPTOR_STORE")]
    store: Option<String>,
    /// Directory of the embedded SQLite store.
    #[arg(long, env = "AGENT_ADAPTOR_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Allowed CORS origin (repeatable; `*` for any).
    #[arg(
        long = "cors-origin",
        env = "AGENT_ADAPTOR_CORS_ORIGINS",
        value_delimiter = ','
    )]
    cors_origins: Vec<String>,
    /// Serve a non-loopback address although the service has no API keys (dev mode only).
    #[arg(long, env = "AGENT_ADAPTOR_ALLOW_REMOTE_WITHOUT_AUTH")]
    allow_remote_without_auth: bool,
    /// Do not add agents for CLIs found on PATH.
    #[arg(long)]
    no_discover: bool,
    /// Delay between streamed chunks of the `reference` agent, in milliseconds (default 20).
    #[arg(long)]
    reference_chunk_delay_ms: Option<u64>,
    /// What an AG-UI run does when a run is active on its thread: `refuse` (409, default) or `supplement`.
    #[arg(long, value_parser = ["refuse", "supplement"])]
    busy_policy: Option<String>,
    /// Seconds graceful shutdown waits for runs (default 10).
    #[arg(long)]
    shutdown_grace_secs: Option<u64>,
    /// Seconds SIGTERM lets active runs finish (new runs refused, `/readyz` 503) before it interrupts
    /// the rest (default 30).
    #[arg(long, env = "AGENT_ADAPTOR_DRAIN_GRACE")]
    drain_grace: Option<u64>,
    /// Unauthenticated requests per second per client IP (dev mode, failed authentication); off by default.
    #[arg(long, env = "AGENT_ADAPTOR_IP_RATE_LIMIT")]
    ip_rate_limit: Option<f64>,
    /// Burst of the per-IP limit (default: one second's worth).
    #[arg(long, env = "AGENT_ADAPTOR_IP_BURST")]
    ip_burst: Option<u32>,
    /// Time a client has to finish a request head once it began (`500ms`, `30s`, ...; default 30s).
    #[arg(long, env = "AGENT_ADAPTOR_HEADER_READ_TIMEOUT", value_parser = parse_duration)]
    header_read_timeout: Option<Duration>,
    /// Time a client has to send a request body after its head (default 60s).
    #[arg(long, env = "AGENT_ADAPTOR_BODY_READ_TIMEOUT", value_parser = parse_duration)]
    body_read_timeout: Option<Duration>,
    /// Time a connection may wait for its next request before it is closed (default 120s).
    #[arg(long, env = "AGENT_ADAPTOR_IDLE_TIMEOUT", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// Connections open at once; past it a new one is closed at once (default 4096).
    #[arg(long, env = "AGENT_ADAPTOR_MAX_CONNECTIONS")]
    max_connections: Option<usize>,
    /// Connections open at once from one client IP (default 256).
    #[arg(long, env = "AGENT_ADAPTOR_MAX_CONNECTIONS_PER_IP")]
    max_connections_per_ip: Option<usize>,
    /// A proxy whose `X-Forwarded-For` names the client, as an address or CIDR range (repeatable;
    /// default none: the header is ignored).
    #[arg(
        long = "trusted-proxy",
        env = "AGENT_ADAPTOR_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    trusted_proxies: Vec<String>,
    /// Log lines on stderr as `text` (default) or `json`; `RUST_LOG` filters them (default `info`).
    #[arg(long, env = "AGENT_ADAPTOR_LOG_FORMAT", value_parser = ["text", "json"])]
    log_format: Option<String>,
    /// How many of a run's events may reach subscribers before the store committed them; beyond it the
    /// run waits for the store (default 4096, at least 1).
    #[arg(long, env = "AGENT_ADAPTOR_RECORD_BACKLOG", value_parser = clap::value_parser!(u32).range(1..))]
    record_backlog: Option<u32>,
    /// How many committed events of each run stay in memory for live subscribers (default 1024, at least
    /// 1); a subscriber further behind reads them from the store.
    #[arg(long, env = "AGENT_ADAPTOR_LIVE_WINDOW", value_parser = clap::value_parser!(u32).range(1..))]
    live_window: Option<u32>,
    /// This replica's stable owner id. On restart with the same id its unfinished runs end
    /// `interrupted` at once; by default every start gets a fresh id (on Postgres a dead replica's runs
    /// then end when its heartbeat lapses, within a minute).
    #[arg(long, env = "AGENT_ADAPTOR_REPLICA_ID")]
    replica_id: Option<String>,
}

fn data_dir(args: &ServeArgs) -> PathBuf {
    args.data_dir.clone().unwrap_or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("."))
            .join(".agent-adaptor")
            .join("data")
    })
}

/// The store URL: the flag, else the file's, else SQLite under the data directory.
fn store_url(args: &ServeArgs, from_file: Option<String>) -> Result<String, String> {
    match args.store.clone().or(from_file).as_deref() {
        Some("memory") | Some("memory:") => Ok("memory:".into()),
        Some(url) => Ok(url.to_owned()),
        None => {
            let dir = data_dir(args);
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            Ok(format!("sqlite://{}", dir.join("agent-adaptor.db").display()))
        }
    }
}

/// Defaults, then the file, then the flags.
fn config(args: &ServeArgs) -> Result<ServerConfig, String> {
    let (mut config, file_store) = super::agents::load(args.config.as_deref())?;
    config.store_url = store_url(args, file_store)?;
    if let Some(b) = args.bind {
        config.bind = b;
    }
    if !args.cors_origins.is_empty() {
        config.cors_origins = args.cors_origins.clone();
    }
    if args.allow_remote_without_auth {
        config.allow_remote_without_auth = true;
    }
    if args.no_discover {
        config.discover_clis = false;
    }
    if let Some(ms) = args.reference_chunk_delay_ms {
        config.reference_chunk_delay = Duration::from_millis(ms);
    }
    if let Some(p) = args.busy_policy.as_deref() {
        config.busy_policy = if p == "supplement" {
            BusyPolicy::Supplement
        } else {
            BusyPolicy::Refuse
        };
    }
    if let Some(s) = args.shutdown_grace_secs {
        config.shutdown_grace = Duration::from_secs(s);
    }
    if let Some(s) = args.drain_grace {
        config.drain_grace = Duration::from_secs(s);
    }
    if let Some(r) = args.ip_rate_limit {
        config.ip_limits.requests_per_second = Some(r);
    }
    if let Some(b) = args.ip_burst {
        config.ip_limits.burst = Some(b);
    }
    let c = &mut config.connections;
    if let Some(d) = args.header_read_timeout {
        c.header_read_timeout = d;
    }
    if let Some(d) = args.body_read_timeout {
        c.body_read_timeout = d;
    }
    if let Some(d) = args.idle_timeout {
        c.idle_timeout = d;
    }
    if let Some(n) = args.max_connections {
        c.max_connections = n;
    }
    if let Some(n) = args.max_connections_per_ip {
        c.max_connections_per_ip = n;
    }
    if !args.trusted_proxies.is_empty() {
        config.trusted_proxies =
            TrustedProxies::parse(&args.trusted_proxies).map_err(|e| format!("--trusted-proxy: {e}"))?;
    }
    if let Some(f) = args.log_format.as_deref() {
        config.log_format = f.parse::<LogFormat>()?;
    }
    if let Some(n) = args.record_backlog {
        config.record_backlog = n as usize;
    }
    if let Some(n) = args.live_window {
        config.live_window = n as usize;
    }
    if let Some(id) = args.replica_id.as_deref() {
        if id.is_empty() || id.len() > 128 || id.contains('\0') {
            return Err("--replica-id must be 1 to 128 bytes without NUL".into());
        }
        config.owner = id.to_owned();
    }
    Ok(config)
}

/// Installs the SIGTERM and SIGINT handlers now and returns the future that resolves at the first of them.
/// Installing before the listening line is printed closes the window in which a supervisor that reacts to
/// that line could send SIGTERM to a process that would still die of it instead of shutting down.
fn terminate() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(mut term), Ok(mut int)) => Box::pin(async move {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }),
            (Ok(mut one), Err(_)) | (Err(_), Ok(mut one)) => Box::pin(async move {
                one.recv().await;
            }),
            (Err(_), Err(_)) => Box::pin(async {
                let _ = tokio::signal::ctrl_c().await;
            }),
        }
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}

/// Installs the SIGHUP handler now, before the listening line (like [`terminate`]): a supervisor that
/// sends SIGHUP right after that line must not kill the process with the signal's default action.
#[cfg(unix)]
fn hangups() -> Option<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{SignalKind, signal};
    signal(SignalKind::hangup()).ok()
}

/// Reloads the tenants from `args`' configuration on every SIGHUP, for as long as the service runs.
#[cfg(unix)]
fn reload_on_hangup(
    mut hup: tokio::signal::unix::Signal,
    args: std::sync::Arc<ServeArgs>,
    state: std::sync::Arc<agent_adaptor::server::AppState>,
    json: bool,
) {
    tokio::spawn(async move {
        while hup.recv().await.is_some() {
            let outcome = config(&args).and_then(|c| {
                state
                    .reload_tenants(&c.tenants)
                    .map(|keys| (c.tenants.len(), keys))
                    .map_err(|e| e.to_string())
            });
            match outcome {
                Ok((tenants, keys)) => note(
                    json,
                    &format!("SIGHUP: reloaded {tenants} tenant(s), {keys} key(s)"),
                ),
                Err(e) if json => {
                    tracing::error!(error = %e, "SIGHUP: reload refused, the running tenants stay")
                }
                Err(e) => eprintln!("agent-adaptor: SIGHUP: reload refused, the running tenants stay: {e}"),
            }
        }
    });
}

/// Runs the service until a signal.
pub async fn serve(args: ServeArgs) -> ExitCode {
    let config = match config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("agent-adaptor: {e}");
            return ExitCode::from(2);
        }
    };
    let json = config.log_format == LogFormat::Json;
    let telemetry = telemetry::init(config.log_format);
    let stop = terminate();
    #[cfg(unix)]
    let hup = hangups();
    let store_url = config.store_url.clone();
    let tenants = config.tenants.len();
    let server = match Server::start(config).await {
        Ok(s) => s,
        Err(e) if json => {
            tracing::error!(error = %e, "cannot start");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("agent-adaptor: {e}");
            return ExitCode::from(2);
        }
    };
    let agents: Vec<String> = server
        .state()
        .agents
        .iter()
        .map(|a| format!("{} ({})", a.name, a.provider))
        .collect();
    #[cfg(unix)]
    if let Some(hup) = hup {
        reload_on_hangup(hup, std::sync::Arc::new(args), server.state().clone(), json);
    }
    println!("agent-adaptor listening on {}", server.url());
    note(json, &format!("store {}", redact_url(&store_url)));
    note(json, &format!("agents {}", agents.join(", ")));
    if tenants == 0 {
        note(
            json,
            "no API keys configured: dev mode, every request is tenant \"default\"",
        );
    } else {
        note(json, &format!("{tenants} tenant(s); /v1 requires an API key"));
    }
    note(
        json,
        &format!(
            "AG-UI at {url}/v1/agents/<agent>/agui, ACP at {url}/v1/agents/<agent>/acp, REST at {url}/v1, health at {url}/healthz",
            url = server.url()
        ),
    );
    let code = match server.run_until(stop).await {
        Ok(()) => {
            note(json, "stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            note(json, &format!("shutdown: {e}"));
            ExitCode::from(1)
        }
    };
    // The batch exporter flushes from its own thread; a blocking call, so off the async workers.
    if let Err(e) = tokio::task::spawn_blocking(move || telemetry.shutdown()).await {
        note(json, &format!("telemetry flush at shutdown did not finish: {e}"));
    }
    code
}

/// A startup or shutdown note on stderr: a log event in JSON mode (so every line parses), else a plain
/// `agent-adaptor: …` line.
fn note(json: bool, message: &str) {
    if json {
        tracing::info!("{message}");
    } else {
        eprintln!("agent-adaptor: {message}");
    }
}

/// Hides a password in a store URL.
fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let creds = &url[s + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}
