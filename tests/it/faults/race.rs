//! The Standby-vs-run race on one thread (issue #22, item 8), made deterministic: a run's start is held
//! inside admission (in its thread-declaration lookup, after it checked for a Standby and before it took
//! the thread) while a Standby opens on the same thread. One answer: exactly one of the two is admitted,
//! the other is 409 `thread_busy`. Before `ThreadClaim` (one busy table for both) the Standby saw no
//! run yet and the run saw no Standby any more, so both were admitted every time.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::server::{Server, ServerConfig};
use agent_adaptor::store::memory::MemoryStore;
use serde_json::{Value, json};

use super::tripwire::Tripwire;
use crate::server::{client, post_json};

const BOUND: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn race_a_standby_opening_while_a_run_is_inside_admission_admits_exactly_one() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    let server = Server::start_with_store(ServerConfig::for_tests(), store.clone())
        .await
        .expect("starts");
    let base = server.url();
    let path = "/v1/agents/reference/threads/raced";

    let (entered, release) = store.pause_next_declaration();
    let run = tokio::spawn({
        let base = base.clone();
        async move { post_json(&base, &format!("{path}/runs"), json!({"prompt": "hello"})).await }
    });
    tokio::time::timeout(BOUND, entered)
        .await
        .expect("the run reaches its declaration lookup")
        .expect("the pause is armed");

    // The run is inside admission: it passed the Standby check and has not taken the thread yet.
    let standby = tokio::time::timeout(BOUND, client().post(format!("{base}{path}/standby")).send())
        .await
        .expect("the Standby open answers while the run waits")
        .unwrap();
    release.send(()).expect("the run still waits");
    let run = tokio::time::timeout(BOUND, run)
        .await
        .expect("the run's start answers")
        .unwrap();

    let statuses = (standby.status().as_u16(), run.status().as_u16());
    let loser = match statuses {
        (201, 409) => run,
        (409, 201) => standby,
        other => panic!("exactly one admitted, got (standby, run) = {other:?}"),
    };
    let body: Value = loser.json().await.unwrap();
    assert_eq!(body["error"]["code"], "thread_busy", "{body}");
    tokio::time::timeout(BOUND, server.shutdown())
        .await
        .expect("shutdown within 10 s")
        .expect("a clean shutdown");
}
