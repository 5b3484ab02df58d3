//! One writer per thread: busy sends, lease loss, store outages, crashed owners, and exclusion of a
//! second process on the same (SQLite) store.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_adaptor::runtime::{Agent, ErrorKind, FailureReason, ThreadErrorKind};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};

use super::flaky::Flaky;
use super::{agent, history, notices, run, tenant};

fn sleepy(store: Arc<dyn ThreadStore>, d: Duration) -> Agent {
    Agent::builder(ReferenceDriver::scripted(Script::new(vec![
        Step::Sleep(d),
        Step::text("done"),
    ])))
    .thread_store(store)
    .build()
}

#[tokio::test]
async fn a_second_send_during_an_active_execution_is_busy() {
    let a = sleepy(Arc::new(MemoryStore::new()), Duration::from_millis(400));
    let t = a.thread("busy");
    let first = t.send("one", tenant("t"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (events, second) = run(t.send("two", tenant("t"))).await;
    assert_eq!(
        second.unwrap_err().kind(),
        ErrorKind::Thread(ThreadErrorKind::Busy)
    );
    assert!(
        events.last().unwrap().is_done(),
        "the busy error arrives through Done"
    );
    assert!(first.result().await.is_ok());
    assert!(
        run(t.send("three", tenant("t"))).await.1.is_ok(),
        "free again afterwards"
    );
}

#[tokio::test]
async fn a_lost_lease_stops_the_run_and_persists_nothing() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let a = sleepy(flaky.clone(), Duration::from_millis(300));
    let t = a
        .thread("lease")
        .with_lease_timing(Duration::from_secs(5), Duration::from_millis(50));
    flaky.fail_renew.store(true, Ordering::SeqCst);
    let (_, outcome) = run(t.send("x", tenant("t"))).await;
    let err = outcome.unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::InfrastructureError));
    assert!(err.to_string().contains("lease"), "{err}");
    assert!(
        t.checkpoint("t").await.unwrap().is_none(),
        "nothing was persisted"
    );
}

#[tokio::test]
async fn store_outages_keep_the_checkpoint_in_process_and_retry() {
    let flaky = Flaky::new(Arc::new(MemoryStore::new()));
    let a = agent(flaky.clone());
    let t = a.thread("outage");
    flaky.fail_finalize.store(10, Ordering::SeqCst);
    let (events, first) = run(t.send("one", tenant("t"))).await;
    assert!(first.is_ok(), "a persistence failure is not a run failure");
    assert!(
        !notices(&events, "thread.persistence").is_empty(),
        "thread.persistence notices"
    );
    let cp = t.checkpoint("t").await.unwrap().expect("retained in process");
    assert!(cp.pending_persistence);
    flaky.fail_finalize.store(0, Ordering::SeqCst);
    let (_, second) = run(t.send("two", tenant("t"))).await;
    assert_eq!(history(&second), 2, "continued from the in-process checkpoint");
    assert!(
        !t.checkpoint("t").await.unwrap().unwrap().pending_persistence,
        "persisted once the store is back"
    );
}

#[tokio::test]
async fn a_crashed_owner_blocks_until_its_lease_expires() {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let a = agent(store.clone());
    let t = a.thread("crash");
    run(t.send("before the crash", tenant("t"))).await.1.unwrap();
    // A process that died holding the lease (it never released it).
    store
        .acquire_lease(
            &agent_adaptor::store::thread_lease_target("t", "", "crash"),
            "dead-owner",
            Duration::from_millis(300),
        )
        .await
        .unwrap();
    let (_, busy) = run(t.send("x", tenant("t"))).await;
    assert_eq!(busy.unwrap_err().kind(), ErrorKind::Thread(ThreadErrorKind::Busy));
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (_, after) = run(t.send("after expiry", tenant("t"))).await;
    assert_eq!(
        history(&after),
        2,
        "the next owner continues from the last healthy checkpoint"
    );
}

#[tokio::test]
async fn a_second_process_on_the_same_sqlite_store_is_excluded() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("threads.db").display());
    let s1 = agent_adaptor::store::open(&url).await.unwrap();
    let s2 = agent_adaptor::store::open(&url).await.unwrap();
    let a1 = sleepy(s1, Duration::from_millis(500));
    let a2 = sleepy(s2, Duration::from_millis(10));
    let running = a1.thread("shared").send("one", tenant("t"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, other) = run(a2.thread("shared").send("two", tenant("t"))).await;
    assert_eq!(
        other.unwrap_err().kind(),
        ErrorKind::Thread(ThreadErrorKind::Busy)
    );
    assert!(running.result().await.is_ok());
    assert!(
        run(a2.thread("shared").send("three", tenant("t")))
            .await
            .1
            .is_ok()
    );
}
