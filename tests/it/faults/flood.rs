//! One request cannot flood the log: `approvals: {timeout: 1, on_timeout: retry, max_retries:
//! i32::MAX}` used to ask again every ~1 ms forever (40,000 events per 30 s); now a decision is asked
//! at most 1 + 10 times, at most twice a second, with a notice that the budget was capped.

use std::time::{Duration, Instant};

use agent_adaptor::driver::policy::SignedDuration;
use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, DecisionKind, FallbackAction, Policy};
use agent_adaptor::runtime::{Agent, CallOptions, FailureReason, Payload};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
use futures::StreamExt;

#[tokio::test]
async fn approval_retries_are_capped_in_number_and_rate() {
    let script = Script::new(vec![
        Step::Approval {
            kind: DecisionKind::Permission,
            title: "write?".into(),
            choices: vec![],
        },
        Step::text("after"),
    ]);
    let agent = Agent::new(ReferenceDriver::scripted(script));
    let options = CallOptions::new().policy(Policy {
        approvals: ApprovalPolicy {
            permission: ApprovalMode::Ask,
            timeout: Some(SignedDuration { millis: 1 }),
            on_timeout: FallbackAction::Retry,
            max_retries: Some(i32::MAX),
            ..Default::default()
        },
        ..Default::default()
    });
    let started = Instant::now();
    let stream = agent.send("x", options);
    let mut events = stream.events();
    let mut asks = 0usize;
    let mut capped = false;
    let mut total = 0usize;
    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(e) = events.next().await {
            total += 1;
            match &e.payload {
                Payload::ApprovalRequest(_) => asks += 1,
                Payload::Notice(n)
                    if n.data.get("warning").and_then(|w| w.as_str()) == Some("approval_retries_capped") =>
                {
                    capped = true
                }
                _ => {}
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the run ends within 15 s; it had asked {asks} times in {total} events"
    );
    assert_eq!(asks, 11, "one ask and ten retries ({total} events)");
    assert!(capped, "a notice says the retry budget was capped");
    assert!(
        started.elapsed() >= Duration::from_millis(4_900),
        "at most two asks a second: {:?}",
        started.elapsed()
    );
    assert!(total < 100, "{total} events");
    let err = stream.result().await.expect_err("the retries ran out");
    assert_eq!(err.reason(), Some(FailureReason::ApprovalTimeout));
}

/// A run that records more events than its tenant's `max_run_events` is stopped as `limit_exceeded`
/// (`run_events_exceeded`) and its log stays near the bound; the same for `max_run_log_bytes`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_past_its_log_budget_is_stopped_as_limit_exceeded() {
    use agent_adaptor::server::{Limits, Server, ServerConfig};
    use serde_json::json;

    use crate::server::{finished_state, run_id, start_run};

    let prompt = "slow ".repeat(200);
    for (limits, code) in [
        (
            Limits {
                max_run_events: Some(40),
                ..Default::default()
            },
            "run_events_exceeded",
        ),
        (
            Limits {
                max_run_log_bytes: Some(4_000),
                ..Default::default()
            },
            "run_log_bytes_exceeded",
        ),
    ] {
        let mut config = ServerConfig::for_tests();
        config.reference_chunk_delay = Duration::from_millis(2);
        config.limits = limits;
        let server = Server::start(config).await.expect("starts");
        let base = server.url();
        let run = run_id(&start_run(&base, "/v1/agents/reference/runs", json!({"prompt": prompt})).await);
        let view = finished_state(&base, &run).await;
        assert_eq!(view["state"], "failed", "{view}");
        assert_eq!(view["error"]["reason"], "limit_exceeded", "{view}");
        assert_eq!(view["error"]["details"]["code"], code, "{view}");
        let stored = server
            .state()
            .store
            .read_run("default", &run, None, 10_000)
            .await
            .unwrap();
        assert!(
            stored.len() < 400,
            "the log stays near the bound: {} events",
            stored.len()
        );
        assert_eq!(stored.last().map(|e| e.kind.as_str()), Some("done"));
        server.shutdown().await.unwrap();
    }
}
