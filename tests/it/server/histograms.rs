//! `/metrics` latency histograms: requests by matched route (never the raw path), a run's time to its
//! first event and its duration by end state — counted by real requests and runs, not recomputed here.

use serde_json::json;

use super::{finished_state, get, run_id, start, start_run};

/// The value of the sample line `name{labels…}` whose labels include every one of `want`, if any.
fn sample(metrics: &str, name: &str, want: &[&str]) -> Option<f64> {
    metrics.lines().find_map(|l| {
        let (head, value) = l.rsplit_once(' ')?;
        let rest = head.strip_prefix(name)?;
        if !(rest.is_empty() || rest.starts_with('{')) || !want.iter().all(|w| rest.contains(w)) {
            return None;
        }
        value.parse().ok()
    })
}

#[tokio::test]
async fn requests_and_runs_fill_the_latency_histograms() {
    let server = start().await;
    let base = server.url();
    let before = get(&base, "/metrics").await.text().await.unwrap();
    assert_eq!(
        sample(&before, "agent_adaptor_run_duration_seconds_count", &[]),
        None,
        "no run yet, no run series:\n{before}"
    );

    let mut ids = Vec::new();
    for i in 0..3 {
        let run = start_run(
            &base,
            "/v1/agents/reference/runs",
            json!({"prompt": format!("hello {i}")}),
        )
        .await;
        ids.push(run_id(&run));
    }
    for id in &ids {
        assert_eq!(finished_state(&base, id).await["state"], "succeeded");
    }
    assert_eq!(get(&base, "/v1/runs/no-such-run").await.status(), 404);
    assert_eq!(get(&base, "/no/such/route").await.status(), 404);

    let m = get(&base, "/metrics").await.text().await.unwrap();
    let runs = sample(
        &m,
        "agent_adaptor_run_duration_seconds_count",
        &["agent=\"reference\"", "state=\"succeeded\""],
    );
    assert_eq!(runs, Some(3.0), "three succeeded runs:\n{m}");
    let first = sample(
        &m,
        "agent_adaptor_run_first_event_seconds_count",
        &["agent=\"reference\""],
    );
    assert_eq!(first, Some(3.0), "each run's first event counted once:\n{m}");
    let sum = sample(
        &m,
        "agent_adaptor_run_duration_seconds_sum",
        &["state=\"succeeded\""],
    )
    .unwrap();
    assert!(
        sum > 0.0 && sum < 60.0,
        "run durations are real and bounded: {sum}"
    );

    let started = sample(
        &m,
        "agent_adaptor_http_request_duration_seconds_count",
        &[
            "method=\"POST\"",
            "route=\"/v1/agents/{agent}/runs\"",
            "status=\"2xx\"",
        ],
    );
    assert_eq!(
        started,
        Some(3.0),
        "three run starts under their route template:\n{m}"
    );
    let missing = sample(
        &m,
        "agent_adaptor_http_request_duration_seconds_count",
        &["route=\"/v1/runs/{run_id}\"", "status=\"4xx\""],
    );
    assert_eq!(missing, Some(1.0), "the 404 on a matched route:\n{m}");
    let unmatched = sample(
        &m,
        "agent_adaptor_http_request_duration_seconds_count",
        &["route=\"unmatched\"", "status=\"4xx\""],
    );
    assert_eq!(
        unmatched,
        Some(1.0),
        "an unmatched path counts as unmatched:\n{m}"
    );
    assert!(
        !m.contains("no-such-run") && !m.contains("/no/such/route"),
        "raw paths leaked into labels"
    );
    assert!(
        !m.contains("# EOF"),
        "the OpenMetrics terminator is not mid-document"
    );
    server.shutdown().await.unwrap();
}

/// An AG-UI run and a Standby execution are runs too: each counts once in the first-event and duration
/// histograms of its agent, like a REST run (the three outputs share one pump).
#[tokio::test]
async fn agui_runs_and_standby_executions_fill_the_run_histograms() {
    let server = start().await;
    let base = server.url();
    let c = super::client();

    let agui = c
        .post(format!("{base}/v1/agents/reference/agui"))
        .header("accept", "text/event-stream")
        .json(&json!({
            "threadId": "h-agui", "runId": "h-r1", "protocolVersion": "1.0", "state": {},
            "messages": [{"id": "u-1", "role": "user", "content": "hello agui"}],
            "tools": [], "context": [], "forwardedProps": {}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(agui.status(), 200);
    let frames = super::all_frames(agui).await;
    assert_eq!(
        frames.last().map(|f| f.json()["type"].clone()),
        Some(json!("RUN_FINISHED")),
        "{frames:?}"
    );

    let standby = "/v1/agents/reference/threads/h-sb/standby";
    assert_eq!(super::post_json(&base, standby, json!({})).await.status(), 201);
    let sent = super::post_json(
        &base,
        &format!("{standby}/messages"),
        json!({"text": "hello standby"}),
    )
    .await;
    assert_eq!(sent.status(), 202);
    let events = c.get(format!("{base}{standby}/events")).send().await.unwrap();
    let frames = super::read_frames(events, |f| f.event.as_deref() != Some("done")).await;
    assert_eq!(frames.last().and_then(|f| f.event.as_deref()), Some("done"));
    assert!(
        c.delete(format!("{base}{standby}"))
            .send()
            .await
            .unwrap()
            .status()
            .is_success()
    );

    // The histograms are observed as each pump ends: poll briefly.
    let mut m = String::new();
    for _ in 0..50 {
        m = get(&base, "/metrics").await.text().await.unwrap();
        if sample(
            &m,
            "agent_adaptor_run_duration_seconds_count",
            &["agent=\"reference\""],
        ) == Some(2.0)
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(
        sample(
            &m,
            "agent_adaptor_run_duration_seconds_count",
            &["agent=\"reference\"", "state=\"succeeded\""]
        ),
        Some(2.0),
        "the AG-UI run and the Standby execution:\n{m}"
    );
    assert_eq!(
        sample(
            &m,
            "agent_adaptor_run_first_event_seconds_count",
            &["agent=\"reference\""]
        ),
        Some(2.0),
        "each one's first event once:\n{m}"
    );
    server.shutdown().await.unwrap();
}
