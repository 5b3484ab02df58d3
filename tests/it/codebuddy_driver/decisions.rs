//! Decisions over the control transport: `can_use_tool` approved, denied (abort and continue), a question
//! answered, and a plan approved and refused.

use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, DecisionKind, FallbackAction, Policy, QuestionMode,
};
use agent_adaptor::providers::codebuddy::PermissionMode;
use agent_adaptor::runtime::{Agent, ApprovalHandler, Payload, approve_all};

use super::{Cb, code, drain, run_error, transport};

fn handler(f: fn(&agent_adaptor::runtime::ApprovalRequest) -> Result<(), String>) -> ApprovalHandler {
    ApprovalHandler::new(move |req| async move { f(&req) })
}

#[tokio::test]
async fn an_approved_bash_call_runs_and_the_model_sees_its_output() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let stream = agent.send(
        "zzbash please",
        cb.opts()
            .on_approval(handler(|r| approve_all(r).map_err(|e| e.to_string()))),
    );
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "control");
    let r = outcome.unwrap();
    assert!(r.text.starts_with("Done n=2: Command: echo hi"), "{}", r.text);
    let raw = String::from_utf8_lossy(&r.raw().stdout).into_owned();
    assert!(
        raw.contains("agent-adaptor-initialize"),
        "the handshake is in the raw stdout"
    );
    assert!(
        !raw.contains(agent_adaptor::testkit::codebuddy_env::DUMMY_API_KEY),
        "the API key echoed by initialize is redacted"
    );
    let asked = events.iter().find_map(|e| match &e.payload {
        Payload::Notice(n) if n.kind == "approval.requested" => Some(n.clone()),
        _ => None,
    });
    assert!(asked.is_some(), "the permission was asked");
    let tool_start = events.iter().find_map(|e| match &e.payload {
        Payload::ToolCall(c) if c.name == "Bash" => Some(c.id.clone()),
        _ => None,
    });
    assert_eq!(tool_start.as_deref(), Some("call_mock_0001_0"));
    let result = events.iter().find_map(|e| match &e.payload {
        Payload::ToolResult(t) => Some(t.result.clone()),
        _ => None,
    });
    assert!(result.unwrap()["text"].as_str().unwrap().contains("Stdout: hi"));
    cb.assert_reaped();
}

#[tokio::test]
async fn a_denial_aborts_by_default_and_continues_when_asked() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let deny = handler(|r| r.deny("not today").map_err(|e| e.to_string()));
    let outcome = agent
        .send("zzbash please", cb.opts().on_approval(deny.clone()))
        .result()
        .await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_denied");
    assert_eq!(
        cb.mock.completion_requests().len(),
        1,
        "no model call after the abort"
    );

    let continue_policy = Policy::default().with_approvals(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send(
            "zzbash please",
            cb.opts().policy(continue_policy).on_approval(deny),
        )
        .result()
        .await
        .unwrap();
    assert!(
        r.text.contains("Done n=3"),
        "the model answered the denial: {}",
        r.text
    );
    cb.assert_reaped();
}

#[tokio::test]
async fn a_question_is_answered_with_a_choice() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let ask = Policy::default().with_approvals(ApprovalPolicy {
        question: QuestionMode::Ask,
        ..Default::default()
    });
    let answer = handler(|r| {
        assert_eq!(r.kind, DecisionKind::Question);
        assert_eq!(r.title, "Which color?");
        assert_eq!(r.choices.len(), 2);
        r.answer("Blue").map_err(|e| e.to_string())
    });
    let r = agent
        .send("zzask me", cb.opts().policy(ask).on_approval(answer))
        .result()
        .await
        .unwrap();
    let last = cb.mock.completion_requests().pop().unwrap();
    let results = last.tool_results();
    assert!(results.iter().any(|t| t.contains("Blue")), "{results:?}");
    assert!(r.text.starts_with("Done n=2"), "{}", r.text);
    cb.assert_reaped();
}

#[tokio::test]
async fn a_plan_review_is_asked_approved_and_refused() {
    let Some(cb) = Cb::with(|c| c.permission_mode = Some(PermissionMode::Plan)).await else {
        return;
    };
    let agent = Agent::new(cb.driver.clone());
    let approve = handler(|r| {
        assert_eq!(r.kind, DecisionKind::PlanReview);
        assert!(r.title.starts_with("Plan: 1. Read the code"), "{}", r.title);
        r.approve().map_err(|e| e.to_string())
    });
    let r = agent
        .send("zzplan it", cb.opts().on_approval(approve))
        .result()
        .await
        .unwrap();
    assert!(r.text.starts_with("Done n=2"), "{}", r.text);

    let refuse = handler(|r| r.deny("make it shorter").map_err(|e| e.to_string()));
    let stream = agent.send("zzplan it", cb.opts().on_approval(refuse));
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_denied");
    assert!(events.iter().any(|e| matches!(e.payload, Payload::TurnEnd(_))));
    let auto_deny = Policy::default().with_approvals(ApprovalPolicy {
        plan_review: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let outcome = agent
        .send("zzplan it", cb.opts().policy(auto_deny))
        .result()
        .await;
    assert_eq!(
        code(&outcome),
        "decision_rejected",
        "a refused plan without interrupt leaves the turn open; the driver ends it"
    );
    cb.assert_reaped();
}
