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

/// The status, the error code (empty when there is none) and the body (`null` when not JSON) of `resp`,
/// without panicking on an unexpected answer.
async fn outcome(resp: reqwest::Response) -> (u16, String, Value) {
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    let code = body["error"]["code"].as_str().unwrap_or_default().to_owned();
    (status, code, body)
}

/// `POST path` with `body` answers `status` with the JSON error `code` naming `field`.
async fn refused_post(base: &str, path: &str, body: Value, status: u16, code: &str, field: &str) {
    let (got, got_code, err) = outcome(post_json(base, path, body.clone()).await).await;
    assert_eq!(
        (got, got_code.as_str(), err["error"]["field"].as_str()),
        (status, code, Some(field)),
        "POST {path} {body} -> {err}"
    );
}

#[tokio::test]
async fn rejections_out_of_range_durations_and_counts_are_422_naming_the_field() {
    let server = start().await;
    let base = server.url();
    let runs = "/v1/agents/reference/runs";
    let cases = [
        // Above ~8.2e15 ms this panicked the run (`DateTime + TimeDelta` overflowed).
        (
            json!({"prompt": "hi", "approvals": {"permission": "ask", "timeout": 9_223_372_036_854_775_807_i64}}),
            "approvals.timeout",
        ),
        (
            json!({"prompt": "hi", "approvals": {"timeout": 604_800_001}}),
            "approvals.timeout",
        ),
        (
            json!({"prompt": "hi", "approvals": {"timeout": -2}}),
            "approvals.timeout",
        ),
        (
            json!({"prompt": "hi", "approvals": {"on_timeout": "retry", "max_retries": 2_147_483_647}}),
            "approvals.max_retries",
        ),
        (
            json!({"prompt": "hi", "approvals": {"max_retries": -1}}),
            "approvals.max_retries",
        ),
        (json!({"prompt": "hi", "timeout_ms": 0}), "timeout_ms"),
        (
            json!({"prompt": "hi", "timeout_ms": 18_446_744_073_709_551_615_u64}),
            "timeout_ms",
        ),
    ];
    for (body, field) in cases.clone() {
        refused_post(&base, runs, body.clone(), 422, "invalid_request", field).await;
        refused_post(
            &base,
            "/v1/agents/reference/threads/t1/runs",
            body,
            422,
            "invalid_request",
            field,
        )
        .await;
    }
    // The edges themselves are accepted.
    for body in [
        json!({"prompt": "hi", "approvals": {"timeout": -1, "max_retries": 10}}),
        json!({"prompt": "hi", "approvals": {"timeout": 604_800_000, "max_retries": 0}, "timeout_ms": 604_800_000}),
        json!({"prompt": "hi", "timeout_ms": 1}),
    ] {
        super::start_run(&base, runs, body).await;
    }

    // A thread declaration with an out-of-range approval timeout is refused, not stored.
    let threads = "/v1/agents/reference/threads";
    refused_post(
        &base,
        threads,
        json!({"key": "poison", "approvals": {"timeout": 9_223_372_036_854_775_807_i64}}),
        422,
        "invalid_request",
        "approvals.timeout",
    )
    .await;
    refused_post(
        &base,
        threads,
        json!({"key": "poison", "approvals": {"max_retries": 2_147_483_647}}),
        422,
        "invalid_request",
        "approvals.max_retries",
    )
    .await;
    assert_eq!(
        get(&base, "/v1/agents/reference/threads/poison").await.status(),
        404
    );

    // Page sizes outside their range are refused, not clamped.
    for path in [
        "/v1/agents/reference/threads?limit=0",
        "/v1/agents/reference/threads?limit=501",
        "/v1/agents/reference/threads/t1/events?limit=0",
        "/v1/agents/reference/threads/t1/events?limit=1001",
    ] {
        let body = refused(&base, path, 422, "invalid_request").await;
        assert_eq!(body["error"]["field"], "limit", "{path}: {body}");
    }
    for path in [
        "/v1/agents/reference/inspect?timeout_ms=0",
        "/v1/agents/reference/inspect?timeout_ms=60001",
    ] {
        let body = refused(&base, path, 422, "invalid_request").await;
        assert_eq!(body["error"]["field"], "timeout_ms", "{path}: {body}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn rejections_unknown_fields_and_positional_structs_are_refused() {
    let server = start().await;
    let base = server.url();
    let runs = "/v1/agents/reference/runs";
    let cases = [
        // Unknown fields inside `approvals` were accepted.
        (
            json!({"prompt": "hi", "approvals": {"permission": "ask", "timeuot": 5}}),
            "approvals.timeuot",
        ),
        (
            json!({"prompt": "hi", "workspace": {"type": "shared", "extra": 1}}),
            "workspace",
        ),
        (
            json!({"prompt": "hi", "mcp": [{"name": "m", "transport": {"type": "http", "url": "http://127.0.0.1:9/x"}, "typo": true}]}),
            "mcp[0]",
        ),
        // JSON arrays were accepted as positional structs.
        (json!(["hi"]), "."),
        (
            json!({"prompt": "hi", "approvals": ["ask", "ask", "ask", 5]}),
            "approvals",
        ),
        (json!({"prompt": "hi", "approvals": []}), "approvals"),
    ];
    for (body, field) in cases {
        let (status, code, err) = outcome(post_json(&base, runs, body.clone()).await).await;
        assert_eq!((status, code.as_str()), (400, "invalid_json"), "{body} -> {err}");
        let got = err["error"]["field"].as_str().unwrap_or("<none>");
        assert!(
            got.starts_with(field),
            "{body}: field {got:?}, expected {field:?}: {err}"
        );
    }
    // Every typed body refuses an array in place of an object.
    let run = super::start_run(&base, runs, json!({"prompt": "hi"})).await;
    let id = super::run_id(&run);
    for path in [
        "/v1/agents/reference/threads".to_owned(),
        "/v1/agents/reference/threads/t/fork".to_owned(),
        "/v1/agents/reference/threads/t/runs".to_owned(),
        format!("/v1/runs/{id}/messages"),
        format!("/v1/runs/{id}/approvals/a1"),
        "/v1/agents/reference/agui".to_owned(),
    ] {
        let (status, code, err) = outcome(post_json(&base, &path, json!(["k", "m", {}, []])).await).await;
        assert_eq!(
            (status, code.as_str()),
            (400, "invalid_json"),
            "POST {path} [..] -> {err}"
        );
    }
    let (status, code, err) = outcome(
        post_json(
            &base,
            "/v1/agents/reference/threads",
            json!({"key": "k", "approvals": {"x": 1}}),
        )
        .await,
    )
    .await;
    assert_eq!((status, code.as_str()), (400, "invalid_json"), "{err}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn rejections_replay_cursors_are_strict_decimals() {
    let server = start().await;
    let base = server.url();
    let run = super::start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    let id = super::run_id(&run);
    super::finished_state(&base, &id).await;
    let events = format!("{base}/v1/runs/{id}/events");
    for bad in [
        &b"+5"[..],
        b"5 6",
        b"-1",
        b"0x5",
        b"\xff5",
        b"5\xc3\xa9",
        b"99999999999999999999999",
    ] {
        let value = reqwest::header::HeaderValue::from_bytes(bad).unwrap();
        let resp = client()
            .get(&events)
            .header("last-event-id", value)
            .send()
            .await
            .unwrap();
        let (status, code, err) = outcome(resp).await;
        assert_eq!(
            (status, code.as_str(), err["error"]["field"].as_str()),
            (422, "invalid_request", Some("Last-Event-ID")),
            "Last-Event-ID {:?} -> {err}",
            String::from_utf8_lossy(bad)
        );
    }
    for (query, status, code) in [
        ("after=%2B5", 422, "invalid_request"),
        ("after=%FF", 400, "invalid_query"),
        ("after=%C3%28", 400, "invalid_query"),
    ] {
        let resp = client().get(format!("{events}?{query}")).send().await.unwrap();
        let (got, got_code, err) = outcome(resp).await;
        assert_eq!(
            (got, got_code.as_str(), err["error"]["field"].as_str()),
            (status, code, Some("after")),
            "?{query} -> {err}"
        );
    }
    for query in ["after=%2B5", "after=%FF"] {
        let path = format!("/v1/agents/reference/threads/t/events?{query}");
        let (got, _, err) = outcome(get(&base, &path).await).await;
        assert!(got == 400 || got == 422, "{path} -> {err}");
        assert_eq!(err["error"]["field"], "after", "{path} -> {err}");
    }
    // A plain decimal still replays.
    let resp = client()
        .get(&events)
        .header("last-event-id", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    server.shutdown().await.unwrap();
}
