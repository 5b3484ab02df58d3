//! `loadgen`: the service load generator behind the "Service" figures of BENCHMARKS.md (issue #7).
//!
//! It starts the real `agent-adaptor serve` binary as a child process on 127.0.0.1:0 (default SQLite
//! store in a scratch directory, the recorder, the same router as production) with one agent, `fake`,
//! driven by the real Cursor driver over the `fake-cursor-agent` binary's `stream` scenario: a real child
//! process writing Cursor stream-json as fast as asked, each assistant message's text stamped with its
//! index and the `CLOCK_REALTIME` nanoseconds just before the write. The measured path therefore includes
//! the spawn, the pipe, the driver's parsing, the runtime, the pump and its SQLite recording, the SSE
//! writer and the socket. The clients are a hand-written HTTP/1.1 + SSE reader in this process.
//!
//! Scenarios (subcommands; `all` runs the six in order, each on a fresh service):
//! - `throughput`: one run, `--frames` messages unpaced, one SSE client → events/s delivered;
//! - `latency`: `--runs` concurrent runs at `--rate` messages/s each → added latency p50/p99/max from the
//!   fake's write to the SSE client's read (the stamp; both ends read the same clock);
//! - `subscribers`: `--subscribers` SSE clients on one long run → held yes/no, server RSS per subscriber;
//! - `memory`: `--runs` active-but-idle runs → server RSS per active run (the CLI children excluded);
//! - `standby-subscribers`: `--subscribers` SSE clients on a Standby's events while its execution runs →
//!   held yes/no, server RSS per subscriber (the same reader as a run's events);
//! - `agui-streams`: `--streams` AG-UI clients, each driving its own run → held yes/no, server RSS per
//!   AG-UI stream with its run.
//!
//! Every scenario also checks what it received: `done` arrived, sequences increased by exactly 1, every
//! stamped message arrived once, and how many `dropped` events the runtime emitted. The report is one JSON
//! object per scenario on stdout (a JSON array for `all`).
//!
//! ```text
//! cargo build --release --bins
//! target/release/loadgen all
//! target/release/loadgen latency --runs 100 --frames 100 --rate 10
//! ```

mod agui;
mod error;
mod http;
mod latency;
mod memory;
mod service;
mod subscribers;
mod throughput;
mod trace;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use serde_json::Value;

use error::LoadError;
use service::{Binaries, Service};

/// Measures the HTTP/SSE service end to end with a fast fake CLI.
#[derive(Debug, Parser)]
#[command(name = "loadgen")]
struct Cli {
    /// The `agent-adaptor` binary (default: next to this one).
    #[arg(long, global = true)]
    server_bin: Option<PathBuf>,
    /// The `fake-cursor-agent` binary (default: next to this one).
    #[arg(long, global = true)]
    fake_cli: Option<PathBuf>,
    /// The service's store (`serve --store`: `memory`, `sqlite://…`, `postgres://…`); default: its SQLite
    /// file in a scratch directory. `memory` separates the cost of durable recording from the rest.
    #[arg(long, global = true)]
    store: Option<String>,
    #[command(subcommand)]
    scenario: Scenario,
}

#[derive(Debug, Subcommand)]
enum Scenario {
    /// (a) One run, unpaced: events/s delivered to one SSE client.
    Throughput {
        /// Stamped messages the fake writes (each becomes start/content/end text deltas and a transcript
        /// item).
        #[arg(long, default_value_t = 50_000)]
        frames: u64,
    },
    /// (b) Concurrent paced runs: latency from the fake's write to the SSE client.
    Latency {
        /// Concurrent runs, one SSE client each.
        #[arg(long, default_value_t = 100)]
        runs: usize,
        /// Stamped messages per run.
        #[arg(long, default_value_t = 100)]
        frames: u64,
        /// Messages per second per run (each message is four events: text start/content/end and a
        /// transcript item, so the default is 40 events/s per run, 4,000/s over 100 runs).
        #[arg(long, default_value_t = 10.0)]
        rate: f64,
    },
    /// (c) Many SSE subscribers on one long run: held, and server memory per subscriber.
    Subscribers {
        /// Concurrent subscribers.
        #[arg(long, default_value_t = 10_000)]
        subscribers: usize,
        /// Seconds all subscribers stay connected before the run is cancelled.
        #[arg(long, default_value_t = 5)]
        hold_secs: u64,
        /// Connections opened at once.
        #[arg(long, default_value_t = 256)]
        connect_concurrency: usize,
    },
    /// (d) Active-but-idle runs: server memory per active run.
    Memory {
        /// Active runs.
        #[arg(long, default_value_t = 100)]
        runs: usize,
    },
    /// (e) Many SSE subscribers on one Standby's events while its execution runs: held, and server
    /// memory per subscriber.
    StandbySubscribers {
        /// Concurrent subscribers.
        #[arg(long, default_value_t = 10_000)]
        subscribers: usize,
        /// Seconds all subscribers stay connected before the execution is cancelled.
        #[arg(long, default_value_t = 5)]
        hold_secs: u64,
        /// Connections opened at once.
        #[arg(long, default_value_t = 256)]
        connect_concurrency: usize,
    },
    /// (f) Concurrent AG-UI clients, each its own run: held, and server memory per stream with its run.
    AguiStreams {
        /// Concurrent AG-UI streams (each a run and a fake CLI process).
        #[arg(long, default_value_t = 100)]
        streams: usize,
        /// Seconds all streams stay open before their runs are cancelled.
        #[arg(long, default_value_t = 5)]
        hold_secs: u64,
        /// Streams opened at once.
        #[arg(long, default_value_t = 16)]
        connect_concurrency: usize,
    },
    /// All six with their defaults, each on a fresh service.
    All,
}

async fn measure(bins: &Binaries, scenario: &Scenario) -> Result<Value, LoadError> {
    let svc = Service::start(bins).await?;
    let result = match *scenario {
        Scenario::Throughput { frames } => throughput::run(&svc, frames).await,
        Scenario::Latency { runs, frames, rate } => {
            latency::run(&svc, latency::Plan { runs, frames, rate }).await
        }
        Scenario::Subscribers {
            subscribers,
            hold_secs,
            connect_concurrency,
        } => {
            let plan = subscribers::Plan {
                subscribers,
                hold: Duration::from_secs(hold_secs),
                connect_concurrency,
            };
            subscribers::run(&svc, plan, subscribers::Target::Run).await
        }
        Scenario::Memory { runs } => memory::run(&svc, runs).await,
        Scenario::StandbySubscribers {
            subscribers,
            hold_secs,
            connect_concurrency,
        } => {
            let plan = subscribers::Plan {
                subscribers,
                hold: Duration::from_secs(hold_secs),
                connect_concurrency,
            };
            subscribers::run(&svc, plan, subscribers::Target::Standby).await
        }
        Scenario::AguiStreams {
            streams,
            hold_secs,
            connect_concurrency,
        } => {
            let plan = agui::Plan {
                streams,
                hold: Duration::from_secs(hold_secs),
                connect_concurrency,
            };
            agui::run(&svc, plan).await
        }
        Scenario::All => Err(LoadError::Protocol("`all` is not one scenario".into())),
    };
    let stopped = svc.stop().await;
    let mut report = result?;
    report["store"] = Value::String(bins.store.clone().unwrap_or_else(|| "sqlite (default)".into()));
    if let Err(e) = stopped {
        report["service_stop_error"] = Value::String(e.to_string());
    }
    Ok(report)
}

fn defaults() -> Vec<Scenario> {
    let parse = |args: &[&str]| {
        Cli::try_parse_from(std::iter::once("loadgen").chain(args.iter().copied())).map(|c| c.scenario)
    };
    [
        "throughput",
        "latency",
        "subscribers",
        "memory",
        "standby-subscribers",
        "agui-streams",
    ]
    .iter()
    .filter_map(|s| parse(&[s]).ok())
    .collect()
}

async fn main_async(cli: Cli) -> Result<String, LoadError> {
    let mut bins = Binaries::resolve(cli.server_bin.clone(), cli.fake_cli.clone())?;
    bins.store.clone_from(&cli.store);
    if let Scenario::All = cli.scenario {
        let mut reports = Vec::new();
        for s in defaults() {
            eprintln!("loadgen: {s:?}");
            let r = measure(&bins, &s).await?;
            eprintln!("{r:#}");
            reports.push(r);
        }
        return Ok(Value::Array(reports).to_string());
    }
    let r = measure(&bins, &cli.scenario).await?;
    eprintln!("{r:#}");
    Ok(r.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("loadgen: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(main_async(cli)) {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}
