//! The conformance kit against the real CLI and the mock (a text turn and a tool turn with a permission
//! over the bidirectional transport, and a one-shot turn), and Inspect.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, Driver, Policy, Request};
use agent_adaptor::providers::claude::ClaudeDriver;
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};

use super::Cl;

#[tokio::test]
async fn the_claude_driver_passes_the_conformance_kit() {
    let Some(cl) = Cl::new().await else { return };
    for (prompt, oneshot) in [("please run touch", false), ("hello", true)] {
        let config = cl.driver.config().clone();
        let factory = move || Arc::new(ClaudeDriver::new(config.clone())) as Arc<dyn Driver>;
        let ws = cl.ws();
        let options = Options {
            run: Some(RunProbe {
                request: Box::new(move || {
                    let mut r = Request::new("conformance", prompt, ws.clone());
                    if oneshot {
                        r.policy = Policy::default().with_approvals(ApprovalPolicy::auto_approve());
                    }
                    r
                }),
                message: Some("thanks, that is all".into()),
                timeout: Duration::from_secs(180),
            }),
            session_state: None,
        };
        let report = check_driver(&factory, options).await;
        report.assert_passed();
        let mut clauses = vec![
            "CAP-01", "SES-04", "EVT-03", "EVT-11", "RUN-04", "MSG-01", "RSP-04", "CAP-11",
        ];
        if !oneshot {
            clauses.extend(["EVT-05", "APR-01", "APR-02"]);
        }
        for clause in clauses {
            assert!(
                report.checked.contains(&clause),
                "{clause} unchecked for {prompt}"
            );
        }
    }
}

#[tokio::test]
async fn inspect_reports_the_version_the_models_and_the_schema() {
    let Some(cl) = Cl::new().await else { return };
    let report = cl.driver.environment().await.unwrap();
    assert!(report.healthy, "{report:?}");
    assert_eq!(report.version.as_deref(), Some("2.1.332"));
    assert_eq!(report.messages, cl.driver.descriptor().messages);
    let models = cl.driver.models().await.unwrap();
    assert!(!models.is_empty(), "the initialize answer lists models");
    assert!(models.iter().all(|m| !m.id.is_empty()));
    assert!(cl.requests().is_empty(), "no model request for inspection");
    let schema = cl.driver.config_schema().unwrap();
    assert!(schema.fields.iter().any(|f| f.name == "max_turns_per_run"));
    cl.assert_reaped();
}
