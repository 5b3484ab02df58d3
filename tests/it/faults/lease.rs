//! A thread's lease is released reliably at a run's end (issue #22 leftovers): a release the store
//! fails once is retried, so the thread is free in the store at once (for another replica too), and a
//! release the store fails every time is kept and done by this process before its next run on the
//! thread, so that run is admitted and succeeds instead of failing `thread_busy` for the lease TTL
//! (5 min). Before, `ThreadHooks::release` dropped the error (`let _ = release_lease(..)`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_adaptor::server::{Server, ServerConfig};
use agent_adaptor::store::memory::MemoryStore;
use serde_json::json;

use super::tripwire::Tripwire;
use crate::server::{finished_state, run_id, start_run};

async fn served(store: Arc<Tripwire>) -> agent_adaptor::server::RunningServer {
    Server::start_with_store(ServerConfig::for_tests(), store)
        .await
        .expect("starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_a_release_that_failed_once_is_retried_and_the_thread_is_free_in_the_store() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    let server = served(store.clone()).await;
    let base = server.url();
    store.fail_releases.store(1, Ordering::SeqCst);
    let run = start_run(
        &base,
        "/v1/agents/reference/threads/t1/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    let view = finished_state(&base, &run_id(&run)).await;
    assert_eq!(view["state"], "succeeded", "{view}");
    assert_eq!(
        store.fail_releases.load(Ordering::SeqCst),
        0,
        "the release failed once"
    );
    let target = store
        .acquired
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("a lease was taken");
    // Another owner (a second replica) takes the thread at once: nobody holds it any more.
    let other = store
        .inner
        .acquire_lease(&target, "another-replica", Duration::from_secs(60))
        .await;
    assert!(
        other.is_ok(),
        "the thread's lease is still held after the run: {other:?}"
    );
    server.shutdown().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_a_release_that_kept_failing_is_done_before_the_next_run_on_the_thread() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    let server = served(store.clone()).await;
    let base = server.url();
    let path = "/v1/agents/reference/threads/t2/runs";
    store.fail_releases.store(u32::MAX, Ordering::SeqCst);
    let first = start_run(&base, path, json!({"prompt": "hi"})).await;
    let view = finished_state(&base, &run_id(&first)).await;
    assert_eq!(view["state"], "succeeded", "{view}");
    // The store recovers; the lease the first run could not give up is this process's and idle.
    store.fail_releases.store(0, Ordering::SeqCst);
    let second = start_run(&base, path, json!({"prompt": "again"})).await;
    let view = finished_state(&base, &run_id(&second)).await;
    assert_eq!(
        view["state"], "succeeded",
        "the next run on the thread takes the lease: {view}"
    );
    server.shutdown().await.ok();
}
