//! The one error verdict: reasons, partial results, and the first confirmed cause winning.

use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, DecisionKind, FailureCode, Policy};
use agent_adaptor::runtime::{Agent, ApprovalHandler, CallOptions, ErrorKind, FailureReason};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};

fn driver(steps: Vec<Step>) -> ReferenceDriver {
    ReferenceDriver::scripted(Script::new(steps))
}

#[tokio::test]
async fn a_driver_failure_is_a_run_error_with_the_partial_result() {
    let agent = Agent::new(driver(vec![
        Step::text("partial answer"),
        Step::Stdout("raw bytes\n".into()),
        Step::Fail {
            code: FailureCode::AgentError,
            message: "model exploded".into(),
        },
    ]));
    let err = agent.send("x", ()).result().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Run);
    let run = err.as_run().unwrap();
    assert_eq!(run.reason, FailureReason::AgentError);
    assert_eq!(run.message, "model exploded");
    assert_eq!(run.result.text, "partial answer", "partial text is kept");
    assert_eq!(run.result.raw().stdout, b"raw bytes\n", "raw output is kept");
    assert!(!run.result.transcript().is_empty());
    assert_eq!(
        run.details.get("code").and_then(|v| v.as_str()),
        Some("agent_error")
    );
}

#[tokio::test]
async fn unknown_driver_codes_pass_through_verbatim() {
    let agent = Agent::new(driver(vec![Step::Fail {
        code: FailureCode::Other("quota_exhausted".into()),
        message: "q".into(),
    }]));
    let err = agent.send("x", ()).result().await.unwrap_err();
    assert_eq!(err.reason().unwrap().as_str(), "quota_exhausted");
}

#[tokio::test]
async fn deadline_beats_a_later_approval_timeout() {
    // The parent deadline fires while the approval is pending: deadline_exceeded, not approval_timeout.
    let agent = Agent::new(driver(vec![Step::Approval {
        kind: DecisionKind::Permission,
        title: "t".into(),
        choices: vec![],
    }]));
    let opts = CallOptions::new()
        .timeout(Duration::from_millis(100))
        .policy(Policy {
            approvals: ApprovalPolicy::default().with_timeout(Duration::from_secs(30)),
            ..Default::default()
        })
        .on_approval(ApprovalHandler::new(|_req| async {
            tokio::time::sleep(Duration::from_secs(60)).await;
            Ok(())
        }));
    let err = agent.send("x", opts).result().await.unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::DeadlineExceeded));
}

#[tokio::test]
async fn approval_abort_then_cancel_keeps_the_approval_reason() {
    let agent = Agent::new(driver(vec![
        Step::Approval {
            kind: DecisionKind::Permission,
            title: "t".into(),
            choices: vec![],
        },
        Step::Sleep(Duration::from_secs(30)),
    ]));
    let opts = CallOptions::new().on_approval(ApprovalHandler::new(|req| async move {
        req.deny("no").map_err(|e| e.to_string())
    }));
    let stream = agent.send("x", opts);
    // Cancel shortly after the denial was confirmed.
    let s2 = stream.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        s2.cancel();
    });
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::ApprovalDenied));
    assert!(err.as_run().unwrap().causes.len() >= 2 || err.as_run().unwrap().causes.len() == 1);
}

#[tokio::test]
async fn cancel_is_idempotent_and_reports_cancelled() {
    let agent = Agent::new(driver(vec![
        Step::text("a"),
        Step::Sleep(Duration::from_secs(30)),
    ]));
    let stream = agent.send("x", ());
    tokio::time::sleep(Duration::from_millis(30)).await;
    stream.cancel();
    stream.cancel();
    let err = tokio::time::timeout(Duration::from_secs(5), stream.result())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::Cancelled));
    assert_eq!(
        err.as_run().unwrap().result.text,
        "a",
        "partial output survives cancellation"
    );
}

#[tokio::test]
async fn an_execution_timeout_is_deadline_exceeded() {
    let agent = Agent::new(driver(vec![Step::Sleep(Duration::from_secs(30))]));
    let err = agent
        .send("x", CallOptions::new().timeout(Duration::from_millis(50)))
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::DeadlineExceeded));
}
