//! `agent-adaptor serve`: run the HTTP/SSE/AG-UI service.
//!
//! With no arguments it binds 127.0.0.1:8080, opens an SQLite store under the data directory, and offers
//! the built-in `reference` agent plus one agent per supported CLI found on `PATH`. It prints exactly one
//! line to stdout, `agent-adaptor listening on http://<addr>`; everything else goes to stderr. SIGINT or
//! SIGTERM shut it down gracefully; the exit code is 0 for a clean shutdown, 1 otherwise.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::server::{AgentSpec, BusyPolicy, Server, ServerConfig};
use clap::Args;

/// Arguments of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (`127.0.0.1:0` picks a free port).
    #[arg(long, env = "AGENT_ADAPTOR_BIND", default_value = "127.0.0.1:8080")]
    bind: SocketAddr,
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
    /// Delay between streamed chunks of the `reference` agent, in milliseconds.
    #[arg(long, default_value_t = 20)]
    reference_chunk_delay_ms: u64,
    /// What an AG-UI run does when a run is active on its thread: `refuse` (409) or `supplement`.
    #[arg(long, default_value = "refuse", value_parser = ["refuse", "supplement"])]
    busy_policy: String,
    /// Seconds graceful shutdown waits for runs.
    #[arg(long, default_value_t = 10)]
    shutdown_grace_secs: u64,
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

fn store_url(args: &ServeArgs) -> Result<String, String> {
    match args.store.as_deref() {
        Some("memory") | Some("memory:") => Ok("memory:".into()),
        Some(url) => Ok(url.to_owned()),
        None => {
            let dir = data_dir(args);
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            Ok(format!("sqlite://{}", dir.join("agent-adaptor.db").display()))
        }
    }
}

async fn terminate() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs the service until a signal.
pub async fn serve(args: ServeArgs) -> ExitCode {
    let store_url = match store_url(&args) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("agent-adaptor: {e}");
            return ExitCode::from(2);
        }
    };
    let config = ServerConfig {
        bind: args.bind,
        store_url: store_url.clone(),
        agents: vec![AgentSpec::new("reference", "reference")],
        discover_clis: !args.no_discover,
        cors_origins: args.cors_origins.clone(),
        reference_chunk_delay: Duration::from_millis(args.reference_chunk_delay_ms),
        busy_policy: if args.busy_policy == "supplement" {
            BusyPolicy::Supplement
        } else {
            BusyPolicy::Refuse
        },
        shutdown_grace: Duration::from_secs(args.shutdown_grace_secs),
        allow_remote_without_auth: args.allow_remote_without_auth,
        ..ServerConfig::default()
    };
    let server = match Server::start(config).await {
        Ok(s) => s,
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
    println!("agent-adaptor listening on {}", server.url());
    eprintln!("agent-adaptor: store {}", redact_url(&store_url));
    eprintln!("agent-adaptor: agents {}", agents.join(", "));
    eprintln!(
        "agent-adaptor: AG-UI at {url}/v1/agents/<agent>/agui, REST at {url}/v1, health at {url}/healthz",
        url = server.url()
    );
    match server.run_until(terminate()).await {
        Ok(()) => {
            eprintln!("agent-adaptor: stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("agent-adaptor: shutdown: {e}");
            ExitCode::from(1)
        }
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
