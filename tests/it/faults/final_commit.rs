//! `done` only after the run's end is committed (issue #22 leftovers: the SQLite chaos failure at 1,000
//! runs, where a run whose client had its `done` read `running`/404 from the store after a server
//! restart). A write of the run's record that fails transiently (a lock or pool timeout under load) was
//! only logged, while the in-memory view hid it until eviction or a restart. Now: the end is retried
//! before `done` goes out, a lost first write is replaced by the whole record with its end, and crash
//! recovery retries a transient failure instead of leaving the run `running` until the next start.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_adaptor::server::recovery;
use agent_adaptor::server::{Server, ServerConfig};
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::store::{RunRecord, RunState, ThreadStore};
use chrono::Utc;
use serde_json::{Value, json};

use super::tripwire::Tripwire;
use crate::server::{all_frames, client, run_id, start_run};

/// Starts a run on a server over `store`, reads its events to the end and returns what the store says
/// about the run right after the client saw `done`.
async fn stored_after_done(store: Arc<Tripwire>) -> Option<RunRecord> {
    let server = Server::start_with_store(ServerConfig::for_tests(), store.clone())
        .await
        .expect("starts");
    let base = server.url();
    let run = start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    let id = run_id(&run);
    let resp = client()
        .get(format!("{base}/v1/runs/{id}/events"))
        .send()
        .await
        .unwrap();
    let frames = all_frames(resp).await;
    let last = frames.last().expect("frames");
    assert_eq!(last.event.as_deref(), Some("done"), "the stream ends with done");
    let record = store
        .inner
        .get_run("default", &id)
        .await
        .expect("the store answers");
    server.shutdown().await.ok();
    record
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn final_commit_a_failed_end_write_is_retried_before_done() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    store.fail_run_updates.store(1, Ordering::SeqCst);
    let record = stored_after_done(store.clone())
        .await
        .expect("the run is recorded");
    assert_eq!(
        store.fail_run_updates.load(Ordering::SeqCst),
        0,
        "the write failed once"
    );
    assert_eq!(
        record.state,
        RunState::Succeeded,
        "a client that saw done reads the run ended: {record:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn final_commit_a_lost_first_record_is_written_whole_with_the_end() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    store.fail_running_puts.store(true, Ordering::SeqCst);
    let record = stored_after_done(store).await;
    let record = record.expect("the run is in the store once it ended");
    assert_eq!(record.state, RunState::Succeeded, "{record:?}");
    assert_eq!(record.agent, "reference");
    assert!(record.result.is_some(), "with its result: {record:?}");
}

#[tokio::test]
async fn final_commit_recovery_retries_a_transient_failure_instead_of_leaving_the_run_running() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    let now = Utc::now();
    store
        .inner
        .put_run(&RunRecord {
            run_id: "run-dead".into(),
            tenant: "default".into(),
            agent: "reference".into(),
            thread_key: Some("k".into()),
            state: RunState::Running,
            owner: "replica-dead".into(),
            result: None,
            error: None,
            created_at: now,
            updated_at: now,
        })
        .await
        .unwrap();
    store.fail_run_updates.store(1, Ordering::SeqCst);
    let dyn_store: Arc<dyn ThreadStore> = store.clone();
    let done = recovery::recover(&dyn_store, "replica-me", true)
        .await
        .expect("recovery lists the runs");
    assert_eq!(done.runs, 1, "the dead owner's run is ended in this pass");
    let record = store.inner.get_run("default", "run-dead").await.unwrap().unwrap();
    assert_eq!(record.state, RunState::Interrupted, "{record:?}");
    let error: &Value = record.error.as_ref().expect("the interruption error");
    assert_eq!(error["details"]["code"], recovery::RUN_INTERRUPTED);
}
