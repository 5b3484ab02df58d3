//! The conformance kit: the reference driver passes every clause, the correct baseline passes,
//! and each negative control is rejected for the clause it breaks.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{Driver, Request};
use agent_adaptor::testkit::conformance::broken::{BrokenDriver, Flaw};
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

fn probe(prompt: &'static str) -> Options {
    Options {
        run: Some(RunProbe {
            request: Box::new(move || Request::new("conformance", prompt, std::env::temp_dir())),
            message: Some("a supplemental note".into()),
            timeout: Duration::from_secs(10),
        }),
        session_state: None,
    }
}

#[tokio::test]
async fn the_reference_driver_passes_every_clause() {
    for prompt in ["hello", "permission please", "plan and question", "fail now"] {
        let factory = || Arc::new(ReferenceDriver::new(ReferenceConfig::default())) as Arc<dyn Driver>;
        let report = check_driver(&factory, probe(prompt)).await;
        report.assert_passed();
        if prompt != "hello" {
            continue;
        }
        for clause in [
            "DRV-01", "DRV-02", "CAP-01", "SES-04", "EVT-03", "EVT-11", "RUN-04", "MSG-01", "RSP-05",
        ] {
            assert!(
                report.checked.contains(&clause),
                "{clause} was not checked for {prompt:?}"
            );
        }
    }
}

#[tokio::test]
async fn the_baseline_passes_and_every_negative_control_is_rejected() {
    let baseline = || BrokenDriver::with_flaw(None);
    check_driver(&baseline, probe("x")).await.assert_passed();
    for (flaw, clause) in Flaw::all() {
        let factory = move || BrokenDriver::with_flaw(Some(flaw));
        let report = check_driver(&factory, probe("x")).await;
        assert!(
            report.violated(clause),
            "{flaw:?} must violate {clause}; got {:?}",
            report.violations
        );
    }
}
