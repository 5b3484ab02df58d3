//! A run's skills reach the real CLI through its per-run overlay (`--add-dir`): the skill's name and
//! description are in what Claude Code sends the model, only for the run that declared them (two
//! concurrent runs of one profile each see their own), nothing is written into the shared config dir,
//! and the overlay is gone when the run ends.

use super::Cl;
use crate::driver_support::{assert_skills_kept_apart, marked_skill, overlays_of};
use agent_adaptor::runtime::Agent;

#[tokio::test]
async fn run_skills_reach_the_model_per_run_and_leave_the_config_dir_alone() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let alpha = agent.send(
        "alpha run",
        cl.oneshot()
            .skills([marked_skill("zebra-notes", "ZEBRA-MARKER-7")]),
    );
    let beta = agent.send(
        "beta run",
        cl.opts().skills([marked_skill("yak-notes", "YAK-MARKER-9")]),
    );
    let (a, b) = tokio::join!(alpha.result(), beta.result());
    let (a, b) = (a.unwrap(), b.unwrap());
    let bodies: Vec<(String, String)> = cl
        .requests()
        .iter()
        .map(|r| {
            (
                r.all_texts().join("|"),
                r.body.as_ref().map(|b| b.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    let of = |prompt: &str| -> Vec<&String> {
        bodies
            .iter()
            .filter(|(texts, _)| texts.contains(prompt))
            .map(|(_, body)| body)
            .collect()
    };
    assert_skills_kept_apart(&of("alpha run"), &of("beta run"));
    assert!(
        !cl.env.config_dir.join("skills").exists(),
        "run skills are never written into the shared config dir"
    );
    for r in [&a, &b] {
        assert!(
            overlays_of(&r.run_id).is_empty(),
            "the overlay of {} is removed",
            r.run_id
        );
    }

    // A later run without skills sees neither.
    let plain = agent.send("plain run", cl.oneshot()).result().await.unwrap();
    assert!(plain.text.contains("plain run"), "{}", plain.text);
    let last = cl.requests().pop().unwrap();
    let body = last.body.unwrap().to_string();
    assert!(!body.contains("ZEBRA-MARKER-7") && !body.contains("YAK-MARKER-9"));
    cl.assert_reaped();
}
