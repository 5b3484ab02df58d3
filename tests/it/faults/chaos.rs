//! The chaos suite (issue #22): the real `serve` binary on a store (a SQLite file; a Postgres database on
//! a throwaway cluster the test starts with Debian's `initdb`/`pg_ctl`, never the shared server) runs
//! rounds of concurrent runs on a fixed set of threads, each run with one mishap: its SSE client
//! disconnects and resumes, it is cancelled, its approval times out, or its CLI (the fake Cursor CLI
//! through the real Cursor driver) is killed with SIGKILL; plain reference and Cursor runs fill the rest.
//! Some rounds SIGKILL the server mid-round and restart it on the same store; on Postgres some rounds
//! restart the database (`pg_ctl restart -m immediate`) mid-round.
//!
//! Afterwards: every run terminal; no CLI process left (each carries a marker in its environment);
//! every SSE client saw strictly increasing ids (no duplicate), and what it saw agrees with the durable
//! log: the same events, byte for byte, except — only for a run the server's SIGKILL cut — events past
//! the log's committed prefix (`details.last_recorded_seq`), the publish-first window `server::recovery`
//! states; those are counted and printed, and every event of the durable log was seen by the client.
//! Every thread takes its next run at once (each round starts on the threads of the one before: a 409
//! fails the suite), and a last run on each succeeds.
//!
//! Size: `AGENT_ADAPTOR_CHAOS_RUNS` runs per store (default 60, the CI variant; BENCHMARKS.md has the
//! 1,000-run figures and the command).

use std::collections::BTreeMap;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

use crate::server::{Frame, client, listening_url};

/// Concurrent runs per round (one per thread).
const THREADS: usize = 10;
/// The fake Cursor CLI.
const CURSOR_BIN: &str = env!("CARGO_BIN_EXE_fake-cursor-agent");

/// Runs per store.
fn total_runs() -> usize {
    std::env::var("AGENT_ADAPTOR_CHAOS_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60)
}

/// What happens to one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mishap {
    Plain,
    Disconnect,
    Cancel,
    ApprovalTimeout,
    KillCli,
    Cursor,
}

impl Mishap {
    /// The mishap of thread slot `slot` in round `round`: every kind in every round, rotating over the
    /// slots; at most one `KillCli` per round (the kill finds its CLI by the agent's marker).
    fn of(round: usize, slot: usize) -> Mishap {
        const ORDER: [Mishap; THREADS] = [
            Mishap::Plain,
            Mishap::Disconnect,
            Mishap::Cancel,
            Mishap::ApprovalTimeout,
            Mishap::KillCli,
            Mishap::Cursor,
            Mishap::Disconnect,
            Mishap::Plain,
            Mishap::ApprovalTimeout,
            Mishap::Cancel,
        ];
        ORDER[(slot + round) % THREADS]
    }

    /// `(agent, body)` of the run.
    fn request(self) -> (&'static str, Value) {
        match self {
            // A thread's next run after a failed one gets a continuity notice quoting the earlier
            // conversation, so "permission" can reach any later prompt: those runs auto-approve.
            Mishap::Plain | Mishap::Disconnect | Mishap::Cancel => (
                "reference",
                json!({"prompt": "hello there", "approvals": {"permission": "auto_approve"}}),
            ),
            Mishap::ApprovalTimeout => (
                "reference",
                json!({"prompt": "permission please",
                       "approvals": {"permission": "ask", "timeout": 150, "on_timeout": "continue"}}),
            ),
            Mishap::KillCli => (
                "cursor-hang",
                json!({"prompt": "wait for me", "timeout_ms": 60000}),
            ),
            Mishap::Cursor => ("cursor", json!({"prompt": "hello cursor"})),
        }
    }
}

/// `serve` on a fixed port, killed with SIGKILL when dropped.
struct Serve {
    child: Child,
}

impl Serve {
    fn start(config: &Path, store: &str, port: u16) -> (Serve, String) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut child = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
                .args(["serve", "--config"])
                .arg(config)
                .args([
                    "--bind",
                    &format!("127.0.0.1:{port}"),
                    "--store",
                    store,
                    "--no-discover",
                ])
                .env_remove("AGENT_ADAPTOR_REPLICA_ID")
                .env("AGENT_ADAPTOR_REPLICA_ID", "chaos-replica")
                .stdout(Stdio::piped())
                .stderr(server_log(config))
                .spawn()
                .expect("spawn serve");
            let mut out = BufReader::new(child.stdout.take().unwrap());
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut out, &mut line);
            if line.starts_with("agent-adaptor listening") {
                let url = listening_url(&mut std::io::Cursor::new(line));
                return (Serve { child }, url);
            }
            // The port may still be held for a moment after a kill: try again.
            let _ = child.kill();
            let _ = child.wait();
            assert!(
                Instant::now() < deadline,
                "serve did not start on port {port}: {line:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every server's stderr, appended to `serve.log` beside the config, so a failure can show its tail.
static SERVER_LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The log file the servers of this test write their stderr to.
fn server_log(config: &Path) -> Stdio {
    let path = SERVER_LOG.get_or_init(|| config.with_file_name("serve.log"));
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_or_else(|_| Stdio::null(), Stdio::from)
}

/// The last `n` lines of the servers' stderr that mention `needle` (all lines when it is empty).
fn server_log_tail(needle: &str, n: usize) -> String {
    let text = SERVER_LOG
        .get()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(needle)).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A free loopback port.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `--config` file: the reference agent, the fake Cursor CLI, and one that hangs (for SIGKILL).
fn write_config(dir: &Path, marker: &str) -> PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let cursor = |name: &str, scenario: &str| {
        format!(
            "[[agents]]\nname = \"{name}\"\nprovider = \"cursor\"\nconfig = {{ command = \"{CURSOR_BIN}\", \
             directory = \"{ws}\", profile_dir = \"{profile}\", grace_period = 1, env = {{ CHAOS_MARK = \"{marker}\", \
             FAKE_CURSOR_SCENARIO = \"{scenario}\" }} }}\n",
            ws = ws.display(),
            profile = dir.join(format!("profile-{name}")).display(),
        )
    };
    let text = format!(
        "approval_timeout = \"30s\"\nshutdown_grace = \"2s\"\n\n[[agents]]\nname = \"reference\"\nprovider = \"reference\"\n\
         config = {{ chunk_delay_ms = 10 }}\n\n{}\n{}",
        cursor("cursor", "slow"),
        cursor("cursor-hang", "hang"),
    );
    let path = dir.join("chaos.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Processes whose environment carries `marker` (the CLIs of this suite's server).
fn marked_processes(marker: &str) -> Vec<u32> {
    let needle = format!("CHAOS_MARK={marker}");
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(env) = std::fs::read(entry.path().join("environ"))
            && env.split(|&b| b == 0).any(|kv| kv == needle.as_bytes())
        {
            out.push(pid);
        }
    }
    out
}

/// One run as the suite saw it.
#[derive(Debug, Default)]
struct Seen {
    run_id: String,
    /// Every frame with an id the client received, in order, across reconnects.
    frames: Vec<Frame>,
    /// The server was SIGKILLed while the run was live.
    crashed: bool,
}

/// The pid of the CLI a run spawned (its `process_info` spawn event), once the client saw it.
fn spawned_pid(frames: &[Frame]) -> Option<u32> {
    frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("process_info"))
        .find_map(|f| f.json()["metadata"]["pid"].as_str()?.parse().ok())
}

/// Reads SSE frames from `resp` into `frames` until `done` (true), the body ends or fails (false), or
/// `stop` frames.
async fn read(resp: reqwest::Response, frames: &Mutex<Vec<Frame>>, stop: Option<usize>) -> bool {
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut got = 0;
    loop {
        let chunk = match tokio::time::timeout(Duration::from_secs(60), body.next()).await {
            Ok(Some(Ok(c))) => c,
            _ => return false,
        };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let raw: String = buf.drain(..end + 2).collect();
            let mut f = Frame::default();
            let mut data = Vec::new();
            for line in raw.trim_end_matches('\n').split('\n') {
                let (name, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value).to_owned();
                match name {
                    "id" => f.id = Some(value),
                    "event" => f.event = Some(value),
                    "data" => data.push(value),
                    _ => {}
                }
            }
            f.data = data.join("\n");
            if f.id.is_none() {
                continue; // comments, and the id-less error frame
            }
            let done = f.event.as_deref() == Some("done");
            frames.lock().unwrap().push(f);
            got += 1;
            if done {
                return true;
            }
            if stop.is_some_and(|n| got >= n) {
                return false;
            }
        }
    }
}

/// Follows a run's events to `done`, reconnecting with `Last-Event-ID` whenever the stream breaks (the
/// server may be down: connection errors are retried for 60 s). `disconnect` drops the stream after 3
/// frames once, as a client going away.
async fn follow(base: String, run: String, seen: Arc<Mutex<Vec<Frame>>>, disconnect: bool) {
    let http = client();
    let mut dropped = !disconnect;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "run {run}: no done within 120 s");
        let mut req = http.get(format!("{base}/v1/runs/{run}/events"));
        let last = seen.lock().unwrap().last().and_then(|f| f.id.clone());
        if let Some(last) = last {
            req = req.header("Last-Event-ID", last);
        }
        let resp = match req.send().await {
            Ok(r) if r.status() == 200 => r,
            _ => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let stop = (!dropped).then_some(3);
        if read(resp, &seen, stop).await {
            return;
        }
        if !dropped {
            dropped = true;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The run's view, polled until it is terminal (at most 150 s, as long as a round waits for a client's `done`).
///
/// A thread whose runs were cut by server kills carries a recovery context of up to
/// `CONTINUITY_BUDGET` (8 KiB) into its next prompt, and the reference agent echoes its whole prompt one
/// word per chunk: at the 50 ms per chunk this suite once used, that reply alone took over 60 s after
/// ~20 kills (the 1,000-run SQLite failure "not terminal within 60 s" in the final usability check: the
/// run was streaming, not stuck). The chunk delay is 10 ms now, and this bound matches the rounds'.
async fn terminal(base: &str, run: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(150);
    let mut last = String::from("no answer");
    loop {
        if let Ok(r) = client().get(format!("{base}/v1/runs/{run}")).send().await {
            let status = r.status();
            let v: Value = r.json().await.unwrap_or(Value::Null);
            if status == 200
                && ["succeeded", "failed", "cancelled", "interrupted"]
                    .contains(&v["state"].as_str().unwrap_or(""))
            {
                return v;
            }
            last = format!("{status} {v}");
        }
        assert!(
            Instant::now() < deadline,
            "run {run} is not terminal within 150 s; last answer: {last}\nthe servers' log about it:\n{}\nthe servers' last lines:\n{}",
            server_log_tail(run, 40),
            server_log_tail("", 40)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The durable replay of a run from the start, to its `done`.
async fn replay(base: &str, run: &str) -> Vec<Frame> {
    let resp = client()
        .get(format!("{base}/v1/runs/{run}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let frames = Mutex::new(Vec::new());
    assert!(
        read(resp, &frames, None).await,
        "run {run}: the replay ends with done"
    );
    frames.into_inner().unwrap()
}

/// Tallies of one store's chaos.
#[derive(Debug, Default)]
struct Tally {
    runs: usize,
    states: BTreeMap<String, usize>,
    server_kills: usize,
    db_restarts: usize,
    cli_kills: usize,
    frames_seen: usize,
    /// Events a client saw live that the log does not have (only runs cut by a server SIGKILL).
    lost_at_crash: usize,
}

/// Checks one finished run against its durable log; returns the events lost to a server SIGKILL.
fn check_run(seen: &Seen, view: &Value, replayed: &[Frame], problems: &mut Vec<String>) -> usize {
    let run = &seen.run_id;
    let ids = |fs: &[Frame]| fs.iter().map(Frame::seq).collect::<Vec<u64>>();
    let seen_ids = ids(&seen.frames);
    if !seen_ids.windows(2).all(|w| w[0] < w[1]) {
        problems.push(format!(
            "{run}: the client saw ids out of order or twice: {seen_ids:?}"
        ));
    }
    let log_ids = ids(replayed);
    if !log_ids.windows(2).all(|w| w[0] < w[1]) {
        problems.push(format!(
            "{run}: the replay has ids out of order or twice: {log_ids:?}"
        ));
    }
    if seen.frames.last().and_then(|f| f.event.as_deref()) != Some("done") {
        problems.push(format!("{run}: the client saw no done"));
    }
    let by_id: BTreeMap<u64, &Frame> = replayed.iter().map(|f| (f.seq(), f)).collect();
    if !seen.crashed {
        if seen.frames != replayed {
            problems.push(format!(
                "{run}: what the client saw differs from the log ({} vs {} frames; ids {seen_ids:?} vs {log_ids:?})",
                seen.frames.len(),
                replayed.len()
            ));
        }
        return 0;
    }
    // Cut by the server's SIGKILL: the log is the committed prefix plus the recovery's terminal.
    let recorded = view["error"]["details"]["last_recorded_seq"]
        .as_u64()
        .unwrap_or(0);
    let seen_by_id: BTreeMap<u64, &Frame> = seen.frames.iter().map(|f| (f.seq(), f)).collect();
    for (id, f) in &by_id {
        if *id <= recorded {
            match seen_by_id.get(id) {
                Some(s) if s == f => {}
                other => problems.push(format!(
                    "{run}: log event {id} {f:?} but the client saw {other:?}"
                )),
            }
        }
    }
    let mut lost = 0;
    for (id, f) in &seen_by_id {
        if *id <= recorded || f.event.as_deref() == Some("done") {
            continue;
        }
        match by_id.get(id) {
            Some(l) if l == f => {}
            // The recovery's terminal events are numbered after the prefix: a client that saw more gets
            // them after its own cursor, so the same id may name another event only past `recorded`.
            Some(_) if f.event.as_deref() == Some("run_finished") => {}
            _ => lost += 1,
        }
    }
    lost
}

/// One store's story: `runs` runs in rounds of [`THREADS`]; `restart_db` restarts the database.
async fn chaos(store: &str, restart_db: Option<&dyn Fn()>) -> Tally {
    let dir = tempfile::tempdir().unwrap();
    let marker = uuid::Uuid::new_v4().simple().to_string();
    let config = write_config(dir.path(), &marker);
    let port = free_port();
    let (mut serve, base) = Serve::start(&config, store, port);
    let rounds = total_runs().div_ceil(THREADS);
    let mut tally = Tally::default();
    let mut problems = Vec::new();
    // Per thread: (round, mishap, run id, final state, cut by a server kill), for failure messages.
    let mut history: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let http = client();
    for round in 0..rounds {
        let round_started = Instant::now();
        let kill_server = round % 5 == 4;
        let restart = restart_db.is_some() && round % 7 == 3;
        let mut runs = Vec::new();
        // Per run: the server was SIGKILLed while it was live. A run that ended just before the kill
        // may still be marked: harmless, the crash rule still requires its log to match what was seen.
        let mut crashed = vec![false; THREADS];
        for slot in 0..THREADS {
            let mishap = Mishap::of(round, slot);
            let (agent, body) = mishap.request();
            let path = format!("{base}/v1/agents/{agent}/threads/chaos-{agent}-{slot}/runs");
            let resp = http.post(&path).json(&body).send().await.unwrap();
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap();
            assert_eq!(
                status, 201,
                "round {round} slot {slot}: the thread takes its next run at once: {text}"
            );
            let run_id = serde_json::from_str::<Value>(&text).unwrap()["run_id"]
                .as_str()
                .unwrap()
                .to_owned();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let task = tokio::spawn(follow(
                base.clone(),
                run_id.clone(),
                seen.clone(),
                mishap == Mishap::Disconnect,
            ));
            runs.push((mishap, run_id, seen, task));
        }
        // Mishaps that need the run under way: wait for each run's first frames.
        for (mishap, run_id, seen, _) in &runs {
            let deadline = Instant::now() + Duration::from_secs(30);
            match mishap {
                Mishap::Cancel => {
                    while seen.lock().unwrap().len() < 2 {
                        assert!(
                            Instant::now() < deadline,
                            "{mishap:?} run {run_id} made no progress"
                        );
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    let r = http
                        .post(format!("{base}/v1/runs/{run_id}/cancel"))
                        .send()
                        .await
                        .unwrap();
                    assert!(
                        [202, 409].contains(&r.status().as_u16()),
                        "cancel {run_id}: {}",
                        r.status()
                    );
                }
                Mishap::KillCli => {
                    let pid = loop {
                        if let Some(pid) = spawned_pid(&seen.lock().unwrap()) {
                            break pid;
                        }
                        assert!(
                            Instant::now() < deadline,
                            "{mishap:?} run {run_id} spawned no CLI"
                        );
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    };
                    // Only a CLI of this suite (its marker in the environment) is ever killed.
                    if marked_processes(&marker).contains(&pid) {
                        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                        tally.cli_kills += 1;
                    }
                }
                _ => {}
            }
        }
        if restart && let Some(restart_db) = restart_db {
            restart_db();
            tally.db_restarts += 1;
        }
        if kill_server {
            let live: Vec<bool> = futures::future::join_all(runs.iter().map(|(_, id, _, _)| {
                let (http, base) = (http.clone(), base.clone());
                async move {
                    let v: Value = http
                        .get(format!("{base}/v1/runs/{id}"))
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    ["running", "parked"].contains(&v["state"].as_str().unwrap_or(""))
                }
            }))
            .await;
            serve.kill();
            tally.server_kills += 1;
            crashed = live;
            (serve, _) = Serve::start(&config, store, port);
        }
        for ((mishap, run_id, frames, task), crashed) in runs.into_iter().zip(crashed) {
            tokio::time::timeout(Duration::from_secs(150), task)
                .await
                .unwrap_or_else(|_| panic!("{mishap:?} run {run_id}: its client never saw done"))
                .unwrap();
            let view = terminal(&base, &run_id).await;
            *tally
                .states
                .entry(view["state"].as_str().unwrap().to_owned())
                .or_default() += 1;
            let replayed = replay(&base, &run_id).await;
            let seen = Seen {
                run_id: run_id.clone(),
                frames: std::mem::take(&mut *frames.lock().unwrap()),
                crashed,
            };
            tally.frames_seen += seen.frames.len();
            tally.lost_at_crash += check_run(&seen, &view, &replayed, &mut problems);
            tally.runs += 1;
            let state = view["state"].as_str().unwrap_or("");
            history
                .entry(view["thread_key"].as_str().unwrap_or("").to_owned())
                .or_default()
                .push(format!(
                    "round {round} {mishap:?} {run_id} {state} crashed={crashed}"
                ));
            let expected: &[&str] = match mishap {
                // A run cut by the server's kill, or live while the database restarted, may end any way.
                _ if crashed || restart => &["interrupted", "succeeded", "failed", "cancelled"],
                Mishap::Cancel => &["cancelled", "succeeded"],
                Mishap::KillCli => &["failed"],
                _ => &["succeeded"],
            };
            if !expected.contains(&state) {
                problems.push(format!("{mishap:?} run {run_id} ended {state}: {view}"));
            }
        }
        eprintln!(
            "chaos round {round}: {:.1} s{}",
            round_started.elapsed().as_secs_f64(),
            if kill_server { " (server SIGKILLed)" } else { "" }
        );
    }
    // No CLI left behind, and every thread still takes a run that succeeds.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !marked_processes(&marker).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let orphans = marked_processes(&marker);
    assert!(orphans.is_empty(), "CLI processes left behind: {orphans:?}");
    for slot in 0..THREADS {
        for agent in ["reference", "cursor"] {
            let resp = http
                .post(format!(
                    "{base}/v1/agents/{agent}/threads/chaos-{agent}-{slot}/runs"
                ))
                .json(&if agent == "reference" {
                    json!({"prompt": "are you still there", "approvals": {"permission": "auto_approve"}})
                } else {
                    json!({"prompt": "are you still there"})
                })
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 201, "{agent} thread {slot} is usable at once");
            let run = resp.json::<Value>().await.unwrap()["run_id"]
                .as_str()
                .unwrap()
                .to_owned();
            let view = terminal(&base, &run).await;
            let key = format!("chaos-{agent}-{slot}");
            assert_eq!(
                view["state"],
                "succeeded",
                "{agent} thread {slot}: {view}\nits runs: {:#?}",
                history.get(&key)
            );
        }
    }
    serve.kill();
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    tally
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_sqlite_runs_survive_disconnects_cancels_timeouts_cli_and_server_kills() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("chaos.db").display());
    let started = Instant::now();
    let tally = chaos(&url, None).await;
    eprintln!(
        "chaos sqlite: {tally:?} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(tally.runs, total_runs().div_ceil(THREADS) * THREADS);
}

/// A throwaway Postgres cluster in a temporary directory, stopped when dropped.
struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// `initdb` + `pg_ctl start`, or `None` (with the reason) when Debian's binaries are absent.
    fn start() -> Result<Cluster, String> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .map_err(|e| format!("/usr/lib/postgresql: {e}"))?
            .flatten()
            .map(|e| e.path().join("bin"))
            .find(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
            .ok_or("no initdb/pg_ctl under /usr/lib/postgresql/*/bin")?;
        // initdb refuses root: run the cluster as `postgres` then.
        let as_postgres = is_root();
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        if as_postgres {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err("cannot hand the cluster directory to the postgres user".into());
            }
        }
        let cluster = Cluster {
            bin,
            dir,
            port: free_port(),
            as_postgres,
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &[
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        cluster.pg_ctl("start")?;
        Ok(cluster)
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn run(&self, tool: &str, args: &[&str]) -> Result<(), String> {
        let program = self.bin.join(tool);
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn pg_ctl(&self, action: &str) -> Result<(), String> {
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        let data = self.data();
        let mut args = vec!["-D", &data, "-l", &log, "-w", "-t", "60", "-o", &opts];
        if action != "start" {
            args.extend(["-m", "immediate"]);
        }
        args.push(action);
        self.run("pg_ctl", &args)
    }

    fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.pg_ctl("stop");
    }
}

/// True when this process runs as root (read from `/proc`, no unsafe `geteuid`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chaos_postgres_runs_survive_kills_and_a_database_restart_on_a_throwaway_cluster() {
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            eprintln!("SKIPPED: chaos_postgres: {why}");
            return;
        }
    };
    {
        use sqlx::Connection;
        let mut admin = sqlx::PgConnection::connect(&cluster.url("postgres"))
            .await
            .expect("connect");
        sqlx::query("CREATE DATABASE chaos")
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let restart = || cluster.pg_ctl("restart").expect("pg_ctl restart");
    let started = Instant::now();
    let tally = chaos(&cluster.url("chaos"), Some(&restart)).await;
    eprintln!(
        "chaos postgres: {tally:?} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(tally.runs, total_runs().div_ceil(THREADS) * THREADS);
    assert!(
        tally.db_restarts >= 1 || total_runs() <= 30,
        "the database was restarted"
    );
}
