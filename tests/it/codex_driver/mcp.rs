//! Tools of a declared (non-host) stdio MCP server under the run's permission policy, on the real
//! app-server: Codex asks before each call (`mcpServer/elicitation/request`), the driver turns that
//! into a permission decision `mcp: <server>/<tool>`; approved → the tool runs and its result reaches
//! the model; denied → the tool is not called and the model sees the refusal (or, by default, the run
//! aborts); auto-approved → pre-approved in the config, nothing is asked.

use std::sync::{Arc, Mutex};

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, FallbackAction, Policy};
use agent_adaptor::runtime::{Agent, ApprovalHandler, ApprovalRequest, Event, Payload, RunOutcome};
use agent_adaptor::testkit::mock::responses::{Reply, Script};
use agent_adaptor::vocab::McpServer;
use serde_json::json;

use super::{Cx, drain, run_error};
use crate::driver_support::STDIO_MCP_SERVER_JS;

/// `tool_search` → `mcp__probe.add {a: 2, b: 3}` → a reply quoting the tool output.
fn script() -> Script {
    Script::new()
        .then(Reply::new().tool_search("add two integers"))
        .then(Reply::new().namespaced_call("mcp__probe", "add", json!({"a": 2, "b": 3})))
        .otherwise(Script::tool_output_reply)
}

/// The `probe` stdio server, written into the workspace.
fn probe(cx: &Cx) -> McpServer {
    let js = cx.ws.join("probe-mcp.js");
    std::fs::write(&js, STDIO_MCP_SERVER_JS).unwrap();
    let mut server = McpServer::stdio("probe", "node", vec![js.to_string_lossy().into_owned()]);
    if let agent_adaptor::vocab::McpTransport::Stdio { env, .. } = &mut server.transport {
        env.insert("PROBE_MARK".into(), "called".into());
    }
    server
}

/// Sends "please add 2 3" with `policy` and `handler`; returns the events, the outcome and the
/// requests the handler saw.
async fn ask(
    cx: &Cx,
    policy: Policy,
    answer: fn(&ApprovalRequest) -> Result<(), String>,
) -> (Vec<Event>, RunOutcome, Vec<ApprovalRequest>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let handler = ApprovalHandler::new(move |req: ApprovalRequest| {
        s.lock().unwrap().push(req.clone());
        async move { answer(&req) }
    });
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send(
        "please add 2 3",
        cx.opts().policy(policy).mcp([probe(cx)]).on_approval(handler),
    );
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    let seen = seen.lock().unwrap().clone();
    (events, outcome, seen)
}

fn tool_ran(cx: &Cx) -> bool {
    cx.mock
        .requests()
        .iter()
        .any(|r| r.tool_outputs().iter().any(|(_, o)| o.contains("SUM=5 called")))
}

fn continue_on_reject() -> Policy {
    Policy::workspace_write().with_approvals(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    })
}

#[tokio::test]
async fn an_approved_mcp_tool_runs_and_the_model_sees_its_result() {
    let Some(cx) = Cx::new(script()).await else { return };
    let (events, outcome, seen) = ask(&cx, Policy::workspace_write(), |r| {
        r.approve().map_err(|e| e.to_string())
    })
    .await;
    let r = outcome.unwrap();
    assert!(r.text.contains("SUM=5 called"), "{}", r.text);
    assert_eq!(seen.len(), 1, "asked once");
    let req = &seen[0];
    assert_eq!(req.title, "mcp: probe/add");
    assert_eq!(req.details["server"], "probe");
    assert_eq!(req.details["tool"], "add");
    assert_eq!(req.details["arguments"], json!({"a": 2, "b": 3}));
    let asked = events
        .iter()
        .position(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "approval.requested"))
        .expect("approval.requested");
    let call = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolCall(c) if c.name == "probe/add" => Some(c.id.clone()),
            _ => None,
        })
        .expect("a probe/add tool call");
    let result = events
        .iter()
        .position(|e| matches!(&e.payload, Payload::ToolResult(t) if t.id == call))
        .expect("its result");
    assert!(asked < result);
    assert_eq!(req.tool_call_id, call, "the request names the tool call it gates");
    cx.assert_reaped();
}

#[tokio::test]
async fn a_denied_mcp_tool_is_not_called_and_the_model_sees_the_refusal() {
    let Some(cx) = Cx::new(script()).await else { return };
    let (_, outcome, seen) = ask(&cx, continue_on_reject(), |r| {
        r.deny("not this tool").map_err(|e| e.to_string())
    })
    .await;
    let r = outcome.unwrap();
    assert_eq!(seen.len(), 1);
    assert!(!tool_ran(&cx), "the tool was not called");
    assert!(r.text.contains("rejected"), "the model is told: {}", r.text);

    // By default a denial aborts the run: the turn is interrupted, nothing more reaches the model.
    cx.mock.set_script(script());
    let before = cx.mock.requests().len();
    let (_, outcome, _) = ask(&cx, Policy::workspace_write(), |r| {
        r.deny("no").map_err(|e| e.to_string())
    })
    .await;
    assert_eq!(
        run_error(&outcome).reason.as_str(),
        "approval_denied",
        "{outcome:?}"
    );
    assert_eq!(
        cx.mock.requests().len() - before,
        2,
        "no model call after the abort"
    );
    assert!(!tool_ran(&cx));
    cx.assert_reaped();
}

#[tokio::test]
async fn auto_modes_answer_mcp_tools_without_asking_the_host() {
    let Some(cx) = Cx::new(script()).await else { return };
    let never = |_: &ApprovalRequest| Err("the host must not be asked".to_owned());
    let approve = Policy::workspace_write().with_approvals(super::auto_approve());
    let (events, outcome, seen) = ask(&cx, approve, never).await;
    let r = outcome.unwrap();
    assert!(r.text.contains("SUM=5 called"), "{}", r.text);
    assert!(seen.is_empty());
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind.starts_with("approval."))),
        "pre-approved in the config: no request surfaced"
    );

    cx.mock.set_script(script());
    let deny = Policy::workspace_write().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let before = cx.mock.requests().len();
    let (_, outcome, seen) = ask(&cx, deny, never).await;
    let r = outcome.unwrap();
    assert!(seen.is_empty());
    assert!(r.text.contains("rejected"), "{}", r.text);
    assert_eq!(cx.mock.requests().len() - before, 3);
    assert!(
        !cx.mock.requests()[before..]
            .iter()
            .any(|r| r.tool_outputs().iter().any(|(_, o)| o.contains("SUM="))),
        "auto-denied: not called"
    );
    cx.assert_reaped();
}
