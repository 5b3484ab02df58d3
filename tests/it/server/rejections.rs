//! Every extractor rejection answers the one JSON error shape: malformed query strings (`invalid_query`,
//! naming the field), malformed path segments (`invalid_path`), a wrong method (`method_not_allowed`), an
//! oversized AG-UI body (`body_too_large`); and an AG-UI request on a thread a Standby owns gets the busy
//! answer of the busy policy (409 `thread_busy`, or its message becomes the Standby's input).

use agent_adaptor::server::{BusyPolicy, ServerConfig};
use serde_json::{Value, json};

use super::{all_frames, client, error_code, get, post_json, read_frames, start, start_with};

/// `GET path` answers `status` with the JSON error `code`; the body.
async fn refused(base: &str, path: &str, status: u16, code: &str) -> Value {
    let (got, got_code, body) = error_code(get(base, path).await).await;
    assert_eq!((got, got_code.as_str()), (status, code), "GET {path}: {body}");
    body
}

#[tokio::test]
async fn rejections_malformed_queries_and_paths_answer_the_json_error_shape() {
    let server = start().await;
    let base = server.url();
    let run = super::start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    let run_id = super::run_id(&run);

    let body = refused(
        &base,
        "/v1/agents/reference/threads?limit=-1",
        400,
        "invalid_query",
    )
    .await;
    assert_eq!(body["error"]["field"], "limit", "{body}");
    let body = refused(
        &base,
        "/v1/agents/reference/threads?limit=abc",
        400,
        "invalid_query",
    )
    .await;
    assert_eq!(body["error"]["field"], "limit", "{body}");
    refused(
        &base,
        "/v1/agents/reference/threads?sort=key",
        400,
        "invalid_query",
    )
    .await;
    refused(
        &base,
        "/v1/agents/reference/threads/t/events?limit=-5",
        400,
        "invalid_query",
    )
    .await;
    let body = refused(
        &base,
        "/v1/agents/reference/inspect?timeout_ms=soon",
        400,
        "invalid_query",
    )
    .await;
    assert_eq!(body["error"]["field"], "timeout_ms", "{body}");
    refused(
        &base,
        &format!("/v1/runs/{run_id}/events?after=1&from=2"),
        400,
        "invalid_query",
    )
    .await;
    refused(
        &base,
        "/v1/agents/reference/threads/sb/standby/events?x=1",
        400,
        "invalid_query",
    )
    .await;
    // A cursor that parses as a query but not as a sequence stays a typed 422 naming the field.
    let body = refused(
        &base,
        &format!("/v1/runs/{run_id}/events?after=abc"),
        422,
        "invalid_request",
    )
    .await;
    assert_eq!(body["error"]["field"], "after");

    // A path segment that is not UTF-8.
    refused(&base, "/v1/runs/%FF%FE", 400, "invalid_path").await;
    refused(&base, "/v1/agents/%C3%28/threads", 400, "invalid_path").await;

    // A route that exists, with the wrong method.
    let resp = client().delete(format!("{base}/v1/agents")).send().await.unwrap();
    assert_eq!(error_code(resp).await.1, "method_not_allowed");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn rejections_an_oversized_agui_body_is_a_json_413() {
    let mut config = ServerConfig::for_tests();
    config.body_limit = 1024;
    let server = start_with(config).await;
    let text = "x".repeat(4096);
    let resp = post_json(
        &server.url(),
        "/v1/agents/reference/agui",
        json!({"threadId": "t", "runId": "r", "messages": [{"id": "u", "role": "user", "content": text}]}),
    )
    .await;
    let (status, code, _) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (413, "body_too_large"));
    server.shutdown().await.unwrap();
}

fn agui_input(thread: &str, run: &str, text: &str) -> Value {
    json!({
        "threadId": thread, "runId": run, "state": {},
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": text}],
        "tools": [], "context": [], "forwardedProps": {}
    })
}

/// Opens the Standby of the AG-UI thread `thread`; its path.
async fn open_standby(base: &str, thread: &str) -> String {
    let key = agent_adaptor::agui::thread_key(thread);
    let path = format!("/v1/agents/reference/threads/{key}/standby");
    let opened = post_json(base, &path, json!({})).await;
    assert_eq!(opened.status(), 201, "{:?}", opened.text().await);
    path
}

#[tokio::test]
async fn rejections_an_agui_run_on_a_standby_thread_is_thread_busy() {
    let server = start().await;
    let base = server.url();
    open_standby(&base, "t-standby").await;
    let resp = post_json(
        &base,
        "/v1/agents/reference/agui",
        agui_input("t-standby", "r1", "hello"),
    )
    .await;
    let (status, code, body) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (409, "thread_busy"), "{body}");
    // Another thread is not affected.
    let resp = post_json(
        &base,
        "/v1/agents/reference/agui",
        agui_input("t-free", "r2", "hello"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    all_frames(resp).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn rejections_with_the_supplement_policy_an_agui_message_becomes_the_standbys_input() {
    let mut config = ServerConfig::for_tests();
    config.busy_policy = BusyPolicy::Supplement;
    let server = start_with(config).await;
    let base = server.url();
    let standby = open_standby(&base, "t-sup").await;
    let resp = post_json(
        &base,
        "/v1/agents/reference/agui",
        agui_input("t-sup", "r1", "via agui"),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let types: Vec<String> = all_frames(resp)
        .await
        .iter()
        .map(|f| f.json()["type"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(types, ["RUN_STARTED", "RUN_FINISHED"]);
    // The Standby ran the message.
    let events = client()
        .get(format!("{base}{standby}/events"))
        .send()
        .await
        .unwrap();
    let frames = read_frames(events, |f| f.event.as_deref() != Some("done")).await;
    let done = frames.last().unwrap().json();
    assert_eq!(done["result"]["text"], "Reference reply: via agui", "{done}");
    server.shutdown().await.unwrap();
}
