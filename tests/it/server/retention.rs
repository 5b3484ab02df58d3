//! The retention task through the server: it runs on its interval, deletes each tenant's oldest events
//! beyond the cap (and nothing of a tenant under it), shows its work in `/metrics`, and stops at shutdown.

use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_adaptor::server::{RetentionSettings, Server, ServerConfig};
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key, keyed};
use super::{all_frames, client, eventually};

async fn thread_run(base: &str, key: &str, thread: &str) {
    let resp = as_key(
        reqwest::Method::POST,
        format!("{base}/v1/agents/reference/threads/{thread}/runs"),
        key,
    )
    .json(&json!({"prompt": "hello retention"}))
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 201);
    let run: Value = resp.json().await.unwrap();
    let events = as_key(
        reqwest::Method::GET,
        format!("{base}/v1/runs/{}/events", run["run_id"].as_str().unwrap()),
        key,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(
        all_frames(events).await.last().unwrap().event.as_deref(),
        Some("done")
    );
}

async fn history_len(base: &str, key: &str, thread: &str) -> usize {
    let v: Value = as_key(
        reqwest::Method::GET,
        format!("{base}/v1/agents/reference/threads/{thread}/events?limit=1000"),
        key,
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    v["events"].as_array().unwrap().len()
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("metric {name} in {text}"))
}

#[tokio::test]
async fn retention_deletes_beyond_each_tenant_s_cap_on_schedule_and_stops_at_shutdown() {
    let cap = 4;
    let config = ServerConfig {
        retention: RetentionSettings {
            max_age: None,
            max_events_per_tenant: Some(cap),
            interval: Duration::from_millis(150),
        },
        ..keyed()
    };
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let metrics = || async {
        client()
            .get(format!("{base}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };

    // A records two runs (more than the cap); B records none yet.
    thread_run(&base, KEY_A, "kept").await;
    thread_run(&base, KEY_A, "kept").await;

    // The task trims A to the cap on its own schedule: exactly everything beyond the cap is deleted.
    eventually(|| async {
        let n = history_len(&base, KEY_A, "kept").await;
        (n == cap as usize).then_some(())
    })
    .await;
    let text = metrics().await;
    let recorded = metric(&text, "agent_adaptor_events_recorded_total");
    assert!(
        recorded > cap as f64,
        "two runs record more than {cap} events: {recorded}"
    );
    let deleted = metric(&text, "agent_adaptor_retention_deleted_events_total");
    assert_eq!(deleted, recorded - cap as f64, "{text}");
    assert!(metric(&text, "agent_adaptor_retention_passes_total") >= 1.0);
    assert_eq!(metric(&text, "agent_adaptor_retention_errors_total"), 0.0);
    assert_eq!(metric(&text, "agent_adaptor_retention_last_run_failed"), 0.0);
    let last = metric(&text, "agent_adaptor_retention_last_run_timestamp_seconds");
    let now = chrono::Utc::now().timestamp() as f64;
    assert!(
        (now - 60.0..=now + 1.0).contains(&last),
        "last run {last}, now {now}"
    );

    // The newest events are the kept ones.
    let newest_a: Value = as_key(
        reqwest::Method::GET,
        format!("{base}/v1/agents/reference/threads/kept/events"),
        KEY_A,
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let last_kind = newest_a["events"].as_array().unwrap().last().unwrap()["kind"].clone();
    assert_eq!(last_kind, "done", "the oldest go first: {newest_a}");

    // The cap is per tenant: B's events are trimmed to B's own cap, and A keeps its cap after more passes.
    thread_run(&base, KEY_B, "b-thread").await;
    eventually(|| async { (history_len(&base, KEY_B, "b-thread").await == cap as usize).then_some(()) })
        .await;
    let passes = server.state().retention.passes.load(Ordering::Relaxed);
    eventually(|| async {
        (server.state().retention.passes.load(Ordering::Relaxed) >= passes + 2).then_some(())
    })
    .await;
    assert_eq!(history_len(&base, KEY_A, "kept").await, cap as usize);
    assert_eq!(history_len(&base, KEY_B, "b-thread").await, cap as usize);
    let text = metrics().await;
    let recorded = metric(&text, "agent_adaptor_events_recorded_total");
    let deleted = metric(&text, "agent_adaptor_retention_deleted_events_total");
    assert_eq!(deleted, recorded - 2.0 * cap as f64, "{text}");

    // Shutdown stops the task.
    let state = server.state().clone();
    server.shutdown().await.unwrap();
    let passes = state.retention.passes.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        state.retention.passes.load(Ordering::Relaxed),
        passes,
        "no pass after shutdown"
    );
}

#[tokio::test]
async fn retention_without_bounds_runs_no_task() {
    let server = Server::start(ServerConfig {
        retention: RetentionSettings {
            interval: Duration::from_millis(20),
            ..Default::default()
        },
        ..ServerConfig::for_tests()
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(server.state().retention.passes.load(Ordering::Relaxed), 0);
    let text = client()
        .get(format!("{}/metrics", server.url()))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        metric(&text, "agent_adaptor_retention_last_run_timestamp_seconds"),
        0.0
    );
    server.shutdown().await.unwrap();
}
