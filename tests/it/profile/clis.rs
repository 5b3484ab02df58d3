//! Real-CLI runs on a dedicated (Claude) and a cloned (Codex) profile: the profile's resources reach
//! the model, sessions live in the profile dir, and a profile change makes the thread refuse to resume
//! with the guard reason (or start fresh, saying why).

use agent_adaptor::driver::notice_kind;
use agent_adaptor::profile::{AgentSpec, CloneOptions, Resources, Selection};
use agent_adaptor::runtime::{Agent, Payload};
use agent_adaptor::testkit::mock::responses::Script;

use super::marked_skill;
use crate::claude_driver::Cl;
use crate::codex_driver::Cx;
use crate::driver_support::drain;

fn claude_resources(instructions: &str) -> Resources {
    Resources {
        skills: vec![marked_skill("team-notes", "TEAM-MARKER-3")],
        instructions: Some(instructions.into()),
        agents: Some(vec![AgentSpec {
            name: "reviewer".into(),
            description: "REVIEWER-MARKER reviews diffs".into(),
            prompt: "You review.".into(),
        }]),
        ..Default::default()
    }
}

#[tokio::test]
async fn claude_runs_on_a_dedicated_profile_and_a_changed_profile_refuses_the_resume() {
    let Some(cl) = Cl::new().await else { return };
    let dedicated = cl.env.root.join("dedicated");
    let store = agent_adaptor::store::in_memory();
    let build = |instructions: &str| {
        Agent::builder(cl.driver.clone())
            .thread_store(store.clone())
            .profile(Selection::dedicated(&dedicated))
            .profile_resources(claude_resources(instructions))
            .build()
    };
    let agent = build("INSTR-MARKER-ONE: answer briefly.");
    let first = agent
        .thread("prof")
        .send("hello profile", cl.oneshot())
        .result()
        .await
        .unwrap();
    assert!(first.text.contains("hello profile"), "{}", first.text);
    let body = cl.requests().last().unwrap().body.clone().unwrap().to_string();
    for marker in [
        "INSTR-MARKER-ONE",
        "team-notes",
        "TEAM-MARKER-3",
        "REVIEWER-MARKER",
    ] {
        assert!(body.contains(marker), "{marker} did not reach the model");
    }
    cl.assert_session_in(&dedicated);

    // Same profile: the thread resumes.
    let again = agent
        .thread_resume_only("prof")
        .send("and again", cl.oneshot())
        .result()
        .await
        .unwrap();
    assert_eq!(again.metadata["session_id"], first.metadata["session_id"]);

    // Other profile resources: resume-only refuses with the guard reason; continue starts fresh.
    let changed = build("INSTR-MARKER-TWO: answer at length.");
    let err = changed
        .thread_resume_only("prof")
        .send("resume please", cl.oneshot())
        .result()
        .await
        .unwrap_err();
    super::assert_profile_guard(&err);
    let stream = changed.thread("prof").send("fresh please", cl.oneshot());
    let events = drain(&stream).await;
    let fresh = stream.result().await.unwrap();
    assert_ne!(
        fresh.metadata["session_id"], first.metadata["session_id"],
        "a fresh session"
    );
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::Notice(n)
            if n.kind == notice_kind::THREAD_CONTINUITY && n.text.contains("profile resources changed"))),
        "the fresh start says why"
    );
    let body = cl.requests().last().unwrap().body.clone().unwrap().to_string();
    assert!(
        body.contains("INSTR-MARKER-TWO") && !body.contains("INSTR-MARKER-ONE"),
        "the synced instructions"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn codex_runs_on_a_cloned_profile_with_its_copied_skills_and_keeps_its_sessions_there() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let root = cx.ws.parent().unwrap().to_owned();
    let source = root.join("source-home");
    let skill = source.join("skills/copied-skill");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: copied-skill\ndescription: COPIED-MARKER from the source profile\n---\nBody.\n",
    )
    .unwrap();
    let clone_dir = root.join("clone");
    let agent = Agent::builder(cx.driver.clone())
        .profile(Selection::clone_from(
            &source,
            CloneOptions::new().copy_skills().in_dir(&clone_dir),
        ))
        .profile_resources(Resources {
            instructions: Some("CODEX-INSTR-MARKER: be terse.".into()),
            ..Default::default()
        })
        .build();
    let r = agent
        .thread("cx-prof")
        .send("hello clone", cx.auto())
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "ECHO n=1: hello clone");
    let body = cx.mock.requests().last().unwrap().raw_body.clone();
    for marker in ["copied-skill", "COPIED-MARKER", "CODEX-INSTR-MARKER"] {
        assert!(body.contains(marker), "{marker} did not reach the model");
    }
    assert!(
        clone_dir.join("sessions").is_dir(),
        "the thread lives in the clone"
    );
    assert!(
        !cx.codex_home.join("sessions").exists(),
        "not in the driver's own CODEX_HOME"
    );
    assert!(
        !source.join("sessions").exists() && !source.join("config.toml").exists(),
        "the source is untouched"
    );
    let state = agent.profile_state().await.unwrap();
    assert_eq!(state.profile.dir, clone_dir);
    assert_eq!(
        state
            .resource(agent_adaptor::profile::ProfileResourceKind::Skills)
            .unwrap()
            .external,
        vec!["copied-skill".to_string()]
    );
    agent.close(std::time::Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn claude_runs_on_the_native_profile_reading_it_and_writing_nothing_of_the_sdk_into_it() {
    let Some(cl) = Cl::new().await else { return };
    // The sandbox HOME's own `~/.claude`: a user memory and a user skill, each with a marker.
    let native = cl.env.home.join(".claude");
    std::fs::create_dir_all(native.join("skills/native-notes")).unwrap();
    std::fs::write(
        native.join("CLAUDE.md"),
        "NATIVE-MEMORY-MARKER: the user's own memory.\n",
    )
    .unwrap();
    std::fs::write(
        native.join("skills/native-notes/SKILL.md"),
        "---\nname: native-notes\ndescription: NATIVE-SKILL-MARKER notes\n---\n# notes\n",
    )
    .unwrap();
    let before = super::snapshot_tree(&native);
    let agent = Agent::builder(cl.driver.clone())
        .profile(Selection::native())
        .profile_home(&cl.env.home)
        .build();
    let r = agent.send("hello native", cl.oneshot()).result().await.unwrap();
    assert!(r.text.contains("hello native"), "{}", r.text);
    let body = cl.requests().last().unwrap().body.clone().unwrap().to_string();
    for marker in ["NATIVE-MEMORY-MARKER", "NATIVE-SKILL-MARKER"] {
        assert!(
            body.contains(marker),
            "{marker}: the run did not read the native dir"
        );
    }
    // What the user had is byte for byte unchanged, and the SDK wrote nothing of its own (no manifest,
    // no managed block); the CLI itself may add its session files.
    let after = super::snapshot_tree(&native);
    for (path, bytes) in &before {
        assert_eq!(after.get(path), Some(bytes), "{} changed", path.display());
    }
    assert!(!native.join(agent_adaptor::profile::sync::MANIFEST).exists());
    assert!(
        after
            .values()
            .all(|b| !String::from_utf8_lossy(b).contains(agent_adaptor::profile::sync::BLOCK_BEGIN)),
        "no SDK-managed block in the native dir"
    );
    cl.assert_reaped();
}
