//! The Agent's profile: resolving its [`Selection`](crate::profile::Selection) to a dir for the
//! driver's family, preparing it (clones), materializing its [`Resources`] (before a launch when they
//! are out of date, or on [`Agent::sync_profile`]), observing it ([`Agent::profile_state`]), the skill
//! selection ([`Agent::select_skills`]), and what a launch gets from it: the dir for the driver, the
//! profile's MCP servers and the `profile_fingerprint` thread guard.

use std::path::PathBuf;
use std::sync::Mutex;

use super::agent::{Agent, AgentInner};
use super::error::{ConfigError, Error};
use crate::driver::ProfileTarget;
use crate::profile::{
    self, Family, ProfileError, ProfileResourceMaterialization, ProfileSnapshot, Resources, Selection, clone,
    sync,
};
use crate::vocab::{McpServer, SkillRef};

/// The Agent's construction-only profile settings and its process-local skill selection.
#[derive(Debug, Default)]
pub(crate) struct ProfileSettings {
    pub selection: Selection,
    pub resources: Resources,
    pub selected: Mutex<Option<Vec<String>>>,
    /// The home the native and clone dirs resolve under (`$HOME` when unset).
    pub home: Option<PathBuf>,
}

/// What a profile snapshot may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Observe only (nothing is created or written).
    Observe,
    /// Prepare the dir, and sync when something is out of date.
    Launch,
    /// Prepare and sync.
    Sync,
}

/// What one launch takes from the profile.
pub(crate) struct Launch {
    pub target: ProfileTarget,
    pub fingerprint: String,
    pub mcp: Vec<McpServer>,
}

/// One skill of a [`SkillSnapshot`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillInfo {
    /// The key.
    pub key: String,
    /// `name` from its `SKILL.md`.
    pub name: Option<String>,
    /// `description` from its `SKILL.md`.
    pub description: Option<String>,
}

/// The profile's skills after a selection.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkillSnapshot {
    /// The selected keys, in order.
    pub selected: Vec<String>,
    /// The selected skills as materialized.
    pub skills: Vec<SkillInfo>,
    /// The profile snapshot after the sync.
    pub profile: ProfileSnapshot,
}

fn config_err(e: ProfileError) -> Error {
    ConfigError::InvalidDriverConfig(format!("profile: {e}")).into()
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from)
}

impl AgentInner {
    /// The resolved profile for the identity profile `name`; `None` for a default profile without
    /// resources (the driver's own dir, untouched by the core).
    fn resolve_profile(&self, name: &str) -> Result<Option<profile::Resolved>, ProfileError> {
        let p = &self.profile;
        if p.selection == Selection::Default && p.resources.is_empty() {
            return Ok(None);
        }
        let driver_type = &self.descriptor.driver_type;
        let family =
            Family::for_driver(driver_type).ok_or_else(|| ProfileError::Unsupported(driver_type.clone()))?;
        if let Some(r) = profile::resolve(family, &p.selection, &p.home.clone().unwrap_or_else(home), name) {
            return Ok(Some(r));
        }
        let dir = self
            .driver
            .profile_dir(name)
            .ok_or_else(|| ProfileError::Unsupported(driver_type.clone()))?;
        Ok(Some(profile::Resolved {
            family,
            selection: Selection::Default,
            dir,
            source: None,
            kind: profile::ProfileKind::HostManaged,
        }))
    }

    /// The skill refs of the profile: the selection (looked up in the profile's and the Agent's
    /// skills, else a required bare key for the skill provider, so an unknown key fails) or the
    /// profile's own.
    pub(super) fn profile_skills(&self, selected: Option<&[String]>) -> Vec<SkillRef> {
        let Some(keys) = selected else {
            return self.profile.resources.skills.clone();
        };
        keys.iter()
            .map(|k| {
                self.profile
                    .resources
                    .skills
                    .iter()
                    .chain(self.defaults.skills.iter())
                    .find(|s| &s.key == k)
                    .cloned()
                    .unwrap_or_else(|| SkillRef::key(k.clone()).require())
            })
            .collect()
    }

    /// Observes, prepares-and-syncs-when-stale (a launch) or syncs the profile with `selected` skills;
    /// `None` without one.
    fn snapshot(
        &self,
        name: &str,
        selected: Option<&[String]>,
        mode: Mode,
    ) -> Result<
        Option<(
            profile::Resolved,
            ProfileSnapshot,
            Vec<crate::skills::MaterializedSkill>,
        )>,
        Error,
    > {
        let Some(r) = self.resolve_profile(name).map_err(config_err)? else {
            return Ok(None);
        };
        let write = mode == Mode::Sync;
        let mut warnings = Vec::new();
        if mode != Mode::Observe {
            warnings = clone::prepare(&r).map_err(config_err)?;
        }
        let refs = self.profile_skills(selected);
        let run = format!("profile-{}", uuid::Uuid::new_v4().simple());
        let materialized = super::skills::materialize(
            &refs,
            self.skill_provider.as_deref(),
            self.skill_materializer.as_ref(),
            &run,
        )?;
        let skills = materialized
            .as_ref()
            .map(|m| m.skills.clone())
            .unwrap_or_default();
        let desired = sync::Desired {
            resources: &self.profile.resources,
            skills: &skills,
        };
        let driver_type = &self.descriptor.driver_type;
        let mut snap = sync::sync(driver_type, name, &r, desired, false);
        let stale = snap.resources.iter().any(|s| {
            s.managed
                && s.error.is_empty()
                && s.materialization == ProfileResourceMaterialization::NotMaterialized
        });
        if write || (mode == Mode::Launch && stale && r.managed()) {
            snap = sync::sync(driver_type, name, &r, desired, true);
        }
        snap.warnings.extend(warnings);
        // The materialized copies are only the source of the profile's own: dropped here.
        drop(materialized);
        Ok(Some((r, snap, skills)))
    }

    pub(super) fn selected(&self) -> Option<Vec<String>> {
        self.profile
            .selected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What a launch under identity profile `name` takes from the profile (syncing it first when out
    /// of date); `None` without a profile.
    pub(crate) fn profile_launch(&self, name: &str) -> Result<Option<Launch>, Error> {
        let selected = self.selected();
        let Some((r, snap, _)) = self.snapshot(name, selected.as_deref(), Mode::Launch)? else {
            return Ok(None);
        };
        if let Some(bad) = snap.resources.iter().find(|s| !s.error.is_empty()) {
            return Err(ConfigError::InvalidDriverConfig(format!(
                "profile resource {:?}: {}",
                bad.kind, bad.error
            ))
            .into());
        }
        Ok(Some(Launch {
            target: ProfileTarget {
                managed: r.managed(),
                dir: r.dir,
            },
            fingerprint: snap.fingerprint,
            mcp: self.profile.resources.mcp.clone().unwrap_or_default(),
        }))
    }
}

impl Agent {
    /// The identity profile name of the Agent's defaults.
    fn profile_name(&self) -> String {
        self.inner
            .defaults
            .identity
            .as_ref()
            .map(|i| i.profile.clone())
            .unwrap_or_default()
    }

    /// Desired versus materialized state of the Agent's profile (nothing is written). An Agent with
    /// the default profile and no profile resources reports the driver's own dir with nothing declared.
    pub async fn profile_state(&self) -> Result<ProfileSnapshot, Error> {
        self.profile_snapshot(false).await
    }

    /// Materializes the profile's resources into its dir (never into a native profile) and reports the
    /// result per resource.
    pub async fn sync_profile(&self) -> Result<ProfileSnapshot, Error> {
        self.profile_snapshot(true).await
    }

    async fn profile_snapshot(&self, write: bool) -> Result<ProfileSnapshot, Error> {
        let agent = self.clone();
        let name = self.profile_name();
        tokio::task::spawn_blocking(move || {
            let inner = &agent.inner;
            let selected = inner.selected();
            let mode = if write { Mode::Sync } else { Mode::Observe };
            match inner.snapshot(&name, selected.as_deref(), mode)? {
                Some((_, snap, _)) => Ok(snap),
                None => default_snapshot(inner, &name).map_err(config_err),
            }
        })
        .await
        .map_err(|e| Error::Infrastructure(format!("profile task: {e}")))?
    }

    /// Selects the profile's skills by key (from the profile's skills, the Agent's skills, or the
    /// skill provider) and syncs them into the profile. An unknown key (or any failure) leaves the
    /// selection unchanged and returns the error.
    pub async fn select_skills(&self, keys: &[String]) -> Result<SkillSnapshot, Error> {
        let agent = self.clone();
        let name = self.profile_name();
        let keys = keys.to_vec();
        tokio::task::spawn_blocking(move || {
            let inner = &agent.inner;
            let Some((_, snap, skills)) = inner.snapshot(&name, Some(&keys), Mode::Sync)? else {
                return Err(config_err(ProfileError::Unsupported(
                    inner.descriptor.driver_type.clone(),
                )));
            };
            *inner.profile.selected.lock().unwrap_or_else(|p| p.into_inner()) = Some(keys.clone());
            Ok(SkillSnapshot {
                selected: keys,
                skills: skills
                    .into_iter()
                    .map(|s| SkillInfo {
                        key: s.key,
                        name: s.name,
                        description: s.description,
                    })
                    .collect(),
                profile: snap,
            })
        })
        .await
        .map_err(|e| Error::Infrastructure(format!("profile task: {e}")))?
    }
}

/// The report of a default profile without resources: the driver's dir, nothing declared.
fn default_snapshot(inner: &AgentInner, name: &str) -> Result<ProfileSnapshot, ProfileError> {
    let driver_type = &inner.descriptor.driver_type;
    let family =
        Family::for_driver(driver_type).ok_or_else(|| ProfileError::Unsupported(driver_type.clone()))?;
    let dir = inner
        .driver
        .profile_dir(name)
        .ok_or_else(|| ProfileError::Unsupported(driver_type.clone()))?;
    let r = profile::Resolved {
        family,
        selection: Selection::Default,
        dir,
        source: None,
        kind: profile::ProfileKind::HostManaged,
    };
    let empty = Resources::default();
    Ok(sync::sync(
        driver_type,
        name,
        &r,
        sync::Desired {
            resources: &empty,
            skills: &[],
        },
        false,
    ))
}
