//! Command-line parsing and dispatch.

mod agents;
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

#[derive(Debug, Subcommand)]
enum Command {
    /// Stream one run in the terminal.
    Run(run::RunArgs),
    /// List the agents this machine can run.
    Agents,
    /// Run the HTTP/SSE/AG-UI service.
    Serve(serve::ServeArgs),
}

/// Runs the parsed command.
pub async fn dispatch(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(args) => run::run(args).await,
        Command::Serve(args) => serve::serve(args).await,
        Command::Agents => {
            for a in agents::available() {
                println!("{:<12} {}", a.name, a.description);
            }
            ExitCode::SUCCESS
        }
    }
}
