//! A run's skills reach the real Codex app-server through `skills/extraRoots/set` with the run's
//! overlay: the skill's name and description are in what Codex sends the model, a kept process takes
//! the next run's skills, nothing is written into the shared `CODEX_HOME`, and the overlay is gone
//! when the run ends.

use agent_adaptor::runtime::{Agent, Payload};
use agent_adaptor::testkit::mock::responses::Script;

use super::{Cx, drain};
use crate::driver_support::{marked_skill, overlays_of};

#[tokio::test]
async fn run_skills_reach_the_model_and_a_kept_process_takes_the_next_runs() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-skills");
    let first = thread
        .send(
            "first",
            cx.auto().skills([marked_skill("zebra-notes", "ZEBRA-MARKER-7")]),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(cx.driver.idle_processes(), 1, "the thread's app-server is kept");
    // Other skills change the thread's configuration (a fresh Codex thread), not the process's.
    let stream = thread.send(
        "second",
        cx.auto().skills([marked_skill("yak-notes", "YAK-MARKER-9")]),
    );
    let events = drain(&stream).await;
    let second = stream.result().await.unwrap();
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::Notice(n) if n.text.contains("reusing the thread's codex app-server"))),
        "the kept process runs the second run"
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2, "one model request per run");
    assert!(
        reqs[0].raw_body.contains("zebra-notes") && reqs[0].raw_body.contains("ZEBRA-MARKER-7"),
        "the first run lists its skill"
    );
    assert!(!reqs[0].raw_body.contains("YAK-MARKER-9"));
    assert!(
        reqs[1].raw_body.contains("yak-notes") && reqs[1].raw_body.contains("YAK-MARKER-9"),
        "the reused process lists the second run's skill"
    );
    assert!(
        !cx.codex_home.join("skills").join("zebra-notes").exists()
            && !cx.codex_home.join("skills").join("yak-notes").exists(),
        "run skills are never written into the shared CODEX_HOME"
    );
    for r in [&first, &second] {
        assert!(
            overlays_of(&r.run_id).is_empty(),
            "the overlay of {} is removed",
            r.run_id
        );
    }

    // A direct run without skills (a new process) sees neither.
    agent.send("plain", cx.auto()).result().await.unwrap();
    let last = cx.mock.requests().pop().unwrap();
    assert!(!last.raw_body.contains("ZEBRA-MARKER-7") && !last.raw_body.contains("YAK-MARKER-9"));
    agent.close(std::time::Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}
