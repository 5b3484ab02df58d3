//! Clone, native and dedicated profiles on a real file tree under a temp HOME (no CLI run).

use std::fs;
use std::path::Path;

use agent_adaptor::profile::{
    self, AgentSpec, CloneOptions, ConfigPatch, Family, ProfileKind, ProfileResourceKind as K,
    ProfileResourceMaterialization as M, ProfileResourceSupport as S, Resources, Selection, clone, sync,
};
use agent_adaptor::providers::claude::{ClaudeDriver, Config as ClaudeConfig};
use agent_adaptor::providers::codex::{CodexConfig, CodexDriver};
use agent_adaptor::runtime::{Agent, ErrorKind};
use agent_adaptor::vocab::McpServer;
use serde_json::json;

use super::{marked_skill, snapshot_tree};

/// A user's native Claude setup under `home`: `~/.claude/{settings.json,.credentials.json,skills/mine}`
/// and `~/.claude.json` with one MCP server.
fn native_claude(home: &Path) {
    let n = home.join(".claude");
    fs::create_dir_all(n.join("skills/mine")).unwrap();
    fs::write(n.join("settings.json"), r#"{"model":"opus","theme":"dark"}"#).unwrap();
    fs::write(n.join(".credentials.json"), r#"{"token":"secret-1"}"#).unwrap();
    fs::write(
        n.join("skills/mine/SKILL.md"),
        "---\nname: mine\ndescription: the user's\n---\n",
    )
    .unwrap();
    fs::write(n.join("CLAUDE.md"), "The user's own memory.\n").unwrap();
    fs::write(
        home.join(".claude.json"),
        r#"{"numStartups":3,"mcpServers":{"docs":{"type":"stdio","command":"docs-mcp","args":[]}}}"#,
    )
    .unwrap();
}

fn resources() -> Resources {
    Resources {
        skills: vec![marked_skill("team-notes", "TEAM-MARKER")],
        instructions: Some("Always answer in haiku.".into()),
        agents: Some(vec![AgentSpec {
            name: "reviewer".into(),
            description: "Reviews diffs".into(),
            prompt: "You review.".into(),
        }]),
        config: Some(vec![ConfigPatch {
            patch: json!({"theme": null, "env": {"A": "1"}}),
        }]),
        hooks: Some(vec![]),
        mcp: Some(vec![McpServer::stdio("lint", "lint-mcp", vec![])]),
    }
}

#[test]
fn clone_native_copies_and_links_what_it_should_and_never_touches_the_native_dir() {
    let home = tempfile::tempdir().unwrap();
    native_claude(home.path());
    let before = snapshot_tree(home.path());
    let options = CloneOptions::new()
        .copy_settings()
        .copy_mcp()
        .copy_skills()
        .link_auth();
    let r = profile::resolve(
        Family::Claude,
        &Selection::clone_native(options),
        home.path(),
        "team",
    )
    .unwrap();
    assert_eq!(r.dir, home.path().join(".agent-adaptor/claude/clones/team"));
    assert_eq!(r.kind, ProfileKind::HostManaged);
    let warnings = clone::prepare(&r).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let c = &r.dir;
    assert_eq!(
        fs::read_to_string(c.join("settings.json")).unwrap(),
        r#"{"model":"opus","theme":"dark"}"#
    );
    assert!(c.join("skills/mine/SKILL.md").is_file(), "skills copied");
    let auth = fs::symlink_metadata(c.join(".credentials.json")).unwrap();
    assert!(auth.file_type().is_symlink(), "auth linked, not copied");
    assert_eq!(
        fs::read_link(c.join(".credentials.json")).unwrap(),
        home.path().join(".claude/.credentials.json")
    );
    let mcp: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(c.join(".claude.json")).unwrap()).unwrap();
    assert_eq!(
        mcp,
        json!({"mcpServers":{"docs":{"type":"stdio","command":"docs-mcp","args":[]}}}),
        "only the MCP servers"
    );
    assert!(
        !c.join("CLAUDE.md").exists(),
        "what no option names is not copied"
    );

    // Resources land in the clone; the report is truthful per family.
    let res = resources();
    let skill_src = tempfile::tempdir().unwrap();
    let skills = agent_adaptor::skills::materialize_all(
        &res.skills,
        None,
        &agent_adaptor::skills::DefaultSkillMaterializer::default(),
        skill_src.path(),
    )
    .unwrap()
    .skills;
    let desired = sync::Desired {
        resources: &res,
        skills: &skills,
    };
    let observed = sync::sync("claude", "team", &r, desired, false);
    assert_eq!(
        observed.resource(K::Skills).unwrap().materialization,
        M::NotMaterialized,
        "observing writes nothing"
    );
    assert!(!c.join("skills/team-notes").exists());
    let snap = sync::sync("claude", "team", &r, desired, true);
    assert_eq!(snap.kind, ProfileKind::HostManaged);
    let get = |k| snap.resource(k).unwrap().clone();
    assert_eq!(
        (get(K::Skills).support, get(K::Skills).materialization),
        (S::PortableCore, M::FileManaged)
    );
    assert_eq!(
        get(K::Skills).external,
        vec!["mine".to_string()],
        "the copied skill is not the SDK's"
    );
    assert_eq!(get(K::Mcp).materialization, M::NativeManaged);
    assert_eq!(get(K::Instructions).materialization, M::FileManaged);
    assert_eq!(get(K::Agents).materialization, M::FileManaged);
    assert_eq!(get(K::Config).materialization, M::FileManaged);
    assert_eq!(
        (get(K::Hooks).support, get(K::Hooks).materialization),
        (S::PortableExtended, M::FileManaged),
        "an explicitly empty hook list is materialized as no SDK hooks"
    );
    assert!(
        fs::read_to_string(c.join("skills/team-notes/SKILL.md"))
            .unwrap()
            .contains("TEAM-MARKER")
    );
    assert!(
        fs::read_to_string(c.join("CLAUDE.md"))
            .unwrap()
            .contains("Always answer in haiku.")
    );
    assert!(
        fs::read_to_string(c.join("agents/reviewer.md"))
            .unwrap()
            .contains("description: Reviews diffs")
    );
    let settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(c.join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings,
        json!({"model":"opus","env":{"A":"1"}}),
        "the merge patch applied"
    );
    let again = sync::sync("claude", "team", &r, desired, false);
    assert_eq!(again.fingerprint, snap.fingerprint);
    assert!(again.resources.iter().all(|s| s.error.is_empty()));
    assert_eq!(
        again.resource(K::Skills).unwrap().materialization,
        M::FileManaged,
        "up to date now"
    );

    // A removed family is removed from what the SDK wrote, nothing else.
    let fewer = Resources {
        instructions: Some("Now in prose.".into()),
        ..Default::default()
    };
    sync::sync(
        "claude",
        "team",
        &r,
        sync::Desired {
            resources: &fewer,
            skills: &[],
        },
        true,
    );
    assert!(!c.join("skills/team-notes").exists() && c.join("skills/mine").is_dir());
    assert!(!c.join("agents/reviewer.md").exists());
    assert!(
        fs::read_to_string(c.join("CLAUDE.md"))
            .unwrap()
            .contains("Now in prose.")
    );

    assert_eq!(
        snapshot_tree(home.path())
            .into_iter()
            .filter(|(p, _)| !p.starts_with(".agent-adaptor"))
            .collect::<Vec<_>>(),
        before.into_iter().collect::<Vec<_>>(),
        "the native tree is byte-for-byte unchanged"
    );
}

#[test]
fn copy_auth_copies_and_a_missing_source_is_a_typed_error() {
    let home = tempfile::tempdir().unwrap();
    let src = home.path().join("src-codex");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("auth.json"), "{}").unwrap();
    fs::write(
        src.join("config.toml"),
        "model = \"x\"\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
    )
    .unwrap();
    let sel = Selection::clone_from(
        &src,
        CloneOptions::new()
            .copy_auth()
            .copy_mcp()
            .in_dir(home.path().join("c")),
    );
    let r = profile::resolve(Family::Codex, &sel, home.path(), "").unwrap();
    clone::prepare(&r).unwrap();
    let c = home.path().join("c");
    assert!(
        fs::symlink_metadata(c.join("auth.json")).unwrap().is_file(),
        "copied, not linked"
    );
    let cfg: toml::Table = fs::read_to_string(c.join("config.toml"))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(cfg["mcp_servers"]["docs"]["command"].as_str(), Some("docs-mcp"));
    assert!(!cfg.contains_key("model"), "copy_mcp takes only the MCP table");
    // Prepared once: a later prepare does not copy over the clone's own changes.
    fs::write(c.join("auth.json"), "{\"mine\":1}").unwrap();
    clone::prepare(&r).unwrap();
    assert_eq!(fs::read_to_string(c.join("auth.json")).unwrap(), "{\"mine\":1}");
    let missing = Selection::clone_from(
        home.path().join("nope"),
        CloneOptions::new().in_dir(home.path().join("d")),
    );
    let r = profile::resolve(Family::Codex, &missing, home.path(), "").unwrap();
    assert!(matches!(
        clone::prepare(&r),
        Err(profile::ProfileError::SourceMissing(_))
    ));
}

#[tokio::test]
async fn a_native_profile_is_reported_and_never_written_and_a_dedicated_one_is_synced() {
    let home = tempfile::tempdir().unwrap();
    native_claude(home.path());
    let before = snapshot_tree(home.path());
    // The pure layer with an explicit HOME: a native profile is shared and never written.
    let r = profile::resolve(Family::Claude, &Selection::native(), home.path(), "").unwrap();
    assert_eq!(
        (r.dir.clone(), r.kind),
        (home.path().join(".claude"), ProfileKind::Shared)
    );
    clone::prepare(&r).unwrap();
    let res = resources();
    let snap = sync::sync(
        "claude",
        "",
        &r,
        sync::Desired {
            resources: &res,
            skills: &[],
        },
        true,
    );
    assert!(
        snap.warnings.iter().any(|w| w.contains("never writes")),
        "{:?}",
        snap.warnings
    );
    let instr = snap.resource(K::Instructions).unwrap();
    assert_eq!(instr.materialization, M::NotMaterialized);
    assert!(
        instr
            .warnings
            .iter()
            .any(|w| w.contains("native profile is never modified"))
    );
    assert_eq!(
        snap.resource(K::Mcp).unwrap().materialization,
        M::NativeManaged,
        "MCP still reaches runs, per run"
    );
    assert_eq!(
        snapshot_tree(home.path()),
        before,
        "nothing written, not even a manifest"
    );

    // Through the Agent: a dedicated dir is synced, the skill selection installs keys it can resolve.
    let dedicated = home.path().join("dedicated");
    let agent = Agent::builder(ClaudeDriver::new(ClaudeConfig::default()))
        .profile(Selection::dedicated(&dedicated))
        .profile_resources(resources())
        .skills([marked_skill("extra", "EXTRA-MARKER")])
        .build();
    let state = agent.profile_state().await.unwrap();
    assert_eq!(state.profile.dir, dedicated);
    assert_eq!(
        state.resource(K::Skills).unwrap().materialization,
        M::NotMaterialized
    );
    assert!(!dedicated.exists(), "observing creates nothing");
    let synced = agent.sync_profile().await.unwrap();
    assert_eq!(
        synced.resource(K::Skills).unwrap().materialization,
        M::FileManaged
    );
    assert_eq!(
        synced.fingerprint,
        agent.profile_state().await.unwrap().fingerprint
    );
    assert!(dedicated.join("skills/team-notes/SKILL.md").is_file());
    let picked = agent.select_skills(&["extra".into()]).await.unwrap();
    assert_eq!(picked.selected, vec!["extra".to_string()]);
    assert_eq!(
        picked.skills[0]
            .description
            .as_deref()
            .map(|d| d.contains("EXTRA-MARKER")),
        Some(true)
    );
    assert!(
        dedicated.join("skills/extra/SKILL.md").is_file() && !dedicated.join("skills/team-notes").exists()
    );
    assert_ne!(
        picked.profile.fingerprint, synced.fingerprint,
        "the selection changes the profile"
    );
    let err = agent.select_skills(&["no-such-skill".into()]).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Skill, "{err}");
    assert_eq!(
        agent.profile_state().await.unwrap().fingerprint,
        picked.profile.fingerprint,
        "an unknown key leaves the selection unchanged"
    );
    assert_eq!(
        snapshot_tree(&home.path().join(".claude")),
        before
            .iter()
            .filter(|(p, _)| p.starts_with(".claude") && p.as_path() != Path::new(".claude"))
            .map(|(p, v)| (p.strip_prefix(".claude").unwrap().to_owned(), v.clone()))
            .collect(),
        "the native dir is untouched"
    );
}

#[tokio::test]
async fn codex_reports_its_unsupported_families_and_other_drivers_refuse_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let agent = Agent::builder(CodexDriver::new(CodexConfig::default()))
        .profile(Selection::dedicated(dir.path().join("p")))
        .profile_resources(resources())
        .build();
    let snap = agent.sync_profile().await.unwrap();
    for k in [K::Agents, K::Config, K::Hooks] {
        let r = snap.resource(k).unwrap();
        assert_eq!(
            (r.support, r.materialization),
            (S::Unsupported, M::NotMaterialized),
            "{k:?}"
        );
        assert!(!r.warnings.is_empty());
    }
    assert_eq!(
        snap.resource(K::Instructions).unwrap().materialization,
        M::FileManaged
    );
    assert!(
        fs::read_to_string(dir.path().join("p/AGENTS.md"))
            .unwrap()
            .contains("haiku")
    );

    let reference = agent_adaptor::testkit::reference::ReferenceDriver::new(Default::default());
    let other = Agent::builder(reference).profile(Selection::native()).build();
    let err = other
        .send("hi", agent_adaptor::runtime::CallOptions::new())
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidDriverConfig, "{err}");
    assert!(
        err.to_string().contains("does not support profile selection"),
        "{err}"
    );
}
