//! The conformance kit against the real CLI and the mock: a text turn with reasoning and a tool turn
//! whose escalated command raises a permission (the kit's harness approves every decision).

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{Driver, Policy, Request};
use agent_adaptor::providers::codex::CodexDriver;
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};
use agent_adaptor::testkit::mock::responses::{RecordedRequest, Reply, Script};

use super::Cx;

#[tokio::test]
async fn the_codex_driver_passes_the_conformance_kit() {
    // A request whose user texts include "touch it" asks for an escalated command (the kit's message
    // may be steered in before the call: Codex then re-samples with both texts), its output is
    // answered with "Done.", anything else with reasoning and an echo.
    let script = Script::new().otherwise(|log: &[RecordedRequest]| {
        let last = log.last();
        if last.is_some_and(|r| !r.tool_outputs().is_empty()) {
            return Reply::new().text("Done.");
        }
        let touch = last.is_some_and(|r| r.texts_of_role("user").iter().any(|t| t.contains("touch it")));
        match last.and_then(RecordedRequest::last_user_text) {
            _ if touch => Reply::new().exec_command_escalated("touch kit-marker.txt", "Need to write"),
            t => Reply::new()
                .reasoning("Thinking.")
                .text(format!("Echo: {}", t.unwrap_or_default())),
        }
    });
    let Some(cx) = Cx::new(script).await else { return };
    for (prompt, tool) in [("hello", false), ("touch it", true)] {
        let config = cx.driver.config().clone();
        let factory = move || Arc::new(CodexDriver::new(config.clone())) as Arc<dyn Driver>;
        let ws = cx.ws.clone();
        let options = Options {
            run: Some(RunProbe {
                request: Box::new(move || {
                    let mut r = Request::new("conformance", prompt, ws.clone());
                    r.policy = Policy::read_only();
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
            "CAP-01", "SES-04", "EVT-03", "EVT-11", "RUN-04", "MSG-01", "RSP-04",
        ];
        if tool {
            clauses.extend(["EVT-05", "APR-01", "APR-02"]);
        } else {
            clauses.push("EVT-06");
        }
        for clause in clauses {
            assert!(
                report.checked.contains(&clause),
                "{clause} unchecked for {prompt}"
            );
        }
    }
    cx.assert_reaped();
}
