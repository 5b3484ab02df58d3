//! The service's error codes: each has exactly one HTTP status, the committed OpenAPI document enumerates
//! exactly [`ErrorCode::ALL`], and a 5xx tells the client a generic message with an error id while the
//! cause is logged under that id (a [`Flaky`] SQLite store whose thread resolution fails).

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use agent_adaptor::server::{ErrorCode, Server, ServerConfig};
use agent_adaptor::store::ThreadStore;
use serde_json::Value;

use super::get;
use crate::threads::flaky::Flaky;

/// Every code and its status, as the API promises them.
const STATUSES: &[(&str, u16)] = &[
    ("invalid_json", 400),
    ("invalid_query", 400),
    ("invalid_path", 400),
    ("unreadable_body", 400),
    ("malformed_request", 400),
    ("unauthorized", 401),
    ("budget_exceeded", 402),
    ("forbidden", 403),
    ("resource_not_allowed", 403),
    ("messages_disabled", 403),
    ("not_found", 404),
    ("method_not_allowed", 405),
    ("body_timeout", 408),
    ("thread_busy", 409),
    ("thread_exists", 409),
    ("run_finished", 409),
    ("run_cancelled", 409),
    ("approval_resolved", 409),
    ("approval_expired", 410),
    ("approval_unavailable", 410),
    ("body_too_large", 413),
    ("message_too_large", 413),
    ("uri_too_long", 414),
    ("unsupported_media_type", 415),
    ("invalid_request", 422),
    ("run_refused", 422),
    ("fork_unsupported", 422),
    ("approval_kind_mismatch", 422),
    ("message_unsupported", 422),
    ("unknown_skill", 422),
    ("unknown_service", 422),
    ("rate_limited", 429),
    ("too_many_runs", 429),
    ("too_many_standbys", 429),
    ("headers_too_large", 431),
    ("internal_error", 500),
    ("store_error", 500),
    ("not_implemented", 501),
    ("store_unavailable", 503),
    ("shutting_down", 503),
    ("capacity_exhausted", 503),
    ("idempotency_in_progress", 409),
    ("idempotency_mismatch", 422),
    ("too_many_connections", 503),
    ("acp_stream_conflict", 409),
    ("acp_limit", 429),
    ("not_acceptable", 406),
];

#[test]
fn error_codes_each_have_one_status_and_the_committed_openapi_enumerates_them_all() {
    let got: BTreeSet<(&str, u16)> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str(), c.status().as_u16()))
        .collect();
    let want: BTreeSet<(&str, u16)> = STATUSES.iter().copied().collect();
    assert_eq!(got, want, "every code with its one status");
    assert_eq!(ErrorCode::ALL.len(), STATUSES.len(), "no code twice");
    for code in ErrorCode::ALL {
        assert_eq!(
            serde_json::to_value(code).unwrap(),
            code.as_str(),
            "the JSON form is the wire name"
        );
    }

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ErrorDetail"]["properties"]["code"]["$ref"], "#/components/schemas/ErrorCode",
        "ErrorDetail.code is the ErrorCode enum"
    );
    let listed: BTreeSet<String> = schemas["ErrorCode"]["enum"]
        .as_array()
        .expect("ErrorCode is an enum")
        .iter()
        .map(|c| c.as_str().expect("a string").to_owned())
        .collect();
    let all: BTreeSet<String> = ErrorCode::ALL.iter().map(|c| c.as_str().to_owned()).collect();
    assert_eq!(
        listed, all,
        "the committed document enumerates exactly ErrorCode::ALL"
    );
}

/// A log sink shared with the subscriber.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Logs {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// A thread lookup whose store fails answers a 5xx with a generic message and a 32-hex error id, never
/// the store's text; the id is logged at ERROR with the cause. Before, the runtime's error text reached
/// the client: `{"error":{"code":"store_error","message":"thread error (Store): store unavailable: injected
/// outage"}}`.
#[tokio::test]
async fn a_5xx_answers_a_generic_message_and_logs_its_cause_under_the_error_id() {
    let logs = Logs::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    // A current-thread runtime: the server's tasks run on this thread, under this subscriber.
    let _logging = tracing::subscriber::set_default(subscriber);

    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("flaky.db").display());
    let flaky = Flaky::new(agent_adaptor::store::open(&url).await.unwrap());
    let store: Arc<dyn ThreadStore> = flaky.clone();
    let server = Server::start_with_store(ServerConfig::for_tests(), store)
        .await
        .expect("the server starts");
    flaky.fail_resolve.store(true, Ordering::SeqCst);

    let resp = get(&server.url(), "/v1/agents/reference/threads/t-1").await;
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    assert!(status >= 500, "a 5xx: {status} {body}");
    let text = body.to_string();
    for leak in ["injected outage", "unavailable:", "flaky"] {
        assert!(
            !text.contains(leak),
            "internal text reached the client ({leak}): {text}"
        );
    }
    let message = body["error"]["message"].as_str().unwrap_or_default();
    let id = message
        .split("error id ")
        .nth(1)
        .map(|t| t.trim_end_matches(')'))
        .unwrap_or_default();
    assert!(
        id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "a 32-hex error id in the message: {text}"
    );
    let logged = logs.text();
    let line = logged
        .lines()
        .find(|l| l.contains(id))
        .unwrap_or_else(|| panic!("error id {id} is logged: {logged}"));
    assert!(
        line.contains("ERROR") && line.contains("injected outage"),
        "the cause is logged at ERROR under the id: {line}"
    );
    server.shutdown().await.ok();
}

/// A store that does not keep idempotency keys or list runs (a library user's store that implements
/// only the required methods, like [`Flaky`]) answers 501 `not_implemented` naming what is missing.
/// Before, the trait's defaults answered `StoreError::Invalid`, and the client got 422
/// `invalid_request`, as if its own request were wrong.
#[tokio::test]
async fn a_store_without_an_optional_capability_answers_501_not_a_client_error() {
    let flaky = Flaky::new(Arc::new(agent_adaptor::store::memory::MemoryStore::new()));
    let store: Arc<dyn ThreadStore> = flaky.clone();
    let server = Server::start_with_store(ServerConfig::for_tests(), store)
        .await
        .expect("the server starts");

    let resp = super::client()
        .post(format!("{}/v1/agents/reference/runs", server.url()))
        .header("idempotency-key", "k-1")
        .json(&serde_json::json!({"prompt": "hello"}))
        .send()
        .await
        .unwrap();
    let (status, code, body) = super::error_code(resp).await;
    assert_eq!((status, code.as_str()), (501, "not_implemented"), "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("idempotency"), "names what is missing: {body}");

    let (status, code, body) = super::error_code(get(&server.url(), "/v1/runs").await).await;
    assert_eq!((status, code.as_str()), (501, "not_implemented"), "{body}");

    // Without the header the same store runs the request.
    let run = super::start_run(
        &server.url(),
        "/v1/agents/reference/runs",
        serde_json::json!({"prompt": "hi"}),
    )
    .await;
    assert_eq!(
        super::finished_state(&server.url(), &super::run_id(&run)).await["state"],
        "succeeded"
    );
    server.shutdown().await.ok();
}
