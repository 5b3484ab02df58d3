//! `codex app-server` while a server request is pending: `turn/steer` sent while a command approval
//! waits is accepted at once and delivered after the approved command's output; `turn/interrupt`
//! withdraws the request (`serverRequest/resolved`, the command never runs, a late answer is
//! ignored). And the MCP elicitation Codex sends before calling a tool of a declared (non-host) MCP
//! server that is not pre-approved: `accept` runs the tool, `decline` tells the model
//! "user rejected MCP tool call".

use std::time::Duration;

use agent_adaptor::providers::codex::wire::client::{
    ApprovalPolicy, ClientRequest, SandboxMode, TurnInterruptParams, TurnSteerParams,
};
use agent_adaptor::providers::codex::wire::items::UserInput;
use agent_adaptor::providers::codex::wire::server_request::{
    CommandExecutionApprovalResponse, CommandExecutionDecision,
};
use agent_adaptor::testkit::codex_env::CodexEnvOptions;
use agent_adaptor::testkit::mock::responses::{Reply, Script};
use serde_json::{Value, json};

use super::client::Rpc;
use super::fixture;
use super::harness::{Lab, Session};
use crate::driver_support::STDIO_MCP_SERVER_JS;

/// A turn stopped at a server request.
struct Pending {
    rpc: Rpc,
    thread: String,
    turn: String,
    /// The server request frame.
    req: Value,
}

impl Pending {
    /// app-server, a workspace-write thread under `approval`, a turn with `prompt`, up to the first
    /// server request `method`.
    async fn start(lab: &Lab, approval: ApprovalPolicy, prompt: &str, method: &str) -> Pending {
        let mut rpc = Rpc::start(lab, false).await;
        let thread = rpc.thread_start(lab, approval, SandboxMode::WorkspaceWrite).await;
        let turn = rpc.turn_start(&thread, prompt).await;
        let (_, req) = rpc.srv.wait_method(0, method).await;
        Pending {
            rpc,
            thread,
            turn,
            req,
        }
    }
}

/// A turn stopped at the approval of `touch approved-marker.txt` (approval policy `untrusted`).
async fn command_approval() -> Option<(Lab, Pending)> {
    let script = Script::new()
        .then(Reply::new().exec_command("touch approved-marker.txt"))
        .otherwise(Script::tool_output_reply);
    let lab = Lab::new(script).await?;
    let p = Pending::start(
        &lab,
        ApprovalPolicy::Untrusted,
        "touch a file",
        "item/commandExecution/requestApproval",
    )
    .await;
    Some((lab, p))
}

#[tokio::test]
async fn app_server_steer_while_an_approval_is_pending() {
    let Some((lab, p)) = command_approval().await else {
        return;
    };
    let Pending {
        mut rpc,
        thread,
        turn,
        req,
    } = p;
    let resp = rpc
        .call(ClientRequest::TurnSteer(TurnSteerParams {
            thread_id: thread.clone(),
            expected_turn_id: turn.clone(),
            input: vec![UserInput::text("STEER while pending")],
            client_user_message_id: Some("client-pending".into()),
        }))
        .await;
    assert_eq!(
        resp["result"]["turnId"],
        turn.as_str(),
        "the steer is accepted while the request is outstanding"
    );
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(lab.mock.requests().len(), 1, "nothing moves until the answer");
    rpc.answer(
        &req,
        &CommandExecutionApprovalResponse {
            decision: CommandExecutionDecision::Accept,
        },
    )
    .await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let methods = s.methods();
    let at = |m: &str| methods.iter().position(|x| x == m);
    assert!(at("serverRequest/resolved") < at("turn/completed"));
    let (user_at, _) = rpc_user_message(&s, "client-pending");
    let cmd_done = s
        .values()
        .iter()
        .position(|v| v["method"] == "item/completed" && v["params"]["item"]["type"] == "commandExecution")
        .unwrap();
    assert!(cmd_done < user_at, "delivered after the approved command ran");
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    let summary = reqs[1].input_summary();
    let n = summary.len();
    assert!(summary[n - 2].starts_with("function_call_output"), "{summary:?}");
    assert_eq!(summary[n - 1], "message:user STEER while pending");
    fixture::app_server("steer_while_approval_pending", &s, &reqs, lab.dir.path());
}

/// Index and value of the `userMessage` `item/started` carrying `client_id`.
fn rpc_user_message(s: &Session, client_id: &str) -> (usize, Value) {
    s.values()
        .into_iter()
        .enumerate()
        .find(|(_, v)| v["method"] == "item/started" && v["params"]["item"]["clientId"] == client_id)
        .expect("the userMessage item")
}

#[tokio::test]
async fn app_server_interrupt_while_an_approval_is_pending() {
    let Some((lab, p)) = command_approval().await else {
        return;
    };
    let Pending {
        mut rpc,
        thread,
        turn,
        req,
    } = p;
    let resp = rpc
        .call(ClientRequest::TurnInterrupt(TurnInterruptParams {
            thread_id: thread.clone(),
            turn_id: turn.clone(),
        }))
        .await;
    assert!(resp["result"].is_object(), "{resp}");
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "interrupted");
    // Codex withdraws its own request.
    let id = req["id"].clone();
    rpc.srv
        .wait_from(0, "serverRequest/resolved", move |v| {
            v["method"] == "serverRequest/resolved" && v["params"]["requestId"] == id
        })
        .await;
    // A late answer to the withdrawn request.
    rpc.answer(
        &req,
        &CommandExecutionApprovalResponse {
            decision: CommandExecutionDecision::Accept,
        },
    )
    .await;
    let turn2 = rpc.turn_start(&thread, "next").await;
    let done = rpc.turn_completed(&turn2).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    assert!(
        !s.values().iter().any(|v| v.get("error").is_some()),
        "the late answer is ignored silently"
    );
    assert!(
        !lab.env.cwd.join("approved-marker.txt").exists(),
        "the command never ran"
    );
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap();
    assert!(out.contains("aborted by user"), "{out}");
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|u| u.contains("<turn_aborted>")), "{users:?}");
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("next"));
    fixture::app_server("interrupt_while_approval_pending", &s, &reqs, lab.dir.path());
}

async fn elicitation(answer: Value, name: &str) {
    let js_dir = tempfile::tempdir().unwrap();
    let js = js_dir.path().join("probe-mcp.js");
    std::fs::write(&js, STDIO_MCP_SERVER_JS).unwrap();
    let script = Script::new()
        .then(Reply::new().tool_search("add two integers"))
        .then(Reply::new().namespaced_call("mcp__probe", "add", json!({"a": 2, "b": 3})))
        .otherwise(Script::tool_output_reply);
    let opts = CodexEnvOptions {
        extra_toml: format!(
            "[mcp_servers.probe]\ncommand = \"node\"\nargs = [{:?}]\nenv = {{ PROBE_MARK = \"lab\" }}\n",
            js.display().to_string()
        ),
        ..Default::default()
    };
    let Some(lab) = Lab::with_options(script, opts).await else {
        return;
    };
    let Pending {
        mut rpc, turn, req, ..
    } = Pending::start(
        &lab,
        ApprovalPolicy::OnRequest,
        "please add 2 3",
        "mcpServer/elicitation/request",
    )
    .await;
    let p = &req["params"];
    assert_eq!(p["serverName"], "probe");
    assert_eq!(p["turnId"], turn.as_str());
    assert_eq!(p["mode"], "form");
    assert_eq!(p["requestedSchema"], json!({"type": "object", "properties": {}}));
    assert_eq!(p["_meta"]["codex_approval_kind"], "mcp_tool_call");
    assert_eq!(p["_meta"]["tool_name"], "add");
    assert_eq!(p["_meta"]["tool_params"], json!({"a": 2, "b": 3}));
    rpc.answer(&req, &answer).await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 3);
    let out = reqs[2].tool_output("call_mock_0002_0").unwrap();
    if answer["action"] == "accept" {
        assert!(out.contains("SUM=5 lab"), "{out}");
    } else {
        assert!(out.contains("user rejected MCP tool call"), "{out}");
    }
    fixture::app_server(name, &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_mcp_elicitation_accept() {
    elicitation(
        json!({"action": "accept", "content": {}}),
        "mcp_elicitation_accept",
    )
    .await;
}

#[tokio::test]
async fn app_server_mcp_elicitation_decline() {
    elicitation(json!({"action": "decline"}), "mcp_elicitation_decline").await;
}
