//! Live responses against the committed OpenAPI document: every JSON body a route family answers (success
//! and errors) is validated with `jsonschema` against the schema `openapi/openapi.json` gives for that
//! operation and status. Response objects are closed (`additionalProperties: false`), so an undocumented
//! field fails here.

use serde_json::{Value, json};

use super::{client, finished_state, post_json, read_frames, run_id, start_with};

fn committed() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("the committed document")).expect("JSON")
}

/// Validates `resp` against the committed schema of `method path` for its status; returns the body.
async fn check(doc: &Value, method: &str, path: &str, resp: reqwest::Response) -> Value {
    let status = resp.status().as_u16().to_string();
    let body: Value = resp.json().await.expect("a JSON body");
    let schema = &doc["paths"][path][method]["responses"][&status]["content"]["application/json"]["schema"];
    assert!(
        schema.is_object(),
        "{method} {path} answered {status}, which the document does not describe: {body}"
    );
    let mut root = schema.as_object().unwrap().clone();
    root.insert("components".into(), doc["components"].clone());
    let validator = jsonschema::draft202012::new(&Value::Object(root))
        .unwrap_or_else(|e| panic!("the schema of {method} {path} {status} compiles: {e}"));
    let errors: Vec<String> = validator.iter_errors(&body).map(|e| e.to_string()).collect();
    assert!(
        errors.is_empty(),
        "{method} {path} {status} matches its schema: {errors:?}\n{body}"
    );
    body
}

async fn req(method: &str, base: &str, path: &str, body: Option<Value>) -> reqwest::Response {
    let mut r = client().request(method.parse().unwrap(), format!("{base}{path}"));
    if let Some(b) = body {
        r = r.json(&b);
    }
    r.send().await.unwrap()
}

#[tokio::test]
async fn live_responses_match_the_committed_schemas() {
    let doc = committed();
    // The positive control: a body with an undocumented field is refused by the same check.
    let health = &doc["components"]["schemas"]["Health"];
    assert_eq!(health["additionalProperties"], false, "{health}");

    let mut config = agent_adaptor::server::ServerConfig::for_tests();
    config.reference_chunk_delay = std::time::Duration::from_millis(10);
    let server = start_with(config).await;
    let b = server.url();
    let d = &doc;
    macro_rules! ok {
        ($m:literal, $tpl:literal, $path:expr) => {
            check(d, $m, $tpl, req(&$m.to_uppercase(), &b, &$path, None).await).await
        };
        ($m:literal, $tpl:literal, $path:expr, $body:expr) => {
            check(
                d,
                $m,
                $tpl,
                req(&$m.to_uppercase(), &b, &$path, Some($body)).await,
            )
            .await
        };
    }

    ok!("get", "/healthz", "/healthz");
    ok!("get", "/readyz", "/readyz");
    ok!("get", "/v1/agents", "/v1/agents");
    ok!("get", "/v1/agents/{agent}", "/v1/agents/reference");
    ok!("get", "/v1/agents/{agent}", "/v1/agents/nope");
    ok!(
        "get",
        "/v1/agents/{agent}/inspect",
        "/v1/agents/reference/inspect"
    );

    // Runs: start, live state, message, cancel, finished state, refusals.
    let run = ok!(
        "post",
        "/v1/agents/{agent}/runs",
        "/v1/agents/reference/runs",
        json!({"prompt": "a slow answer with quite a few words to cancel"})
    );
    let id = run_id(&run);
    ok!("get", "/v1/runs/{run_id}", format!("/v1/runs/{id}"));
    ok!(
        "post",
        "/v1/runs/{run_id}/messages",
        format!("/v1/runs/{id}/messages"),
        json!({"text": "more"})
    );
    ok!(
        "post",
        "/v1/runs/{run_id}/cancel",
        format!("/v1/runs/{id}/cancel")
    );
    finished_state(&b, &id).await;
    let done = ok!("get", "/v1/runs/{run_id}", format!("/v1/runs/{id}"));
    assert_eq!(done["state"], "cancelled");
    ok!(
        "post",
        "/v1/runs/{run_id}/cancel",
        format!("/v1/runs/{id}/cancel")
    );
    ok!(
        "get",
        "/v1/runs/{run_id}/approvals",
        format!("/v1/runs/{id}/approvals")
    );
    ok!("get", "/v1/runs/{run_id}", "/v1/runs/nope");
    ok!(
        "post",
        "/v1/agents/{agent}/runs",
        "/v1/agents/reference/runs",
        json!({"prompt": ""})
    );
    ok!(
        "post",
        "/v1/agents/{agent}/runs",
        "/v1/agents/reference/runs",
        json!({"prompt": "x", "y": 1})
    );

    // Approvals: listed while pending, answered once, refused the second time.
    let asked = ok!(
        "post",
        "/v1/agents/{agent}/runs",
        "/v1/agents/reference/runs",
        json!({"prompt": "permission please", "approvals": {}})
    );
    let asked = run_id(&asked);
    let events = client()
        .get(format!("{b}/v1/runs/{asked}/events"))
        .send()
        .await
        .unwrap();
    let frames = read_frames(events, |f| f.event.as_deref() != Some("approval_request")).await;
    let approval = frames.last().unwrap().json()["id"].as_str().unwrap().to_owned();
    let listed = ok!(
        "get",
        "/v1/runs/{run_id}/approvals",
        format!("/v1/runs/{asked}/approvals")
    );
    assert_eq!(listed["approvals"][0]["pending"], true, "{listed}");
    let answer = format!("/v1/runs/{asked}/approvals/{approval}");
    ok!(
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        answer,
        json!({"decision": "approve"})
    );
    ok!(
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        answer,
        json!({"decision": "approve"})
    );
    finished_state(&b, &asked).await;
    ok!(
        "get",
        "/v1/runs/{run_id}/approvals",
        format!("/v1/runs/{asked}/approvals")
    );

    // Threads: create, idempotent create, conflict, run, get, list, fork, history, archive.
    ok!(
        "post",
        "/v1/agents/{agent}/threads",
        "/v1/agents/reference/threads",
        json!({"key": "sch", "metadata": {"a": "b"}})
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads",
        "/v1/agents/reference/threads",
        json!({"key": "sch", "metadata": {"a": "b"}})
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads",
        "/v1/agents/reference/threads",
        json!({"key": "sch"})
    );
    let on = post_json(
        &b,
        "/v1/agents/reference/threads/sch/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    let on = check(d, "post", "/v1/agents/{agent}/threads/{key}/runs", on).await;
    finished_state(&b, &run_id(&on)).await;
    ok!(
        "get",
        "/v1/agents/{agent}/threads/{key}",
        "/v1/agents/reference/threads/sch"
    );
    ok!(
        "get",
        "/v1/agents/{agent}/threads/{key}",
        "/v1/agents/reference/threads/nope"
    );
    ok!(
        "get",
        "/v1/agents/{agent}/threads",
        "/v1/agents/reference/threads"
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads/{key}/fork",
        "/v1/agents/reference/threads/sch/fork",
        json!({"key": "sch-fork"})
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads/{key}/fork",
        "/v1/agents/reference/threads/sch/fork",
        json!({"key": "sch-fork"})
    );
    ok!(
        "get",
        "/v1/agents/{agent}/threads/{key}/events",
        "/v1/agents/reference/threads/sch/events"
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads/{key}/archive",
        "/v1/agents/reference/threads/sch/archive"
    );

    // Standby.
    let sb = "/v1/agents/reference/threads/sch-sb/standby";
    ok!("post", "/v1/agents/{agent}/threads/{key}/standby", sb);
    ok!("post", "/v1/agents/{agent}/threads/{key}/standby", sb);
    ok!("get", "/v1/agents/{agent}/threads/{key}/standby", sb);
    ok!(
        "post",
        "/v1/agents/{agent}/threads/{key}/standby/messages",
        format!("{sb}/messages"),
        json!({"text": "hi"})
    );
    ok!(
        "post",
        "/v1/agents/{agent}/threads/{key}/standby/cancel",
        format!("{sb}/cancel")
    );
    ok!("delete", "/v1/agents/{agent}/threads/{key}/standby", sb);
    ok!("get", "/v1/agents/{agent}/threads/{key}/standby", sb);

    // Usage: rows carry their key next to the sums, a page cursor, and the refusals.
    let usage = ok!("get", "/v1/usage", "/v1/usage?limit=1");
    assert_eq!(usage["usage"][0]["tenant"], "default", "{usage}");
    assert!(usage["next"].is_string(), "{usage}");
    ok!("get", "/v1/usage", "/v1/usage?after=zz");
    ok!("get", "/v1/usage", "/v1/usage?limit=0");
    server.shutdown().await.unwrap();
}

#[test]
fn the_check_rejects_an_undocumented_field() {
    let doc = committed();
    let mut root = doc["components"]["schemas"]["Health"]
        .as_object()
        .unwrap()
        .clone();
    root.insert("components".into(), doc["components"].clone());
    let v = jsonschema::draft202012::new(&Value::Object(root)).unwrap();
    assert!(v.is_valid(&json!({"status": "ok"})));
    assert!(!v.is_valid(&json!({"status": "ok", "extra": 1})));
    assert!(!v.is_valid(&json!({})));
}
