//! The Cursor driver's per-run skills and environment probe, against the fake CLI: a run's skills reach
//! "the model" through a per-run plugin (`--plugin-dir`, Cursor's documented plugin layout; the fake's
//! `skills` scenario names what it found), only for that run, never in the profile, and the plugin is gone
//! afterwards; `environment` reports the version `--version` prints and never starts a model task.

use agent_adaptor::driver::{CheckStatus, Driver};
use agent_adaptor::providers::cursor::CursorDriver;
use agent_adaptor::runtime::Agent;
use agent_adaptor::testkit::fake_cursor::VERSION;

use crate::cursor_driver::{Fx, assert_reaped};
use crate::driver_support::{marked_skill, overlays_of};

#[tokio::test]
async fn run_skills_reach_the_model_through_a_per_run_plugin() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let alpha = agent.send(
        "scenario=skills alpha",
        fx.opts().skills([marked_skill("zebra-notes", "ZEBRA-MARKER-7")]),
    );
    let beta = agent.send(
        "scenario=skills beta",
        fx.opts().skills([
            marked_skill("yak-notes", "YAK-MARKER-9"),
            marked_skill("owl-notes", "OWL-MARKER-3"),
        ]),
    );
    let (a, b) = tokio::join!(alpha.result(), beta.result());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(
        a.text
            .starts_with("Skills: agent-adaptor-run-skills:zebra-notes (ZEBRA-MARKER-7"),
        "{}",
        a.text
    );
    assert!(
        !a.text.contains("YAK-MARKER-9"),
        "alpha does not see beta's skills"
    );
    assert!(
        b.text.contains("owl-notes (OWL-MARKER-3") && b.text.contains("yak-notes (YAK-MARKER-9"),
        "{}",
        b.text
    );
    assert!(!b.text.contains("ZEBRA"), "beta does not see alpha's skill");
    for r in [&a, &b] {
        assert!(
            overlays_of(&r.run_id).is_empty(),
            "the plugin of {} is removed",
            r.run_id
        );
    }
    assert!(
        !fx.profile.join("home/skills").exists(),
        "run skills are never written into the profile's CURSOR_HOME"
    );

    // A later run without skills gets no plugin.
    let plain = agent
        .send("scenario=skills plain", fx.opts())
        .result()
        .await
        .unwrap();
    assert_eq!(plain.text, "No skills.");
    assert_reaped(&driver);
}

#[tokio::test]
async fn environment_reports_the_cli_version_without_a_model_task() {
    let fx = Fx::new();
    let driver = fx.driver();
    let report = driver.environment().await.unwrap();
    assert!(report.healthy, "{report:?}");
    assert_eq!(report.version.as_deref(), Some(VERSION));
    assert_eq!(report.messages, driver.descriptor().messages);
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.code == "cli" && c.status == CheckStatus::Pass)
    );
    assert!(
        !fx.profile.exists(),
        "the probe neither creates nor touches the driver's profile"
    );
    assert_reaped(&driver);

    let mut missing = fx.config();
    missing.common.command = Some(fx.ws.join("no-such-agent"));
    let report = CursorDriver::new(missing).environment().await.unwrap();
    assert!(!report.healthy);
    assert_eq!(report.version, None);
    assert!(
        report
            .checks
            .iter()
            .any(|c| c.code == "cli" && c.status == CheckStatus::Fail),
        "{report:?}"
    );
}
