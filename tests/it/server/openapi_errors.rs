//! The OpenAPI document's error responses are the server's: a table of bad requests walks every
//! operation (unknown agents, runs and approvals, malformed and non-JSON bodies, oversized bodies, unknown
//! query parameters, out-of-range values, a busy thread, a finished run, a missing API key) and each answer
//! must be the expected status with the one JSON error shape, and a status the document lists for that
//! operation with the `ErrorBody` schema — so a generated client knows every error it can get.

use std::collections::BTreeSet;

use agent_adaptor::server::ServerConfig;
use serde_json::{Value, json};

use super::tenancy::keyed;
use super::{client, start_with};

/// What a case sends as its body.
#[derive(Clone, Copy)]
enum Body {
    /// No body.
    None,
    /// A JSON body.
    Json(MakeBody),
    /// Raw bytes with a content type.
    Raw(&'static str, &'static [u8]),
    /// A JSON body bigger than the test server's body limit.
    Oversized,
}

/// One bad request: the documented operation, the concrete path, the body, the expected status and code.
struct Case {
    method: &'static str,
    template: &'static str,
    path: String,
    body: Body,
    status: u16,
    code: &'static str,
}

/// The body limit of the walk's server (small, so an oversized body is cheap).
const LIMIT: usize = 4096;

fn prompt() -> Value {
    json!({"prompt": "hi"})
}
fn message() -> Value {
    json!({"text": "hi"})
}
fn decision() -> Value {
    json!({"decision": "approve"})
}
fn webhook() -> Value {
    json!({"url": "http://127.0.0.1:9/hook", "events": ["run.finished"]})
}
fn bad_webhook() -> Value {
    json!({"url": "ftp://127.0.0.1/hook", "events": ["run.finished"]})
}
fn acp_initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
}
fn empty() -> Value {
    json!({})
}
fn agui() -> Value {
    json!({
        "threadId": "walk-agui", "runId": "r1", "state": {}, "tools": [], "context": [], "forwardedProps": {},
        "messages": [{"id": "m1", "role": "user", "content": "hi"}]
    })
}
fn bad_range() -> Value {
    json!({"prompt": "hi", "timeout_ms": 0})
}
fn wrong_type() -> Value {
    json!({"prompt": 5})
}

/// Makes a JSON body.
type MakeBody = fn() -> Value;

/// The JSON-body operations: (method, template, a concrete path with a known agent, a valid body).
const BODY_ROUTES: &[(&str, &str, &str, MakeBody)] = &[
    ("post", "/v1/webhooks", "/v1/webhooks", webhook),
    (
        "post",
        "/v1/agents/{agent}/runs",
        "/v1/agents/reference/runs",
        prompt,
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/runs",
        "/v1/agents/reference/threads/walk-body/runs",
        prompt,
    ),
    (
        "post",
        "/v1/agents/{agent}/threads",
        "/v1/agents/reference/threads",
        empty,
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/fork",
        "/v1/agents/reference/threads/walk-body/fork",
        empty,
    ),
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/standby/messages",
        "/v1/agents/reference/threads/walk-body/standby/messages",
        message,
    ),
    (
        "post",
        "/v1/agents/{agent}/agui",
        "/v1/agents/reference/agui",
        agui,
    ),
    ("post", "/v1/agui", "/v1/agui", agui),
    (
        "post",
        "/v1/runs/{run_id}/messages",
        "/v1/runs/RUN/messages",
        message,
    ),
    (
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        "/v1/runs/RUN/approvals/nope",
        decision,
    ),
];

/// Every case of the walk on the dev-mode server; `run` is a finished run's id.
fn cases(run: &str) -> Vec<Case> {
    let case = |method, template, path: String, body, status, code| Case {
        method,
        template,
        path: path.replace("RUN", run),
        body,
        status,
        code,
    };
    let mut out = Vec::new();
    // Bodies: malformed JSON, a wrong type (400 invalid_json: the body does not parse as its type),
    // not JSON (415), too big (413).
    for &(method, template, path, _) in BODY_ROUTES {
        out.push(case(
            method,
            template,
            path.into(),
            Body::Raw("application/json", b"{"),
            400,
            "invalid_json",
        ));
        if template.ends_with("/agui") {
            // The AG-UI body is parsed as JSON whatever its content type (clients differ).
            out.push(case(
                method,
                template,
                path.into(),
                Body::Raw("text/plain", b"hi"),
                400,
                "invalid_json",
            ));
        } else {
            out.push(case(
                method,
                template,
                path.into(),
                Body::Raw("text/plain", b"hi"),
                415,
                "unsupported_media_type",
            ));
        }
        out.push(case(
            method,
            template,
            path.into(),
            Body::Oversized,
            413,
            "body_too_large",
        ));
    }
    for (template, path) in [
        ("/v1/agents/{agent}/runs", "/v1/agents/reference/runs"),
        (
            "/v1/agents/{agent}/threads/{key}/runs",
            "/v1/agents/reference/threads/walk-type/runs",
        ),
    ] {
        out.push(case(
            "post",
            template,
            path.into(),
            Body::Json(wrong_type),
            400,
            "invalid_json",
        ));
        // A well-typed value out of its range is 422 invalid_request.
        out.push(case(
            "post",
            template,
            path.into(),
            Body::Json(bad_range),
            422,
            "invalid_request",
        ));
    }
    // Unknown agents (valid bodies, so the body is not what is refused).
    for &(method, template, path, body) in BODY_ROUTES {
        if path.starts_with("/v1/agents/reference/") {
            let path = path.replacen("/reference/", "/nope/", 1);
            out.push(case(method, template, path, Body::Json(body), 404, "not_found"));
        }
    }
    for (method, template) in [
        ("get", "/v1/agents/{agent}"),
        ("get", "/v1/agents/{agent}/inspect"),
        ("get", "/v1/agents/{agent}/threads"),
        ("get", "/v1/agents/{agent}/threads/{key}"),
        ("get", "/v1/agents/{agent}/threads/{key}/events"),
        ("post", "/v1/agents/{agent}/threads/{key}/archive"),
        ("post", "/v1/agents/{agent}/threads/{key}/standby"),
        ("get", "/v1/agents/{agent}/threads/{key}/standby"),
        ("delete", "/v1/agents/{agent}/threads/{key}/standby"),
        ("post", "/v1/agents/{agent}/threads/{key}/standby/cancel"),
        ("get", "/v1/agents/{agent}/threads/{key}/standby/events"),
    ] {
        let path = template.replace("{agent}", "nope").replace("{key}", "k");
        out.push(case(method, template, path, Body::None, 404, "not_found"));
    }
    // Unknown runs, an unknown approval, a thread without a Standby.
    for (method, template, body) in [
        ("get", "/v1/runs/{run_id}", Body::None),
        ("post", "/v1/runs/{run_id}/cancel", Body::None),
        ("get", "/v1/runs/{run_id}/events", Body::None),
        ("get", "/v1/runs/{run_id}/approvals", Body::None),
        ("post", "/v1/runs/{run_id}/messages", Body::Json(message)),
        ("post", "/v1/runs/{run_id}/approvals/{id}", Body::Json(decision)),
    ] {
        let path = template.replace("{run_id}", "run_nope").replace("{id}", "a1");
        out.push(case(method, template, path, body, 404, "not_found"));
    }
    out.push(case(
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        format!("/v1/runs/{run}/approvals/nope"),
        Body::Json(decision),
        404,
        "not_found",
    ));
    for (method, template, body) in [
        ("get", "/v1/agents/{agent}/threads/{key}/standby", Body::None),
        ("delete", "/v1/agents/{agent}/threads/{key}/standby", Body::None),
        (
            "post",
            "/v1/agents/{agent}/threads/{key}/standby/cancel",
            Body::None,
        ),
        (
            "get",
            "/v1/agents/{agent}/threads/{key}/standby/events",
            Body::None,
        ),
        (
            "post",
            "/v1/agents/{agent}/threads/{key}/standby/messages",
            Body::Json(message),
        ),
    ] {
        let path = template
            .replace("{agent}", "reference")
            .replace("{key}", "no-standby");
        out.push(case(method, template, path, body, 404, "not_found"));
    }
    // A finished run takes no message.
    out.push(case(
        "post",
        "/v1/runs/{run_id}/messages",
        format!("/v1/runs/{run}/messages"),
        Body::Json(message),
        409,
        "run_finished",
    ));
    // Queries: an unknown parameter or a value that does not parse as its type is 400 invalid_query; a
    // value of the type that breaks its range or pattern is 422 invalid_request.
    for (template, path) in [
        ("/v1/agents/{agent}/threads", "/v1/agents/reference/threads"),
        ("/v1/agents/{agent}/inspect", "/v1/agents/reference/inspect"),
        (
            "/v1/agents/{agent}/threads/{key}/events",
            "/v1/agents/reference/threads/t/events",
        ),
        ("/v1/runs/{run_id}/events", "/v1/runs/RUN/events"),
        ("/v1/runs/{run_id}/approvals", "/v1/runs/RUN/approvals"),
        (
            "/v1/agents/{agent}/threads/{key}/standby/events",
            "/v1/agents/reference/threads/t/standby/events",
        ),
    ] {
        out.push(case(
            "get",
            template,
            format!("{path}?bogus=1"),
            Body::None,
            400,
            "invalid_query",
        ));
    }
    for (template, path) in [
        (
            "/v1/agents/{agent}/threads/{key}/events",
            "/v1/agents/reference/threads/t/events?after=%FF",
        ),
        ("/v1/runs/{run_id}/events", "/v1/runs/RUN/events?after=%FF"),
        (
            "/v1/agents/{agent}/threads",
            "/v1/agents/reference/threads?limit=x",
        ),
        (
            "/v1/runs/{run_id}/approvals",
            "/v1/runs/RUN/approvals?pending=maybe",
        ),
        ("/v1/usage", "/v1/usage?from=yesterday"),
        ("/v1/runs", "/v1/runs?state=exploded"),
        (
            "/v1/agents/{agent}/threads/{key}/runs",
            "/v1/agents/reference/threads/t/runs?state=exploded",
        ),
    ] {
        out.push(case(
            "get",
            template,
            path.into(),
            Body::None,
            400,
            "invalid_query",
        ));
    }
    for (template, path) in [
        (
            "/v1/agents/{agent}/threads",
            "/v1/agents/reference/threads?limit=0",
        ),
        (
            "/v1/agents/{agent}/inspect",
            "/v1/agents/reference/inspect?timeout_ms=0",
        ),
        (
            "/v1/agents/{agent}/threads/{key}/events",
            "/v1/agents/reference/threads/t/events?limit=0",
        ),
        (
            "/v1/agents/{agent}/threads/{key}/events",
            "/v1/agents/reference/threads/t/events?after=%2B5",
        ),
        ("/v1/runs/{run_id}/events", "/v1/runs/RUN/events?after=%2B5"),
        ("/v1/usage", "/v1/usage?limit=0"),
        ("/v1/runs", "/v1/runs?limit=0"),
        ("/v1/runs", "/v1/runs?cursor=zz"),
        (
            "/v1/agents/{agent}/threads/{key}/runs",
            "/v1/agents/reference/threads/t/runs?limit=501",
        ),
    ] {
        out.push(case(
            "get",
            template,
            path.into(),
            Body::None,
            422,
            "invalid_request",
        ));
    }
    // ACP over HTTP: a body that is not JSON (or not declared so), an unknown agent, a stream asked for
    // without accepting SSE, a DELETE naming no connection.
    out.push(case(
        "post",
        "/v1/agents/{agent}/acp",
        "/v1/agents/reference/acp".into(),
        Body::Raw("text/plain", b"{}"),
        415,
        "unsupported_media_type",
    ));
    out.push(case(
        "post",
        "/v1/agents/{agent}/acp",
        "/v1/agents/nobody/acp".into(),
        Body::Json(acp_initialize),
        404,
        "not_found",
    ));
    out.push(case(
        "post",
        "/v1/acp",
        "/v1/acp".into(),
        Body::Raw("application/json", b"{nope"),
        400,
        "invalid_json",
    ));
    for template in ["/v1/agents/{agent}/acp", "/v1/acp"] {
        let path = template.replace("{agent}", "reference");
        out.push(case(
            "get",
            template,
            path.clone(),
            Body::None,
            406,
            "not_acceptable",
        ));
        out.push(case(
            "delete",
            template,
            path,
            Body::None,
            400,
            "malformed_request",
        ));
    }
    // Webhooks: a refused subscription, unknown webhooks and deliveries, a bad page size.
    out.push(case(
        "post",
        "/v1/webhooks",
        "/v1/webhooks".into(),
        Body::Json(bad_webhook),
        422,
        "invalid_request",
    ));
    for (method, template) in [
        ("get", "/v1/webhooks/{id}"),
        ("delete", "/v1/webhooks/{id}"),
        ("get", "/v1/webhooks/{id}/deliveries"),
        ("post", "/v1/webhooks/{id}/deliveries/{delivery}/retry"),
    ] {
        let path = template
            .replace("{id}", "wh_nope")
            .replace("{delivery}", "dlv_nope");
        out.push(case(method, template, path, Body::None, 404, "not_found"));
    }
    out.push(case(
        "get",
        "/v1/webhooks/{id}/deliveries",
        "/v1/webhooks/wh_nope/deliveries?limit=0".into(),
        Body::None,
        422,
        "invalid_request",
    ));
    out.push(case(
        "get",
        "/v1/webhooks/{id}/deliveries",
        "/v1/webhooks/wh_nope/deliveries?page=2".into(),
        Body::None,
        400,
        "invalid_query",
    ));
    out
}

/// Sends `case` to `base` (with `key` as a bearer token when given); the status and the JSON body.
async fn send(base: &str, case: &Case, key: Option<&str>) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(case.method.to_uppercase().as_bytes()).unwrap();
    let mut req = client().request(method, format!("{base}{}", case.path));
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    req = match case.body {
        Body::None => req,
        Body::Json(f) => req.json(&f()),
        Body::Raw(ct, bytes) => req.header("content-type", ct).body(bytes),
        Body::Oversized => req.json(&json!({"prompt": "x".repeat(LIMIT * 2)})),
    };
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Why `status` answered by `method path` is not a documented error of that operation, if it is not.
fn undocumented(doc: &Value, method: &str, template: &str, status: u16) -> Option<String> {
    let op = &doc["paths"][template][method];
    if op.is_null() {
        return Some(format!("{method} {template} is not in the document"));
    }
    let response = &op["responses"][status.to_string()];
    if response.is_null() {
        let listed: Vec<&String> = op["responses"]
            .as_object()
            .map(|m| m.keys().collect())
            .unwrap_or_default();
        return Some(format!(
            "{method} {template} answers {status}, the document lists {listed:?}"
        ));
    }
    let schema = &response["content"]["application/json"]["schema"]["$ref"];
    (schema != "#/components/schemas/ErrorBody")
        .then(|| format!("{method} {template} {status} has no ErrorBody schema: {response}"))
}

/// Checks one answer: the expected status and code in the error shape, and documented.
fn check(doc: &Value, case: &Case, (status, body): (u16, Value), problems: &mut Vec<String>) {
    let what = format!("{} {}", case.method.to_uppercase(), case.path);
    let code = body["error"]["code"].as_str();
    if (status, code) != (case.status, Some(case.code)) {
        problems.push(format!(
            "{what}: expected {} {}, got {status} {body}",
            case.status, case.code
        ));
    }
    if body["error"]["message"].as_str().is_none() || body.as_object().is_some_and(|o| o.len() != 1) {
        problems.push(format!("{what}: not the error shape: {body}"));
    }
    if let Some(why) = undocumented(doc, case.method, case.template, status) {
        problems.push(why);
    }
}

#[tokio::test]
async fn openapi_errors_every_answered_error_status_is_documented_with_the_error_schema() {
    let doc = serde_json::to_value(agent_adaptor::server::openapi::document()).unwrap();
    let server = start_with(ServerConfig {
        body_limit: LIMIT,
        ..ServerConfig::for_tests()
    })
    .await;
    let base = server.url();
    let run = super::start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    let run = super::run_id(&run);
    super::finished_state(&base, &run).await;

    let mut problems = Vec::new();
    let mut walked = BTreeSet::new();
    for case in cases(&run) {
        walked.insert((case.method, case.template));
        let answer = send(&base, &case, None).await;
        check(&doc, &case, answer, &mut problems);
    }

    // A busy thread: a slow run holds it; a second run and a Standby are refused.
    let busy = "/v1/agents/reference/threads/walk-busy";
    let slow = json!({"prompt": "slow ".to_owned() + &"story ".repeat(200)});
    let first = super::start_run(&base, &format!("{busy}/runs"), slow.clone()).await;
    for case in [
        Case {
            method: "post",
            template: "/v1/agents/{agent}/threads/{key}/runs",
            path: format!("{busy}/runs"),
            body: Body::Json(prompt),
            status: 409,
            code: "thread_busy",
        },
        Case {
            method: "post",
            template: "/v1/agents/{agent}/threads/{key}/standby",
            path: format!("{busy}/standby"),
            body: Body::None,
            status: 409,
            code: "thread_busy",
        },
    ] {
        walked.insert((case.method, case.template));
        let answer = send(&base, &case, None).await;
        check(&doc, &case, answer, &mut problems);
    }
    super::cancel(&base, &super::run_id(&first)).await;
    server.shutdown().await.unwrap();

    // Without an API key, every /v1 operation is 401 unauthorized.
    let keyed = start_with(keyed()).await;
    let base = keyed.url();
    for &(method, template) in super::openapi::ROUTES {
        if !template.starts_with("/v1/") {
            continue;
        }
        let path = template
            .replace("{agent}", "reference")
            .replace("{key}", "k")
            .replace("{run_id}", "r")
            .replace("{id}", "a")
            .replace("{delivery}", "d");
        let case = Case {
            method,
            template,
            path,
            body: Body::None,
            status: 401,
            code: "unauthorized",
        };
        let answer = send(&base, &case, None).await;
        check(&doc, &case, answer, &mut problems);
    }
    keyed.shutdown().await.unwrap();

    // The walk reaches every /v1 operation but the listings of agents and webhooks (whose only errors
    // are 401 and 429, and the webhooks' 503 of a store that keeps none).
    let unwalked: Vec<_> = super::openapi::ROUTES
        .iter()
        .filter(|(m, t)| {
            t.starts_with("/v1/")
                && *t != "/v1/agents"
                && (*m, *t) != ("get", "/v1/webhooks")
                && !walked.contains(&(*m, *t))
        })
        .collect();
    assert!(
        unwalked.is_empty(),
        "operations without a bad-request case: {unwalked:?}"
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
