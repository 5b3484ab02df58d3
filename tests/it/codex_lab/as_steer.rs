//! `codex app-server` mid-turn input: `turn/steer` while the model streams and while a tool runs,
//! steer errors, `turn/start` during an active turn, and `turn/interrupt` (mid-stream, followed
//! at once by `turn/start`; and during a running command).

use std::time::Duration;

use agent_adaptor::providers::codex::wire::client::{
    ApprovalPolicy, ClientRequest, SandboxMode, TurnInterruptParams, TurnSteerParams,
};
use agent_adaptor::providers::codex::wire::items::UserInput;
use agent_adaptor::testkit::mock::responses::{Reply, Script, StreamOutcome};
use serde_json::Value;

use super::client::{Rpc, items_of};
use super::fixture;
use super::harness::Lab;

/// A text reply streamed slowly: 1 s between deltas, so a test can act after the first one.
fn slow_text() -> Reply {
    Reply::new().text_paced(
        ["This is ", "a deliberately ", "slow answer ", "that takes time."],
        Duration::from_secs(1),
    )
}

fn steer(thread: &str, turn: &str, text: &str, client_id: &str) -> ClientRequest {
    ClientRequest::TurnSteer(TurnSteerParams {
        thread_id: thread.into(),
        expected_turn_id: turn.into(),
        input: vec![UserInput::text(text)],
        client_user_message_id: Some(client_id.into()),
    })
}

fn interrupt(thread: &str, turn: &str) -> ClientRequest {
    ClientRequest::TurnInterrupt(TurnInterruptParams {
        thread_id: thread.into(),
        turn_id: turn.into(),
    })
}

/// Index of the userMessage item/started carrying this clientId.
async fn wait_user_message(rpc: &Rpc, client_id: &str) -> (usize, Value) {
    let c = client_id.to_owned();
    rpc.srv
        .wait_from(0, &format!("userMessage {client_id}"), move |v| {
            v["method"] == "item/started" && v["params"]["item"]["clientId"] == c.as_str()
        })
        .await
}

#[tokio::test]
async fn app_server_steer_while_streaming_abandons_the_response() {
    let Some(lab) = Lab::new(Script::new().then(slow_text())).await else {
        return;
    };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "slow answer please").await;
    rpc.srv.wait_method(0, "item/agentMessage/delta").await;
    let resp = rpc
        .call(steer(&thread, &turn, "STEER while streaming", "client-msg-1"))
        .await;
    assert_eq!(
        resp["result"]["turnId"],
        turn.as_str(),
        "steer joins the active turn"
    );
    let (_, user) = wait_user_message(&rpc, "client-msg-1").await;
    assert_eq!(
        user["params"]["item"]["content"][0]["text"],
        "STEER while streaming"
    );
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].outcome,
        StreamOutcome::ClientGone,
        "the in-flight response was abandoned"
    );
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("STEER while streaming"));
    assert!(
        reqs[1].texts_of_role("assistant").is_empty(),
        "partial text is not kept: {:?}",
        reqs[1].input_summary()
    );
    // The abandoned message never completes.
    let completed: Vec<_> = items_of(&s, "completed", "agentMessage")
        .iter()
        .map(|i| i["id"].clone())
        .collect();
    assert!(
        !completed.iter().any(|id| id == "msg_mock_0001_0"),
        "{completed:?}"
    );
    fixture::app_server("steer_streaming", &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_steer_during_tool_waits_for_the_output() {
    let script = Script::new().then(Reply::new().exec_command("sleep 1.5 && echo done"));
    let Some(lab) = Lab::new(script).await else { return };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "run a slow command").await;
    rpc.srv
        .wait_from(0, "command started", |v| {
            v["method"] == "item/started" && v["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    let resp = rpc
        .call(steer(&thread, &turn, "STEER while tool runs", "client-msg-2"))
        .await;
    assert_eq!(resp["result"]["turnId"], turn.as_str());
    let (user_at, _) = wait_user_message(&rpc, "client-msg-2").await;
    let (cmd_done_at, _) = rpc
        .srv
        .wait_from(0, "command completed", |v| {
            v["method"] == "item/completed" && v["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    assert!(
        cmd_done_at < user_at,
        "the steer is delivered after the tool output"
    );
    rpc.turn_completed(&turn).await;
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    let summary = reqs[1].input_summary();
    let n = summary.len();
    assert!(summary[n - 2].starts_with("function_call_output"), "{summary:?}");
    assert_eq!(summary[n - 1], "message:user STEER while tool runs");
    fixture::app_server("steer_during_tool", &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_steer_and_interrupt_errors() {
    let Some(lab) = Lab::new(Script::new().then(Reply::new().text("quick")).then(slow_text())).await else {
        return;
    };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn1 = rpc.turn_start(&thread, "quick one").await;
    rpc.turn_completed(&turn1).await;
    let resp = rpc.call(steer(&thread, &turn1, "too late", "client-late")).await;
    assert_eq!(resp["error"]["code"], -32600);
    assert_eq!(resp["error"]["message"], "no active turn to steer");
    let resp = rpc.call(interrupt(&thread, &turn1)).await;
    assert_eq!(resp["error"]["message"], "no active turn to interrupt");
    let turn2 = rpc.turn_start(&thread, "slow answer please").await;
    let t2 = turn2.clone();
    rpc.srv
        .wait_from(0, "turn 2 delta", move |v| {
            v["method"] == "item/agentMessage/delta" && v["params"]["turnId"] == t2.as_str()
        })
        .await;
    let resp = rpc.call(steer(&thread, &turn1, "stale id", "client-stale")).await;
    assert_eq!(resp["error"]["code"], -32600);
    let msg = resp["error"]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("expected active turn id") && msg.contains(&turn1) && msg.contains(&turn2),
        "{msg}"
    );
    let resp = rpc.call(interrupt(&thread, &turn2)).await;
    assert!(resp["result"].is_object(), "{resp}");
    let done = rpc.turn_completed(&turn2).await;
    assert_eq!(done["turn"]["status"], "interrupted");
    let s = rpc.close().await;
    fixture::app_server("steer_errors", &s, &lab.mock.requests(), lab.dir.path());
}

#[tokio::test]
async fn app_server_turn_start_while_active_acts_as_steer() {
    let Some(lab) = Lab::new(Script::new().then(slow_text())).await else {
        return;
    };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "slow answer please").await;
    rpc.srv.wait_method(0, "item/agentMessage/delta").await;
    let second = rpc.turn_start(&thread, "START while active").await;
    assert_eq!(
        second, turn,
        "turn/start during an active turn returns the active turn id"
    );
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let started = s.methods().iter().filter(|m| *m == "turn/started").count();
    assert_eq!(started, 1, "no second turn");
    let reqs = lab.mock.requests();
    assert_eq!(reqs[0].outcome, StreamOutcome::ClientGone);
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("START while active"));
    fixture::app_server("turn_start_while_active", &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_interrupt_then_start() {
    let Some(lab) = Lab::new(Script::new().then(slow_text())).await else {
        return;
    };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "slow answer please").await;
    rpc.srv.wait_method(0, "item/agentMessage/delta").await;
    // Both frames back to back, without waiting: Codex processes them in order.
    let int_id = rpc.send(interrupt(&thread, &turn)).await;
    let start = ClientRequest::TurnStart(agent_adaptor::providers::codex::wire::client::TurnStartParams {
        thread_id: thread.clone(),
        input: vec![UserInput::text("AFTER INTERRUPT")],
        ..Default::default()
    });
    let start_id = rpc.send(start).await;
    let resp = rpc.response(&int_id).await;
    assert_eq!(resp["result"], serde_json::json!({}));
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "interrupted");
    let resp = rpc.response(&start_id).await;
    let turn2 = resp["result"]["turn"]["id"].as_str().unwrap().to_owned();
    assert_ne!(turn2, turn, "a new turn");
    let done2 = rpc.turn_completed(&turn2).await;
    assert_eq!(done2["turn"]["status"], "completed");
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    assert_eq!(reqs[0].outcome, StreamOutcome::ClientGone);
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|u| u.contains("<turn_aborted>")), "{users:?}");
    assert_eq!(users.last().map(String::as_str), Some("AFTER INTERRUPT"));
    assert!(
        reqs[1].texts_of_role("assistant").is_empty(),
        "partial text dropped"
    );
    fixture::app_server("interrupt_then_start", &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_interrupt_during_command_does_not_kill_it() {
    let script = Script::new().then(Reply::new().exec_command("sleep 2 && touch marker-done.txt"));
    let Some(lab) = Lab::new(script).await else { return };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "run a slow command").await;
    rpc.srv
        .wait_from(0, "command started", |v| {
            v["method"] == "item/started" && v["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    let resp = rpc.call(interrupt(&thread, &turn)).await;
    assert_eq!(resp["result"], serde_json::json!({}));
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "interrupted");
    // Follow-up turn so the model's view of the aborted call is recorded.
    let turn2 = rpc.turn_start(&thread, "what happened?").await;
    rpc.turn_completed(&turn2).await;
    // The command keeps running; when it ends, Codex still reports it, under the OLD turn id,
    // after that turn's terminal.
    let (late_at, late) = rpc
        .srv
        .wait_from(0, "late command completion", |v| {
            v["method"] == "item/completed" && v["params"]["item"]["type"] == "commandExecution"
        })
        .await;
    let s = rpc.close().await;
    assert!(
        lab.env.cwd.join("marker-done.txt").exists(),
        "the command kept running after the interrupt"
    );
    assert_eq!(late["params"]["turnId"], turn.as_str());
    assert_eq!(late["params"]["item"]["status"], "completed");
    let terminal_at = s
        .values()
        .iter()
        .position(|v| v["method"] == "turn/completed" && v["params"]["turn"]["id"] == turn.as_str())
        .unwrap();
    assert!(
        late_at > terminal_at,
        "item/completed arrives after the interrupted turn's turn/completed"
    );
    let reqs = lab.mock.requests();
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap_or_default();
    assert!(out.contains("aborted by user"), "{out}");
    fixture::app_server("interrupt_during_command", &s, &reqs, lab.dir.path());
}
