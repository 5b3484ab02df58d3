//! A run's skills reach the real CLI through its per-run overlay (`CODEBUDDY_SESSION_SKILL_DIRS`): the
//! skill's name and description are in what CodeBuddy sends the model, in both transports, only for the
//! run that declared them (two concurrent runs on one config dir each see their own), nothing is written
//! into the config dir's `skills/`, the overlay is gone when the run ends, and a later run without skills
//! sees none of them (the CLI's cached product configuration, which holds the last run's skills, is never
//! read back: `CODEBUDDY_DISABLE_PRODUCT_CACHE`; see `providers::codebuddy::env` for when it leaks).

use super::Cb;
use crate::driver_support::{assert_skills_kept_apart, marked_skill, overlays_of};
use agent_adaptor::runtime::Agent;

#[tokio::test]
async fn run_skills_reach_the_model_per_run_and_never_the_next_run() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let alpha = agent.send(
        "alpha run",
        cb.headless()
            .skills([marked_skill("zebra-notes", "ZEBRA-MARKER-7")]),
    );
    let beta = agent.send(
        "beta run",
        cb.opts().skills([marked_skill("yak-notes", "YAK-MARKER-9")]),
    );
    let (a, b) = tokio::join!(alpha.result(), beta.result());
    let (a, b) = (a.unwrap(), b.unwrap());
    let bodies: Vec<(Vec<String>, String)> = cb
        .mock
        .completion_requests()
        .iter()
        .map(|r| {
            (
                r.user_queries(),
                r.body.as_ref().map(|b| b.to_string()).unwrap_or_default(),
            )
        })
        .collect();
    let of = |prompt: &str| -> Vec<&String> {
        bodies
            .iter()
            .filter(|(queries, _)| queries.iter().any(|q| q == prompt))
            .map(|(_, body)| body)
            .collect()
    };
    assert_skills_kept_apart(&of("alpha run"), &of("beta run"));
    assert!(
        !cb.config_dir.join("skills").exists(),
        "run skills are never written into the config dir's skills"
    );
    for r in [&a, &b] {
        assert!(
            overlays_of(&r.run_id).is_empty(),
            "the overlay of {} is removed",
            r.run_id
        );
    }

    // A later run without skills on the same config dir sees neither, in its first request too.
    for opts in [cb.headless(), cb.opts()] {
        let before = cb.mock.completion_requests().len();
        let plain = agent.send("plain run", opts).result().await.unwrap();
        assert!(plain.text.contains("plain run"), "{}", plain.text);
        let requests = cb.mock.completion_requests();
        assert!(requests.len() > before, "the plain run asked the model");
        for r in &requests[before..] {
            let body = r.body.as_ref().unwrap().to_string();
            assert!(
                !body.contains("ZEBRA-MARKER-7") && !body.contains("YAK-MARKER-9"),
                "no earlier run's skill reaches a later run"
            );
        }
    }
    cb.assert_reaped();
}
