//! Request and response examples of the main operations (start a run, follow its events, answer an
//! approval, send a message, cancel), taken from a real session with the `reference` agent, put into the
//! document by one `Modify` so the handlers' attributes stay readable. A test validates every example
//! against the schema it illustrates.

use serde_json::{Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::path::Operation;

const RUN: &str = "run-01a2357c-040a-701e-9199-394bdb2e3e0f";
const APPROVAL: &str = "apr-01a2357c-0422-7118-a261-47ed31d72c8e";
const WEBHOOK: &str = "wh_019af2f4a3c07d31b5e0c2a4d6f8a0b0";

/// A run as `POST …/runs`, `GET /v1/runs/{id}` and `POST …/cancel` answer it (on thread `demo`, or
/// stateless).
fn run(state: &str, thread: Option<&str>) -> Value {
    json!({
        "run_id": RUN,
        "agent": "reference",
        "thread_key": thread,
        "state": state,
        "result": null,
        "error": null,
        "created_at": "2026-12-02T06:40:49.675049523Z",
        "links": {
            "self": format!("/v1/runs/{RUN}"),
            "events": format!("/v1/runs/{RUN}/events"),
            "approvals": format!("/v1/runs/{RUN}/approvals"),
        }
    })
}

/// Two SSE frames of a run's events.
fn events() -> Value {
    Value::String(format!(
        "id: 1\nevent: run_started\ndata: {{\"meta\":{{\"run_id\":\"{RUN}\",\"sequence\":1,\"thread_key\":\"demo\",\
         \"time\":\"2026-12-02T06:40:49.675451254Z\"}},\"run_id\":\"{RUN}\",\"thread_id\":\"demo\",\"type\":\"run_started\"}}\n\n\
         id: 14\nevent: text_delta\ndata: {{\"message_id\":\"msg-2\",\"meta\":{{\"run_id\":\"{RUN}\",\"sequence\":14,\
         \"thread_key\":\"demo\",\"time\":\"2026-12-02T06:40:54.793979010Z\",\"turn_id\":\"1\"}},\"text\":\"Reference \",\
         \"type\":\"text_delta\"}}\n\n"
    ))
}

type Make = fn() -> Value;

/// A response example: `(status, media type, example)`.
type ResponseExample = (&'static str, &'static str, Make);

/// `(method, path, request example, response examples)`.
pub const EXAMPLES: &[(&str, &str, Option<Make>, &[ResponseExample])] = &[
    (
        "post",
        "/v1/agents/{agent}/threads/{key}/runs",
        Some(
            || json!({"prompt": "please ask permission to write the notes", "metadata": {"ticket": "T-42"}}),
        ),
        &[("201", "application/json", || run("running", Some("demo")))],
    ),
    (
        "post",
        "/v1/agents/{agent}/runs",
        Some(|| json!({"prompt": "summarise the README", "timeout_ms": 600000})),
        &[("201", "application/json", || run("running", None))],
    ),
    (
        "get",
        "/v1/runs/{run_id}",
        None,
        &[("200", "application/json", || run("running", Some("demo")))],
    ),
    (
        "get",
        "/v1/runs/{run_id}/events",
        None,
        &[("200", "text/event-stream", events)],
    ),
    (
        "post",
        "/v1/runs/{run_id}/approvals/{id}",
        Some(|| json!({"decision": "approve"})),
        &[(
            "200",
            "application/json",
            || json!({"id": APPROVAL, "run_id": RUN, "decision": {"decision": "approve", "reason": null, "answer": null}}),
        )],
    ),
    (
        "get",
        "/v1/runs/{run_id}/approvals",
        None,
        &[("200", "application/json", || {
            json!({"approvals": [{
                "id": APPROVAL, "run_id": RUN, "kind": "permission", "title": "write_file notes.txt",
                "source": "reference.permission", "tool_call_id": "call-2", "choices": [], "details": {},
                "created_at": "2026-12-02T06:40:49.698730449Z", "deadline": "2026-12-02T06:45:49.698730449Z",
                "attempt": 0, "pending": true
            }]})
        })],
    ),
    (
        "post",
        "/v1/runs/{run_id}/messages",
        Some(|| json!({"text": "also add a title"})),
        &[(
            "202",
            "application/json",
            || json!({"message_id": "msg-01a2357c-0b30-745e-ace8-fbe0da6760e2", "run_id": RUN}),
        )],
    ),
    (
        "post",
        "/v1/runs/{run_id}/cancel",
        None,
        &[("202", "application/json", || run("running", Some("demo")))],
    ),
    (
        "post",
        "/v1/webhooks",
        Some(|| {
            json!({"url": "https://hooks.example.com/agent-adaptor", "events": ["run.finished", "approval.requested"],
                   "description": "CI notifications"})
        }),
        &[("201", "application/json", || {
            json!({"id": WEBHOOK, "tenant": "acme", "url": "https://hooks.example.com/agent-adaptor",
                   "events": ["run.finished", "approval.requested"], "description": "CI notifications",
                   "created_at": "2026-12-06T06:40:49.675049Z",
                   "secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwqLbu7yDBKtU="})
        })],
    ),
    (
        "get",
        "/v1/webhooks/{id}/deliveries",
        None,
        &[("200", "application/json", || {
            json!({"deliveries": [{
                "id": "dlv_019af2f4a3c07d31b5e0c2a4d6f8a0b2", "event_id": "evt_019af2f4a3c07d31b5e0c2a4d6f8a0b1",
                "event_type": "run.finished", "state": "delivered", "attempts": 2,
                "created_at": "2026-12-06T06:41:02.100000Z", "updated_at": "2026-12-06T06:41:12.410000Z",
                "log": [
                    {"attempt": 1, "at": "2026-12-06T06:41:02.101000Z", "status": 503, "duration_ms": 14},
                    {"attempt": 2, "at": "2026-12-06T06:41:12.400000Z", "status": 200, "duration_ms": 9}
                ]
            }]})
        })],
    ),
];

/// Sets the examples of `op` (`method path`) from [`EXAMPLES`].
pub fn add(method: &str, path: &str, op: &mut Operation) {
    let Some((_, _, request, responses)) = EXAMPLES.iter().find(|(m, p, ..)| *m == method && *p == path)
    else {
        return;
    };
    if let (Some(make), Some(RefOr::T(body))) = (request, op.request_body.as_mut())
        && let Some(RefOr::T(content)) = body.content.get_mut("application/json")
    {
        content.example = Some(make());
    }
    for (status, media, make) in *responses {
        if let Some(RefOr::T(response)) = op.responses.responses.get_mut(*status)
            && let Some(RefOr::T(content)) = response.content.get_mut(*media)
        {
            content.example = Some(make());
        }
    }
}
