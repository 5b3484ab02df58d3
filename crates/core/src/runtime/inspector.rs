//! [`Inspector`] ([`Agent::inspect`]): the Agent's inspection handle — environment, models, quota,
//! configuration schema, skills and profile state — over the Agent's captured driver and configuration.
//! Nothing here starts a model task or writes into a profile or CLI config dir.
//!
//! Fallbacks when the driver has no probe (never a faked success):
//! * environment — a descriptor-derived report: no version, the descriptor's message capability and one
//!   `environment_probe` check at `warn` saying health is unknown;
//! * models, quota, configuration schema — [`InspectError::Unavailable`] (the descriptor knows nothing);
//! * skills — always answers: the descriptor says whether the driver takes skills, and every configured
//!   ref is resolved and materialized into a private temp dir (removed before returning) to read its
//!   `SKILL.md`, each failure reported on its skill;
//! * profile — [`InspectError::Unavailable`] for a driver without a profile family, else
//!   [`Agent::profile_state`] (observe only).

use serde::Serialize;

use super::agent::Agent;
use super::skills::RunSkills;
use crate::driver::{
    ConfigSchema, EnvironmentCheck, EnvironmentReport, InspectError, ModelInfo, QuotaReport,
};
use crate::profile::{Family, ProfileSnapshot};
use crate::skills::{SkillError, materialize_all};
use crate::vocab::{SkillRef, SkillSource};

/// The inspection handle of an [`Agent`]. Cheap to clone; it shares the Agent.
#[derive(Debug, Clone)]
pub struct Inspector {
    agent: Agent,
}

/// Where a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillSourceKind {
    /// A directory.
    Dir,
    /// An inline `SKILL.md`.
    Inline,
    /// Embedded files.
    Files,
    /// An archive.
    Archive,
    /// A bare key for the skill provider.
    Key,
}

impl SkillSourceKind {
    /// The kind of `source`.
    pub fn of(source: &SkillSource) -> Self {
        match source {
            SkillSource::Dir { .. } => SkillSourceKind::Dir,
            SkillSource::Inline { .. } => SkillSourceKind::Inline,
            SkillSource::Files { .. } => SkillSourceKind::Files,
            SkillSource::Archive { .. } => SkillSourceKind::Archive,
            SkillSource::Key => SkillSourceKind::Key,
        }
    }
}

/// Why one skill could not be resolved or materialized.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillProbeError {
    /// The skill error code (`skill_not_found`, `skill_source_missing`, …).
    pub code: String,
    /// The error text (may name a configured path).
    pub message: String,
}

/// One configured skill as inspected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InspectedSkill {
    /// The key.
    pub key: String,
    /// The kind of the configured ref.
    pub source: SkillSourceKind,
    /// For a bare key the provider resolved: the kind it resolved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<SkillSourceKind>,
    /// A failure stops the launch.
    pub required: bool,
    /// `name` from its `SKILL.md`.
    pub name: Option<String>,
    /// `description` from its `SKILL.md`.
    pub description: Option<String>,
    /// Why it could not be resolved or materialized (`None`: it materializes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<SkillProbeError>,
}

/// The skills report of an Agent: what its runs and its profile would get.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillReport {
    /// Driver type.
    pub driver_type: String,
    /// Whether the driver takes skills at all (descriptor).
    pub supported: bool,
    /// The Agent's skills (every run gets them), each resolved and materialized read-only.
    pub skills: Vec<InspectedSkill>,
    /// The process-local selection ([`Agent::select_skills`]), when one was made.
    pub selected: Option<Vec<String>>,
    /// The profile's skills under that selection.
    pub profile: Vec<InspectedSkill>,
    /// The keys the skill provider offers; `None` without a provider or without a catalogue.
    pub catalog: Option<Vec<String>>,
    /// Report-level notes (e.g. an unsupported driver).
    pub warnings: Vec<String>,
}

impl SkillReport {
    /// The report with every error message replaced by its code (for a view that must not show the
    /// server's paths).
    pub fn without_messages(mut self) -> Self {
        for s in self.skills.iter_mut().chain(self.profile.iter_mut()) {
            if let Some(e) = &mut s.error {
                e.message.clone_from(&e.code);
            }
        }
        self
    }
}

impl Agent {
    /// The inspection handle of this Agent (see [`Inspector`]).
    pub fn inspect(&self) -> Inspector {
        Inspector { agent: self.clone() }
    }
}

impl Inspector {
    /// Environment health, detected version and effective message capability; without a driver probe,
    /// the descriptor-derived report (status `warn`, no version).
    pub async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        match self.agent.driver().environment().await {
            Err(InspectError::Unavailable { .. }) => Ok(self.descriptor_environment()),
            other => other,
        }
    }

    fn descriptor_environment(&self) -> EnvironmentReport {
        let d = self.agent.descriptor();
        EnvironmentReport::from_checks(
            &d.driver_type,
            None,
            vec![EnvironmentCheck {
                code: "environment_probe".into(),
                status: crate::driver::CheckStatus::Warn,
                message: format!(
                    "the {} driver has no environment probe: health and version are unknown, the message \
                     capability is the descriptor's",
                    d.driver_type
                ),
            }],
            d.messages.clone(),
        )
    }

    /// The models the provider offers (the driver's probe, else unavailable).
    pub async fn models(&self) -> Result<Vec<ModelInfo>, InspectError> {
        self.agent.driver().models().await
    }

    /// Quota windows (the driver's probe, else unavailable).
    pub async fn quota(&self) -> Result<QuotaReport, InspectError> {
        self.agent.driver().quota().await
    }

    /// The driver's configuration schema, else unavailable.
    pub async fn config_schema(&self) -> Result<ConfigSchema, InspectError> {
        self.agent
            .driver()
            .config_schema()
            .ok_or(InspectError::Unavailable {
                what: "config_schema",
            })
    }

    /// Desired versus materialized state of the Agent's profile (observe only); unavailable for a
    /// driver without a profile family.
    pub async fn profile(&self) -> Result<ProfileSnapshot, InspectError> {
        if Family::for_driver(&self.agent.descriptor().driver_type).is_none() {
            return Err(InspectError::Unavailable { what: "profile" });
        }
        self.agent
            .profile_state()
            .await
            .map_err(|e| InspectError::Failed {
                what: "profile",
                message: e.to_string(),
            })
    }

    /// The skills report (see [`SkillReport`]); materialization runs on a blocking thread into a private
    /// temp dir that is removed before this returns.
    pub async fn skills(&self) -> Result<SkillReport, InspectError> {
        let agent = self.agent.clone();
        tokio::task::spawn_blocking(move || skill_report(&agent))
            .await
            .map_err(|e| InspectError::Failed {
                what: "skills",
                message: e.to_string(),
            })
    }
}

fn skill_report(agent: &Agent) -> SkillReport {
    let inner = &agent.inner;
    let d = &inner.descriptor;
    let selected = inner.selected();
    let guard = RunSkills {
        root: std::env::temp_dir()
            .join("agent-adaptor-skills")
            .join(format!("inspect-{}", uuid::Uuid::new_v4().simple())),
        skills: Vec::new(),
    };
    let mut n = 0usize;
    let mut inspect_all = |refs: &[SkillRef]| -> Vec<InspectedSkill> {
        refs.iter()
            .map(|r| {
                n += 1;
                inspect_one(agent, r, &guard.root.join(n.to_string()))
            })
            .collect()
    };
    let skills = inspect_all(&inner.defaults.skills);
    let profile = inspect_all(&inner.profile_skills(selected.as_deref()));
    drop(guard);
    let mut warnings = Vec::new();
    if !d.skills.supported {
        warnings.push(format!(
            "the {} driver does not take skills: none of these reach its CLI",
            d.driver_type
        ));
    }
    SkillReport {
        driver_type: d.driver_type.clone(),
        supported: d.skills.supported,
        skills,
        selected,
        profile,
        catalog: super::identity::sync_scope_or(inner.defaults.identity.as_ref(), || {
            inner.skill_provider.as_ref().and_then(|p| p.catalog())
        }),
        warnings,
    }
}

/// Resolves and materializes one ref under `root` (as a required skill, so every failure is typed).
fn inspect_one(agent: &Agent, r: &SkillRef, root: &std::path::Path) -> InspectedSkill {
    // Inspection is an Agent operation: host hooks see the Agent's default identity.
    super::identity::sync_scope_or(agent.inner.defaults.identity.as_ref(), || {
        inspect_skill(agent, r, root)
    })
}

fn inspect_skill(agent: &Agent, r: &SkillRef, root: &std::path::Path) -> InspectedSkill {
    let inner = &agent.inner;
    let provider = inner.skill_provider.as_deref();
    let resolved = match r.source {
        SkillSource::Key => provider
            .and_then(|p| p.resolve(&r.key))
            .map(|s| SkillSourceKind::of(&s.source)),
        _ => None,
    };
    let mut entry = InspectedSkill {
        key: r.key.clone(),
        source: SkillSourceKind::of(&r.source),
        resolved,
        required: r.required,
        name: None,
        description: None,
        error: None,
    };
    let strict = SkillRef {
        required: true,
        ..r.clone()
    };
    match materialize_all(
        std::slice::from_ref(&strict),
        provider,
        inner.skill_materializer.as_ref(),
        root,
    ) {
        Ok(m) => {
            if let Some(s) = m.skills.into_iter().next() {
                entry.name = s.name;
                entry.description = s.description;
            }
        }
        Err(e) => entry.error = Some(probe_error(&e)),
    }
    entry
}

fn probe_error(e: &SkillError) -> SkillProbeError {
    SkillProbeError {
        code: e.code().to_owned(),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_kinds_and_redaction() {
        assert_eq!(
            SkillSourceKind::of(&SkillRef::inline("a", "x").source),
            SkillSourceKind::Inline
        );
        assert_eq!(SkillSourceKind::of(&SkillSource::Key), SkillSourceKind::Key);
        let e = probe_error(&SkillError::SourceMissing {
            key: "k".into(),
            what: "directory /srv/secret".into(),
        });
        assert_eq!(e.code, "skill_source_missing");
        let skill = InspectedSkill {
            key: "k".into(),
            source: SkillSourceKind::Dir,
            resolved: None,
            required: false,
            name: None,
            description: None,
            error: Some(e),
        };
        let report = SkillReport {
            driver_type: "x".into(),
            supported: true,
            skills: vec![skill.clone()],
            selected: None,
            profile: vec![skill],
            catalog: None,
            warnings: vec![],
        }
        .without_messages();
        for s in report.skills.iter().chain(&report.profile) {
            let text = serde_json::to_string(s).unwrap();
            assert!(!text.contains("/srv/secret"), "{text}");
            assert_eq!(s.error.as_ref().unwrap().message, "skill_source_missing");
        }
    }
}
