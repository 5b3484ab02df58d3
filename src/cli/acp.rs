//! `agent-adaptor acp --agent NAME`: an ACP agent on stdio (the editor launches it) backed by the
//! local library, or with `--url` by a running service ([`super::acp_remote`]). Logs go to stderr;
//! stdout carries protocol frames only.

use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, FallbackAction, Policy, QuestionMode};
use clap::Args;

use super::agents;

/// Arguments of `acp`.
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The agent to serve (see `agent-adaptor agents`).
    #[arg(long, default_value = "reference")]
    agent: String,
    /// The TOML configuration file `serve` reads: its agents can be served by name.
    #[arg(long, env = "AGENT_ADAPTOR_CONFIG")]
    config: Option<std::path::PathBuf>,
    /// Store of the sessions' threads and history: `memory`, `sqlite://path` or a `postgres://` URL
    /// (default: the file's `store`, else memory — sessions then load only in this process).
    #[arg(long, env = "AGENT_ADAPTOR_STORE")]
    store: Option<String>,
    /// Seconds a permission request waits for the editor before the timeout fallback applies.
    #[arg(long, default_value_t = 300)]
    approval_timeout: u64,
    /// After a rejected permission: `continue` (the agent is told and goes on) or `abort` (the turn
    /// ends with stopReason `refusal`).
    #[arg(long, default_value = "continue", value_parser = ["continue", "abort"])]
    on_reject: String,
    /// A running service to back the sessions (`http://host:port`): frames go to its
    /// `/v1/agents/{agent}/acp`, sessions live in its store under the key's tenant, and the service's
    /// approval policy applies (`--config`, `--store` and the approval flags are then unused).
    #[arg(long)]
    url: Option<String>,
    /// The service's API key (with `--url`), sent as a bearer token.
    #[arg(long, env = "AGENT_ADAPTOR_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
}

fn policy(args: &AcpArgs) -> Policy {
    Policy {
        approvals: ApprovalPolicy {
            question: QuestionMode::Ask,
            on_reject: if args.on_reject == "abort" {
                FallbackAction::Abort
            } else {
                FallbackAction::Continue
            },
            ..Default::default()
        }
        .with_timeout(Duration::from_secs(args.approval_timeout)),
        ..Default::default()
    }
}

/// Runs `agent-adaptor acp`.
pub async fn acp(args: AcpArgs) -> ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .try_init();
    if let Some(url) = args.url.clone() {
        let remote = super::acp_remote::Remote {
            url,
            agent: args.agent.clone(),
            api_key: args.api_key.clone(),
        };
        return match super::acp_remote::bridge(remote, tokio::io::stdin(), tokio::io::stdout()).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("agent-adaptor: acp --url: {e}");
                ExitCode::from(2)
            }
        };
    }
    let agent = match build(&args).await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("agent-adaptor: {e}");
            return ExitCode::from(2);
        }
    };
    let config = agent_adaptor::acp::Config {
        policy: policy(&args),
        ..Default::default()
    };
    match agent_adaptor::acp::serve(agent, config, tokio::io::stdin(), tokio::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent-adaptor: acp: {e}");
            ExitCode::from(1)
        }
    }
}

async fn build(args: &AcpArgs) -> Result<agent_adaptor::runtime::Agent, String> {
    let (mut config, file_store) = agents::load(args.config.as_deref())?;
    let url = match args.store.clone().or(file_store).as_deref() {
        None | Some("memory") => "memory:".to_owned(),
        Some(u) => u.to_owned(),
    };
    let store = agent_adaptor::store::open(&url)
        .await
        .map_err(|e| format!("cannot open the store: {e}"))?;
    let configured = config.agents.iter().any(|s| s.name == args.agent);
    config.agents.retain(|s| s.name == args.agent);
    config.discover_clis = !configured;
    let offered = agent_adaptor::server::build_agents(&config, store).map_err(|e| e.to_string())?;
    offered
        .get(&args.agent)
        .map(|a| a.agent.clone())
        .ok_or_else(|| format!("unknown agent {:?} (see `agent-adaptor agents`)", args.agent))
}
