//! Threads are scoped by agent (issue #22, item 8): two configured agents, `reference` and a second
//! reference-backed `ref2`, using the same thread key `x` have two threads, on the memory store, SQLite
//! and a Postgres database of the test's own. Showing, listing, reading the history of, archiving and
//! resuming one never touches the other, and both can run at once (no `thread_busy`).

use std::time::Duration;

use agent_adaptor::server::{AgentSpec, ServerConfig};
use serde_json::{Value, json};

use crate::server::{error_code, finished_state, get, get_json, post_json, run_id, start_run, start_with};

/// The run ids in a thread's history.
async fn history_runs(base: &str, agent: &str) -> Vec<String> {
    let page = get_json(base, &format!("/v1/agents/{agent}/threads/x/events")).await;
    let mut runs: Vec<String> = page["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["run_id"].as_str().expect("run_id").to_owned())
        .collect();
    runs.dedup();
    runs
}

/// The checkpoint's record id of thread `x` of `agent`.
async fn record_id(base: &str, agent: &str) -> Value {
    get_json(base, &format!("/v1/agents/{agent}/threads/x")).await["checkpoint"]["record_id"].clone()
}

/// Runs a prompt on thread `x` of `agent` to its end; the run id.
async fn run_on(base: &str, agent: &str, prompt: &str) -> String {
    let run = start_run(
        base,
        &format!("/v1/agents/{agent}/threads/x/runs"),
        json!({"prompt": prompt}),
    )
    .await;
    let id = run_id(&run);
    assert_eq!(
        finished_state(base, &id).await["state"],
        "succeeded",
        "{agent}: {id}"
    );
    id
}

async fn story(url: &str) {
    let mut config = ServerConfig::for_tests();
    config.store_url = url.to_owned();
    config.agents.push(AgentSpec::new("ref2", "reference"));
    config.reference_chunk_delay = Duration::from_millis(20);
    let server = start_with(config).await;
    let base = server.url();

    // `reference` has thread x; `ref2` does not.
    let first = run_on(&base, "reference", "one").await;
    let resp = get(&base, "/v1/agents/ref2/threads/x").await;
    assert_eq!(resp.status(), 404, "ref2 must not see reference's thread x");
    let resp = get(&base, "/v1/agents/ref2/threads/x/events").await;
    let (status, _, body) = error_code(resp).await;
    assert_eq!(status, 404, "ref2 must not read reference's history: {body}");
    let listed = get_json(&base, "/v1/agents/ref2/threads").await;
    assert_eq!(listed["threads"], json!([]), "ref2 lists no thread: {listed}");

    // Both run on x at once: neither is `thread_busy`.
    let a = start_run(
        &base,
        "/v1/agents/reference/threads/x/runs",
        json!({"prompt": "two a b c d e f"}),
    )
    .await;
    let b = start_run(
        &base,
        "/v1/agents/ref2/threads/x/runs",
        json!({"prompt": "alpha a b c d e f"}),
    )
    .await;
    let (a, b) = (run_id(&a), run_id(&b));
    for (agent, id) in [("reference", &a), ("ref2", &b)] {
        let done = finished_state(&base, id).await;
        assert_eq!(done["state"], "succeeded", "{agent} on x: {done}");
    }

    // Two records, two histories.
    let (rec_a, rec_b) = (
        record_id(&base, "reference").await,
        record_id(&base, "ref2").await,
    );
    assert!(rec_a.is_string() && rec_b.is_string(), "{rec_a} {rec_b}");
    assert_ne!(rec_a, rec_b, "one checkpoint for two agents");
    assert_eq!(
        history_runs(&base, "reference").await,
        vec![first.clone(), a.clone()]
    );
    assert_eq!(history_runs(&base, "ref2").await, vec![b.clone()]);

    // Archiving reference's x leaves ref2's, which resumes on its own record.
    let resp = post_json(&base, "/v1/agents/reference/threads/x/archive", json!({})).await;
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    assert_eq!(get(&base, "/v1/agents/reference/threads/x").await.status(), 404);
    assert_eq!(
        record_id(&base, "ref2").await,
        rec_b,
        "archiving reference's x touched ref2's"
    );
    let again = run_on(&base, "ref2", "beta").await;
    assert_eq!(
        record_id(&base, "ref2").await,
        rec_b,
        "ref2 resumes its own record"
    );
    assert_eq!(history_runs(&base, "ref2").await, vec![b.clone(), again.clone()]);
    let listed = get_json(&base, "/v1/agents/ref2/threads/x/runs").await;
    let ids: Vec<&str> = listed["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [again.as_str(), b.as_str()],
        "ref2's runs on x, newest first: {listed}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn two_agents_have_their_own_thread_under_one_key_on_memory() {
    story("memory:").await;
}

#[tokio::test]
async fn two_agents_have_their_own_thread_under_one_key_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    story(&format!("sqlite://{}", dir.path().join("agents.db").display())).await;
}

#[tokio::test]
async fn two_agents_have_their_own_thread_under_one_key_on_postgres() {
    super::with_scratch_database("agent_threads_postgres", "aa_agents", |url| async move {
        story(&url).await
    })
    .await;
}
