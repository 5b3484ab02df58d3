//! Store tests: the conformance story against every backend (memory, SQLite file and in-memory,
//! Postgres when `DATABASE_URL` is set), the negative control (the story must reject every injected
//! fault), and failure tests (crash and reopen, a real SIGKILL of a SQLite writer, connection cut under
//! load, schema version, corrupt rows).

mod contention;
mod failures;
mod kill;
mod migration;
pub(crate) mod pg;

use std::sync::Arc;

use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::store::{self, ThreadStore};
use agent_adaptor::testkit::store::check_store;
use agent_adaptor::testkit::store::faulty::{Fault, Faulty};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_store_passes_the_story() {
    check_store(Arc::new(MemoryStore::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_url_opens_a_store_that_passes_the_story() {
    check_store(store::open("memory:").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_file_store_passes_the_story() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("store.db").display());
    let store = store::open(&url).await.unwrap();
    assert_eq!(store.backend(), "sqlite");
    check_store(store.clone()).await;
    assert!(
        dir.path().join("store.db-wal").exists(),
        "the SQLite store runs in WAL mode"
    );
    drop(store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_in_memory_store_passes_the_story() {
    check_store(store::open("sqlite::memory:").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_store_passes_the_story() {
    let Some(url) = pg::database_url("postgres_store_passes_the_story") else {
        return;
    };
    let shared = url.clone();
    pg::with_schema(&url, move |schema| async move {
        let store = pg::store_in(&shared, &schema).await;
        check_store(Arc::new(store)).await;
    })
    .await;
}

/// The negative control: each fault must make the story panic, in the clause meant to catch it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_story_rejects_every_injected_fault() {
    for fault in Fault::ALL {
        let faulty: Arc<dyn ThreadStore> = Arc::new(Faulty::new(Arc::new(MemoryStore::new()), fault));
        let outcome = tokio::spawn(check_store(faulty)).await;
        let panic = match outcome {
            Ok(()) => panic!("check_store accepted a store with fault {fault:?}"),
            Err(err) => err.into_panic(),
        };
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        assert!(
            message.starts_with(fault.caught_by()),
            "fault {fault:?} must be caught by {}, panic was: {message}",
            fault.caught_by()
        );
    }
}
