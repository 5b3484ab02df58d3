//! Command-line parsing and dispatch.

mod acp;
mod acp_remote;
mod agents;
mod health;
mod run;
mod serve;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Drive coding-agent CLIs through one contract.
#[derive(Debug, Parser)]
#[command(name = "agent-adaptor", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Arguments of `agents`.
#[derive(Debug, clap::Args)]
struct AgentsArgs {
    /// The TOML configuration file `serve` reads (its `agents` are listed too).
    #[arg(long, env = "AGENT_ADAPTOR_CONFIG")]
    config: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Stream one run in the terminal.
    Run(run::RunArgs),
    /// List the agents this machine can run (the ones `serve` offers with the same `--config`).
    Agents(AgentsArgs),
    /// Run the HTTP/SSE/AG-UI service.
    Serve(serve::ServeArgs),
    /// Be an ACP agent on stdio (an editor launches it): sessions are threads, prompts are runs.
    Acp(acp::AcpArgs),
    /// Ask a running service whether it is up (exit 0) — a container HEALTHCHECK without curl.
    Health(health::HealthArgs),
}

/// Runs the parsed command.
pub async fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Health(args) => health::health(args).await,
        Command::Acp(args) => acp::acp(args).await,
        Command::Agents(args) => {
            let listed = agents::base_config(args.config.as_deref()).and_then(|c| agents::list(&c));
            match listed {
                Ok(lines) => {
                    for l in lines {
                        println!("{l}");
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("agent-adaptor: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
