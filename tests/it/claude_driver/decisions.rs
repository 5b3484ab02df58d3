//! Decisions over the bidirectional transport: `can_use_tool` approved and denied (abort and continue),
//! a question answered with a choice, a plan reviewed with its text and approved or refused.

use agent_adaptor::driver::{ApprovalPolicy, DecisionKind, FallbackAction, Policy, QuestionMode};
use agent_adaptor::providers::claude::PermissionMode;
use agent_adaptor::runtime::{Agent, ApprovalHandler, ApprovalRequest, Payload, approve_all};

use super::{Cl, drain, run_error, transport};

fn handler(f: fn(&ApprovalRequest) -> Result<(), String>) -> ApprovalHandler {
    ApprovalHandler::new(move |req| async move { f(&req) })
}

#[tokio::test]
async fn an_approved_bash_call_runs_and_the_model_sees_its_output() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let approve = handler(|r| {
        assert_eq!(r.kind, DecisionKind::Permission);
        assert!(
            r.title.starts_with("Bash: touch created-by-tool.txt"),
            "{}",
            r.title
        );
        approve_all(r).map_err(|e| e.to_string())
    });
    let stream = agent.send("please run touch", cl.opts().on_approval(approve));
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "bidi");
    let r = outcome.unwrap();
    assert_eq!(r.text, "Tool said: created-by-tool.txt");
    assert!(cl.ws().join("created-by-tool.txt").exists(), "the tool ran");
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "approval.requested")),
        "the permission was asked"
    );
    let args = events.iter().find_map(|e| match &e.payload {
        Payload::ToolCall(c) if c.args.is_some() => c.args.clone(),
        _ => None,
    });
    assert_eq!(args.unwrap()["command"], "touch created-by-tool.txt && ls");
    let deltas = events
        .iter()
        .filter(|e| matches!(&e.payload, Payload::ToolCall(c) if !c.args_delta.is_empty()))
        .count();
    assert!(deltas > 0, "argument deltas are streamed");
    let result = events.iter().find_map(|e| match &e.payload {
        Payload::ToolResult(t) => Some(t.result.clone()),
        _ => None,
    });
    assert_eq!(result.unwrap()["text"], "created-by-tool.txt");
    cl.assert_reaped();
}

#[tokio::test]
async fn a_denial_aborts_by_default_and_continues_when_asked() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let deny = handler(|r| r.deny("not today").map_err(|e| e.to_string()));
    let outcome = agent
        .send("please run touch", cl.opts().on_approval(deny.clone()))
        .result()
        .await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_denied");
    assert_eq!(cl.requests().len(), 1, "no model call after the abort");
    assert!(!cl.ws().join("created-by-tool.txt").exists());

    let continue_policy = Policy::default().with_approvals(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send(
            "please run touch",
            cl.opts().policy(continue_policy).on_approval(deny),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "Tool failed: not today", "the model answered the denial");
    assert!(!cl.ws().join("created-by-tool.txt").exists());
    cl.assert_reaped();
}

#[tokio::test]
async fn a_question_is_answered_with_its_choices() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let ask = Policy::default().with_approvals(ApprovalPolicy {
        question: QuestionMode::Ask,
        ..Default::default()
    });
    let answer = handler(|r| {
        assert_eq!(r.kind, DecisionKind::Question);
        assert_eq!(r.title, "Which database should we use?");
        let keys: Vec<&str> = r.choices.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["Postgres", "SQLite"]);
        r.answer(
            r#"{"Which database should we use?": "SQLite", "Which features do you want?": "Auth, Export"}"#,
        )
        .map_err(|e| e.to_string())
    });
    let r = agent
        .send("please ask me", cl.opts().policy(ask).on_approval(answer))
        .result()
        .await
        .unwrap();
    let last = cl.requests().pop().unwrap();
    let results = last.tool_results();
    assert!(
        results[0]
            .content
            .contains("\"Which database should we use?\"=\"SQLite\""),
        "{results:?}"
    );
    assert!(results[0].content.contains("=\"Auth, Export\""), "{results:?}");
    assert!(r.text.starts_with("Tool said: "), "{}", r.text);
    cl.assert_reaped();
}

#[tokio::test]
async fn a_plan_review_carries_the_plan_and_is_approved_or_refused() {
    let Some(cl) = Cl::with(|c| c.permission_mode = Some(PermissionMode::Plan)).await else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    let approve = handler(|r| {
        assert_eq!(r.kind, DecisionKind::PlanReview);
        assert_eq!(r.title, "Plan: # Plan");
        assert!(
            r.details["plan"]
                .as_str()
                .unwrap()
                .contains("1. Create hello.txt"),
            "{:?}",
            r.details
        );
        r.approve().map_err(|e| e.to_string())
    });
    let r = agent
        .send("please make a plan", cl.opts().on_approval(approve))
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "Plan approved; starting.");

    let refuse = handler(|r| {
        r.deny("Please also add tests to the plan.")
            .map_err(|e| e.to_string())
    });
    let continue_policy = Policy::default().with_approvals(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send(
            "please make a plan",
            cl.opts().policy(continue_policy).on_approval(refuse),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "Tool failed: Please also add tests to the plan.");
    cl.assert_reaped();
}
