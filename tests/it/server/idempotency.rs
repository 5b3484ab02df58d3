//! `Idempotency-Key` through the real router: a repeated request replays the first 2xx answer (same
//! status, body and `Location`, `Idempotent-Replayed: true`) and starts nothing; another request under
//! the key is 422 `idempotency_mismatch`; a request in flight makes a concurrent one 409
//! `idempotency_in_progress` with `Retry-After: 1`; a non-2xx answer is not kept; keys are per tenant;
//! on the memory store, SQLite and Postgres.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::server::{Server, ServerConfig, TenantSpec};
use agent_adaptor::store::memory::MemoryStore;
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key};
use super::{client, error_code, get_json};
use crate::faults::tripwire::Tripwire;

const BOUND: Duration = Duration::from_secs(10);

/// `POST {base}{path}` with `body` (sent as the raw text given) and the key.
async fn post(base: &str, path: &str, key: &str, body: &str) -> reqwest::Response {
    client()
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

/// The status, `Location`, `Idempotent-Replayed` and body text of an answer.
async fn parts(resp: reqwest::Response) -> (u16, Option<String>, Option<String>, String) {
    let header = |name: &str| resp.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    let (location, replayed) = (header("location"), header("idempotent-replayed"));
    (
        resp.status().as_u16(),
        location,
        replayed,
        resp.text().await.unwrap(),
    )
}

/// Replay, mismatch, a released non-2xx answer, and the other honouring routes.
async fn walk(base: &str) {
    let path = "/v1/agents/reference/runs";
    let (status, location, replayed, body) =
        parts(post(base, path, "key-1", r#"{"prompt":"hello"}"#).await).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(replayed, None, "a first answer is not a replay");
    let location = location.expect("a 201 has a Location");
    // The same request (keys reordered, whitespace added: the same JSON) replays the stored answer.
    let again = parts(post(base, path, "key-1", "{ \"prompt\" : \"hello\" }").await).await;
    assert_eq!(
        again,
        (201, Some(location.clone()), Some("true".to_owned()), body.clone())
    );
    let runs = get_json(base, "/v1/runs").await;
    assert_eq!(
        runs["runs"].as_array().unwrap().len(),
        1,
        "one run started: {runs}"
    );

    // The key with another body, or on another route, is a mismatch.
    let (status, code, err) = error_code(post(base, path, "key-1", r#"{"prompt":"bye"}"#).await).await;
    assert_eq!((status, code.as_str()), (422, "idempotency_mismatch"), "{err}");
    let other = "/v1/agents/reference/threads/t-1/runs";
    let (status, code, err) = error_code(post(base, other, "key-1", r#"{"prompt":"hello"}"#).await).await;
    assert_eq!((status, code.as_str()), (422, "idempotency_mismatch"), "{err}");

    // A non-2xx answer is not kept: the same request runs again, and a corrected one is no mismatch.
    let bad = r#"{"prompt":"hello","timeout_ms":0}"#;
    for _ in 0..2 {
        let (status, _, replayed, body) = parts(post(base, path, "key-2", bad).await).await;
        assert_eq!((status, replayed), (422, None), "{body}");
    }
    let (status, _, replayed, body) = parts(post(base, path, "key-2", r#"{"prompt":"fixed"}"#).await).await;
    assert_eq!((status, replayed), (201, None), "{body}");

    // Thread creation and a thread run replay too.
    let threads = "/v1/agents/reference/threads";
    let create = r#"{"key":"idem-thread"}"#;
    let first = parts(post(base, threads, "key-3", create).await).await;
    assert!(first.0 == 201 || first.0 == 200, "{first:?}");
    let second = parts(post(base, threads, "key-3", create).await).await;
    assert_eq!(
        (second.0, second.2.as_deref(), &second.3),
        (first.0, Some("true"), &first.3)
    );
    let on_thread = parts(post(base, other, "key-4", r#"{"prompt":"hi"}"#).await).await;
    assert_eq!(on_thread.0, 201, "{on_thread:?}");
    let replay = parts(post(base, other, "key-4", r#"{"prompt":"hi"}"#).await).await;
    assert_eq!(
        replay,
        (
            201,
            on_thread.1.clone(),
            Some("true".to_owned()),
            on_thread.3.clone()
        )
    );

    // A malformed key is refused before anything runs.
    let (status, code, err) = error_code(post(base, path, "two words", r#"{"prompt":"x"}"#).await).await;
    assert_eq!((status, code.as_str()), (422, "invalid_request"), "{err}");
    // Without the header nothing changes: two requests, two runs.
    let before = get_json(base, "/v1/runs").await["runs"].as_array().unwrap().len();
    for _ in 0..2 {
        let resp = client()
            .post(format!("{base}{path}"))
            .json(&json!({"prompt": "plain"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
    }
    let after = get_json(base, "/v1/runs").await["runs"].as_array().unwrap().len();
    assert_eq!(after, before + 2);
}

#[tokio::test]
async fn idempotency_replays_and_refuses_on_memory() {
    let server = Server::start(ServerConfig::for_tests()).await.unwrap();
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn idempotency_replays_and_refuses_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = Server::start(config).await.unwrap();
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn idempotency_replays_and_refuses_on_postgres() {
    let Some(url) = crate::store::pg::database_url("idempotency_replays_and_refuses_on_postgres") else {
        return;
    };
    let at = url.clone();
    crate::store::pg::with_schema(&url, |schema| async move {
        let store = crate::store::pg::store_in(&at, &schema).await;
        let server = Server::start_with_store(ServerConfig::for_tests(), Arc::new(store))
            .await
            .unwrap();
        walk(&server.url()).await;
        server.shutdown().await.unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_a_request_in_flight_makes_the_same_key_409_then_replays() {
    let store = Arc::new(Tripwire::new(Arc::new(MemoryStore::new())));
    let server = Server::start_with_store(ServerConfig::for_tests(), store.clone())
        .await
        .unwrap();
    let base = server.url();
    let path = "/v1/agents/reference/threads/raced/runs";
    let body = r#"{"prompt":"hello"}"#;

    // The first request holds the key, paused inside admission (its thread-declaration lookup).
    let (entered, release) = store.pause_next_declaration();
    let first = tokio::spawn({
        let base = base.clone();
        async move { parts(post(&base, path, "k", body).await).await }
    });
    tokio::time::timeout(BOUND, entered)
        .await
        .expect("the first request is in flight")
        .unwrap();
    let resp = tokio::time::timeout(BOUND, post(&base, path, "k", body))
        .await
        .expect("answers at once");
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, code, err) = error_code(resp).await;
    assert_eq!(
        (status, code.as_str(), retry.as_deref()),
        (409, "idempotency_in_progress", Some("1")),
        "{err}"
    );
    release.send(()).expect("the first request still waits");
    let first = tokio::time::timeout(BOUND, first)
        .await
        .expect("the first answers")
        .unwrap();
    assert_eq!((first.0, first.2.as_deref()), (201, None), "{first:?}");
    let replay = parts(post(&base, path, "k", body).await).await;
    assert_eq!(
        replay,
        (201, first.1.clone(), Some("true".to_owned()), first.3.clone())
    );
    let runs = get_json(&base, "/v1/runs").await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1, "{runs}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn idempotency_keys_are_per_tenant() {
    let config = ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_B).unwrap(),
        ],
        ..ServerConfig::for_tests()
    };
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let send = |key: &'static str, prompt: &'static str| {
        let base = base.clone();
        async move {
            let resp = as_key(
                reqwest::Method::POST,
                format!("{base}/v1/agents/reference/runs"),
                key,
            )
            .header("idempotency-key", "shared-key")
            .json(&json!({ "prompt": prompt }))
            .send()
            .await
            .unwrap();
            parts(resp).await
        }
    };
    let a = send(KEY_A, "from a").await;
    let b = send(KEY_B, "from b").await;
    assert_eq!((a.0, a.2.as_deref()), (201, None), "{a:?}");
    assert_eq!(
        (b.0, b.2.as_deref()),
        (201, None),
        "another tenant's key is another key: {b:?}"
    );
    assert_ne!(a.3, b.3);
    let a_again = send(KEY_A, "from a").await;
    assert_eq!((a_again.2.as_deref(), &a_again.3), (Some("true"), &a.3));
    let b_view: Value = serde_json::from_str(&b.3).unwrap();
    let b_run = b_view["run_id"].as_str().unwrap();
    let resp = as_key(reqwest::Method::GET, format!("{base}/v1/runs/{b_run}"), KEY_A)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 404, "a replay never leaks another tenant's answer");
    server.shutdown().await.unwrap();
}

/// `POST` with `body` and, when given, an `Idempotency-Key`.
async fn post_json(base: &str, path: &str, key: Option<&str>, body: Value) -> reqwest::Response {
    let mut req = client().post(format!("{base}{path}")).json(&body);
    if let Some(key) = key {
        req = req.header("idempotency-key", key);
    }
    req.send().await.unwrap()
}

/// A retried approval answer or fork gets the first answer back instead of the conflict the same request
/// without a key gets (409 `approval_resolved`, 409 `thread_exists`): a client that lost the first answer
/// to a network cut can retry safely.
#[tokio::test]
async fn idempotency_an_approval_answer_and_a_fork_replay_where_a_plain_retry_conflicts() {
    let server = super::start().await;
    let base = server.url();

    // A run parked on a permission request.
    let run = super::start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "permission please"}),
    )
    .await;
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    let events = client()
        .get(format!("{base}/v1/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    let frames = super::read_frames(events, |f| f.event.as_deref() != Some("approval_request")).await;
    let request = frames.last().unwrap().json();
    assert_eq!(request["type"], "approval_request", "{frames:?}");
    let path = format!("/v1/runs/{run_id}/approvals/{}", request["id"].as_str().unwrap());

    let approve = json!({"decision": "approve"});
    let first = parts(post_json(&base, &path, Some("answer-1"), approve.clone()).await).await;
    assert_eq!((first.0, first.2.as_deref()), (200, None), "{first:?}");
    let retried = parts(post_json(&base, &path, Some("answer-1"), approve.clone()).await).await;
    assert_eq!(
        (retried.0, retried.2.as_deref(), &retried.3),
        (200, Some("true"), &first.3),
        "the retry replays the first answer"
    );
    let (status, code, _) = error_code(post_json(&base, &path, None, approve.clone()).await).await;
    assert_eq!(
        (status, code.as_str()),
        (409, "approval_resolved"),
        "without a key: a conflict"
    );
    let (status, code, _) =
        error_code(post_json(&base, &path, Some("answer-1"), json!({"decision": "deny"})).await).await;
    assert_eq!((status, code.as_str()), (422, "idempotency_mismatch"));

    // A fork of a thread with a checkpoint.
    let on_thread = super::start_run(
        &base,
        "/v1/agents/reference/threads/idem-src/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    let done = super::all_frames(
        client()
            .get(format!(
                "{base}/v1/runs/{}/events",
                on_thread["run_id"].as_str().unwrap()
            ))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(
        done.iter().any(|f| f.event.as_deref() == Some("done")),
        "{done:?}"
    );
    let fork = "/v1/agents/reference/threads/idem-src/fork";
    let body = json!({"key": "idem-dst"});
    let first = parts(post_json(&base, fork, Some("fork-1"), body.clone()).await).await;
    assert_eq!(first.0, 201, "{first:?}");
    let retried = parts(post_json(&base, fork, Some("fork-1"), body.clone()).await).await;
    assert_eq!(
        retried,
        (201, first.1.clone(), Some("true".to_owned()), first.3.clone())
    );
    let (status, code, _) = error_code(post_json(&base, fork, None, body).await).await;
    assert_eq!(
        (status, code.as_str()),
        (409, "thread_exists"),
        "without a key: a conflict"
    );
    server.shutdown().await.unwrap();
}

/// Every route the middleware honours is a POST operation of the service: a renamed route would otherwise
/// silently lose its idempotency (the middleware matches route templates by string).
#[tokio::test]
async fn idempotency_every_honoured_route_is_a_post_operation() {
    let doc = agent_adaptor::server::openapi::document();
    let doc = serde_json::to_value(&doc).unwrap();
    for route in agent_adaptor::server::idempotency::ROUTES {
        let op = &doc["paths"][*route]["post"];
        assert!(op.is_object(), "{route} is not a POST operation");
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        assert!(
            params
                .iter()
                .any(|p| p["$ref"] == "#/components/parameters/IdempotencyKey"),
            "{route} does not document Idempotency-Key: {params:?}"
        );
    }
}

/// A retried Standby open and a retried Standby message replay their first answer: the retry of an
/// input whose 202 was lost does not start a second execution.
#[tokio::test]
async fn idempotency_a_retried_standby_message_starts_one_execution() {
    let server = super::start().await;
    let base = server.url();
    let standby = "/v1/agents/reference/threads/idem-sb/standby";
    let opened = parts(post_json(&base, standby, Some("open-1"), json!({})).await).await;
    assert_eq!((opened.0, opened.2.as_deref()), (201, None), "{opened:?}");
    let reopened = parts(post_json(&base, standby, Some("open-1"), json!({})).await).await;
    assert_eq!(
        (reopened.0, reopened.2.as_deref(), &reopened.3),
        (201, Some("true"), &opened.3),
        "the replay is the first 201 (a plain repeat would be a 200)"
    );

    let messages = format!("{standby}/messages");
    let text = json!({"text": "only once"});
    let sent = parts(post_json(&base, &messages, Some("msg-1"), text.clone()).await).await;
    assert_eq!((sent.0, sent.2.as_deref()), (202, None), "{sent:?}");
    let resent = parts(post_json(&base, &messages, Some("msg-1"), text.clone()).await).await;
    assert_eq!(
        (resent.0, resent.2.as_deref(), &resent.3),
        (202, Some("true"), &sent.3)
    );
    // One execution ran: its `done`, then a marker input's execution is the second one.
    let marker = parts(post_json(&base, &messages, None, json!({"text": "marker"})).await).await;
    assert_eq!(marker.0, 202, "{marker:?}");
    let mut dones = Vec::new();
    let events = client()
        .get(format!("{base}{standby}/events"))
        .send()
        .await
        .unwrap();
    super::read_frames(events, |f| {
        if f.event.as_deref() == Some("done") {
            dones.push(f.json()["result"]["text"].as_str().unwrap_or_default().to_owned());
        }
        !dones.iter().any(|t| t.contains("marker"))
    })
    .await;
    assert_eq!(
        dones,
        ["Reference reply: only once", "Reference reply: marker"],
        "the retried message ran once"
    );
    server.shutdown().await.unwrap();
}

/// A retried supplemental message to a live run replays its first 202 (the same server-assigned message
/// id) and is delivered once, where a plain repeat is a second message.
#[tokio::test]
async fn idempotency_a_retried_run_message_is_delivered_once() {
    let mut config = ServerConfig::for_tests();
    config.reference_chunk_delay = Duration::from_millis(30);
    let server = super::start_with(config).await;
    let base = server.url();
    let run = super::start_run(
        &base,
        "/v1/agents/reference/runs",
        json!({"prompt": "a slow answer with many words to leave time"}),
    )
    .await;
    let run_id = super::run_id(&run);
    let messages = format!("/v1/runs/{run_id}/messages");
    let text = json!({"text": "also mention tests"});

    let sent = parts(post_json(&base, &messages, Some("run-msg-1"), text.clone()).await).await;
    assert_eq!((sent.0, sent.2.as_deref()), (202, None), "{sent:?}");
    let resent = parts(post_json(&base, &messages, Some("run-msg-1"), text.clone()).await).await;
    assert_eq!(
        (resent.0, resent.2.as_deref(), &resent.3),
        (202, Some("true"), &sent.3),
        "the retry replays the first answer"
    );
    let plain = parts(post_json(&base, &messages, None, text.clone()).await).await;
    assert_eq!(plain.0, 202, "{plain:?}");
    let id = |body: &str| -> String {
        let v: Value = serde_json::from_str(body).unwrap();
        v["message_id"].as_str().expect("a message id").to_owned()
    };
    assert_ne!(id(&sent.3), id(&plain.3), "a plain repeat is another message");

    let frames = super::all_frames(
        client()
            .get(format!("{base}/v1/runs/{run_id}/events"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    let mut delivered: Vec<String> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("message_update"))
        .map(|f| f.json())
        .filter_map(|v| v["id"].as_str().map(str::to_owned))
        .collect();
    delivered.sort();
    delivered.dedup();
    let mut want = vec![id(&sent.3), id(&plain.3)];
    want.sort();
    assert_eq!(delivered, want, "two messages, not three: {frames:?}");
    server.shutdown().await.unwrap();
}
