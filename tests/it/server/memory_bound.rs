//! Memory bound: a stalled AG-UI client and a stalled Standby client while each of their runs emits
//! 100,000 events (`bulk:100000`, the agent in blocking mode so all of them are recorded) on
//! `agent-adaptor serve` with its default SQLite store. The server's
//! resident memory stays within [`BOUND_MIB`] MiB of what it used before the runs (read from
//! `/proc/<pid>/status`), both runs finish while nobody reads, and then both clients catch up with no
//! gap: the Standby client gets exactly the sequences the durable log holds, the AG-UI client exactly
//! the text it holds. Without the bounded live log the server kept every event of both runs in memory
//! (and the Standby log dropped all but its last 10,000 events, so its client got a gap).

use std::io::BufReader;
use std::process::{Child, Stdio};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use super::live_window::drain_frames;
use super::{Frame, client, get_json, listening_url, post_json};

/// Events each run emits.
const EVENTS: usize = 100_000;
/// The stated bound on the server's resident-memory growth over the two runs, MiB, with
/// `--record-backlog 256` (what a run may hold waiting for the store) and the default live window
/// (1,024 committed events per run). Measured on a debug build: ~13 MiB; the same server keeping
/// every event in memory (`--live-window 1000000`, what the service did before) grows ~86 MiB.
const BOUND_MIB: u64 = 32;

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The resident set of `pid`, KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/<pid>/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

async fn state_of(base: &str, run: &str) -> String {
    get_json(base, &format!("/v1/runs/{run}")).await["state"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Reads a body to its end into frames.
async fn read_rest(
    mut body: impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin,
    mut buf: String,
) -> Vec<Frame> {
    let mut frames = Vec::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(120), body.next())
        .await
        .expect("the stream goes on")
    {
        buf.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        drain_frames(&mut buf, &mut frames);
    }
    drain_frames(&mut buf, &mut frames);
    frames
}

/// The run's records from the durable log (the replay of a finished run).
async fn durable(base: &str, run: &str) -> Vec<Frame> {
    let resp = client()
        .get(format!("{base}/v1/runs/{run}/events"))
        .send()
        .await
        .unwrap();
    read_rest(resp.bytes_stream(), String::new()).await
}

#[tokio::test]
async fn memory_bound_stalled_agui_and_standby_clients_over_100k_event_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("mem.db").display());
    // The reference agent in blocking mode: every one of the 100,000 deltas is recorded (the driver
    // waits for the run's pump instead of dropping content), so the log really holds them all.
    let file = dir.path().join("serve.toml");
    std::fs::write(
        &file,
        "[[agents]]\nname = \"reference\"\nprovider = \"reference\"\nevents = { blocking = true }\n",
    )
    .unwrap();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--store",
            &store,
            "--no-discover",
        ])
        .args(["--record-backlog", "256"])
        .arg("--config")
        .arg(&file)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = Serve(child);
    let pid = serve.0.id();
    let base = listening_url(&mut BufReader::new(serve.0.stdout.take().unwrap()));

    // Warm up (agents, store, allocator), then the baseline.
    let warm = post_json(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "bulk:2000 warm up"}),
    )
    .await;
    let warm: Value = warm.json().await.unwrap();
    let warm_run = warm["run_id"].as_str().unwrap().to_owned();
    durable(&base, &warm_run).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let baseline = rss_kib(pid);

    // A Standby client that reads one chunk and stalls.
    let sb = "/v1/agents/reference/threads/mem-sb/standby";
    assert_eq!(post_json(&base, sb, json!({})).await.status(), 201);
    let sb_resp = client().get(format!("{base}{sb}/events")).send().await.unwrap();
    let mut sb_body = sb_resp.bytes_stream();
    let sent = post_json(
        &base,
        &format!("{sb}/messages"),
        json!({"text": format!("bulk:{EVENTS}")}),
    )
    .await;
    assert_eq!(sent.status(), 202);
    let mut sb_buf = String::new();
    let first = sb_body.next().await.expect("a first chunk").unwrap();
    sb_buf.push_str(std::str::from_utf8(&first).unwrap());

    // An AG-UI client that reads one chunk and stalls.
    let input = json!({
        "threadId": "mem-agui", "runId": "mem-agui-1", "state": {}, "tools": [], "context": [],
        "forwardedProps": {}, "messages": [{"id": "u-1", "role": "user", "content": format!("bulk:{EVENTS}")}]
    });
    let agui_resp = post_json(&base, "/v1/agents/reference/agui", input).await;
    assert_eq!(agui_resp.status(), 200);
    let mut agui_body = agui_resp.bytes_stream();
    let mut agui_buf = String::new();
    let first = agui_body.next().await.expect("a first chunk").unwrap();
    agui_buf.push_str(std::str::from_utf8(&first).unwrap());

    // Both runs finish while nobody reads; the server's memory is sampled all along.
    let key = agent_adaptor::agui::thread_key("mem-agui");
    let (mut sb_run, mut agui_run) = (None::<String>, None::<String>);
    let mut peak = baseline;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
    loop {
        peak = peak.max(rss_kib(pid));
        if sb_run.is_none() {
            sb_run = get_json(&base, sb).await["last_run_id"]
                .as_str()
                .map(str::to_owned);
        }
        if agui_run.is_none() {
            let thread = get_json(&base, &format!("/v1/agents/reference/threads/{key}")).await;
            agui_run = thread["active_run"].as_str().map(str::to_owned);
        }
        if let (Some(s), Some(a)) = (&sb_run, &agui_run)
            && state_of(&base, s).await != "running"
            && state_of(&base, a).await != "running"
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "both runs finish while their clients stall"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (sb_run, agui_run) = (sb_run.unwrap(), agui_run.unwrap());
    assert_eq!(state_of(&base, &sb_run).await, "succeeded");
    assert_eq!(state_of(&base, &agui_run).await, "succeeded");
    peak = peak.max(rss_kib(pid));
    let growth_mib = peak.saturating_sub(baseline) / 1024;
    eprintln!(
        "memory_bound: baseline {} MiB, peak {} MiB, growth {growth_mib} MiB (bound {BOUND_MIB} MiB)",
        baseline / 1024,
        peak / 1024
    );
    assert!(
        growth_mib <= BOUND_MIB,
        "the server grew {growth_mib} MiB over two stalled clients of {EVENTS}-event runs (bound {BOUND_MIB} MiB)"
    );

    // The Standby client catches up: every sequence the durable log holds, in order, once.
    let release = client().delete(format!("{base}{sb}")).send().await.unwrap();
    assert_eq!(release.status(), 200);
    let sb_frames = read_rest(sb_body, sb_buf).await;
    let stored = durable(&base, &sb_run).await;
    let seen: Vec<String> = sb_frames.iter().filter_map(|f| f.id.clone()).collect();
    let expected: Vec<String> = stored
        .iter()
        .filter_map(|f| f.id.as_ref().map(|seq| format!("{sb_run}:{seq}")))
        .collect();
    assert!(expected.len() > EVENTS, "{} events recorded", expected.len());
    assert_eq!(
        seen.len(),
        expected.len(),
        "the Standby client got every recorded event"
    );
    assert!(
        seen == expected,
        "the Standby client's ids are the durable log's, in order"
    );
    assert!(
        sb_frames.iter().all(|f| f.event.as_deref() != Some("gap")),
        "no gap"
    );

    // The AG-UI client catches up: the whole text of the run, and its terminal.
    let agui_frames = read_rest(agui_body, agui_buf).await;
    let agui_text: String = agui_frames
        .iter()
        .map(Frame::json)
        .filter(|j| j["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|j| j["delta"].as_str().unwrap().to_owned())
        .collect();
    let stored_text: String = durable(&base, &agui_run)
        .await
        .iter()
        .filter(|f| f.event.as_deref() == Some("text_delta"))
        .map(|f| f.json()["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(
        stored_text.len() >= EVENTS,
        "{} bytes of text recorded",
        stored_text.len()
    );
    assert_eq!(
        agui_text.len(),
        stored_text.len(),
        "the AG-UI client got all the text"
    );
    assert!(
        agui_text == stored_text,
        "the AG-UI client's text is the durable log's"
    );
    assert_eq!(agui_frames.last().unwrap().json()["type"], "RUN_FINISHED");
}
