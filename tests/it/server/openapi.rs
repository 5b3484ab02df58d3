//! The OpenAPI document: the committed `openapi/openapi.json` matches the generated one (regenerate with
//! `UPDATE_OPENAPI=1`), every route the router serves is documented and answers, and the document is
//! served at `/openapi.json` with the docs page at `/docs`.

use std::collections::BTreeSet;

use agent_adaptor::server::openapi;
use serde_json::Value;

use super::{client, start};

/// Every (method, path) the router serves, besides `/openapi.json` and `/docs` themselves.
pub const ROUTES: &[(&str, &str)] = &[
    ("get", "/"),
    ("get", "/healthz"),
    ("get", "/readyz"),
    ("get", "/metrics"),
    ("get", "/v1/agents"),
    ("get", "/v1/agents/{agent}"),
    ("get", "/v1/agents/{agent}/inspect"),
    ("post", "/v1/agents/{agent}/agui"),
    ("post", "/v1/agui"),
    ("post", "/v1/agents/{agent}/acp"),
    ("get", "/v1/agents/{agent}/acp"),
    ("delete", "/v1/agents/{agent}/acp"),
    ("post", "/v1/acp"),
    ("get", "/v1/acp"),
    ("delete", "/v1/acp"),
    ("post", "/v1/agents/{agent}/runs"),
    ("post", "/v1/agents/{agent}/threads/{key}/runs"),
    ("get", "/v1/agents/{agent}/threads/{key}/runs"),
    ("get", "/v1/agents/{agent}/threads"),
    ("post", "/v1/agents/{agent}/threads"),
    ("get", "/v1/agents/{agent}/threads/{key}"),
    ("post", "/v1/agents/{agent}/threads/{key}/fork"),
    ("post", "/v1/agents/{agent}/threads/{key}/standby"),
    ("get", "/v1/agents/{agent}/threads/{key}/standby"),
    ("delete", "/v1/agents/{agent}/threads/{key}/standby"),
    ("post", "/v1/agents/{agent}/threads/{key}/standby/messages"),
    ("post", "/v1/agents/{agent}/threads/{key}/standby/cancel"),
    ("get", "/v1/agents/{agent}/threads/{key}/standby/events"),
    ("post", "/v1/agents/{agent}/threads/{key}/archive"),
    ("get", "/v1/agents/{agent}/threads/{key}/events"),
    ("get", "/v1/runs"),
    ("get", "/v1/runs/{run_id}"),
    ("post", "/v1/runs/{run_id}/cancel"),
    ("get", "/v1/runs/{run_id}/events"),
    ("post", "/v1/runs/{run_id}/messages"),
    ("get", "/v1/runs/{run_id}/approvals"),
    ("post", "/v1/runs/{run_id}/approvals/{id}"),
    ("get", "/v1/usage"),
    ("post", "/v1/webhooks"),
    ("get", "/v1/webhooks"),
    ("get", "/v1/webhooks/{id}"),
    ("delete", "/v1/webhooks/{id}"),
    ("get", "/v1/webhooks/{id}/deliveries"),
    ("post", "/v1/webhooks/{id}/deliveries/{delivery}/retry"),
];

const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn committed_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json")
}

/// Every (method, path template) the document describes.
pub fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for m in METHODS {
            if item.get(*m).is_some() {
                out.insert(((*m).to_owned(), path.clone()));
            }
        }
    }
    out
}

#[test]
fn openapi_committed_document_has_not_drifted() {
    let generated = openapi::pretty_json();
    let path = committed_path();
    if std::env::var_os("UPDATE_OPENAPI").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} is readable ({e}); run with UPDATE_OPENAPI=1", path.display()));
    assert!(
        committed == generated,
        "openapi/openapi.json differs from the generated document: run \
         `UPDATE_OPENAPI=1 cargo nextest run -E 'test(/openapi_committed/)'` and commit it"
    );
}

#[test]
fn openapi_document_is_3_1_and_documents_every_route() {
    let doc: Value = serde_json::from_str(&openapi::pretty_json()).expect("valid JSON");
    let version = doc["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3.1."), "OpenAPI 3.1.x, got {version}");
    let documented = operations(&doc);
    let served: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(documented, served, "documented operations == served routes");
    for (m, p) in &documented {
        let op = &doc["paths"][p][m];
        let tags = op["tags"].as_array().map(Vec::len).unwrap_or(0);
        assert!(tags > 0, "{m} {p} has a tag");
        assert!(
            op["responses"].as_object().is_some_and(|r| !r.is_empty()),
            "{m} {p} has responses"
        );
    }
    for (m, p) in [
        ("get", "/v1/runs/{run_id}/events"),
        ("post", "/v1/agents/{agent}/agui"),
        ("post", "/v1/agui"),
        ("get", "/v1/agents/{agent}/threads/{key}/standby/events"),
        ("get", "/v1/agents/{agent}/acp"),
        ("get", "/v1/acp"),
    ] {
        assert!(
            doc["paths"][p][m]["responses"]["200"]["content"]["text/event-stream"].is_object(),
            "{m} {p} answers text/event-stream"
        );
    }
    assert_eq!(
        doc["components"]["schemas"]["ErrorDetail"]["properties"]["code"]["$ref"],
        "#/components/schemas/ErrorCode"
    );
    let codes = doc["components"]["schemas"]["ErrorCode"]["enum"]
        .as_array()
        .expect("the error codes are enumerated");
    for code in [
        "not_found",
        "invalid_json",
        "thread_busy",
        "approval_expired",
        "shutting_down",
    ] {
        assert!(codes.iter().any(|c| c == code), "error code {code} is enumerated");
    }
    let run_start = &doc["paths"]["/v1/agents/{agent}/runs"]["post"];
    assert_eq!(
        run_start["requestBody"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/StartRunBody"
    );
    assert_eq!(
        run_start["responses"]["404"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ErrorBody"
    );
}

#[tokio::test]
async fn openapi_every_documented_path_is_routed_and_the_document_is_served() {
    let server = start().await;
    let http = client();
    let served: Value = http
        .get(format!("{}/openapi.json", server.url()))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .expect("GET /openapi.json is 200")
        .json()
        .await
        .expect("JSON");
    let generated: Value = serde_json::from_str(&openapi::pretty_json()).unwrap();
    let dev = serde_json::to_value(openapi::dev_document()).unwrap();
    assert_eq!(served, dev, "in dev mode the served document is the dev-mode one");

    for (m, p) in operations(&generated) {
        let url = format!(
            "{}{}",
            server.url(),
            p.replace("{agent}", "no-such-agent")
                .replace("{key}", "no-such-thread")
                .replace("{run_id}", "no-such-run")
                .replace("{id}", "no-such-approval")
        );
        let req = match m.as_str() {
            "get" => http.get(&url),
            "post" => http.post(&url),
            "delete" => http.delete(&url),
            other => panic!("unexpected method {other}"),
        };
        let resp = req.send().await.unwrap();
        let status = resp.status().as_u16();
        assert_ne!(status, 405, "{m} {p} is routed with its method");
        let text = resp.text().await.unwrap_or_default();
        assert!(
            !text.contains("no such route"),
            "{m} {p} is served by a handler, not the fallback: {status} {text}"
        );
    }
    // The fallback itself is recognisable, so the probe above can fail.
    let missing = http
        .get(format!("{}/v1/nowhere", server.url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.text().await.unwrap().contains("no such route"));

    let docs = http.get(format!("{}/docs", server.url())).send().await.unwrap();
    assert_eq!(docs.status().as_u16(), 200);
    let ctype = docs.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ctype.starts_with("text/html"), "the docs page is HTML: {ctype}");
    let html = docs.text().await.unwrap();
    assert!(
        html.contains("agent-adaptor"),
        "the docs page embeds the document"
    );
    server.shutdown().await.expect("clean shutdown");
}

#[test]
fn openapi_v1_operations_declare_the_api_key_and_their_401_and_429() {
    let doc: Value = serde_json::from_str(&openapi::pretty_json()).unwrap();
    let schemes = &doc["components"]["securitySchemes"];
    assert_eq!(schemes["bearer"]["scheme"], "bearer");
    assert_eq!(schemes["api_key"]["name"], "X-API-Key");
    for (m, p) in operations(&doc) {
        let op = &doc["paths"][&p][&m];
        if p.starts_with("/v1/") {
            assert!(op["security"].as_array().is_some_and(|s| s.len() == 2), "{m} {p}");
            for status in ["401", "429"] {
                assert_eq!(
                    op["responses"][status]["content"]["application/json"]["schema"]["$ref"],
                    "#/components/schemas/ErrorBody",
                    "{m} {p} documents {status}"
                );
            }
        } else {
            // Open: the one empty requirement (no key), which linters and generators read as "no auth".
            assert_eq!(op["security"], serde_json::json!([{}]), "{m} {p} is open");
            assert!(op["responses"].get("401").is_none(), "{m} {p} is open");
        }
    }
}

/// Security per mode (issue #22, item 9): a service with no key serves a document whose `/v1` operations
/// need no key and answer no 401; one with keys serves the committed document (bearer or `X-API-Key`,
/// 401 listed). Before, dev mode served the keyed document, so a client generator asked for a key the
/// service never wanted.
#[tokio::test]
async fn openapi_the_served_document_declares_the_security_of_the_servers_mode() {
    async fn served(config: agent_adaptor::server::ServerConfig) -> Value {
        let server = super::start_with(config).await;
        let doc = client()
            .get(format!("{}/openapi.json", server.url()))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        server.shutdown().await.expect("clean shutdown");
        doc
    }
    let dev = served(agent_adaptor::server::ServerConfig::for_tests()).await;
    let mut keyed_config = agent_adaptor::server::ServerConfig::for_tests();
    keyed_config.tenants = vec![
        agent_adaptor::server::TenantSpec::new("acme")
            .key("a-key-of-acme-0123456789")
            .unwrap(),
    ];
    let keyed = served(keyed_config).await;
    let committed: Value = serde_json::from_str(&openapi::pretty_json()).unwrap();
    assert_eq!(
        keyed, committed,
        "with keys the served document is the committed one"
    );
    let mut v1 = 0;
    for (m, p) in operations(&dev) {
        if !p.starts_with("/v1/") {
            continue;
        }
        v1 += 1;
        let (d, k) = (&dev["paths"][&p][&m], &keyed["paths"][&p][&m]);
        assert_eq!(
            d["security"],
            serde_json::json!([{}]),
            "dev mode: {m} {p} needs no key"
        );
        assert!(
            d["responses"].get("401").is_none(),
            "dev mode: {m} {p} answers no 401"
        );
        assert!(
            d["responses"].get("429").is_some(),
            "dev mode: {m} {p} keeps its 429"
        );
        assert_eq!(
            k["security"],
            serde_json::json!([{"bearer": []}, {"api_key": []}]),
            "keyed: {m} {p}"
        );
        assert!(k["responses"].get("401").is_some(), "keyed: {m} {p} lists 401");
    }
    assert!(v1 >= 20, "the /v1 operations were checked");
}

/// Generator-grade names: every operation has a unique `<tag>_<verb>` id, a plain summary (no markdown
/// backticks, which documentation UIs show literally in titles) and a description; the names table in
/// `server::openapi` has no row for an operation that does not exist. Before the table, two operations
/// shared the id `get` and every summary began with a backticked route.
#[test]
fn every_operation_has_a_unique_namespaced_id_a_plain_summary_and_a_description() {
    let doc: Value = serde_json::from_str(&openapi::pretty_json()).expect("valid JSON");
    let mut seen = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let at = format!("{} {path}", method.to_uppercase());
            let id = op["operationId"].as_str().unwrap_or_default().to_owned();
            let tag = op["tags"][0].as_str().unwrap_or_default();
            if !id.starts_with(&format!("{tag}_")) {
                problems.push(format!(
                    "{at}: operationId {id:?} is not namespaced by its tag {tag:?}"
                ));
            }
            if let Some(other) = seen.insert(id.clone(), at.clone()) {
                problems.push(format!("{at}: operationId {id:?} also names {other}"));
            }
            let summary = op["summary"].as_str().unwrap_or_default();
            if summary.is_empty() || summary.contains('`') {
                problems.push(format!("{at}: summary {summary:?} is empty or has markdown"));
            }
            if op["description"].as_str().is_none_or(str::is_empty) {
                problems.push(format!("{at}: no description"));
            }
        }
    }
    for (method, path, id, ..) in openapi::OPERATIONS {
        if doc["paths"][path][method].is_null() {
            problems.push(format!(
                "names table row {id} names no operation ({method} {path})"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[tokio::test]
async fn openapi_docs_work_offline_from_the_embedded_script() {
    let server = start().await;
    let base = server.url();
    let page = client().get(format!("{base}/docs")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    // Nothing from another origin: the script is ours, the document is ours, no web fonts.
    assert!(!html.contains("http://") && !html.contains("https://"), "{html}");
    assert!(html.contains(r#"src="/docs/scalar.js""#), "{html}");
    assert!(html.contains(r#""url":"/openapi.json""#), "{html}");
    assert!(html.contains(r#""withDefaultFonts":false"#), "{html}");
    assert!(html.contains("<title>agent-adaptor API</title>"), "{html}");
    let script = client()
        .get(format!("{base}/docs/scalar.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(script.status(), 200);
    let ct = script.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(ct.starts_with("text/javascript"), "{ct}");
    let body = script.bytes().await.unwrap();
    assert!(body.len() > 1_000_000, "the whole bundle: {} bytes", body.len());
    assert!(
        String::from_utf8_lossy(&body).contains("createApiReference"),
        "Scalar's entry point"
    );
    server.shutdown().await.unwrap();
}
