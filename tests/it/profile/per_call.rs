//! Per-call profile resources (`CallOptions::profile_resources`) against the real Claude CLI on a
//! dedicated profile: the family merge rules reach the model (skills append, instructions replace, an
//! empty family clears), the next launch without them syncs the profile back, the thread guard sees
//! them, a running execution's profile is never rewritten under it (`profile_in_use`), and profiles
//! that cannot take them refuse typed (`profile_resources_unsupported`).

use agent_adaptor::profile::{AgentSpec, HookSpec, Resources, Selection};
use agent_adaptor::providers::codex::{CodexConfig, CodexDriver};
use agent_adaptor::runtime::{Agent, ErrorKind};

use super::marked_skill;
use crate::claude_driver::Cl;

fn agent_resources() -> Resources {
    Resources {
        skills: vec![marked_skill("team-notes", "TEAM-MARKER-7")],
        instructions: Some("AGENT-INSTR-MARKER: answer briefly.".into()),
        agents: Some(vec![AgentSpec {
            name: "reviewer".into(),
            description: "REVIEWER-MARKER-7 reviews diffs".into(),
            prompt: "You review.".into(),
        }]),
        ..Default::default()
    }
}

fn call_resources() -> Resources {
    Resources {
        skills: vec![marked_skill("call-notes", "CALL-SKILL-MARKER")],
        instructions: Some("CALL-INSTR-MARKER: answer at length.".into()),
        // Declared empty: clears the Agent's subagents for this call.
        agents: Some(Vec::new()),
        ..Default::default()
    }
}

#[tokio::test]
async fn per_call_profile_resources_merge_by_family_sync_back_and_guard_threads() {
    let Some(cl) = Cl::new().await else { return };
    let dedicated = cl.env.root.join("dedicated");
    let agent = Agent::builder(cl.driver.clone())
        .profile(Selection::dedicated(&dedicated))
        .profile_resources(agent_resources())
        .build();
    let last_body = || cl.requests().last().unwrap().body.clone().unwrap().to_string();

    // With the call's resources: skills append, instructions replace, the empty agents family clears.
    let r = agent
        .send("hello call", cl.oneshot().profile_resources(call_resources()))
        .result()
        .await
        .unwrap();
    assert!(r.text.contains("hello call"), "{}", r.text);
    let body = last_body();
    for present in ["TEAM-MARKER-7", "CALL-SKILL-MARKER", "CALL-INSTR-MARKER"] {
        assert!(body.contains(present), "{present} did not reach the model");
    }
    for absent in ["AGENT-INSTR-MARKER", "REVIEWER-MARKER-7"] {
        assert!(!body.contains(absent), "{absent} reached the model");
    }
    assert!(dedicated.join("skills/call-notes/SKILL.md").is_file());

    // The next launch without them syncs the profile back to the Agent's.
    agent.send("hello agent", cl.oneshot()).result().await.unwrap();
    let body = last_body();
    for present in ["TEAM-MARKER-7", "AGENT-INSTR-MARKER", "REVIEWER-MARKER-7"] {
        assert!(body.contains(present), "{present} did not come back");
    }
    for absent in ["CALL-SKILL-MARKER", "CALL-INSTR-MARKER"] {
        assert!(!body.contains(absent), "{absent} outlived its call");
    }
    assert!(!dedicated.join("skills/call-notes").exists());
    let state = agent.profile_state().await.unwrap();
    assert!(
        state.resources.iter().all(|r| r.error.is_empty()
            && (r.fingerprint.is_empty()
                || r.materialization
                    != agent_adaptor::profile::ProfileResourceMaterialization::NotMaterialized)),
        "the profile is in the Agent's state again: {state:?}"
    );

    // The thread guard: a thread started on the Agent's resources refuses to resume with others.
    agent
        .thread("guarded")
        .send("first", cl.oneshot())
        .result()
        .await
        .unwrap();
    let err = agent
        .thread_resume_only("guarded")
        .send("second", cl.oneshot().profile_resources(call_resources()))
        .result()
        .await
        .unwrap_err();
    super::assert_profile_guard(&err);
    cl.assert_reaped();
}

#[tokio::test]
async fn a_running_execution_keeps_its_profile_and_other_resources_wait_their_turn() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::builder(cl.driver.clone())
        .profile(Selection::dedicated(cl.env.root.join("busy")))
        .profile_resources(agent_resources())
        .build();
    // The claim is taken inside `send`, before it returns: the CLI's start-up alone outlasts the
    // second `send` by orders of magnitude.
    let running = agent.send("hello call", cl.oneshot().profile_resources(call_resources()));
    let refused = agent
        .send("hello agent", cl.oneshot())
        .result()
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::Profile, "{refused}");
    assert_eq!(refused.code(), "profile_in_use");
    // The claim is the process's, not the Agent's: another Agent on the same dir waits too.
    let other = Agent::builder(cl.driver.clone())
        .profile(Selection::dedicated(cl.env.root.join("busy")))
        .build();
    let refused = other
        .send("hello other", cl.oneshot())
        .result()
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "profile_in_use", "{refused}");
    // The same resources may share the running profile.
    let same = agent.send("hello same", cl.oneshot().profile_resources(call_resources()));
    let (a, b) = tokio::join!(running.result(), same.result());
    assert!(a.unwrap().text.contains("hello call"));
    assert!(b.unwrap().text.contains("hello same"));
    // Once they ended, the Agent's own resources launch (and resync the profile).
    let r = agent.send("hello agent", cl.oneshot()).result().await.unwrap();
    assert!(r.text.contains("hello agent"), "{}", r.text);
    assert!(
        cl.requests()
            .last()
            .unwrap()
            .body
            .clone()
            .unwrap()
            .to_string()
            .contains("AGENT-INSTR-MARKER")
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn profiles_that_cannot_take_per_call_resources_refuse_before_launch() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    let codex = |selection: Selection| {
        Agent::builder(CodexDriver::new(CodexConfig::default()))
            .profile(selection)
            .profile_home(home.path())
            .build()
    };
    let hooks = Resources {
        hooks: Some(vec![HookSpec::new("PreToolUse", "true")]),
        ..Default::default()
    };
    let instructions = Resources {
        instructions: Some("x".into()),
        ..Default::default()
    };
    let refusals = [
        // The native profile is never written.
        (codex(Selection::native()), instructions.clone(), "native profile"),
        // A family the provider does not support is not silently dropped.
        (codex(Selection::dedicated(home.path().join("d"))), hooks, "Hooks"),
        // A driver without profiles.
        (
            Agent::builder(agent_adaptor::testkit::reference::ReferenceDriver::new(
                Default::default(),
            ))
            .build(),
            instructions,
            "no profile",
        ),
    ];
    for (agent, resources, says) in refusals {
        let err = agent
            .send(
                "hi",
                agent_adaptor::runtime::CallOptions::new().profile_resources(resources),
            )
            .result()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Profile, "{err}");
        assert_eq!(err.code(), "profile_resources_unsupported", "{err}");
        assert!(err.to_string().contains(says), "{says}: {err}");
    }
    assert!(
        std::fs::read_dir(home.path().join(".codex"))
            .unwrap()
            .next()
            .is_none(),
        "nothing written into the native dir"
    );
    assert!(!home.path().join("d").join("hooks.json").exists());
}
