//! NUL and overlong identifiers (issue #22, items 4 and 5) through the service, on SQLite and on a
//! Postgres database of the test's own: a key, run id or AG-UI `threadId` with U+0000 and an AG-UI
//! `threadId` over 512 bytes are 422 naming the field (never 500), and a prompt with NUL ends its run
//! `succeeded` in the store, as the live view says.

use agent_adaptor::store::{self, RunState};
use serde_json::json;

use crate::server::{client, error_code, finished_state, post_json, run_id, start_run, start_with};

async fn story(url: &str) {
    let mut config = agent_adaptor::server::ServerConfig::for_tests();
    config.store_url = url.to_owned();
    let server = start_with(config).await;
    let base = server.url();

    let resp = post_json(
        &base,
        "/v1/agents/reference/threads/a%00b/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    let (status, code, body) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (422, "invalid_request"), "{body}");
    assert_eq!(body["error"]["field"], "key", "{body}");

    let resp = client()
        .get(format!("{base}/v1/runs/run%00x"))
        .send()
        .await
        .unwrap();
    let (status, _, body) = error_code(resp).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "run_id", "{body}");

    for (thread_id, what) in [("t\u{0}nul".to_owned(), "NUL"), ("t".repeat(2_700), "2.7 KB")] {
        let resp = post_json(
            &base,
            "/v1/agents/reference/agui",
            json!({"threadId": thread_id, "runId": "r1", "messages": [{"id": "u1", "role": "user", "content": "hi"}]}),
        )
        .await;
        let (status, _, body) = error_code(resp).await;
        assert_eq!(status, 422, "threadId with {what}: {body}");
        assert_eq!(body["error"]["field"], "threadId", "{body}");
        let text = body.to_string();
        assert!(!text.contains("SQLSTATE") && !text.contains("index"), "{text}");
    }

    let run = start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "nul \u{0} inside"}),
    )
    .await;
    let id = run_id(&run);
    assert_eq!(finished_state(&base, &id).await["state"], "succeeded");
    let observer = store::open(url).await.unwrap();
    let mut stored = None;
    for _ in 0..200 {
        stored = observer.get_run("default", &id).await.unwrap();
        if stored.as_ref().is_some_and(|r| !r.state.is_live()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let stored = stored.expect("the run is stored");
    assert_eq!(stored.state, RunState::Succeeded, "{stored:?}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn nul_and_long_ids_are_refused_and_nul_payloads_stored_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    story(&format!("sqlite://{}", dir.path().join("nul.db").display())).await;
}

#[tokio::test]
async fn nul_and_long_ids_are_refused_and_nul_payloads_stored_on_postgres() {
    super::with_scratch_database("nul_postgres", "aa_nul", |url| async move { story(&url).await }).await;
}
