//! The harness the stream-json overhead benches share (`claude_overhead`, `codebuddy_overhead`): a
//! scratch root, a replay script standing in for the CLI, one direct run of a CLI (reading its stdout
//! until EOF), one run through the library (and timing any stream), alternating sampling and the median
//! table.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_adaptor::driver::{ApprovalPolicy, Policy};
use agent_adaptor::runtime::{Agent, CallOptions, Payload, Stream};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The prompt both sides send.
pub const PROMPT: &str = "say hi";

/// One timed run.
pub struct Sample {
    /// Time to the first non-empty text delta (or completion when there was none).
    pub first: Duration,
    /// Time to completion.
    pub done: Duration,
}

/// A scratch root with `home`, `tmp`, `cfg` and `ws` directories.
pub fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for d in ["home", "tmp", "cfg", "ws"] {
        std::fs::create_dir_all(dir.path().join(d)).expect("mkdir");
    }
    dir
}

/// A one-line shell script in `root` that prints the recorded stdout `fixture` (relative to the crate).
pub fn replay_script(root: &Path, fixture: &str) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    let script = root.join("replay.sh");
    std::fs::write(&script, format!("#!/bin/sh\nexec cat '{}'\n", fixture.display())).expect("script");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    script
}

/// Runs `bin args` with exactly `vars` (plus `PATH`) in `cwd`, reading stdout to EOF and then waiting.
pub async fn direct(bin: &Path, args: &[&str], vars: &[(String, String)], cwd: &Path) -> Sample {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(bin)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the CLI");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut first = None;
    while let Ok(Some(line)) = lines.next_line().await {
        if first.is_none() && line.contains("\"text_delta\"") {
            first = Some(started.elapsed());
        }
    }
    let _ = child.wait().await;
    let done = started.elapsed();
    Sample {
        first: first.unwrap_or(done),
        done,
    }
}

/// Sends [`PROMPT`] through `agent` (permissions auto-approved, so the one-shot/headless transport) in
/// `ws` and waits for the result.
pub async fn library(agent: &Agent, ws: &Path) -> Sample {
    let started = Instant::now();
    let opts = CallOptions::new()
        .workspace(ws)
        .policy(Policy::default().with_approvals(ApprovalPolicy::auto_approve()));
    timed(started, &agent.send(PROMPT, opts)).await
}

/// Times `stream` (started at `started`) to its first non-empty text delta and its successful result.
pub async fn timed(started: Instant, stream: &Stream) -> Sample {
    let mut events = stream.events();
    let mut first = None;
    while let Some(e) = events.next().await {
        if first.is_none() && matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    let r = stream.result().await;
    let done = started.elapsed();
    assert!(r.is_ok(), "library run failed: {r:?}");
    Sample {
        first: first.unwrap_or(done),
        done,
    }
}

/// `$var` as a run count, else `default` (at least 1).
pub fn runs_from(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// One uncounted warm-up of each side, then `runs` samples of each, alternating which goes first so
/// drift on a shared machine hits both alike. Returns (direct, library).
pub async fn sample(
    runs: usize,
    bin: &Path,
    args: &[&str],
    vars: &[(String, String)],
    agent: &Agent,
    ws: &Path,
) -> (Vec<Sample>, Vec<Sample>) {
    direct(bin, args, vars, ws).await;
    library(agent, ws).await;
    let (mut d, mut l) = (Vec::new(), Vec::new());
    for i in 0..runs {
        if i % 2 == 0 {
            d.push(direct(bin, args, vars, ws).await);
            l.push(library(agent, ws).await);
        } else {
            l.push(library(agent, ws).await);
            d.push(direct(bin, args, vars, ws).await);
        }
    }
    (d, l)
}

/// Prints the direct/library table and the overhead row.
pub fn table(d: &[Sample], l: &[Sample]) {
    let row = |name: &str, s: &[Sample]| {
        let first = median(s.iter().map(|x| x.first).collect());
        let done = median(s.iter().map(|x| x.done).collect());
        println!("| {name} | {} | {} |", ms(first), ms(done));
        (first, done)
    };
    println!("| path | first text delta | completion |\n|---|---|---|");
    let (df, dd) = row("direct", d);
    let (lf, ld) = row("through the library", l);
    let diff = |a: Duration, b: Duration| {
        let (a, b) = (a.as_secs_f64() * 1000.0, b.as_secs_f64() * 1000.0);
        format!("{:+.1} ms", a - b)
    };
    println!("| overhead | {} | {} |", diff(lf, df), diff(ld, dd));
}

/// The median of `v`.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `d` in milliseconds, one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
