//! Questions in Codex's Plan collaboration mode (`plan_mode`): the model's `request_user_input` reaches
//! the run's question policy — answered by the host (several questions at once), auto-denied (the
//! model gets no answers and continues), and denied by the host with abort (the turn is interrupted) —
//! and in the default mode Codex never asks.

use agent_adaptor::driver::{ApprovalPolicy, DecisionKind, FallbackAction, Policy, QuestionMode};
use agent_adaptor::runtime::{Agent, ApprovalHandler};
use agent_adaptor::testkit::mock::responses::{Reply, Script};
use serde_json::{Value, json};

use super::{Cx, run_error};

fn questions() -> Value {
    json!([
        {"id":"db_choice","header":"Database","question":"Which database should we use?",
         "options":[{"label":"Postgres (Recommended)","description":"Relational"},{"label":"SQLite","description":"Embedded"}]},
        {"id":"test_style","header":"Tests","question":"Which tests first?",
         "options":[{"label":"Unit","description":"Fast"},{"label":"Integration","description":"Realistic"}]}
    ])
}

/// Asks the questions, then echoes the tool output the CLI sent back.
fn asking() -> Script {
    Script::new()
        .then(Reply::new().request_user_input(questions()))
        .then_with(Script::tool_output_reply)
}

fn policy(question: QuestionMode, on_reject: FallbackAction) -> Policy {
    Policy::workspace_write().with_approvals(ApprovalPolicy {
        question,
        on_reject,
        ..Default::default()
    })
}

/// The tool output of the second model request, parsed.
fn tool_output(cx: &Cx) -> Value {
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2, "one request after the question");
    let (_, out) = reqs[1].tool_outputs().pop().expect("the question's tool output");
    serde_json::from_str(&out).unwrap_or_else(|_| panic!("JSON tool output: {out}"))
}

#[tokio::test]
async fn plan_mode_questions_reach_the_host_and_the_model_gets_the_answers() {
    let Some(cx) = Cx::with(asking(), |c| c.plan_mode = true).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let answer = ApprovalHandler::new(|r| async move {
        assert_eq!(r.kind, DecisionKind::Question);
        assert_eq!(r.title, "Which database should we use? (+1 more)");
        let keys: Vec<&str> = r.choices.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["Postgres (Recommended)", "SQLite"]);
        assert_eq!(r.details["questions"][1]["id"], "test_style");
        r.answer(r#"{"db_choice":"SQLite","test_style":["Integration","user_note: smoke tests too"]}"#)
            .map_err(|e| e.to_string())
    });
    let r = agent
        .send(
            "plan the storage layer",
            cx.opts()
                .policy(policy(QuestionMode::Ask, FallbackAction::Abort))
                .on_approval(answer),
        )
        .result()
        .await
        .unwrap();
    assert!(r.text.starts_with("Tool said: "), "{}", r.text);
    assert_eq!(
        tool_output(&cx),
        json!({"answers":{"db_choice":{"answers":["SQLite"]},"test_style":{"answers":["Integration","user_note: smoke tests too"]}}})
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn an_auto_denied_question_continues_without_answers() {
    let Some(cx) = Cx::with(asking(), |c| c.plan_mode = true).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let r = agent
        .send(
            "plan the storage layer",
            cx.opts()
                .policy(policy(QuestionMode::AutoDeny, FallbackAction::Continue)),
        )
        .result()
        .await
        .unwrap();
    assert!(r.text.starts_with("Tool said: "), "{}", r.text);
    assert_eq!(tool_output(&cx), json!({"answers":{}}));
    cx.assert_reaped();
}

#[tokio::test]
async fn a_question_denied_with_abort_interrupts_the_turn() {
    let Some(cx) = Cx::with(asking(), |c| c.plan_mode = true).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let deny = ApprovalHandler::new(|r| async move { r.deny("not now").map_err(|e| e.to_string()) });
    let outcome = agent
        .send(
            "plan the storage layer",
            cx.opts()
                .policy(policy(QuestionMode::Ask, FallbackAction::Abort))
                .on_approval(deny),
        )
        .result()
        .await;
    assert_eq!(
        run_error(&outcome).reason.as_str(),
        "approval_denied",
        "{outcome:?}"
    );
    assert_eq!(cx.mock.requests().len(), 1, "no model call after the abort");
    cx.assert_reaped();
}

#[tokio::test]
async fn without_plan_mode_codex_never_asks() {
    let Some(cx) = Cx::new(asking()).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let refuse = ApprovalHandler::new(|_r| async move { Err::<(), String>("no question expected".into()) });
    let r = agent
        .send(
            "plan the storage layer",
            cx.opts()
                .policy(policy(QuestionMode::Ask, FallbackAction::Abort))
                .on_approval(refuse),
        )
        .result()
        .await
        .unwrap();
    assert!(
        r.text.contains("unavailable in Default mode"),
        "the model is told instead: {}",
        r.text
    );
    cx.assert_reaped();
}
