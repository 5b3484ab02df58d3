//! A run's task that panics ends its run `failed` (`infrastructure_error`, `details.code =
//! internal_panic`), with `Done` last, its thread lease released, its children killed and, on the
//! service, its tenant slot and thread free and the store's run row terminal. And the approval timeout
//! that used to panic the runtime (`DateTime + TimeDelta` overflowed above ~8.2e15 ms) is a far deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use agent_adaptor::driver::policy::SignedDuration;
use agent_adaptor::driver::process::{ProcessRegistry, ProcessSpec, group_exists, spawn};
use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, DecisionKind, Descriptor, Driver, InvalidConfig, Policy, Request, Response,
    RunIo,
};
use agent_adaptor::runtime::{
    Agent, CallOptions, FailureReason, Payload, RunAttachment, RunServiceProvider, ServiceError,
};
use agent_adaptor::server::{HostResources, Limits, Server, ServerConfig};
use agent_adaptor::store::RunState;
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
use futures::StreamExt;
use serde_json::json;

use super::tripwire::Tripwire;
use crate::server::{all_frames, finished_state, get, post_json, run_id, start_run};

const BOUND: Duration = Duration::from_secs(10);

fn huge_timeout() -> CallOptions {
    CallOptions::new().policy(Policy {
        approvals: ApprovalPolicy {
            permission: ApprovalMode::Ask,
            timeout: Some(SignedDuration { millis: i64::MAX }),
            ..Default::default()
        },
        ..Default::default()
    })
}

/// `approvals.timeout = i64::MAX` ms asks with a far (representable) deadline and the run goes on when
/// answered. Before the fix the deadline arithmetic panicked inside the execution and the stream never
/// ended.
#[tokio::test]
async fn a_huge_approval_timeout_is_a_far_deadline_not_a_panic() {
    let script = Script::new(vec![
        Step::Approval {
            kind: DecisionKind::Permission,
            title: "write?".into(),
            choices: vec![],
        },
        Step::text("after"),
    ]);
    let agent = Agent::new(ReferenceDriver::scripted(script));
    let stream = agent.send("x", huge_timeout());
    let mut events = stream.events();
    let request = tokio::time::timeout(BOUND, async {
        while let Some(e) = events.next().await {
            if let Payload::ApprovalRequest(r) = e.payload {
                return Some(r);
            }
        }
        None
    })
    .await
    .expect("an approval request within 10 s (the run's task did not die)")
    .expect("an approval request before the stream ended");
    let deadline = request.deadline.expect("a deadline");
    assert!(
        deadline > chrono::Utc::now() + chrono::Duration::days(365),
        "a far deadline: {deadline}"
    );
    request.approve().expect("approvable");
    let outcome = tokio::time::timeout(BOUND, stream.result())
        .await
        .expect("the run ends within 10 s");
    let text = outcome.expect("succeeded").text.clone();
    assert!(text.ends_with("after"), "{text}");
}

/// Panics in its first run after spawning a child (`sleep 60`); later runs succeed.
struct Panicky {
    registry: ProcessRegistry,
    runs: AtomicU32,
    child: std::sync::Mutex<Option<u32>>,
}

#[async_trait::async_trait]
impl Driver for Panicky {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: "panicky".into(),
            display_name: "panicky".into(),
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, _io: RunIo) -> Response {
        if self.runs.fetch_add(1, Ordering::SeqCst) > 0 {
            return Response {
                text: "fine".into(),
                ..Default::default()
            };
        }
        let child = spawn(
            &self.registry,
            ProcessSpec::new("sleep").args(["60"]).label("doomed"),
        )
        .await
        .expect("sleep spawns");
        *self.child.lock().unwrap() = Some(child.pid());
        panic!("driver bug in the middle of a run");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_driver_fails_its_run_and_frees_its_thread_and_children() {
    let driver = Arc::new(Panicky {
        registry: ProcessRegistry::new(),
        runs: AtomicU32::new(0),
        child: Default::default(),
    });
    let agent = Agent::builder_arc(driver.clone()).build();
    let thread = agent.thread("t-panic");
    let stream = thread.send("boom", ());
    let mut events = stream.events();
    let all = tokio::time::timeout(BOUND, async {
        let mut all = Vec::new();
        while let Some(e) = events.next().await {
            all.push(e.payload);
        }
        all
    })
    .await
    .expect("the panicking run's stream ends within 10 s");
    assert!(matches!(all.first(), Some(Payload::RunStarted(_))), "{all:?}");
    assert!(matches!(all.last(), Some(Payload::Done(_))), "Done last: {all:?}");
    let err = stream.result().await.expect_err("the run failed");
    assert_eq!(err.reason(), Some(FailureReason::InfrastructureError), "{err}");
    let run = err.as_run().expect("a run failure");
    assert_eq!(run.details["code"], "internal_panic", "{:?}", run.details);

    let pid = driver.child.lock().unwrap().expect("the child was spawned");
    let deadline = tokio::time::Instant::now() + BOUND;
    while group_exists(pid as i32) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the child {pid} outlived the panic"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The thread is free at once: the next send is not `thread_busy`.
    let next = tokio::time::timeout(BOUND, thread.send("again", ()).result())
        .await
        .expect("the next run ends");
    assert_eq!(next.expect("the next run succeeds").text, "fine");
}

/// A host run-service provider that panics while attaching to the first run.
struct PanickingProvider(AtomicBool);

#[async_trait::async_trait]
impl RunServiceProvider for PanickingProvider {
    async fn attach_run(&self, _: &str) -> Result<RunAttachment, ServiceError> {
        if !self.0.swap(true, Ordering::SeqCst) {
            panic!("host provider bug");
        }
        Ok(RunAttachment::default())
    }
    async fn detach_run(&self, _: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}

/// On the service: the run's SSE ends with `done`, its view and the store say `failed`, and its thread
/// and the tenant's only slot are free for the next run at once; shutdown drains cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_a_run_ends_it_failed_on_the_service_and_frees_slot_and_thread() {
    let mut config = ServerConfig::for_tests();
    config.limits = Limits {
        max_concurrent_runs: Some(1),
        ..Default::default()
    };
    let host = HostResources::default()
        .run_service_provider("reference", Arc::new(PanickingProvider(AtomicBool::new(false))));
    let server = Server::start_with(config, host).await.expect("starts");
    let base = server.url();
    let path = "/v1/agents/reference/threads/p1/runs";
    let run = run_id(&start_run(&base, path, json!({"prompt": "hello"})).await);
    let frames = tokio::time::timeout(
        BOUND,
        all_frames(get(&base, &format!("/v1/runs/{run}/events")).await),
    )
    .await
    .expect("the SSE stream ends within 10 s");
    assert_eq!(frames.last().and_then(|f| f.event.as_deref()), Some("done"));
    let view = finished_state(&base, &run).await;
    assert_eq!(view["state"], "failed", "{view}");
    assert_eq!(view["error"]["details"]["code"], "internal_panic", "{view}");
    let stored = server
        .state()
        .store
        .get_run("default", &run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.state, RunState::Failed);
    let next = post_json(&base, path, json!({"prompt": "again"})).await;
    assert_eq!(
        next.status(),
        201,
        "thread and slot are free: {:?}",
        next.text().await
    );
    let next = run_id(&next.json().await.unwrap());
    assert_eq!(finished_state(&base, &next).await["state"], "succeeded");
    tokio::time::timeout(BOUND, server.shutdown())
        .await
        .expect("shutdown within 10 s")
        .expect("a clean shutdown");
}

/// A panic in the service's own per-run task (here: the store panics while the pump records an
/// approval) ends the run too: recorded `failed`, its SSE closed, its thread and slot free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_a_runs_pump_ends_it_failed_and_frees_its_thread() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    store.panic_on_approval.store(true, Ordering::SeqCst);
    let mut config = ServerConfig::for_tests();
    config.limits = Limits {
        max_concurrent_runs: Some(1),
        ..Default::default()
    };
    let server = Server::start_with_store(config, store.clone())
        .await
        .expect("starts");
    let base = server.url();
    let path = "/v1/agents/reference/threads/p2/runs";
    let run = run_id(&start_run(&base, path, json!({"prompt": "permission please"})).await);
    tokio::time::timeout(
        BOUND,
        all_frames(get(&base, &format!("/v1/runs/{run}/events")).await),
    )
    .await
    .expect("the SSE stream ends within 10 s");
    let view = finished_state(&base, &run).await;
    assert_eq!(view["state"], "failed", "{view}");
    store.panic_on_approval.store(false, Ordering::SeqCst);
    let next = post_json(&base, path, json!({"prompt": "again"})).await;
    assert_eq!(
        next.status(),
        201,
        "thread and slot are free: {:?}",
        next.text().await
    );
    let next = run_id(&next.json().await.unwrap());
    assert_eq!(finished_state(&base, &next).await["state"], "succeeded");
    tokio::time::timeout(BOUND, server.shutdown())
        .await
        .expect("shutdown within 10 s")
        .expect("a clean shutdown");
}
