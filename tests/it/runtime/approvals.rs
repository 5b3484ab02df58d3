//! Approvals: event form and handler form, exactly once under concurrent responders, policy
//! defaults and auto modes, timeout/reject fallbacks (abort, continue, retry with a new request id,
//! degrade notice), and the result-first immediate fallback.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, DecisionKind, Descriptor, FallbackAction, Policy, QuestionMode,
};
use agent_adaptor::runtime::{
    Agent, ApprovalError, ApprovalHandler, ApprovalRequest, CallOptions, FailureReason, Payload,
};
use agent_adaptor::testkit::reference::{
    ReferenceConfig, ReferenceDriver, Script, Step, reference_descriptor,
};
use futures::StreamExt;

fn ask(kind: DecisionKind) -> Script {
    Script::new(vec![
        Step::Approval {
            kind,
            title: "do it?".into(),
            choices: vec![agent_adaptor::driver::DecisionChoice {
                key: "a".into(),
                label: "Alpha".into(),
                description: String::new(),
            }],
        },
        Step::text("after"),
    ])
}

fn policy(p: ApprovalPolicy) -> CallOptions {
    CallOptions::new().policy(Policy {
        approvals: p,
        ..Default::default()
    })
}

async fn first_request(
    stream: &agent_adaptor::runtime::Stream,
) -> (ApprovalRequest, agent_adaptor::runtime::Events) {
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if let Payload::ApprovalRequest(r) = e.payload {
            return (r, events);
        }
    }
    panic!("no approval request");
}

#[tokio::test]
async fn event_form_approve_continues_and_is_exactly_once_under_concurrency() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let stream = agent.send("x", ());
    let (req, events) = first_request(&stream).await;
    assert!(req.is_live());
    assert!(req.deadline.is_some(), "default 30 s deadline");
    let wins = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let r = req.clone();
        let wins = wins.clone();
        tasks.push(tokio::spawn(async move {
            let res = if i % 2 == 0 { r.approve() } else { r.deny("no") };
            match res {
                Ok(()) => {
                    wins.fetch_add(1, Ordering::SeqCst);
                }
                Err(e) => assert!(e.is_resolved(), "losers see resolved/expired, got {e:?}"),
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    assert_eq!(wins.load(Ordering::SeqCst), 1, "exactly one responder wins");
    drop(events);
    let _ = stream.result().await;
    assert_eq!(req.approve(), Err(ApprovalError::Resolved));
}

#[tokio::test]
async fn handler_form_answers_questions_with_choice_keys() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Question)));
    let opts = policy(ApprovalPolicy {
        question: QuestionMode::Ask,
        ..Default::default()
    })
    .on_approval(ApprovalHandler::new(|req| async move {
        req.answer("a").map_err(|e| e.to_string())
    }));
    let r = agent.send("x", opts).result().await.unwrap();
    assert!(r.text.contains("[answer: Alpha]"), "{}", r.text);
}

#[tokio::test]
async fn questions_are_auto_denied_by_default_and_auto_modes_never_ask() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Question)));
    let stream = agent.send("x", ());
    let events: Vec<_> = stream.events().collect().await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, Payload::ApprovalRequest(_))),
        "default question mode is auto-deny"
    );
    assert!(stream.result().await.unwrap().text.contains("question denied"));

    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let r = agent
        .send("x", policy(ApprovalPolicy::auto_approve()))
        .result()
        .await
        .unwrap();
    assert!(r.text.contains("permission approved"));
}

#[tokio::test]
async fn reject_abort_fails_with_approval_denied_and_continue_keeps_going() {
    let deny = ApprovalHandler::new(|req| async move { req.deny("not today").map_err(|e| e.to_string()) });
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let err = agent
        .send("x", CallOptions::new().on_approval(deny.clone()))
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::ApprovalDenied));

    let opts = policy(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    })
    .on_approval(deny);
    let r = agent.send("x", opts).result().await.unwrap();
    assert!(
        r.text.contains("denied: not today") && r.text.contains("after"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn timeout_fallbacks_abort_and_retry_with_new_ids() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let p = ApprovalPolicy::default().with_timeout(Duration::from_millis(40));
    let stream = agent.send("x", policy(p));
    let events: Vec<_> = stream.events().collect().await;
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::ApprovalTimeout));
    assert!(events.iter().any(
        |e| matches!(&e.payload, Payload::Notice(n) if n.kind == "approval.resolved"
        && n.data.get("outcome").and_then(|v| v.as_str()) == Some("timed_out"))
    ));

    let retry = ApprovalPolicy {
        on_timeout: FallbackAction::Retry,
        max_retries: Some(2),
        ..p
    };
    let stream = agent.send("x", policy(retry));
    let events: Vec<_> = stream.events().collect().await;
    let ids: Vec<(String, u32)> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ApprovalRequest(r) => Some((r.id.clone(), r.attempt)),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 3, "first ask plus two retries");
    assert_eq!(ids.iter().map(|(_, a)| *a).collect::<Vec<_>>(), vec![0, 1, 2]);
    let unique: std::collections::HashSet<_> = ids.iter().map(|(id, _)| id).collect();
    assert_eq!(unique.len(), 3, "every retry has a new request id");
    assert_eq!(
        stream.result().await.unwrap_err().reason(),
        Some(FailureReason::ApprovalTimeout)
    );
}

#[tokio::test]
async fn retry_degrades_to_abort_with_a_notice_when_the_driver_cannot_retry() {
    let mut desc = reference_descriptor(agent_adaptor::driver::ContinueMode::InRun);
    desc.run_policy.retry = false;
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        script: Some(ask(DecisionKind::Permission)),
        descriptor: Some(desc),
        ..Default::default()
    }));
    let p = ApprovalPolicy {
        on_reject: FallbackAction::Retry,
        ..Default::default()
    };
    let stream = agent.send(
        "x",
        policy(p).on_approval(ApprovalHandler::new(|req| async move {
            req.deny("no").map_err(|e| e.to_string())
        })),
    );
    let events: Vec<_> = stream.events().collect().await;
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Notice(n)
        if n.data.get("warning").and_then(|v| v.as_str()) == Some("human_decision_retry_unsupported"))));
    assert_eq!(
        stream.result().await.unwrap_err().reason(),
        Some(FailureReason::ApprovalDenied)
    );
}

#[tokio::test]
async fn result_first_applies_the_timeout_fallback_immediately() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let stream = agent.send("x", policy(ApprovalPolicy::default().no_timeout()));
    let err = tokio::time::timeout(Duration::from_secs(5), stream.result())
        .await
        .expect("no hang")
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::ApprovalTimeout));
}

#[tokio::test]
async fn explicit_unsupported_modes_fail_before_launch() {
    let desc = Descriptor {
        driver_type: "no-hitl".into(),
        ..Default::default()
    };
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(desc),
        ..Default::default()
    }));
    let err = agent
        .send(
            "x",
            policy(ApprovalPolicy {
                permission: ApprovalMode::Ask,
                ..Default::default()
            }),
        )
        .result()
        .await
        .unwrap_err();
    assert_eq!(
        err.kind(),
        agent_adaptor::runtime::ErrorKind::HumanDecisionModeUnsupported
    );
}

#[tokio::test]
async fn a_handler_that_never_answers_is_an_agent_error() {
    let agent = Agent::new(ReferenceDriver::scripted(ask(DecisionKind::Permission)));
    let err = agent
        .send(
            "x",
            CallOptions::new().on_approval(ApprovalHandler::new(|_req| async { Ok(()) })),
        )
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::AgentError));
}
