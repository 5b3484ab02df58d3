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
//!
//! The last table compares, through the library and on the bidirectional transport (default policy), a
//! cold run (a direct `Agent::send`: spawn, `initialize`, the turn, exit) with a warm one (a thread's next
//! turn on its kept process: only the user frame is written), alternating in the same run.

#[path = "support/overhead.rs"]
mod overhead;

use std::path::Path;

use agent_adaptor::providers::claude::{ClaudeDriver, Config, env};
use std::time::Instant;

use agent_adaptor::runtime::{Agent, CallOptions};
use agent_adaptor::testkit::claude_env::DUMMY_API_KEY;
use agent_adaptor::testkit::cli::{Cli, find, skip_reason};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, Script};
use overhead::{PROMPT, Sample, median, ms, runs_from, sample, scratch, table, timed};

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

fn args() -> [&'static str; 9] {
    [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--permission-mode",
        "bypassPermissions",
        "--",
        PROMPT,
    ]
}

fn agent(root: &Path, program: &Path, env_vars: Vec<(String, String)>) -> Agent {
    let mut config = Config {
        config_dir: Some(root.join("cfg")),
        ..Default::default()
    };
    config.common.command = Some(program.to_owned());
    for (k, v) in env_vars {
        if k != env::CONFIG_DIR_VAR {
            config.common.env.insert(k, v);
        }
    }
    Agent::new(ClaudeDriver::new(config))
}

/// Driver overhead without the CLI: a shell script that prints a recorded stdout stands in for it.
fn replay() {
    let runs = runs_from("CLAUDE_BENCH_REPLAYS", 41);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let dir = scratch();
        let root = dir.path();
        let script = overhead::replay_script(root, "tests/fixtures/claude/text_partial.jsonl");
        let vars = vars(root, "http://127.0.0.1:9");
        let agent = agent(root, &script, Vec::new());
        let (d, l) = sample(runs, &script, &args(), &vars, &agent, &root.join("ws")).await;
        println!("Claude driver overhead on a replayed stdout, median of {runs} runs (no CLI)\n");
        table(&d, &l);
        println!();
    });
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
        let dir = scratch();
        let root = dir.path();
        let vars = vars(root, &mock.base_url());
        let agent = agent(root, &bin, vars.clone());
        let (d, l) = sample(runs, &bin, &args(), &vars, &agent, &root.join("ws")).await;
        println!("Claude overhead with the real CLI, median of {runs} runs (one-shot, mock model)\n");
        table(&d, &l);
        println!();
        persistent(runs, &agent, &root.join("ws")).await;
        agent
            .close(std::time::Duration::from_secs(10))
            .await
            .expect("close");
        mock.shutdown().await;
    });
}

/// Cold (a fresh bidirectional process per run) against warm (a thread's next turn on its kept process).
async fn persistent(runs: usize, agent: &Agent, ws: &Path) {
    let opts = || CallOptions::new().workspace(ws);
    let cold = || async { timed(Instant::now(), &agent.send(PROMPT, opts())).await };
    let thread = agent.thread("bench-warm");
    let warm = || async { timed(Instant::now(), &thread.send(PROMPT, opts())).await };
    cold().await;
    warm().await;
    let (mut c, mut w): (Vec<Sample>, Vec<Sample>) = (Vec::new(), Vec::new());
    for i in 0..runs {
        if i % 2 == 0 {
            c.push(cold().await);
            w.push(warm().await);
        } else {
            w.push(warm().await);
            c.push(cold().await);
        }
    }
    let med =
        |s: &[Sample], first: bool| median(s.iter().map(|x| if first { x.first } else { x.done }).collect());
    println!(
        "Claude bidi through the library, cold process vs. a thread's kept process, median of {runs} runs\n"
    );
    println!("| run | first text delta | completion |\n|---|---|---|");
    println!(
        "| cold (spawn + initialize) | {} | {} |",
        ms(med(&c, true)),
        ms(med(&c, false))
    );
    println!(
        "| warm (kept process) | {} | {} |",
        ms(med(&w, true)),
        ms(med(&w, false))
    );
    let ratio = |f: bool| med(&w, f).as_secs_f64() / med(&c, f).as_secs_f64();
    println!(
        "| **warm / cold** | **{:.2}** | **{:.2}** |",
        ratio(true),
        ratio(false)
    );
}
