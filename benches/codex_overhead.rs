//! The Codex driver's overhead over driving `codex app-server` directly, with the same mock Responses API
//! and the same `CODEX_HOME`: time to the first text delta and to `turn/completed` (the result for the
//! library), median of N alternating runs, both measured in one run.
//!
//! Run with: `cargo bench --bench codex_overhead` (`CODEX_BENCH_RUNS=N`, default 9). Needs the real CLI
//! (`scripts/install-clis.sh`); prints a SKIPPED line without it. Plain timing loop: one sample takes
//! hundreds of milliseconds.
//!
//! Cold (a fresh process per run): direct spawns `codex app-server --listen stdio://`, writes
//! `initialize`, `initialized`, `thread/start`, `turn/start` (the same frames the driver writes), reads
//! until `turn/completed`, closes stdin and waits; the library runs `Agent::send` on a `CodexDriver`
//! configured with the same provider and home.
//!
//! Warm (a thread's second and later turns on a running app-server): direct keeps one app-server with
//! a started thread and writes only `turn/start` per sample; the library sends on one `Thread`, whose
//! persistent app-server the driver keeps between runs.
//!
//! exec (a one-shot run over `codex exec --json`): direct spawns `codex exec --json
//! --skip-git-repo-check -C <ws> -` with the prompt on stdin and reads until `turn.completed`; the
//! library runs `Agent::send` on a driver with `transport = "exec"`. The same samples against the cold
//! app-server library runs give the exec : app-server ratio of time to result.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, Policy};
use agent_adaptor::providers::codex::{CodexConfig, CodexDriver, ModelProvider, TransportPreference};
use agent_adaptor::runtime::{Agent, CallOptions, Payload};
use agent_adaptor::testkit::cli::{Cli, find, skip_reason};
use agent_adaptor::testkit::codex_env::{API_KEY, API_KEY_ENV};
use agent_adaptor::testkit::mock::responses::{MockResponses, Reply, Script};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

struct Sample {
    first: Duration,
    done: Duration,
}

fn config(bin: &Path, root: &Path, base_url: &str) -> CodexConfig {
    let mut p = ModelProvider::responses("mock", base_url, Some(API_KEY_ENV));
    p.request_max_retries = Some(1);
    p.stream_max_retries = Some(1);
    let mut c = CodexConfig {
        model: Some("gpt-5.5".into()),
        provider: Some(p),
        codex_home: Some(root.join("codex-home")),
        ..Default::default()
    };
    c.common.command = Some(bin.to_path_buf());
    for (k, v) in [
        ("HOME", root.join("home").to_string_lossy().into_owned()),
        ("TMPDIR", root.join("tmp").to_string_lossy().into_owned()),
        (API_KEY_ENV, API_KEY.to_owned()),
    ] {
        c.common.env.insert(k.into(), v);
    }
    c
}

/// The CLI with `args`, spawned directly (no library) in `ws` with the bench's environment.
fn cli(bin: &Path, c: &CodexConfig, ws: &Path, args: &[&str]) -> tokio::process::Child {
    tokio::process::Command::new(bin)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(&c.common.env)
        .env("CODEX_HOME", c.codex_home.as_ref().unwrap())
        .current_dir(ws)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

async fn direct(bin: &Path, c: &CodexConfig, ws: &Path) -> Sample {
    let started = Instant::now();
    let mut child = cli(bin, c, ws, &["app-server", "--listen", "stdio://"]);
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ws_s = ws.to_string_lossy();
    let frames = [
        r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"agent-adaptor","version":"0"}}}"#
            .to_owned(),
        r#"{"method":"initialized"}"#.to_owned(),
        format!(
            r#"{{"id":2,"method":"thread/start","params":{{"cwd":"{ws_s}","model":"gpt-5.5","approvalPolicy":"on-request","sandbox":"workspace-write"}}}}"#
        ),
    ];
    for f in &frames[..1] {
        stdin.write_all(format!("{f}\n").as_bytes()).await.unwrap();
    }
    let mut first = None;
    let mut sent_thread = false;
    while let Some(line) = lines.next_line().await.unwrap() {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["id"] == 1 && !sent_thread {
            sent_thread = true;
            for f in &frames[1..] {
                stdin.write_all(format!("{f}\n").as_bytes()).await.unwrap();
            }
        } else if v["id"] == 2 {
            let tid = v["result"]["thread"]["id"].as_str().unwrap().to_owned();
            let turn = format!(
                r#"{{"id":3,"method":"turn/start","params":{{"threadId":"{tid}","input":[{{"type":"text","text":"say hi","text_elements":[]}}]}}}}"#
            );
            stdin.write_all(format!("{turn}\n").as_bytes()).await.unwrap();
        } else if v["method"] == "item/agentMessage/delta" && first.is_none() {
            first = Some(started.elapsed());
        } else if v["method"] == "turn/completed" {
            break;
        }
    }
    drop(stdin);
    child.wait().await.unwrap();
    Sample {
        first: first.unwrap_or_default(),
        done: started.elapsed(),
    }
}

async fn direct_exec(bin: &Path, c: &CodexConfig, ws: &Path) -> Sample {
    let started = Instant::now();
    let ws_s = ws.to_string_lossy();
    let mut child = cli(
        bin,
        c,
        ws,
        &["exec", "--json", "--skip-git-repo-check", "-C", &ws_s, "-"],
    );
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"say hi").await.unwrap();
    drop(stdin);
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut first = None;
    while let Some(line) = lines.next_line().await.unwrap() {
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if v["type"] == "item.completed" && v["item"]["type"] == "agent_message" && first.is_none() {
            first = Some(started.elapsed());
        } else if v["type"] == "turn.completed" {
            break;
        }
    }
    child.wait().await.unwrap();
    Sample {
        first: first.unwrap_or_default(),
        done: started.elapsed(),
    }
}

async fn library(agent: &Agent, ws: &Path) -> Sample {
    let started = Instant::now();
    let policy = Policy::workspace_write().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoApprove,
        ..Default::default()
    });
    let stream = agent.send("say hi", CallOptions::new().workspace(ws).policy(policy));
    let mut events = stream.events();
    let mut first = None;
    while let Some(e) = events.next().await {
        if first.is_none() && matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    stream.result().await.unwrap();
    Sample {
        first: first.unwrap_or_default(),
        done: started.elapsed(),
    }
}

/// One running app-server holding one thread, driven by hand.
struct Warm {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    thread: String,
    next_id: u64,
}

impl Warm {
    async fn start(bin: &Path, c: &CodexConfig, ws: &Path) -> Warm {
        let mut child = cli(bin, c, ws, &["app-server", "--listen", "stdio://"]);
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut w = Warm {
            child,
            stdin,
            lines,
            thread: String::new(),
            next_id: 3,
        };
        let ws_s = ws.to_string_lossy();
        w.write(r#"{"id":1,"method":"initialize","params":{"clientInfo":{"name":"agent-adaptor","version":"0"}}}"#)
            .await;
        w.until(|v| v["id"] == 1).await;
        w.write(r#"{"method":"initialized"}"#).await;
        w.write(&format!(
            r#"{{"id":2,"method":"thread/start","params":{{"cwd":"{ws_s}","model":"gpt-5.5","approvalPolicy":"on-request","sandbox":"workspace-write"}}}}"#
        ))
        .await;
        let v = w.until(|v| v["id"] == 2).await;
        w.thread = v["result"]["thread"]["id"].as_str().unwrap().to_owned();
        w
    }

    async fn write(&mut self, frame: &str) {
        self.stdin
            .write_all(format!("{frame}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn until(&mut self, f: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
        while let Some(line) = self.lines.next_line().await.unwrap() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if f(&v) {
                return v;
            }
        }
        panic!("app-server ended");
    }

    /// One turn: `turn/start`, then read until `turn/completed`.
    async fn turn(&mut self) -> Sample {
        let started = Instant::now();
        let id = self.next_id;
        self.next_id += 1;
        let turn = format!(
            r#"{{"id":{id},"method":"turn/start","params":{{"threadId":"{}","input":[{{"type":"text","text":"say hi","text_elements":[]}}]}}}}"#,
            self.thread
        );
        self.write(&turn).await;
        let mut first = None;
        while let Some(line) = self.lines.next_line().await.unwrap() {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            if v["method"] == "item/agentMessage/delta" && first.is_none() {
                first = Some(started.elapsed());
            } else if v["method"] == "turn/completed" {
                break;
            }
        }
        Sample {
            first: first.unwrap_or_default(),
            done: started.elapsed(),
        }
    }

    async fn close(mut self) {
        drop(self.stdin);
        self.child.wait().await.unwrap();
    }
}

async fn library_thread(thread: &agent_adaptor::runtime::Thread, ws: &Path) -> Sample {
    let started = Instant::now();
    let policy = Policy::workspace_write().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoApprove,
        ..Default::default()
    });
    let stream = thread.send("say hi", CallOptions::new().workspace(ws).policy(policy));
    let mut events = stream.events();
    let mut first = None;
    while let Some(e) = events.next().await {
        if first.is_none() && matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            first = Some(started.elapsed());
        }
    }
    stream.result().await.unwrap();
    Sample {
        first: first.unwrap_or_default(),
        done: started.elapsed(),
    }
}

fn report(name: &str, runs: usize, d: &[Sample], l: &[Sample]) {
    let df = median(d.iter().map(|s| s.first).collect());
    let dd = median(d.iter().map(|s| s.done).collect());
    let lf = median(l.iter().map(|s| s.first).collect());
    let ld = median(l.iter().map(|s| s.done).collect());
    println!("codex overhead ({name}), median of {runs} alternating runs");
    println!("| | first text delta | turn completed / result |");
    println!("|---|---|---|");
    println!("| CLI direct | {} | {} |", ms(df), ms(dd));
    println!("| library | {} | {} |", ms(lf), ms(ld));
    println!(
        "| added | {:+.1} ms | {:+.1} ms |",
        (lf.as_secs_f64() - df.as_secs_f64()) * 1000.0,
        (ld.as_secs_f64() - dd.as_secs_f64()) * 1000.0
    );
    println!();
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    let Some(bin) = find(Cli::Codex) else {
        println!("SKIPPED codex_overhead: {}", skip_reason(Cli::Codex));
        return;
    };
    let runs: usize = std::env::var("CODEX_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(9);
    let script = Script::new().otherwise(|_| Reply::new().text_deltas(["Hi! ", "I am ", "the mock."]));
    let mock = MockResponses::start(script).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    for d in ["ws", "home", "tmp"] {
        std::fs::create_dir_all(dir.path().join(d)).unwrap();
    }
    let c = config(&bin, dir.path(), &mock.base_url());
    agent_adaptor::providers::codex::home::prepare(c.codex_home.as_ref().unwrap(), &c).unwrap();
    let agent = Agent::new(CodexDriver::new(c.clone()));
    // Warm-up (page cache, first sqlite creation).
    direct(&bin, &c, &ws).await;
    library(&agent, &ws).await;
    let (mut d, mut l) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        d.push(direct(&bin, &c, &ws).await);
        l.push(library(&agent, &ws).await);
    }
    report("app-server cold: a fresh process per run", runs, &d, &l);

    // exec: one-shot runs over `codex exec --json`.
    let mut ce = c.clone();
    ce.transport = TransportPreference::Exec;
    let exec_agent = Agent::new(CodexDriver::new(ce));
    direct_exec(&bin, &c, &ws).await;
    library(&exec_agent, &ws).await;
    let (mut d, mut l, mut a) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        d.push(direct_exec(&bin, &c, &ws).await);
        l.push(library(&exec_agent, &ws).await);
        // Interleaved app-server one-shots for the ratio (same load window).
        a.push(library(&agent, &ws).await);
    }
    report("exec one-shot (first = the whole agent message)", runs, &d, &l);
    let exec_library = median(l.iter().map(|s| s.done).collect());
    let app_server_library = median(a.iter().map(|s| s.done).collect());
    println!(
        "exec : app-server one-shot time to result (library) = {} : {} = {:.2}",
        ms(exec_library),
        ms(app_server_library),
        exec_library.as_secs_f64() / app_server_library.as_secs_f64()
    );
    println!();

    // Warm: a thread's later turns on a running app-server.
    let mut warm = Warm::start(&bin, &c, &ws).await;
    let thread = agent.thread("bench-warm");
    warm.turn().await;
    library_thread(&thread, &ws).await;
    let (mut d, mut l) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        d.push(warm.turn().await);
        l.push(library_thread(&thread, &ws).await);
    }
    report(
        "app-server warm: a thread's next turn on a running app-server",
        runs,
        &d,
        &l,
    );
    warm.close().await;
    agent.close(Duration::from_secs(10)).await.unwrap();
    exec_agent.close(Duration::from_secs(10)).await.unwrap();
}
