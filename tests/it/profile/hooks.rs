//! Hooks: materialized into a dedicated Claude profile's `settings.json` next to the user's own
//! (file tree), and run by the real Claude CLI — a `PreToolUse` hook sees the tool call on stdin, and
//! one exiting 2 blocks the call.

use std::fs;

use agent_adaptor::profile::{HookSpec, ProfileResourceKind as K, Resources, Selection};
use agent_adaptor::providers::claude::{ClaudeDriver, Config as ClaudeConfig};
use agent_adaptor::runtime::Agent;
use serde_json::{Value, json};

use crate::claude_driver::Cl;

fn hooks(list: Option<Vec<HookSpec>>) -> Resources {
    Resources {
        hooks: list,
        ..Default::default()
    }
}

#[tokio::test]
async fn claude_hooks_merge_with_the_users_and_only_the_sdks_are_replaced_or_removed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("p");
    fs::create_dir_all(&p).unwrap();
    let user = json!({"matcher": "Write", "hooks": [{"type": "command", "command": "user-lint"}]});
    fs::write(
        p.join("settings.json"),
        json!({"model": "opus", "hooks": {"PreToolUse": [user.clone()]}}).to_string(),
    )
    .unwrap();
    let settings =
        || -> Value { serde_json::from_str(&fs::read_to_string(p.join("settings.json")).unwrap()).unwrap() };
    let agent = |r: Resources| {
        Agent::builder(ClaudeDriver::new(ClaudeConfig::default()))
            .profile(Selection::dedicated(&p))
            .profile_resources(r)
            .build()
    };
    let one = agent(hooks(Some(vec![
        HookSpec::new("PreToolUse", "log-it")
            .matcher("Bash")
            .timeout_secs(7),
    ])));
    let snap = one.sync_profile().await.unwrap();
    let h = snap.resource(K::Hooks).unwrap();
    assert!(h.error.is_empty() && h.warnings.is_empty(), "{h:?}");
    assert_eq!(
        settings(),
        json!({"model": "opus", "hooks": {"PreToolUse": [user.clone(),
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "log-it", "timeout": 7}]}]}})
    );
    let fp = snap.fingerprint;
    let two = agent(hooks(Some(vec![HookSpec::new("Stop", "bye")])));
    let snap = two.sync_profile().await.unwrap();
    assert_ne!(snap.fingerprint, fp, "the thread guard follows the hooks");
    assert_eq!(
        settings()["hooks"],
        json!({"PreToolUse": [user.clone()], "Stop": [{"hooks": [{"type": "command", "command": "bye"}]}]})
    );
    // No longer declared: the SDK's groups go, the user's stay.
    agent(Resources {
        instructions: Some("x".into()),
        ..Default::default()
    })
    .sync_profile()
    .await
    .unwrap();
    assert_eq!(
        settings(),
        json!({"model": "opus", "hooks": {"PreToolUse": [user]}})
    );
    // A bad hook is a typed error in the report, and nothing is written.
    let bad = agent(hooks(Some(vec![HookSpec::new("Pre Tool", "x")])))
        .sync_profile()
        .await
        .unwrap();
    assert!(
        bad.resource(K::Hooks).unwrap().error.contains("invalid Hooks"),
        "{bad:?}"
    );
    assert!(settings()["hooks"].get("Pre Tool").is_none());
}

#[tokio::test]
async fn the_real_claude_runs_a_profile_pre_tool_use_hook_and_exit_2_blocks_the_tool() {
    let Some(cl) = Cl::new().await else { return };
    let marker = cl.env.root.join("hook-saw.json");
    let run = |name: &str, hook: HookSpec| {
        Agent::builder(cl.driver.clone())
            .profile(Selection::dedicated(cl.env.root.join(name)))
            .profile_resources(hooks(Some(vec![hook])))
            .build()
    };
    let logging = run(
        "logging",
        HookSpec::new("PreToolUse", format!("cat > '{}'", marker.display()))
            .matcher("Bash")
            .timeout_secs(30),
    );
    let r = logging
        .send("please run touch", cl.oneshot())
        .result()
        .await
        .unwrap();
    assert!(r.text.contains("Tool said"), "{}", r.text);
    let saw: Value = serde_json::from_str(&fs::read_to_string(&marker).expect("the hook ran")).unwrap();
    assert_eq!(saw["hook_event_name"], "PreToolUse");
    assert_eq!(saw["tool_name"], "Bash", "{saw}");
    assert_eq!(saw["tool_input"]["command"], "touch created-by-tool.txt && ls");
    fs::remove_file(cl.ws().join("created-by-tool.txt")).unwrap();

    let blocking = run(
        "blocking",
        HookSpec::new("PreToolUse", "echo BLOCKED-BY-HOOK >&2; exit 2").matcher("Bash"),
    );
    let r = blocking
        .send("please run touch", cl.oneshot())
        .result()
        .await
        .unwrap();
    assert!(
        !cl.ws().join("created-by-tool.txt").exists(),
        "the tool did not run"
    );
    let last = cl.requests().pop().unwrap();
    let results = last.tool_results();
    assert!(
        results.iter().any(|t| t.content.contains("BLOCKED-BY-HOOK")),
        "the hook's stderr is the reason the model sees: {results:?} / {}",
        r.text
    );
    cl.assert_reaped();
}
