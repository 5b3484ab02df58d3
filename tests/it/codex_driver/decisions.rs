//! Codex server requests answered through the run's decision policy: a command that asks for escalated
//! permissions (approved; denied with abort; denied and continued) and a file change outside a
//! read-only sandbox (approved; auto-denied).

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, FallbackAction, Policy};
use agent_adaptor::runtime::{Agent, ApprovalHandler, Payload, approve_all};
use agent_adaptor::testkit::mock::responses::{Reply, Script};

use super::{Cx, auto_approve, drain, run_error};

fn handler(f: fn(&agent_adaptor::runtime::ApprovalRequest) -> Result<(), String>) -> ApprovalHandler {
    ApprovalHandler::new(move |req| async move { f(&req) })
}

fn escalated() -> Script {
    Script::new()
        .then(Reply::new().exec_command_escalated("touch approved-marker.txt", "Need to write"))
        .then_with(Script::tool_output_reply)
}

#[tokio::test]
async fn an_approved_command_runs_and_the_model_sees_its_output() {
    let Some(cx) = Cx::new(escalated()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send(
        "touch a file",
        cx.opts()
            .policy(Policy::read_only())
            .on_approval(handler(|r| approve_all(r).map_err(|e| e.to_string()))),
    );
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(r.text.starts_with("Tool said: "), "{}", r.text);
    assert!(cx.ws.join("approved-marker.txt").exists(), "the command ran");
    let asked = events.iter().find_map(|e| match &e.payload {
        Payload::Notice(n) if n.kind == "approval.requested" => Some(n.clone()),
        _ => None,
    });
    let asked = asked.expect("the permission was asked");
    assert!(asked.text.contains("touch approved-marker.txt"), "{asked:?}");
    cx.assert_reaped();
}

#[tokio::test]
async fn a_denial_aborts_by_default_and_continues_when_asked() {
    let Some(cx) = Cx::new(escalated()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let deny = handler(|r| r.deny("not today").map_err(|e| e.to_string()));
    let outcome = agent
        .send(
            "touch a file",
            cx.opts().policy(Policy::read_only()).on_approval(deny.clone()),
        )
        .result()
        .await;
    assert_eq!(
        run_error(&outcome).reason.as_str(),
        "approval_denied",
        "{outcome:?}"
    );
    assert!(!cx.ws.join("approved-marker.txt").exists());
    assert_eq!(cx.mock.requests().len(), 1, "no model call after the abort");

    cx.mock.set_script(escalated());
    let mut policy = Policy::read_only();
    policy.approvals = ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    };
    let r = agent
        .send("touch a file", cx.opts().policy(policy).on_approval(deny))
        .result()
        .await
        .unwrap();
    assert!(r.text.contains("rejected"), "the model is told: {}", r.text);
    assert!(!cx.ws.join("approved-marker.txt").exists());
    cx.assert_reaped();
}

fn patch() -> Script {
    let patch = "*** Begin Patch\n*** Add File: patched.txt\n+from apply_patch\n*** End Patch\n";
    Script::new()
        .then(Reply::new().apply_patch(patch))
        .then_with(Script::tool_output_reply)
}

#[tokio::test]
async fn file_changes_in_a_read_only_sandbox_follow_the_policy() {
    let Some(cx) = Cx::new(patch()).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let approve = Policy::read_only().with_approvals(auto_approve());
    let stream = agent.send("patch a file", cx.opts().policy(approve));
    let events = drain(&stream).await;
    stream.result().await.unwrap();
    assert!(cx.ws.join("patched.txt").exists(), "approved: the patch applied");
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::ToolCall(c) if c.name == "apply_patch"))
    );

    std::fs::remove_file(cx.ws.join("patched.txt")).unwrap();
    cx.mock.set_script(patch());
    let deny = Policy::read_only().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send("patch a file", cx.opts().policy(deny))
        .result()
        .await
        .unwrap();
    assert!(!cx.ws.join("patched.txt").exists(), "denied: nothing written");
    assert!(r.text.contains("rejected"), "{}", r.text);
    cx.assert_reaped();
}
