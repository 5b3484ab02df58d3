//! `codex app-server` server requests: command, file-change and permissions approvals answered
//! accept / decline, and `item/tool/requestUserInput` in plan collaboration mode.

use agent_adaptor::providers::codex::wire::client::{
    ApprovalPolicy, CollaborationMode, CollaborationSettings, SandboxMode, TurnStartParams,
};
use agent_adaptor::providers::codex::wire::items::UserInput;
use agent_adaptor::providers::codex::wire::server_request::{
    CommandExecutionApprovalResponse, CommandExecutionDecision, FileChangeApprovalResponse,
    FileChangeDecision, PermissionsApprovalResponse, UserInputResponse,
};
use agent_adaptor::testkit::codex_env::CodexEnvOptions;
use agent_adaptor::testkit::mock::responses::{Reply, Script};
use serde_json::{Value, json};

use super::client::{Rpc, items_of};
use super::fixture;
use super::harness::Lab;

async fn command_approval(decision: CommandExecutionDecision, name: &str) {
    let script = Script::new()
        .then(Reply::new().exec_command("touch approved-marker.txt"))
        .then_with(Script::tool_output_reply);
    let Some(lab) = Lab::new(script).await else { return };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::Untrusted, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "touch a file").await;
    let (_, req) = rpc
        .srv
        .wait_method(0, "item/commandExecution/requestApproval")
        .await;
    assert_eq!(req["params"]["turnId"], turn.as_str());
    assert!(
        req["params"]["command"]
            .as_str()
            .unwrap()
            .contains("touch approved-marker.txt")
    );
    rpc.answer(
        &req,
        &CommandExecutionApprovalResponse {
            decision: decision.clone(),
        },
    )
    .await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let item = &items_of(&s, "completed", "commandExecution")[0];
    let reqs = lab.mock.requests();
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap();
    let marker = lab.env.cwd.join("approved-marker.txt").exists();
    match decision {
        CommandExecutionDecision::Decline => {
            assert_eq!(item["status"], "declined");
            assert!(out.contains("rejected by user"), "{out}");
            assert!(!marker);
        }
        _ => {
            assert_eq!(item["status"], "completed");
            assert!(marker);
        }
    }
    assert!(s.methods().iter().any(|m| m == "serverRequest/resolved"));
    fixture::app_server(name, &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_command_approval_accept() {
    command_approval(CommandExecutionDecision::Accept, "approval_command_accept").await;
}

#[tokio::test]
async fn app_server_command_approval_decline() {
    command_approval(CommandExecutionDecision::Decline, "approval_command_decline").await;
}

async fn file_change_approval(decision: FileChangeDecision, name: &str) {
    let patch = "*** Begin Patch\n*** Add File: patched.txt\n+from apply_patch\n*** End Patch\n";
    let script = Script::new()
        .then(Reply::new().apply_patch(patch))
        .then_with(Script::tool_output_reply);
    let Some(lab) = Lab::new(script).await else { return };
    let mut rpc = Rpc::start(&lab, false).await;
    // read-only: every write needs approval.
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::ReadOnly)
        .await;
    let turn = rpc.turn_start(&thread, "patch a file").await;
    let (_, req) = rpc.srv.wait_method(0, "item/fileChange/requestApproval").await;
    assert_eq!(req["params"]["turnId"], turn.as_str());
    rpc.answer(&req, &FileChangeApprovalResponse { decision }).await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let item = &items_of(&s, "completed", "fileChange")[0];
    let written = lab.env.cwd.join("patched.txt").exists();
    let reqs = lab.mock.requests();
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap();
    if decision == FileChangeDecision::Decline {
        assert_eq!(item["status"], "declined");
        assert!(!written);
        assert!(out.contains("rejected"), "{out}");
    } else {
        assert_eq!(item["status"], "completed");
        assert!(written);
    }
    fixture::app_server(name, &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_file_change_approval_accept() {
    file_change_approval(FileChangeDecision::Accept, "approval_file_change_accept").await;
}

#[tokio::test]
async fn app_server_file_change_approval_decline() {
    file_change_approval(FileChangeDecision::Decline, "approval_file_change_decline").await;
}

#[tokio::test]
async fn app_server_permissions_approval() {
    let args = json!({"permissions": {"network": {"enabled": true}}, "reason": "Need network to fetch deps"});
    let script = Script::new()
        .then(Reply::new().function_call("request_permissions", args))
        .then_with(Script::tool_output_reply);
    let opts = CodexEnvOptions {
        features: vec![("request_permissions_tool".into(), true)],
        ..Default::default()
    };
    let Some(lab) = Lab::with_options(script, opts).await else {
        return;
    };
    let mut rpc = Rpc::start(&lab, false).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc.turn_start(&thread, "get network").await;
    let (_, req) = rpc.srv.wait_method(0, "item/permissions/requestApproval").await;
    assert_eq!(req["params"]["permissions"]["network"]["enabled"], true, "{req}");
    // Grant nothing: the empty profile is the decline shape.
    rpc.answer(
        &req,
        &PermissionsApprovalResponse {
            permissions: json!({}),
            scope: None,
        },
    )
    .await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap();
    assert!(!out.is_empty());
    fixture::app_server("approval_permissions", &s, &reqs, lab.dir.path());
}

#[tokio::test]
async fn app_server_request_user_input_in_plan_mode() {
    let questions = json!([
        {"id":"db_choice","header":"Database","question":"Which database should we use?",
         "options":[{"label":"Postgres (Recommended)","description":"Relational"},{"label":"SQLite","description":"Embedded"}]},
        {"id":"test_style","header":"Tests","question":"Which tests first?",
         "options":[{"label":"Unit","description":"Fast"},{"label":"Integration","description":"Realistic"}]}
    ]);
    let script = Script::new()
        .then(Reply::new().request_user_input(questions))
        .then_with(Script::tool_output_reply);
    let Some(lab) = Lab::new(script).await else { return };
    let mut rpc = Rpc::start(&lab, true).await;
    let thread = rpc
        .thread_start(&lab, ApprovalPolicy::OnRequest, SandboxMode::WorkspaceWrite)
        .await;
    let turn = rpc
        .turn_start_with(TurnStartParams {
            thread_id: thread,
            input: vec![UserInput::text("plan the storage layer")],
            collaboration_mode: Some(CollaborationMode {
                mode: "plan".into(),
                settings: CollaborationSettings {
                    model: "gpt-5.5".into(),
                    reasoning_effort: None,
                    developer_instructions: None,
                },
            }),
            ..Default::default()
        })
        .await;
    let (_, req) = rpc.srv.wait_method(0, "item/tool/requestUserInput").await;
    assert_eq!(req["params"]["questions"][0]["id"], "db_choice");
    assert_eq!(req["params"]["questions"][0]["isOther"], true);
    let answer = UserInputResponse::default()
        .with("db_choice", ["Postgres (Recommended)"])
        .with("test_style", ["Integration", "user_note: also add smoke tests"]);
    rpc.answer(&req, &answer).await;
    let done = rpc.turn_completed(&turn).await;
    assert_eq!(done["turn"]["status"], "completed");
    let s = rpc.close().await;
    let reqs = lab.mock.requests();
    let out = reqs[1].tool_output("call_mock_0001_0").unwrap();
    let parsed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        parsed,
        serde_json::to_value(&answer).unwrap(),
        "the model gets the answer JSON verbatim"
    );
    fixture::app_server("request_user_input", &s, &reqs, lab.dir.path());
}
