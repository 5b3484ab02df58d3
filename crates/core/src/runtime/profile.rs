//! The Agent's profile: resolving its [`Selection`](crate::profile::Selection) to a dir for the
//! driver's family, preparing it (clones), materializing its [`Resources`] (before a launch when they
//! are out of date, or on [`Agent::sync_profile`]), observing it ([`Agent::profile_state`]), the skill
//! selection ([`Agent::select_skills`]), and what a launch gets from it: the dir for the driver, the
//! profile's MCP servers and the `profile_fingerprint` thread guard. A call's own profile resources
//! merge over the Agent's for its launch, and each execution claims its profile dir ([`InUse`]) so no
//! launch or sync with other resources rewrites it under a running execution.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

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
    /// The profile claims of this Agent's executions (released by `Agent::close`).
    pub claims: Mutex<Vec<std::sync::Weak<Claim>>>,
}

impl ProfileSettings {
    /// Releases every claim this Agent's executions still hold (`Agent::close`).
    pub(crate) fn release_claims(&self) {
        let claims = std::mem::take(&mut *self.claims.lock().unwrap_or_else(|p| p.into_inner()));
        for c in claims.iter().filter_map(std::sync::Weak::upgrade) {
            c.release();
        }
    }
}

/// Profile dirs in use in this process (whichever Agent runs in them): dir -> (fingerprint,
/// executions). A launch whose fingerprint differs from a running execution's on the same dir is
/// refused rather than rewriting files under that run.
#[derive(Debug, Default)]
pub(crate) struct InUse(Mutex<HashMap<PathBuf, (String, usize)>>);

/// The process-wide [`InUse`].
fn in_use() -> &'static InUse {
    static IN_USE: OnceLock<InUse> = OnceLock::new();
    IN_USE.get_or_init(InUse::default)
}

/// One execution's claim on its profile dir, released when the execution ends (or when its Agent
/// closes, whichever comes first: release is idempotent).
#[derive(Debug)]
pub(crate) struct ProfileLease {
    claim: std::sync::Arc<Claim>,
}

/// The shared state of a claim: the Agent keeps a weak reference so `Agent::close` can release
/// the claims of executions that did not drain.
#[derive(Debug)]
pub(crate) struct Claim {
    dir: PathBuf,
    released: std::sync::atomic::AtomicBool,
}

impl Claim {
    /// Drops this claim from the process-wide map, once.
    pub(crate) fn release(&self) {
        if self.released.swap(true, std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let mut map = in_use().lock();
        if let Some((_, n)) = map.get_mut(&self.dir) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.dir);
            }
        }
    }
}

impl InUse {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, (String, usize)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuses when a running execution uses `dir` with another fingerprint.
    fn check(
        map: &HashMap<PathBuf, (String, usize)>,
        dir: &std::path::Path,
        fingerprint: &str,
    ) -> Result<(), Error> {
        match map.get(dir) {
            Some((fp, n)) if *n > 0 && fp != fingerprint => Err(ConfigError::ProfileInUse(format!(
                "{n} running execution(s) use this profile with other resources (fingerprint {}); \
                 retry when they end",
                &fp[..fp.len().min(12)]
            ))
            .into()),
            _ => Ok(()),
        }
    }
}

impl Drop for ProfileLease {
    fn drop(&mut self) {
        self.claim.release();
    }
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
    /// The execution's claim on the dir (held until it ends).
    pub lease: ProfileLease,
}

/// What [`AgentInner::snapshot`] found (and, for a launch, claimed).
struct Snap {
    resolved: profile::Resolved,
    snapshot: ProfileSnapshot,
    skills: Vec<crate::skills::MaterializedSkill>,
    lease: Option<ProfileLease>,
    /// The merged resources the snapshot is of.
    resources: Resources,
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
    fn resolve_profile(
        &self,
        name: &str,
        resources: &Resources,
    ) -> Result<Option<profile::Resolved>, ProfileError> {
        let p = &self.profile;
        if p.selection == Selection::Default && resources.is_empty() {
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

    /// Observes, prepares-and-syncs-when-stale (a launch, which also claims the dir) or syncs the
    /// profile with `selected` skills and the call's resources merged over the Agent's; `None`
    /// without a profile.
    fn snapshot(
        &self,
        name: &str,
        selected: Option<&[String]>,
        mode: Mode,
        call: &Resources,
    ) -> Result<Option<Snap>, Error> {
        let resources = if call.is_empty() {
            Cow::Borrowed(&self.profile.resources)
        } else {
            Cow::Owned(self.profile.resources.clone().merge(call.clone()))
        };
        let resolved = match self.resolve_profile(name, &resources) {
            Ok(r) => r,
            Err(ProfileError::Unsupported(d)) if !call.is_empty() => {
                return Err(ConfigError::ProfileResourcesUnsupported(format!(
                    "the {d} driver has no profile to put them in"
                ))
                .into());
            }
            Err(e) => return Err(config_err(e)),
        };
        let Some(r) = resolved else {
            return Ok(None);
        };
        if !call.is_empty() {
            refuse_call_resources(&r, call)?;
        }
        let mut warnings = Vec::new();
        if mode != Mode::Observe {
            warnings = clone::prepare(&r).map_err(config_err)?;
        }
        let mut refs = self.profile_skills(selected);
        for s in &call.skills {
            if !refs.iter().any(|k| k.key == s.key) {
                refs.push(s.clone());
            }
        }
        let run = format!("profile-{}", uuid::Uuid::new_v4().simple());
        // At launch the run's identity is in scope; `sync_profile` runs under the Agent's default.
        let materialized = super::identity::sync_scope_or(self.defaults.identity.as_ref(), || {
            super::skills::materialize(
                &refs,
                self.skill_provider.as_deref(),
                self.skill_materializer.as_ref(),
                &run,
            )
        })?;
        let skills = materialized
            .as_ref()
            .map(|m| m.skills.clone())
            .unwrap_or_default();
        let desired = sync::Desired {
            resources: &resources,
            skills: &skills,
        };
        let driver_type = &self.descriptor.driver_type;
        let mut snap = sync::sync(driver_type, name, &r, desired, false);
        let stale = snap.resources.iter().any(|s| {
            s.managed
                && s.error.is_empty()
                && s.materialization == ProfileResourceMaterialization::NotMaterialized
        });
        let mut lease = None;
        if mode != Mode::Observe {
            // Claim (a launch) or check (a sync) and write under one lock, so no write lands under a
            // running execution with other resources.
            let mut map = in_use().lock();
            InUse::check(&map, &r.dir, &snap.fingerprint)?;
            if mode == Mode::Sync || (stale && r.managed()) {
                snap = sync::sync(driver_type, name, &r, desired, true);
            }
            if mode == Mode::Launch {
                let entry = map
                    .entry(r.dir.clone())
                    .or_insert_with(|| (snap.fingerprint.clone(), 0));
                entry.0.clone_from(&snap.fingerprint);
                entry.1 += 1;
                let claim = std::sync::Arc::new(Claim {
                    dir: r.dir.clone(),
                    released: std::sync::atomic::AtomicBool::new(false),
                });
                let mut claims = self.profile.claims.lock().unwrap_or_else(|p| p.into_inner());
                claims.retain(|c| c.strong_count() > 0);
                claims.push(std::sync::Arc::downgrade(&claim));
                lease = Some(ProfileLease { claim });
            }
        }
        snap.warnings.extend(warnings);
        // The materialized copies are only the source of the profile's own: dropped here.
        drop(materialized);
        Ok(Some(Snap {
            resolved: r,
            snapshot: snap,
            skills,
            lease,
            resources: resources.into_owned(),
        }))
    }

    pub(super) fn selected(&self) -> Option<Vec<String>> {
        self.profile
            .selected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// What a launch under identity profile `name` takes from the profile (with the call's profile
    /// resources merged over the Agent's; synced first when out of date, and claimed for the
    /// execution); `None` without a profile.
    pub(crate) fn profile_launch(&self, name: &str, call: &Resources) -> Result<Option<Launch>, Error> {
        let selected = self.selected();
        let Some(snap) = self.snapshot(name, selected.as_deref(), Mode::Launch, call)? else {
            return Ok(None);
        };
        if let Some(bad) = snap.snapshot.resources.iter().find(|s| !s.error.is_empty()) {
            return Err(ConfigError::InvalidDriverConfig(format!(
                "profile resource {:?}: {}",
                bad.kind, bad.error
            ))
            .into());
        }
        let lease = snap
            .lease
            .ok_or_else(|| Error::Infrastructure("profile launch without a claim".into()))?;
        Ok(Some(Launch {
            target: ProfileTarget {
                managed: snap.resolved.managed(),
                dir: snap.resolved.dir,
            },
            fingerprint: snap.snapshot.fingerprint,
            mcp: snap.resources.mcp.unwrap_or_default(),
            lease,
        }))
    }
}

/// Refuses per-call profile resources the resolved profile cannot take: a native profile is never
/// written, and a family the provider does not support would be silently dropped.
fn refuse_call_resources(r: &profile::Resolved, call: &Resources) -> Result<(), Error> {
    if !r.managed() {
        return Err(ConfigError::ProfileResourcesUnsupported(
            "the native profile is never written: per-call profile resources need a managed profile \
             (default, dedicated or a clone)"
                .into(),
        )
        .into());
    }
    let declared = [
        (profile::ProfileResourceKind::Skills, !call.skills.is_empty()),
        (profile::ProfileResourceKind::Mcp, call.mcp.is_some()),
        (profile::ProfileResourceKind::Agents, call.agents.is_some()),
        (profile::ProfileResourceKind::Hooks, call.hooks.is_some()),
        (
            profile::ProfileResourceKind::Instructions,
            call.instructions.is_some(),
        ),
        (profile::ProfileResourceKind::Config, call.config.is_some()),
    ];
    for (kind, _) in declared.iter().filter(|(_, d)| *d) {
        let (support, _, why) = r.family.support(*kind);
        if support == profile::ProfileResourceSupport::Unsupported {
            return Err(ConfigError::ProfileResourcesUnsupported(format!(
                "{kind:?}: {}",
                why.unwrap_or("unsupported by this provider")
            ))
            .into());
        }
    }
    Ok(())
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
            match inner.snapshot(&name, selected.as_deref(), mode, &Resources::default())? {
                Some(s) => Ok(s.snapshot),
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
            let Some(Snap {
                snapshot: snap,
                skills,
                ..
            }) = inner.snapshot(&name, Some(&keys), Mode::Sync, &Resources::default())?
            else {
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
