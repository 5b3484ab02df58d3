//! Skills at launch: materialized into a per-run directory the driver receives in `Request::skills`
//! (removed when the execution ends); a failure refuses the launch with the spec's skill error before
//! the driver is entered; a driver without skill support refuses skills.

use std::sync::{Arc, Mutex};

use agent_adaptor::driver::{Descriptor, Driver, InvalidConfig, Request, Response, RunIo, SkillCaps};
use agent_adaptor::runtime::{Agent, CallOptions, ErrorKind};
use agent_adaptor::skills::SkillSet;
use agent_adaptor::vocab::SkillRef;

/// Records requests and whether each skill directory existed while the driver ran.
#[derive(Clone, Default)]
struct Recorder {
    skills: bool,
    seen: Arc<Mutex<Vec<(Request, bool)>>>,
}

#[async_trait::async_trait]
impl Driver for Recorder {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: "recorder".into(),
            display_name: "recorder".into(),
            skills: SkillCaps {
                supported: self.skills,
            },
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, _io: RunIo) -> Response {
        let present = req.skills.iter().all(|s| s.dir.join("SKILL.md").is_file());
        self.seen.lock().unwrap().push((req, present));
        Response {
            text: "ok".into(),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn skills_reach_the_driver_and_are_removed_after_the_run() {
    let rec = Recorder {
        skills: true,
        ..Default::default()
    };
    let agent = Agent::builder(rec.clone())
        .skills([SkillRef::inline("base", "# base")])
        .skill_provider(Arc::new(SkillSet::new([SkillRef::inline("lib", "# lib")])))
        .build();
    agent
        .send("x", CallOptions::new().skills([SkillRef::key("lib")]))
        .result()
        .await
        .unwrap();
    let (req, present) = rec.seen.lock().unwrap()[0].clone();
    assert!(present, "the skill directories exist while the driver runs");
    let keys: Vec<_> = req.skills.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["base", "lib"], "agent skills first, call skills appended");
    for s in &req.skills {
        assert!(
            !s.dir.exists(),
            "{} is removed when the execution ends",
            s.dir.display()
        );
    }
}

#[tokio::test]
async fn a_skill_failure_refuses_the_launch_with_its_error() {
    let rec = Recorder {
        skills: true,
        ..Default::default()
    };
    let agent = Agent::new(rec.clone());
    let cases = [
        (SkillRef::key("unknown").require(), "skill_not_found"),
        (
            SkillRef::dir("gone", "/nonexistent/skill").require(),
            "skill_source_missing",
        ),
        (SkillRef::inline("empty", " "), "skill_materialization_failed"),
        (SkillRef::inline("bad/key", "# x"), "skill_key_missing"),
    ];
    for (skill, code) in cases {
        let err = agent
            .send("x", CallOptions::new().skills([skill]))
            .result()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Skill, "{err}");
        assert_eq!(err.code(), code, "{err}");
    }
    let conflict = Agent::builder(rec.clone())
        .skills([SkillRef::inline("k", "# one")])
        .build()
        .send("x", CallOptions::new().skills([SkillRef::inline("k", "# two")]))
        .result()
        .await
        .unwrap_err();
    assert_eq!(conflict.code(), "skill_key_conflict");
    assert!(
        rec.seen.lock().unwrap().is_empty(),
        "the driver was never entered"
    );
}

#[tokio::test]
async fn a_driver_without_skill_support_refuses_skills() {
    let rec = Recorder::default();
    let err = Agent::new(rec.clone())
        .send("x", CallOptions::new().skills([SkillRef::inline("k", "# x")]))
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Skill);
    assert!(rec.seen.lock().unwrap().is_empty());
}

/// A host materializer: writes its own `SKILL.md` (marked) for every skill and records the keys.
#[derive(Default)]
struct Marking {
    keys: Mutex<Vec<String>>,
}

impl agent_adaptor::skills::SkillMaterializer for Marking {
    fn materialize(
        &self,
        skill: &SkillRef,
        dest: &std::path::Path,
    ) -> Result<agent_adaptor::skills::MaterializedSkill, agent_adaptor::skills::SkillError> {
        self.keys.lock().unwrap().push(skill.key.clone());
        std::fs::create_dir_all(dest).unwrap();
        std::fs::write(
            dest.join("SKILL.md"),
            format!("# {} (host materialized)", skill.key),
        )
        .unwrap();
        Ok(agent_adaptor::skills::MaterializedSkill {
            key: skill.key.clone(),
            dir: dest.to_path_buf(),
            name: None,
            description: None,
        })
    }
}

/// Records the `SKILL.md` text of every skill while the driver runs.
#[derive(Clone, Default)]
struct Reader(Arc<Mutex<Vec<String>>>);

#[async_trait::async_trait]
impl Driver for Reader {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: "reader".into(),
            skills: SkillCaps { supported: true },
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, _io: RunIo) -> Response {
        for s in &req.skills {
            let text = std::fs::read_to_string(s.dir.join("SKILL.md")).unwrap_or_default();
            self.0.lock().unwrap().push(text);
        }
        Response {
            text: "ok".into(),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn a_custom_skill_materializer_materializes_every_launchs_skills() {
    let materializer = Arc::new(Marking::default());
    let reader = Reader::default();
    let agent = Agent::builder(reader.clone())
        .skill_materializer(materializer.clone())
        .skills([SkillRef::inline("base", "# base")])
        .build();
    agent
        .send(
            "x",
            CallOptions::new().skills([SkillRef::inline("call", "# call")]),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(
        *materializer.keys.lock().unwrap(),
        ["base", "call"],
        "it ran for every skill"
    );
    assert_eq!(
        *reader.0.lock().unwrap(),
        ["# base (host materialized)", "# call (host materialized)"],
        "the driver got what it wrote, not the built-in materialization"
    );
}
