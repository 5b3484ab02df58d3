//! The Claude driver's overhead over running the CLI directly, with the same mock model and the same
//! environment: time to the first text delta and to completion, median of N alternating runs, both
//! measured in one run.
//!
//! Run with: `cargo bench --bench claude_overhead` (`CLAUDE_BENCH_RUNS=N`, default 15). Needs the real
//! CLI (`scripts/install-clis.sh`); prints a SKIPPED line without it. One sample takes hundreds of
//! milliseconds (the CLI's start-up dominates), so this is a plain timing loop rather than a divan bench.
//!
//! Both sides use the one-shot transport with the driver's exact flags (`-p --output-format stream-json
//! --verbose --include-partial-messages --permission-mode bypassPermissions -- <prompt>`), the prompt
//! answered by the mock with a fixed text.
//!
//! The first table replays a recorded Claude stdout (`tests/fixtures/claude/text_partial.jsonl`) through a
//! one-line shell script standing in for the CLI — same spawn, parsing and event path, no CLI start-up —
//! to isolate the driver's own cost (always runs; `CLAUDE_BENCH_REPLAYS=N`, default 41).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_adaptor::driver::{ApprovalPolicy, Policy};
use agent_adaptor::providers::claude::{ClaudeDriver, Config, env};
use agent_adaptor::runtime::{Agent, CallOptions, Payload};
use agent_adaptor::testkit::claude_env::DUMMY_API_KEY;
use agent_adaptor::testkit::cli::{Cli, find, skip_reason};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, Script};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};

const PROMPT: &str = "say hi";

struct Sample {
    first: Duration,
    done: Duration,
}

fn vars(root: &Path, base_url: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![
        ("HOME".into(), root.join("home").to_string_lossy().into_owned()),
        ("TMPDIR".into(), root.join("tmp").to_string_lossy().into_owned()),
        ("ANTHROPIC_BASE_URL".into(), base_url.to_owned()),
        ("ANTHROPIC_API_KEY".into(), DUMMY_API_KEY.to_owned()),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ("SHELL".into(), "/bin/bash".into()),
        (
            env::CONFIG_DIR_VAR.into(),
            root.join("cfg").to_string_lossy().into_owned(),
        ),
    ];
    if env::is_root() {
        v.push(("IS_SANDBOX".into(), "1".into()));
    }
    v.extend(
        env::FIXED
            .iter()
            .map(|(k, val, _)| ((*k).to_owned(), (*val).to_owned())),
    );
    v
}

async fn direct(bin: &Path, root: &Path, base_url: &str) -> Sample {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(bin)
        .args([
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-mode",
            "bypassPermissions",
            "--",
            PROMPT,
        ])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(vars(root, base_url))
        .current_dir(root.join("ws"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn claude");
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

async fn library(agent: &Agent, root: &Path) -> Sample {
    let started = Instant::now();
    let opts = CallOptions::new()
        .workspace(root.join("ws"))
        .policy(Policy::default().with_approvals(ApprovalPolicy::auto_approve()));
    let stream = agent.send(PROMPT, opts);
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

fn runs_from(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
        .max(1)
}

/// Driver overhead without node: a shell script that prints a recorded stdout stands in for the CLI.
fn replay() {
    let runs = runs_from("CLAUDE_BENCH_REPLAYS", 41);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in ["home", "tmp", "cfg", "ws"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude/text_partial.jsonl");
        let script = root.join("replay.sh");
        std::fs::write(&script, format!("#!/bin/sh\nexec cat '{}'\n", fixture.display())).expect("script");
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
        let mut config = Config {
            config_dir: Some(root.join("cfg")),
            ..Default::default()
        };
        config.common.command = Some(script.clone());
        let agent = Agent::new(ClaudeDriver::new(config));
        direct(&script, root, "http://127.0.0.1:9").await;
        library(&agent, root).await;
        let (mut d, mut l) = (Vec::new(), Vec::new());
        for i in 0..runs {
            if i % 2 == 0 {
                d.push(direct(&script, root, "http://127.0.0.1:9").await);
                l.push(library(&agent, root).await);
            } else {
                l.push(library(&agent, root).await);
                d.push(direct(&script, root, "http://127.0.0.1:9").await);
            }
        }
        println!("Claude driver overhead on a replayed stdout, median of {runs} runs (no CLI)\n");
        table(&d, &l);
        println!();
    });
}

/// Prints the direct/library table and the overhead row.
fn table(d: &[Sample], l: &[Sample]) {
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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    replay();
    let Some(bin) = find(Cli::Claude) else {
        println!("{}", skip_reason(Cli::Claude));
        return;
    };
    let runs = runs_from("CLAUDE_BENCH_RUNS", 15);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let answer = "Hello there, this is the mock answering quickly.";
        let mock = MockAnthropic::start(Script::from_fn(move |_| Reply::text(answer)))
            .await
            .expect("mock");
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in ["home", "tmp", "cfg", "ws"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        let mut config = Config {
            config_dir: Some(root.join("cfg")),
            ..Default::default()
        };
        config.common.command = Some(bin.clone());
        for (k, v) in vars(root, &mock.base_url()) {
            if k != env::CONFIG_DIR_VAR {
                config.common.env.insert(k, v);
            }
        }
        let agent = Agent::new(ClaudeDriver::new(config));
        // One warm-up of each, not counted (first-run file system caches).
        direct(&bin, root, &mock.base_url()).await;
        library(&agent, root).await;
        let (mut d, mut l) = (Vec::new(), Vec::new());
        for i in 0..runs {
            // Alternate the order so drift on the shared machine hits both sides alike.
            if i % 2 == 0 {
                d.push(direct(&bin, root, &mock.base_url()).await);
                l.push(library(&agent, root).await);
            } else {
                l.push(library(&agent, root).await);
                d.push(direct(&bin, root, &mock.base_url()).await);
            }
        }
        println!("Claude overhead with the real CLI, median of {runs} runs (one-shot, mock model)\n");
        table(&d, &l);
        mock.shutdown().await;
    });
}
