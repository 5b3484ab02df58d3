//! The ACP driver's overhead over driving the ACP agent directly: the same agent command, the same
//! environment, the same frames (`initialize`, `session/new`, `session/prompt`), time to the first
//! `agent_message_chunk` and to the prompt's answer; median of N alternating runs, both sides measured in
//! one run, a fresh agent process per run on both sides (the driver keeps none).
//!
//! Run with: `cargo bench --profile dev --bench acp_overhead` (`ACP_BENCH_RUNS=N`, default 15). Two agents:
//! the scripted fake (`fake-acp-agent`, no model: isolates the driver's own cost) and, when installed, the
//! real `claude-agent-acp` over the real Claude Code against the mock Anthropic API
//! (`scripts/install-clis.sh`; a SKIPPED line without it). The library side uses a driver built from an
//! already-probed capability set, so neither side pays the `initialize` probe.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, Policy};
use agent_adaptor::providers::acp::{AcpConfig, AcpDriver};
use agent_adaptor::runtime::{Agent, CallOptions, Payload};
use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::cli::{Cli, find, skip_reason};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, Script};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Sample {
    first: Duration,
    done: Duration,
}

const PROMPT: &str = "say hi";

async fn direct(program: &Path, args: &[String], env: &BTreeMap<String, String>, cwd: &Path) -> Sample {
    let started = Instant::now();
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the agent");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let send = |v: Value| format!("{v}\n");
    let cwd_s = cwd.to_string_lossy().into_owned();
    let mut first = None;
    stdin.write_all(send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}}}})).as_bytes()).await.expect("write");
    let mut session = None;
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        match v.get("id").and_then(Value::as_u64) {
            Some(0) if v.get("method").is_none() => {
                stdin
                    .write_all(
                        send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                    "params": {"cwd": cwd_s, "mcpServers": []}}))
                        .as_bytes(),
                    )
                    .await
                    .expect("write");
            }
            Some(1) if v.get("method").is_none() => {
                let sid = v["result"]["sessionId"].as_str().unwrap_or_default().to_owned();
                let prompt = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                    "params": {"sessionId": sid, "prompt": [{"type": "text", "text": PROMPT}]}});
                stdin.write_all(send(prompt).as_bytes()).await.expect("write");
                session = Some(sid);
            }
            Some(2) if v.get("method").is_none() => break,
            _ => {
                if first.is_none()
                    && session.is_some()
                    && v["params"]["update"]["sessionUpdate"] == "agent_message_chunk"
                {
                    first = Some(started.elapsed());
                }
            }
        }
    }
    let done = started.elapsed();
    drop(stdin);
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    Sample {
        first: first.unwrap_or(done),
        done,
    }
}

async fn library(agent: &Agent, ws: &Path) -> Sample {
    let started = Instant::now();
    let opts = CallOptions::new()
        .workspace(ws)
        .policy(Policy::default().with_approvals(ApprovalPolicy {
            permission: ApprovalMode::AutoApprove,
            ..Default::default()
        }));
    let stream = agent.send(PROMPT, opts);
    let mut events = stream.events();
    let mut first = None;
    while let Some(e) = events.next().await {
        if first.is_none() && matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    stream.result().await.expect("the run succeeds");
    let done = started.elapsed();
    Sample {
        first: first.unwrap_or(done),
        done,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn measure(label: &str, config: AcpConfig, cwd: &Path, runs: usize) {
    let driver = AcpDriver::connect(config.clone()).await.expect("probe");
    let agent = Agent::new(AcpDriver::new(config.clone(), driver.caps().clone()));
    let program = config.common.command.clone().expect("command");
    let (mut d, mut l) = (Vec::new(), Vec::new());
    for i in 0..runs + 1 {
        let (a, b) = if i % 2 == 0 {
            let a = direct(&program, &config.argv(), &config.common.env, cwd).await;
            (a, library(&agent, cwd).await)
        } else {
            let b = library(&agent, cwd).await;
            (direct(&program, &config.argv(), &config.common.env, cwd).await, b)
        };
        if i > 0 {
            d.push(a);
            l.push(b);
        }
    }
    let (df, dd) = (
        median(d.iter().map(|s| s.first).collect()),
        median(d.iter().map(|s| s.done).collect()),
    );
    let (lf, ld) = (
        median(l.iter().map(|s| s.first).collect()),
        median(l.iter().map(|s| s.done).collect()),
    );
    println!("\n{label}, {runs} runs (medians):");
    println!("| path | first text chunk | prompt answered |");
    println!("|---|---|---|");
    println!("| direct | {:.1} ms | {:.1} ms |", ms(df), ms(dd));
    println!("| through the library | {:.1} ms | {:.1} ms |", ms(lf), ms(ld));
    println!(
        "| overhead | {:+.1} ms | {:+.1} ms |",
        ms(lf) - ms(df),
        ms(ld) - ms(dd)
    );
}

fn main() {
    let runs: usize = std::env::var("ACP_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(15);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).expect("ws");
        let mut fake = AcpConfig::command(env!("CARGO_BIN_EXE_fake-acp-agent"), &[]);
        fake.common.env.insert(
            "FAKE_ACP_DATA_DIR".into(),
            dir.path().join("data").to_string_lossy().into_owned(),
        );
        measure("fake-acp-agent (no model)", fake, &ws, runs).await;

        let (Some(bin), Some(js)) = (find(Cli::Claude), find(Cli::ClaudeAcp)) else {
            println!("\n{}", skip_reason(Cli::ClaudeAcp));
            return;
        };
        let Some(node) = agent_adaptor::providers::registry::find_cli("node", "AGENT_ADAPTOR_NODE_BIN")
        else {
            println!("\nSKIPPED: node not found");
            return;
        };
        let mock = MockAnthropic::start(Script::from_fn(|_| Reply::text("Hi!")))
            .await
            .expect("mock");
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).expect("env");
        let mut claude = AcpConfig::command(node, &[js.to_str().expect("utf-8 path")]);
        claude.common.env = env.vars().clone();
        claude.common.env.insert(
            "CLAUDE_CODE_EXECUTABLE".into(),
            bin.to_string_lossy().into_owned(),
        );
        claude.common.directory = Some(env.cwd.clone());
        measure(
            "claude-agent-acp 0.101.0 + Claude Code 2.1.332 (mock model)",
            claude,
            &env.cwd,
            runs.min(9),
        )
        .await;
    });
}
