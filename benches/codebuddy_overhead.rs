//! The CodeBuddy driver's overhead over running the CLI directly, with the same mock model and the same
//! environment: time to the first text delta and to completion, median of N alternating runs.
//!
//! Run with: `cargo bench --bench codebuddy_overhead` (`CODEBUDDY_BENCH_RUNS=N`, default 9). Needs the
//! real CLI (`scripts/install-clis.sh`); prints a SKIPPED line without it. One sample takes seconds (node
//! start-up dominates), so this is a plain timing loop rather than a divan bench.
//!
//! Both sides use the headless transport: `--print --output-format stream-json --verbose
//! --include-partial-messages --permission-mode bypassPermissions -- <prompt>`, the prompt answered by the
//! mock with a fixed text.
//!
//! On a loaded machine node's start-up varies by seconds between runs, which buries a few milliseconds of
//! driver overhead. The second table therefore replays a recorded CodeBuddy stdout
//! (`tests/fixtures/codebuddy/headless_text.jsonl`) through a one-line shell script standing in for the
//! CLI — same spawn, parsing and event path, no node — to measure the driver's own cost (always runs;
//! `CODEBUDDY_BENCH_REPLAYS=N`, default 41).

#[path = "support/overhead.rs"]
mod overhead;

use std::path::Path;

use agent_adaptor::providers::codebuddy::{CodeBuddyConfig, CodeBuddyDriver, env};
use agent_adaptor::runtime::Agent;
use agent_adaptor::testkit::cli::{Cli, find, skip_reason};
use agent_adaptor::testkit::codebuddy_env::DUMMY_API_KEY;
use agent_adaptor::testkit::mock::chat::{MockChat, Reply, Script};
use overhead::{PROMPT, runs_from, sample, scratch, table};

fn vars(root: &Path, base_url: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vec![
        ("HOME".into(), root.join("home").to_string_lossy().into_owned()),
        ("TMPDIR".into(), root.join("tmp").to_string_lossy().into_owned()),
        ("CODEBUDDY_BASE_URL".into(), base_url.to_owned()),
        ("CODEBUDDY_API_KEY".into(), DUMMY_API_KEY.to_owned()),
        ("SHELL".into(), "/bin/bash".into()),
        (
            env::CONFIG_DIR_VAR.into(),
            root.join("cfg").to_string_lossy().into_owned(),
        ),
    ];
    v.extend(
        env::FIXED
            .iter()
            .map(|(k, val, _)| ((*k).to_owned(), (*val).to_owned())),
    );
    v
}

fn args() -> [&'static str; 9] {
    [
        "--print",
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
    let mut config = CodeBuddyConfig {
        config_dir: Some(root.join("cfg")),
        ..Default::default()
    };
    config.common.command = Some(program.to_owned());
    for (k, v) in env_vars {
        if k != env::CONFIG_DIR_VAR {
            config.common.env.insert(k, v);
        }
    }
    Agent::new(CodeBuddyDriver::new(config))
}

/// Driver overhead without the CLI: a shell script that prints a recorded stdout stands in for it.
fn replay() {
    let runs = runs_from("CODEBUDDY_BENCH_REPLAYS", 41);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let dir = scratch();
        let root = dir.path();
        let script = overhead::replay_script(root, "tests/fixtures/codebuddy/headless_text.jsonl");
        let vars = vars(root, "http://127.0.0.1:9");
        let agent = agent(root, &script, Vec::new());
        let (d, l) = sample(runs, &script, &args(), &vars, &agent, &root.join("ws")).await;
        println!("CodeBuddy driver overhead on a replayed stdout, median of {runs} runs (no node)\n");
        table(&d, &l);
        println!();
    });
}

fn main() {
    replay();
    let Some(bin) = find(Cli::CodeBuddy) else {
        println!("{}", skip_reason(Cli::CodeBuddy));
        return;
    };
    let runs = runs_from("CODEBUDDY_BENCH_RUNS", 9);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async move {
        let answer = "Hello there, this is the mock answering quickly.";
        let mock = MockChat::start(Script::func(move |_, _| Reply::text(answer)))
            .await
            .expect("mock");
        let dir = scratch();
        let root = dir.path();
        let vars = vars(root, &mock.base_url());
        let agent = agent(root, &bin, vars.clone());
        let (d, l) = sample(runs, &bin, &args(), &vars, &agent, &root.join("ws")).await;
        println!("CodeBuddy overhead with the real CLI, median of {runs} runs (headless, mock model)\n");
        table(&d, &l);
        mock.shutdown().await;
    });
}
