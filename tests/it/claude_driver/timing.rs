//! `AGENT_ADAPTOR_CLAUDE_TIMING` end to end: `agent-adaptor run` on the real CLI against a mock that
//! streams numbered deltas writes one line per text delta, in order, with non-decreasing stamps.

use std::path::Path;
use std::process::Command;

use agent_adaptor::providers::claude::timing::TIMING_VAR;
use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::mock::anthropic::{Block, MockAnthropic, Reply, Script};

const DELTAS: usize = 20;

fn deltas() -> Vec<String> {
    (1..=DELTAS).map(|i| format!("d{i:04} ")).collect()
}

/// A `serve --config` file with one `claude` agent on `bin` in `env`.
fn config(bin: &Path, env: &ClaudeEnv) -> String {
    let value = serde_json::json!({
        "agents": [{
            "name": "claude",
            "provider": "claude",
            "config": {
                "command": bin,
                "directory": env.cwd,
                "config_dir": env.config_dir,
                "env": env.vars(),
            },
        }],
    });
    toml::to_string(&toml::Value::try_from(&value).unwrap()).unwrap()
}

/// Runs `agent-adaptor run --agent claude` once with the timing file.
fn run(file: &Path, timing: &Path) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"));
    cmd.args(["run", "--agent", "claude", "--config"])
        .arg(file)
        .arg("say the numbered words")
        .stdin(std::process::Stdio::null());
    cmd.env(TIMING_VAR, timing);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "run failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_timing_file_gets_one_line_per_text_delta_in_order() {
    let Some(bin) = require(Cli::Claude) else {
        return;
    };
    let mock = MockAnthropic::start(Script::from_fn(|_| {
        Reply::blocks(vec![Block::text_chunks(deltas())])
    }))
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let env = ClaudeEnv::new(&dir.path().join("env"), &mock.base_url())
        .unwrap()
        .allow_bypass_as_root();
    let file = dir.path().join("serve.toml");
    std::fs::write(&file, config(&bin, &env)).unwrap();

    let timing = dir.path().join("timing.log");
    let (f, t) = (file.clone(), timing.clone());
    tokio::task::spawn_blocking(move || run(&f, &t)).await.unwrap();
    let text = std::fs::read_to_string(&timing).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), DELTAS, "one line per text delta:\n{text}");
    let mut last_read = 0u64;
    for (line, want) in lines.iter().zip(deltas()) {
        let mut parts = line.splitn(4, ' ');
        let mut stamp = || parts.next().unwrap().parse::<u64>().unwrap();
        let (read, parsed, emitted) = (stamp(), stamp(), stamp());
        assert!(read <= parsed && parsed <= emitted, "{line}");
        assert!(read >= last_read, "reads in order: {line}");
        last_read = read;
        let delta: String = serde_json::from_str(parts.next().unwrap()).unwrap();
        assert_eq!(delta, want);
    }
    mock.shutdown().await;
}
