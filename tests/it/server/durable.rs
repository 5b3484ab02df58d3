//! Thread declarations are durable: a thread created (or forked) over HTTP and never run survives a
//! restart of the service on the same SQLite file, and its defaults apply to its first run after it;
//! archive forgets the declaration for good.

use agent_adaptor::server::ServerConfig;
use serde_json::{Value, json};

use super::{
    all_frames, error_code, finished_state, get, get_json, post_json, run_id, start_run, start_with,
    with_metadata,
};

fn on_file(path: &std::path::Path) -> ServerConfig {
    let mut config = with_metadata();
    config.store_url = format!("sqlite://{}", path.display());
    config
}

#[tokio::test]
async fn durable_a_created_thread_survives_a_restart_with_its_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("service.db");
    let threads = "/v1/agents/reference/threads";

    let first = start_with(on_file(&db)).await;
    let created = post_json(
        &first.url(),
        threads,
        json!({"key": "kept-1", "model": "reference-durable", "metadata": {"team": "b"}}),
    )
    .await;
    assert_eq!(created.status(), 201);
    let doomed = post_json(&first.url(), threads, json!({"key": "archived-1"})).await;
    assert_eq!(doomed.status(), 201);
    let archived = post_json(&first.url(), &format!("{threads}/archived-1/archive"), json!({})).await;
    assert_eq!(archived.status(), 200);
    first.shutdown().await.unwrap();

    let second = start_with(on_file(&db)).await;
    let base = second.url();
    let thread = get_json(&base, &format!("{threads}/kept-1")).await;
    assert_eq!(thread["defaults"]["model"], "reference-durable", "{thread}");
    assert_eq!(thread["checkpoint"], Value::Null, "still never run");
    // Identical create is still the idempotent 200; other defaults still 409.
    let again = post_json(
        &base,
        threads,
        json!({"key": "kept-1", "model": "reference-durable", "metadata": {"team": "b"}}),
    )
    .await;
    assert_eq!(again.status(), 200);
    let other = post_json(&base, threads, json!({"key": "kept-1", "model": "x"})).await;
    assert_eq!(error_code(other).await.1, "thread_exists");
    // The archived declaration did not come back.
    assert_eq!(get(&base, &format!("{threads}/archived-1")).await.status(), 404);

    // Its first run after the restart uses the thread's defaults.
    let run = start_run(
        &base,
        &format!("{threads}/kept-1/runs"),
        json!({"prompt": "model?"}),
    )
    .await;
    let run = run_id(&run);
    assert_eq!(finished_state(&base, &run).await["state"], "succeeded");
    let frames = all_frames(get(&base, &format!("/v1/runs/{run}/events")).await).await;
    let done = frames.last().unwrap().json();
    assert_eq!(done["result"]["model"], "reference-durable", "{done}");
    second.shutdown().await.unwrap();
}
