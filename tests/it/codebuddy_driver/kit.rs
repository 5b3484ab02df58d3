//! The conformance kit against the real CLI and the mock: a text turn and a tool turn with a permission
//! (the kit's harness approves every decision) over the control transport, and a headless turn.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, Driver, Policy, Request};
use agent_adaptor::providers::codebuddy::CodeBuddyDriver;
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};

use super::Cb;

#[tokio::test]
async fn the_codebuddy_driver_passes_the_conformance_kit() {
    let Some(cb) = Cb::new().await else { return };
    for (prompt, headless) in [("zzbash please", false), ("hello", true)] {
        let config = cb.driver.config().clone();
        let factory = move || Arc::new(CodeBuddyDriver::new(config.clone())) as Arc<dyn Driver>;
        let ws = cb.ws.clone();
        let options = Options {
            run: Some(RunProbe {
                request: Box::new(move || {
                    let mut r = Request::new("conformance", prompt, ws.clone());
                    if headless {
                        r.policy = Policy::default().with_approvals(ApprovalPolicy::auto_approve());
                    }
                    r
                }),
                message: Some("zzthanks, that is all".into()),
                timeout: Duration::from_secs(180),
            }),
            session_state: None,
        };
        let report = check_driver(&factory, options).await;
        report.assert_passed();
        let mut clauses = vec![
            "CAP-01", "SES-04", "EVT-03", "EVT-11", "RUN-04", "MSG-01", "RSP-04",
        ];
        if !headless {
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
async fn environment_reports_the_cli_version() {
    let Some(cb) = Cb::new().await else { return };
    let report = cb.driver.environment().await.unwrap();
    assert!(report.healthy, "{report:?}");
    assert_eq!(report.version.as_deref(), Some("2.117.0"));
    assert_eq!(report.messages, cb.driver.descriptor().messages);
    cb.assert_reaped();
}
