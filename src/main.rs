//! The `agent-adaptor` command line: `run` streams one execution in the terminal; `serve` runs
//! the HTTP/SSE/AG-UI service.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("agent-adaptor: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(cli::dispatch(args))
}
