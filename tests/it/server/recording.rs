//! Recording off the live path: a run's events reach SSE subscribers before the store commits them,
//! `done` only after the run's end is durable, replay across a slow commit without gap or duplicate,
//! a dead store's typed `store_error`, and the counted backpressure of a run whose store falls behind.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::runtime::DEFAULT_TENANT;
use agent_adaptor::server::{RunningServer, Server, ServerConfig};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use serde_json::json;
use tokio::sync::mpsc;

use super::{Frame, client, get, read_frames, run_id, start_run, state};
use crate::threads::flaky::Flaky;

/// A server whose store is a [`Flaky`] memory store; the reference agent streams a chunk every 5 ms.
async fn on_flaky(flaky: &Arc<Flaky>, config: ServerConfig) -> RunningServer {
    let store: Arc<dyn ThreadStore> = flaky.clone();
    Server::start_with_store(config, store)
        .await
        .expect("the server starts")
}

fn config() -> ServerConfig {
    let mut config = ServerConfig::for_tests();
    config.reference_chunk_delay = Duration::from_millis(5);
    config
}

/// Follows a run's SSE stream (after `last`) in a task; its frames arrive on the channel.
async fn follow(base: &str, run_id: &str, last: Option<u64>) -> mpsc::UnboundedReceiver<Frame> {
    let mut req = client().get(format!("{base}/v1/runs/{run_id}/events"));
    if let Some(last) = last {
        req = req.header("last-event-id", last.to_string());
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(read_frames(resp, move |f| tx.send(f.clone()).is_ok()));
    rx
}

/// The next frame, within 10 s.
async fn next(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Frame {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("a frame within 10 s")
        .expect("the stream goes on")
}

/// Frames until (and with) `done`.
async fn until_done(rx: &mut mpsc::UnboundedReceiver<Frame>) -> Vec<Frame> {
    let mut out = Vec::new();
    loop {
        let f = next(rx).await;
        let done = f.event.as_deref() == Some("done");
        out.push(f);
        if done {
            return out;
        }
    }
}

/// The sequences of the run's events in the store.
async fn durable(store: &dyn ThreadStore, run_id: &str) -> Vec<u64> {
    let rows = store
        .read_run(DEFAULT_TENANT, run_id, None, 10_000)
        .await
        .unwrap();
    rows.iter().map(|r| r.seq).collect()
}

fn seqs(frames: &[Frame]) -> Vec<u64> {
    frames.iter().filter(|f| f.id.is_some()).map(Frame::seq).collect()
}

/// A counter's value in `/metrics`.
async fn metric(base: &str, name: &str) -> u64 {
    let text = get(base, "/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {text}"))
}

const PROMPT: &str = "stream a few words while the store stalls and then let it commit them all";

#[tokio::test]
async fn live_subscribers_see_events_before_a_stalled_store_commits_and_done_after_it_does() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let server = on_flaky(&flaky, config()).await;
    let base = server.url();
    let hold = flaky.gate.write().await;
    let id = run_id(&start_run(&base, "/v1/agents/reference/runs", json!({ "prompt": PROMPT })).await);
    let mut rx = follow(&base, &id, None).await;
    let mut seen = Vec::new();
    while seen.len() < 5 {
        seen.push(next(&mut rx).await);
    }
    assert!(
        durable(flaky.inner.as_ref(), &id).await.is_empty(),
        "the store committed nothing yet"
    );
    // The run ends while the store stalls: `done` waits for the commit, and the run reads running.
    tokio::time::sleep(Duration::from_millis(600)).await;
    while let Ok(f) = rx.try_recv() {
        assert_ne!(
            f.event.as_deref(),
            Some("done"),
            "done before the run's end was durable"
        );
        seen.push(f);
    }
    assert_eq!(state(&base, &id).await["state"], "running");
    drop(hold);
    seen.extend(until_done(&mut rx).await);
    let view = state(&base, &id).await;
    assert_eq!(view["state"], "succeeded", "{view}");
    assert_eq!(
        durable(flaky.inner.as_ref(), &id).await,
        seqs(&seen),
        "every published event is durable"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn replay_across_a_slow_commit_has_no_gap_and_no_duplicate_live_or_from_the_store() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let server = on_flaky(&flaky, config()).await;
    let base = server.url();
    let hold = flaky.gate.write().await;
    let id = run_id(&start_run(&base, "/v1/agents/reference/runs", json!({ "prompt": PROMPT })).await);
    let mut head = Vec::new();
    {
        let mut rx = follow(&base, &id, None).await;
        while head.len() < 4 {
            head.push(next(&mut rx).await);
        }
    }
    // Reconnect after the last event seen, none of it committed yet; the store resumes midway.
    let last = head.last().unwrap().seq();
    let mut rx = follow(&base, &id, Some(last)).await;
    let first = next(&mut rx).await;
    drop(hold);
    let mut tail = vec![first];
    tail.extend(until_done(&mut rx).await);
    let mut joined = seqs(&head);
    joined.extend(seqs(&tail));
    assert!(
        joined.windows(2).all(|w| w[1] == w[0] + 1),
        "no gap, no duplicate: {joined:?}"
    );
    assert_eq!(durable(flaky.inner.as_ref(), &id).await, joined);
    server.shutdown().await.unwrap();
    // Another replica on the same store replays the run from the durable log alone.
    let mut config = config();
    config.owner = "replica-2".into();
    let again = on_flaky(&flaky, config).await;
    let base = again.url();
    let mut rx = follow(&base, &id, Some(last)).await;
    assert_eq!(seqs(&until_done(&mut rx).await), seqs(&tail));
    again.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_dead_store_ends_the_live_stream_with_a_typed_store_error_and_loses_no_published_event() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let server = on_flaky(&flaky, config()).await;
    let base = server.url();
    flaky
        .fail_appends
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let id = run_id(&start_run(&base, "/v1/agents/reference/runs", json!({ "prompt": PROMPT })).await);
    let mut rx = follow(&base, &id, None).await;
    let frames = until_done(&mut rx).await;
    let error = &frames[frames.len() - 2];
    assert_eq!(error.event.as_deref(), Some("error"), "{frames:?}");
    assert_eq!(error.id, None, "the notice is not an event of the run");
    assert_eq!(error.json()["code"], "store_error");
    assert_names_an_id_not_the_store_text(&error.json());
    assert!(metric(&base, "agent_adaptor_record_failures_total").await >= 1);
    assert!(durable(flaky.inner.as_ref(), &id).await.is_empty());
    // Every published event is still served, from memory: from the start and after any cursor.
    let all = seqs(&frames);
    let mut rx = follow(&base, &id, None).await;
    assert_eq!(seqs(&until_done(&mut rx).await), all);
    let mut rx = follow(&base, &id, Some(all[2])).await;
    assert_eq!(seqs(&until_done(&mut rx).await), all[3..]);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_store_that_falls_behind_holds_the_pump_at_the_backlog_bound_and_it_is_counted() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let mut config = config();
    config.record_backlog = 3;
    let server = on_flaky(&flaky, config).await;
    let base = server.url();
    let hold = flaky.gate.write().await;
    let id = run_id(&start_run(&base, "/v1/agents/reference/runs", json!({ "prompt": PROMPT })).await);
    let mut rx = follow(&base, &id, None).await;
    let mut seen = vec![next(&mut rx).await];
    // The pump stops near three unrecorded events: little more goes live until the store moves.
    tokio::time::sleep(Duration::from_millis(600)).await;
    while let Ok(f) = rx.try_recv() {
        seen.push(f);
    }
    let held = seen.len();
    assert!(metric(&base, "agent_adaptor_record_waits_total").await >= 1);
    drop(hold);
    seen.extend(until_done(&mut rx).await);
    assert!(held + 10 < seen.len(), "held at {held} of {} events", seen.len());
    assert_eq!(durable(flaky.inner.as_ref(), &id).await, seqs(&seen));
    assert!(seqs(&seen).windows(2).all(|w| w[1] == w[0] + 1));
    server.shutdown().await.unwrap();
}

/// A `store_error` notice names an error id to find the logged cause, never the store's own text.
fn assert_names_an_id_not_the_store_text(body: &serde_json::Value) {
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        !message.contains("injected outage"),
        "the store's text reached the client: {body}"
    );
    let id = message.split("error id ").nth(1).unwrap_or_default();
    assert!(id.trim_end_matches(')').len() >= 32, "an error id: {body}");
}

#[tokio::test]
async fn a_replay_the_store_cannot_read_ends_with_a_typed_store_error_naming_an_id_not_the_store_text() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let server = on_flaky(&flaky, config()).await;
    let id = run_id(
        &start_run(
            &server.url(),
            "/v1/agents/reference/runs",
            json!({ "prompt": PROMPT }),
        )
        .await,
    );
    let mut rx = follow(&server.url(), &id, None).await;
    until_done(&mut rx).await;
    server.shutdown().await.unwrap();
    // Another replica has only the durable log, and the store fails to read it.
    let mut config = config();
    config.owner = "replica-2".into();
    let again = on_flaky(&flaky, config).await;
    flaky.fail_reads.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut rx = follow(&again.url(), &id, None).await;
    let error = next(&mut rx).await;
    assert_eq!(error.event.as_deref(), Some("error"), "{error:?}");
    assert_eq!(error.json()["code"], "store_error");
    assert_names_an_id_not_the_store_text(&error.json());
    again.shutdown().await.unwrap();
}
