//! The library [`Inspector`](agent_adaptor::runtime::Inspector): the skills probe over dir / inline /
//! archive / provider-key refs with one broken ref reported on its skill, the provider's catalogue, a
//! driver without skills support and without probes (descriptor fallback, explicit unavailability), no
//! file written into the profile dir, and the real Claude CLI inspected (environment + skills) without a
//! model request.

use std::sync::Arc;

use agent_adaptor::driver::{
    CheckStatus, Descriptor, Driver, InspectError, InvalidConfig, Request, Response, RunIo, SkillCaps,
};
use agent_adaptor::profile::{Resources, Selection};
use agent_adaptor::runtime::{Agent, SkillSourceKind};
use agent_adaptor::skills::SkillSet;
use agent_adaptor::vocab::SkillRef;

use crate::driver_support::marked_skill;
use crate::profile::snapshot_tree;
use crate::skills::{Entry, gz, tar_bytes};

/// A driver with no probes; `driver_type` and skill support chosen by the test. Never runs.
#[derive(Clone)]
struct Bare {
    driver_type: &'static str,
    skills: bool,
}

#[async_trait::async_trait]
impl Driver for Bare {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: self.driver_type.into(),
            display_name: self.driver_type.into(),
            skills: SkillCaps {
                supported: self.skills,
            },
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, _io: RunIo) -> Response {
        panic!("inspection must not start a run")
    }
}

#[tokio::test]
async fn the_skills_probe_reports_each_ref_the_catalogue_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("review");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: review\ndescription: Reviews code\n---\n# Review",
    )
    .unwrap();
    let archive = tmp.path().join("pack.tgz");
    std::fs::write(
        &archive,
        gz(&tar_bytes(&[Entry::File(
            "pack/SKILL.md".into(),
            b"---\nname: pack\ndescription: From an archive\n---\n".to_vec(),
        )])),
    )
    .unwrap();
    let profile_dir = tmp.path().join("profile");
    std::fs::create_dir_all(&profile_dir).unwrap();
    std::fs::write(profile_dir.join("settings.json"), "{}").unwrap();
    let before = snapshot_tree(tmp.path());

    let agent = Agent::builder(Bare {
        driver_type: "claude",
        skills: true,
    })
    .skills([
        SkillRef::dir("review", &dir),
        marked_skill("notes", "NOTE-MARKER"),
        SkillRef::archive("pack", &archive),
        SkillRef::key("lib"),
        SkillRef::dir("broken", tmp.path().join("absent")),
    ])
    .skill_provider(Arc::new(SkillSet::new([SkillRef::inline(
        "lib",
        "---\nname: lib\ndescription: From the library\n---\n",
    )])))
    .profile(Selection::dedicated(&profile_dir))
    .profile_resources(Resources {
        skills: vec![marked_skill("team", "TEAM-MARKER")],
        ..Default::default()
    })
    .build();
    let report = agent.inspect().skills().await.unwrap();
    assert!(report.supported);
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let seen: Vec<_> = report
        .skills
        .iter()
        .map(|s| {
            (
                s.key.as_str(),
                s.source,
                s.name.as_deref(),
                s.description.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "review",
                SkillSourceKind::Dir,
                Some("review"),
                Some("Reviews code")
            ),
            (
                "notes",
                SkillSourceKind::Inline,
                Some("notes"),
                Some("NOTE-MARKER use this skill when asked about notes")
            ),
            (
                "pack",
                SkillSourceKind::Archive,
                Some("pack"),
                Some("From an archive")
            ),
            ("lib", SkillSourceKind::Key, Some("lib"), Some("From the library")),
            ("broken", SkillSourceKind::Dir, None, None),
        ]
    );
    assert_eq!(report.skills[3].resolved, Some(SkillSourceKind::Inline));
    for ok in &report.skills[..4] {
        assert!(ok.error.is_none(), "{ok:?}");
    }
    let broken = report.skills[4].error.as_ref().expect("the broken ref's error");
    assert_eq!(broken.code, "skill_source_missing");
    assert_eq!(report.catalog.as_deref(), Some(&["lib".to_owned()][..]));
    assert_eq!(report.selected, None);
    assert_eq!(report.profile.len(), 1);
    assert_eq!(report.profile[0].name.as_deref(), Some("team"));

    // The profile state is observed, not synced.
    let profile = agent.inspect().profile().await.unwrap();
    assert_eq!(profile.driver_type, "claude");
    assert_eq!(profile.profile.dir, profile_dir);
    assert_eq!(
        snapshot_tree(tmp.path()),
        before,
        "inspection wrote nothing under the sources or the profile dir"
    );
}

#[tokio::test]
async fn a_driver_without_probes_or_skill_support_says_so() {
    let agent = Agent::builder(Bare {
        driver_type: "bare",
        skills: false,
    })
    .skills([SkillRef::inline("k", "---\nname: k\n---\n")])
    .build();
    let inspector = agent.inspect();
    let skills = inspector.skills().await.unwrap();
    assert!(!skills.supported);
    assert!(
        skills.warnings.iter().any(|w| w.contains("does not take skills")),
        "{:?}",
        skills.warnings
    );
    assert_eq!(skills.catalog, None, "no provider, no catalogue");
    assert_eq!(skills.skills[0].name.as_deref(), Some("k"));
    // Environment: the descriptor's, at `warn`, never a pass.
    let env = inspector.environment().await.unwrap();
    assert_eq!(env.status, CheckStatus::Warn);
    assert_eq!(env.version, None);
    assert_eq!(env.checks.len(), 1);
    assert_eq!(env.checks[0].code, "environment_probe");
    assert_eq!(env.messages, agent.descriptor().messages);
    for (what, err) in [
        ("models", inspector.models().await.err()),
        ("quota", inspector.quota().await.err()),
        ("config_schema", inspector.config_schema().await.err()),
        ("profile", inspector.profile().await.err()),
    ] {
        assert_eq!(err, Some(InspectError::Unavailable { what }), "{what}");
    }
}

#[tokio::test]
async fn the_real_claude_cli_is_inspected_without_a_model_request() {
    let Some(cl) = crate::claude_driver::Cl::new().await else {
        return;
    };
    let before = snapshot_tree(&cl.env.config_dir);
    let agent = Agent::builder(cl.driver.clone())
        .skills([marked_skill("notes", "NOTE-MARKER")])
        .build();
    let inspector = agent.inspect();
    let env = inspector.environment().await.unwrap();
    assert!(env.healthy, "{env:?}");
    assert!(env.version.as_deref().is_some_and(|v| !v.is_empty()), "{env:?}");
    assert!(env.checks.iter().all(|c| c.code != "environment_probe"));
    let skills = inspector.skills().await.unwrap();
    assert!(skills.supported);
    assert_eq!(skills.skills[0].name.as_deref(), Some("notes"));
    let profile = inspector.profile().await.unwrap();
    assert_eq!(profile.driver_type, "claude");
    assert!(cl.requests().is_empty(), "no model task was started");
    assert_eq!(
        snapshot_tree(&cl.env.config_dir),
        before,
        "the CLI config dir is unchanged"
    );
}
