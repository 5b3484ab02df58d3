//! Runs over REST and their events over SSE: start, state, replay without gap or duplicate, cancel,
//! disconnects, messages, typed errors, graceful shutdown.

use std::time::Duration;

use agent_adaptor::server::{RunningServer, ServerConfig};
use serde_json::{Value, json};

use super::{
    Frame, all_frames, cancel, client, error_code, finished_state, get, get_json, post_json, read_frames,
    run_id, start, start_run, start_with, state,
};

async fn events(
    base: &str,
    run_id: &str,
    after: Option<&str>,
    last_event_id: Option<&str>,
) -> reqwest::Response {
    let mut url = format!("{base}/v1/runs/{run_id}/events");
    if let Some(a) = after {
        url.push_str(&format!("?after={a}"));
    }
    let mut req = client().get(url);
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp
}

fn seqs(frames: &[Frame]) -> Vec<u64> {
    frames.iter().map(Frame::seq).collect()
}

/// A server whose reference agent pauses `delay_ms` between chunks, its URL, and a run started on `path`.
async fn slow_run(delay_ms: u64, path: &str, prompt: &str) -> (RunningServer, String, String) {
    let mut config = ServerConfig::for_tests();
    config.reference_chunk_delay = Duration::from_millis(delay_ms);
    let server = start_with(config).await;
    let base = server.url();
    let run = start_run(&base, path, json!({ "prompt": prompt })).await;
    (server, base, run_id(&run))
}

#[tokio::test]
async fn a_stateless_run_streams_its_events_with_sequence_ids_and_reports_its_result() {
    let server = start().await;
    let base = server.url();
    let run = start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "hello rest"}),
    )
    .await;
    let run_id = run_id(&run);
    assert!(matches!(run["state"].as_str(), Some("running" | "succeeded")));
    let resp = events(&base, &run_id, None, None).await;
    assert_eq!(resp.headers()["cache-control"], "no-cache");
    assert_eq!(resp.headers()["x-accel-buffering"], "no");
    let frames = all_frames(resp).await;
    let s = seqs(&frames);
    assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
    assert_eq!(frames.first().unwrap().event.as_deref(), Some("run_started"));
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
    for f in &frames {
        assert_eq!(f.json()["type"].as_str(), f.event.as_deref());
        assert_eq!(f.json()["meta"]["sequence"].as_u64(), Some(f.seq()));
    }
    let state = finished_state(&base, &run_id).await;
    assert_eq!(state["state"], "succeeded");
    assert_eq!(state["result"]["text"], "Reference reply: hello rest");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn replay_after_reconnect_has_no_gap_and_no_duplicate() {
    let (server, base, run_id) = slow_run(
        15,
        "/v1/agents/reference/threads/replay-1/runs",
        "stream a fairly long answer so that the subscriber can reconnect midway through it",
    )
    .await;
    // Read six events, then drop the connection (mid-run).
    let mut n = 0;
    let head = read_frames(events(&base, &run_id, None, None).await, |_| {
        n += 1;
        n < 6
    })
    .await;
    assert_eq!(head.len(), 6);
    let last = head.last().unwrap().seq().to_string();
    // Reconnect with Last-Event-ID: the rest, live.
    let tail = all_frames(events(&base, &run_id, None, Some(&last)).await).await;
    let mut joined = seqs(&head);
    joined.extend(seqs(&tail));
    // The full log, replayed afterwards, is exactly the concatenation.
    let full = all_frames(events(&base, &run_id, None, None).await).await;
    assert_eq!(joined, seqs(&full));
    assert_eq!(full.last().unwrap().event.as_deref(), Some("done"));
    // ?after= replays the suffix; the header wins over the query.
    let after = all_frames(events(&base, &run_id, Some(&last), None).await).await;
    assert_eq!(seqs(&after), seqs(&tail));
    let both = all_frames(events(&base, &run_id, Some("0"), Some(&last)).await).await;
    assert_eq!(seqs(&both), seqs(&tail));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn finished_runs_replay_from_the_durable_log_after_eviction_from_memory() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = start_with(config.clone()).await;
    let base = server.url();
    let run = start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "persist me"}),
    )
    .await;
    let run_id = run_id(&run);
    let live = all_frames(events(&base, &run_id, None, None).await).await;
    finished_state(&base, &run_id).await;
    server.shutdown().await.unwrap();
    // A new process on the same store: the run is only in the durable log now.
    config.owner = "replica-2".into();
    let again = start_with(config).await;
    let base = again.url();
    let replayed = all_frames(events(&base, &run_id, None, None).await).await;
    assert_eq!(seqs(&replayed), seqs(&live));
    assert_eq!(
        replayed.last().unwrap().json()["result"]["text"],
        "Reference reply: persist me"
    );
    let from3 = all_frames(events(&base, &run_id, Some("3"), None).await).await;
    assert_eq!(
        seqs(&from3),
        seqs(&live).into_iter().filter(|s| *s > 3).collect::<Vec<_>>()
    );
    assert_eq!(state(&base, &run_id).await["state"], "succeeded");
    again.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_dropped_connection_never_cancels_a_rest_run_but_cancel_does() {
    let (server, base, run_id) =
        slow_run(20, "/v1/agents/reference/runs", "keep going after I hang up").await;
    let head = read_frames(events(&base, &run_id, None, None).await, |_| false).await;
    assert_eq!(head.len(), 1);
    assert_eq!(finished_state(&base, &run_id).await["state"], "succeeded");
    // Cancelling a finished run is a typed conflict.
    assert_eq!(error_code(cancel(&base, &run_id).await).await.1, "run_finished");

    let slow = start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "a slow answer with many many words to be cancelled midway"}),
    )
    .await;
    let slow_id = super::run_id(&slow);
    assert_eq!(cancel(&base, &slow_id).await.status(), 202);
    let end = finished_state(&base, &slow_id).await;
    assert_eq!(end["state"], "cancelled");
    assert_eq!(end["error"]["reason"], "cancelled");
    let frames = all_frames(events(&base, &slow_id, None, None).await).await;
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn supplemental_messages_are_admitted_with_202_and_refused_when_finished() {
    let (server, base, run_id) = slow_run(30, "/v1/agents/reference/runs", "a slow answer with words").await;
    let messages = format!("/v1/runs/{run_id}/messages");
    let resp = post_json(
        &base,
        &messages,
        json!({"text": "also mention tests", "id": "msg-1"}),
    )
    .await;
    assert_eq!(resp.status(), 202);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["message_id"], "msg-1");
    let empty = post_json(&base, &messages, json!({"text": " "})).await;
    let (status, code, body) = error_code(empty).await;
    assert_eq!((status, code.as_str()), (422, "invalid_request"));
    assert_eq!(body["error"]["field"], "text");
    let frames = all_frames(events(&base, &run_id, None, None).await).await;
    assert!(
        frames
            .iter()
            .any(|f| f.event.as_deref() == Some("message_update")),
        "the message's delivery is reported"
    );
    finished_state(&base, &run_id).await;
    let late = post_json(&base, &messages, json!({"text": "too late"})).await;
    let (status, code, _) = error_code(late).await;
    assert_eq!((status, code.as_str()), (409, "run_finished"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_route_answers_unknown_ids_and_bad_bodies_with_the_json_error_shape() {
    let mut config = ServerConfig::for_tests();
    config.body_limit = 4096;
    let server = start_with(config).await;
    let base = server.url();
    let c = client();
    for (method, path) in [
        ("GET", "/v1/runs/run-nope"),
        ("GET", "/v1/runs/run-nope/events"),
        ("POST", "/v1/runs/run-nope/cancel"),
        ("GET", "/v1/runs/run-nope/approvals"),
        ("GET", "/v1/agents/nope"),
        ("GET", "/v1/no/such/route"),
    ] {
        let resp = c
            .request(method.parse().unwrap(), format!("{base}{path}"))
            .send()
            .await
            .unwrap();
        let (status, code, _) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (404, "not_found"), "{method} {path}");
    }
    for (path, body) in [
        ("/v1/runs/run-nope/messages", json!({"text": "x"})),
        ("/v1/runs/run-nope/approvals/a1", json!({"decision": "approve"})),
        ("/v1/agents/nope/runs", json!({"prompt": "x"})),
    ] {
        let (status, code, _) = error_code(post_json(&base, path, body).await).await;
        assert_eq!((status, code.as_str()), (404, "not_found"), "{path}");
    }
    let unknown_field = post_json(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "x", "modle": "typo"}),
    )
    .await;
    let (status, code, body) = error_code(unknown_field).await;
    assert_eq!((status, code.as_str()), (400, "invalid_json"));
    assert_eq!(body["error"]["field"], "modle");
    let missing = post_json(&base, "/v1/agents/reference/runs", json!({"model": "m"})).await;
    assert_eq!(error_code(missing).await.2["error"]["field"], "prompt");
    let empty = post_json(&base, "/v1/agents/reference/runs", json!({"prompt": ""})).await;
    assert_eq!(error_code(empty).await.0, 422);
    let not_json = c
        .post(format!("{base}/v1/agents/reference/runs"))
        .header("content-type", "text/plain")
        .body("prompt")
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(not_json).await.1, "unsupported_media_type");
    let huge = post_json(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "x".repeat(10_000)}),
    )
    .await;
    let (status, code, _) = error_code(huge).await;
    assert_eq!((status, code.as_str()), (413, "body_too_large"));
    let run = start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    let bad_cursor = get(&base, &format!("/v1/runs/{}/events?after=abc", run_id(&run))).await;
    let (status, _, body) = error_code(bad_cursor).await;
    assert_eq!(status, 422);
    assert_eq!(body["error"]["field"], "after");
    assert_eq!(get(&base, "/healthz").await.status(), 200);
    let ready = get_json(&base, "/readyz").await;
    assert_eq!(ready["status"], "ready");
    let agents = get_json(&base, "/v1/agents").await;
    assert_eq!(agents["default"], "reference");
    assert_eq!(agents["agents"][0]["provider"], "reference");
    server.shutdown().await.unwrap();
}

/// The `agent_adaptor_sse_subscribers` gauge of `/metrics`.
async fn open_subscribers(base: &str) -> u64 {
    let metrics = get(base, "/metrics").await.text().await.unwrap();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("agent_adaptor_sse_subscribers "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no subscriber gauge in {metrics}"))
}

/// Waits (at most 10 s) until the gauge reads `n`: a stream is uncounted when the server drops it, which
/// can come just after its client saw the end.
async fn until_subscribers(base: &str, n: u64, why: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while open_subscribers(base).await != n {
        assert!(tokio::time::Instant::now() < deadline, "{why}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn the_subscriber_gauge_counts_live_streams_until_their_clients_go_away() {
    let (server, base, run_id) = slow_run(
        30,
        "/v1/agents/reference/runs",
        "a slow answer with many many words for two listeners to follow",
    )
    .await;
    assert_eq!(open_subscribers(&base).await, 0);
    let first = events(&base, &run_id, None, None).await;
    let second = events(&base, &run_id, None, None).await;
    assert_eq!(open_subscribers(&base).await, 2, "two live streams are open");
    // One client hangs up mid-run: its stream is dropped at the next frame, the other goes on.
    assert_eq!(read_frames(first, |_| false).await.len(), 1);
    until_subscribers(&base, 1, "the hung-up stream was never closed").await;
    let rest = all_frames(second).await;
    assert_eq!(rest.last().unwrap().event.as_deref(), Some("done"));
    assert_eq!(
        seqs(&rest),
        (1..=rest.len() as u64).collect::<Vec<_>>(),
        "no gap, no duplicate"
    );
    until_subscribers(&base, 0, "a finished stream is still counted").await;
    assert_eq!(finished_state(&base, &run_id).await["state"], "succeeded");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn graceful_shutdown_ends_open_streams_and_cancels_runs() {
    let (server, base, run_id) = slow_run(
        200,
        "/v1/agents/reference/runs",
        "a very slow answer with many words",
    )
    .await;
    let resp = events(&base, &run_id, None, None).await;
    let reader = tokio::spawn(all_frames(resp));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let store = server.state().store.clone();
    server.shutdown().await.expect("a clean shutdown");
    let frames = reader.await.unwrap();
    let last = frames.last().unwrap();
    assert!(
        matches!(last.event.as_deref(), Some("done" | "shutdown")),
        "the stream ends with a terminal frame: {last:?}"
    );
    let rec = store.get_run("default", &run_id).await.unwrap().unwrap();
    assert_eq!(rec.state, agent_adaptor::store::RunState::Cancelled);
}

#[tokio::test]
async fn thread_history_spans_runs_and_threads_list_get_archive_and_metrics_answer() {
    let server = start().await;
    let base = server.url();
    for prompt in ["first turn", "second turn"] {
        let run = start_run(
            &base,
            "/v1/agents/reference/threads/hist-1/runs",
            json!({"prompt": prompt}),
        )
        .await;
        finished_state(&base, &run_id(&run)).await;
    }
    let history = get_json(&base, "/v1/agents/reference/threads/hist-1/events").await;
    let events = history["events"].as_array().unwrap();
    let cursors: Vec<u64> = events.iter().map(|e| e["cursor"].as_u64().unwrap()).collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    let runs: std::collections::BTreeSet<&str> =
        events.iter().map(|e| e["run_id"].as_str().unwrap()).collect();
    assert_eq!(runs.len(), 2, "history spans both runs");
    assert_eq!(events.iter().filter(|e| e["kind"] == "done").count(), 2);
    // Paging by cursor: the suffix after the first event, no duplicate.
    let after = get_json(
        &base,
        &format!(
            "/v1/agents/reference/threads/hist-1/events?after={}&limit=3",
            cursors[0]
        ),
    )
    .await;
    let next: Vec<u64> = after["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["cursor"].as_u64().unwrap())
        .collect();
    assert_eq!(next, cursors[1..4].to_vec());
    let bad = get(&base, "/v1/agents/reference/threads/hist-1/events?after=x").await;
    assert_eq!(error_code(bad).await.0, 422);

    let list = get_json(&base, "/v1/agents/reference/threads").await;
    assert!(
        list["threads"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["key"] == "hist-1")
    );
    let got = get_json(&base, "/v1/agents/reference/threads/hist-1").await;
    assert!(got["checkpoint"]["resume_id"].is_string(), "{got}");
    let missing = get(&base, "/v1/agents/reference/threads/nope").await;
    assert_eq!(error_code(missing).await.0, 404);
    let archived = post_json(&base, "/v1/agents/reference/threads/hist-1/archive", json!({})).await;
    assert_eq!(archived.status(), 200);
    let gone = get(&base, "/v1/agents/reference/threads/hist-1").await;
    assert_eq!(error_code(gone).await.0, 404);

    let metrics = get(&base, "/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("agent_adaptor_runs_started_total 2"),
        "{metrics}"
    );
    assert!(metrics.contains("agent_adaptor_events_recorded_total "));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn after_done_on_the_stream_the_run_reads_finished_and_its_thread_is_free() {
    // The run's end is recorded and the thread released before `done` reaches any subscriber, so a client
    // acting on `done` at once never sees `running` or `thread_busy` (the load generator once had to poll).
    // A SQLite file store makes recording the end take long enough for the race to show.
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    // Slow enough that the client follows the run live rather than replaying a finished one.
    config.reference_chunk_delay = Duration::from_millis(5);
    let server = start_with(config).await;
    let base = server.url();
    for i in 0..15 {
        let run = start_run(
            &base,
            "/v1/agents/reference/threads/after-done/runs",
            json!({"prompt": format!("turn {i}")}),
        )
        .await;
        let id = run_id(&run);
        // Act on the `done` frame itself, not on the end of the body.
        let frames = read_frames(events(&base, &id, None, None).await, |f| {
            f.event.as_deref() != Some("done")
        })
        .await;
        assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
        let view = state(&base, &id).await;
        assert_eq!(view["state"], "succeeded", "turn {i}: {view}");
        assert_eq!(view["result"]["text"], format!("Reference reply: turn {i}"));
    }
    server.shutdown().await.unwrap();
}
