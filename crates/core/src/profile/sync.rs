//! Materializing profile resources into a managed profile dir, and the desired-versus-materialized
//! report ([`ProfileSnapshot`]).
//!
//! What lands where (a manifest, `.agent-adaptor-profile.json`, records what the SDK wrote and the
//! fingerprint of each family, so a later observation compares without rewriting, and so only what the
//! SDK wrote is ever removed):
//!
//! | family | Claude | Codex |
//! |---|---|---|
//! | skills | `skills/<key>/` (FileManaged) | `skills/<key>/` (FileManaged) |
//! | MCP | per run (`--mcp-config`), NativeManaged | per run (`-c mcp_servers.*`), NativeManaged |
//! | instructions | a marked block in `CLAUDE.md` | a marked block in `AGENTS.md` |
//! | agents | `agents/<name>.md` | unsupported |
//! | config | JSON merge patches on `settings.json` | unsupported (the driver owns `config.toml`) |
//! | hooks | SDK-owned matcher groups in `settings.json` `hooks` ([`super::hooks`]) | unsupported (hook trust) |
//!
//! A native (shared) profile is never written: its declared files are reported not materialized with a
//! warning (MCP still reaches every run, per run).

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::clone::copy_tree;
use super::family::Family;
use super::hooks::ManagedHook;
use super::{
    AgentProfile, ProfileError, ProfileResourceKind, ProfileResourceMaterialization, ProfileResourceSupport,
    ProfileSnapshot, Resolved, ResourceSnapshot, Resources,
};
use crate::skills::MaterializedSkill;

/// The manifest file.
pub const MANIFEST: &str = ".agent-adaptor-profile.json";
/// The start of the SDK's block in an instructions file.
pub const BLOCK_BEGIN: &str = "<!-- agent-adaptor:begin -->";
/// Its end.
pub const BLOCK_END: &str = "<!-- agent-adaptor:end -->";

/// What the SDK wrote into a profile dir.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The materialized fingerprint per family.
    #[serde(default)]
    pub fingerprints: BTreeMap<ProfileResourceKind, String>,
    /// Skill keys the SDK wrote under `skills/`.
    #[serde(default)]
    pub skills: Vec<String>,
    /// Agent names the SDK wrote under `agents/`.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Hook groups the SDK added to the settings file.
    #[serde(default)]
    pub hooks: Vec<ManagedHook>,
}

impl Manifest {
    /// Reads the manifest of `dir` (empty when absent or unreadable).
    pub fn read(dir: &Path) -> Manifest {
        fs::read_to_string(dir.join(MANIFEST))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn write(&self, dir: &Path) -> Result<(), ProfileError> {
        let file = dir.join(MANIFEST);
        let text = serde_json::to_string_pretty(self).map_err(|e| ProfileError::io(&file, e))?;
        atomic_write(&file, text.as_bytes())
    }
}

/// The desired state: the merged resources and their skills, already materialized by the core.
#[derive(Debug, Clone, Copy)]
pub struct Desired<'a> {
    /// The resources.
    pub resources: &'a Resources,
    /// `resources.skills` (after selection), materialized.
    pub skills: &'a [MaterializedSkill],
}

fn hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The desired fingerprint of each family (empty when the family is not declared).
pub fn fingerprints(d: Desired<'_>) -> BTreeMap<ProfileResourceKind, String> {
    let r = d.resources;
    let opt = |declared: bool, enc: String| if declared { hash(&[&enc]) } else { String::new() };
    BTreeMap::from([
        (ProfileResourceKind::Skills, crate::skills::fingerprint(d.skills)),
        (ProfileResourceKind::Mcp, opt(r.mcp.is_some(), json(&r.mcp))),
        (
            ProfileResourceKind::Agents,
            opt(r.agents.is_some(), json(&r.agents)),
        ),
        (ProfileResourceKind::Hooks, opt(r.hooks.is_some(), json(&r.hooks))),
        (
            ProfileResourceKind::Instructions,
            opt(r.instructions.is_some(), json(&r.instructions)),
        ),
        (
            ProfileResourceKind::Config,
            opt(r.config.is_some(), json(&r.config)),
        ),
    ])
}

/// The whole profile's fingerprint: the dir, who owns it, and every family's desired fingerprint.
pub fn profile_fingerprint(r: &Resolved, fps: &BTreeMap<ProfileResourceKind, String>) -> String {
    let mut parts = vec![r.dir.to_string_lossy().into_owned(), format!("{:?}", r.kind)];
    parts.extend(fps.iter().map(|(k, v)| format!("{k:?}={v}")));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    hash(&refs)
}

/// Observes (`write == false`) or materializes (`write == true`) `desired` in `r`'s dir.
pub fn sync(
    driver_type: &str,
    name: &str,
    r: &Resolved,
    desired: Desired<'_>,
    write: bool,
) -> ProfileSnapshot {
    let fps = fingerprints(desired);
    let mut manifest = Manifest::read(&r.dir);
    let mut warnings = Vec::new();
    if !r.managed() {
        warnings.push(format!(
            "{} is the native profile: the SDK never writes into it",
            r.dir.display()
        ));
    }
    let mut resources = Vec::new();
    for kind in ProfileResourceKind::ALL {
        let fp = fps.get(&kind).cloned().unwrap_or_default();
        let (support, how, why) = r.family.support(kind);
        let mut snap = ResourceSnapshot {
            kind,
            fingerprint: fp.clone(),
            managed: false,
            external: external(r, kind, &manifest),
            support,
            materialization: ProfileResourceMaterialization::NotMaterialized,
            warnings: Vec::new(),
            error: String::new(),
        };
        if fp.is_empty() {
            resources.push(snap);
            continue;
        }
        if support == ProfileResourceSupport::Unsupported {
            snap.warnings.push(why.unwrap_or("unsupported").to_owned());
            resources.push(snap);
            continue;
        }
        if how == ProfileResourceMaterialization::NativeManaged {
            // Per run, whatever the dir: nothing to write.
            snap.materialization = how;
            snap.managed = true;
            resources.push(snap);
            continue;
        }
        if !r.managed() {
            snap.warnings
                .push("declared but not materialized: the native profile is never modified".into());
            resources.push(snap);
            continue;
        }
        snap.managed = true;
        if write {
            match materialize(r, kind, desired, &mut manifest) {
                Ok(()) => {
                    manifest.fingerprints.insert(kind, fp.clone());
                }
                Err(e) => snap.error = e.to_string(),
            }
        }
        if snap.error.is_empty() && manifest.fingerprints.get(&kind) == Some(&fp) {
            snap.materialization = how;
        } else if snap.error.is_empty() {
            snap.warnings
                .push("not materialized yet (sync_profile writes it)".into());
        }
        resources.push(snap);
    }
    if write && r.managed() {
        // Families no longer declared are removed from what the SDK wrote.
        for kind in [
            ProfileResourceKind::Skills,
            ProfileResourceKind::Agents,
            ProfileResourceKind::Hooks,
            ProfileResourceKind::Instructions,
        ] {
            if fps.get(&kind).is_some_and(String::is_empty) && manifest.fingerprints.contains_key(&kind) {
                let empty = Resources::default();
                let none = Desired {
                    resources: &empty,
                    skills: &[],
                };
                if let Err(e) = materialize(r, kind, none, &mut manifest) {
                    warnings.push(format!("cannot remove the {kind:?} the SDK wrote: {e}"));
                } else {
                    manifest.fingerprints.remove(&kind);
                }
            }
        }
        if let Err(e) = manifest.write(&r.dir) {
            warnings.push(e.to_string());
        }
    }
    ProfileSnapshot {
        driver_type: driver_type.to_owned(),
        profile: AgentProfile {
            name: name.to_owned(),
            selection: r.selection.clone(),
            dir: r.dir.clone(),
            source: r.source.clone(),
        },
        kind: r.kind,
        fingerprint: profile_fingerprint(r, &fps),
        resources,
        warnings,
    }
}

/// Entries of the family in the dir that the SDK did not write.
fn external(r: &Resolved, kind: ProfileResourceKind, m: &Manifest) -> Vec<String> {
    let list = |sub: &str, ours: &[String], strip_md: bool| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(r.dir.join(sub))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .map(|n| {
                        if strip_md {
                            n.trim_end_matches(".md").to_owned()
                        } else {
                            n
                        }
                    })
                    .filter(|n| !n.starts_with('.') && !ours.contains(n))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    match kind {
        ProfileResourceKind::Skills => list("skills", &m.skills, false),
        ProfileResourceKind::Agents if r.family == Family::Claude => list("agents", &m.agents, true),
        _ => Vec::new(),
    }
}

fn atomic_write(file: &Path, bytes: &[u8]) -> Result<(), ProfileError> {
    let dir = file.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| ProfileError::io(dir, e))?;
    let tmp = dir.join(format!(".agent-adaptor-{}.tmp", uuid::Uuid::new_v4().simple()));
    fs::write(&tmp, bytes).map_err(|e| ProfileError::io(&tmp, e))?;
    fs::rename(&tmp, file).map_err(|e| ProfileError::io(file, e))
}

fn materialize(
    r: &Resolved,
    kind: ProfileResourceKind,
    d: Desired<'_>,
    m: &mut Manifest,
) -> Result<(), ProfileError> {
    match kind {
        ProfileResourceKind::Skills => write_skills(&r.dir, d.skills, m),
        ProfileResourceKind::Instructions => {
            let file = r.dir.join(r.family.instructions_file());
            let old = fs::read_to_string(&file).unwrap_or_default();
            let text = replace_block(&old, d.resources.instructions.as_deref());
            atomic_write(&file, text.as_bytes())
        }
        ProfileResourceKind::Agents => write_agents(&r.dir, d.resources.agents.as_deref().unwrap_or(&[]), m),
        ProfileResourceKind::Config => {
            let file = r.dir.join(r.family.settings_file());
            let mut doc = read_settings(&file)?;
            for p in d.resources.config.as_deref().unwrap_or(&[]) {
                merge_patch(&mut doc, &p.patch);
            }
            atomic_write(&file, doc.to_string().as_bytes())
        }
        ProfileResourceKind::Hooks => {
            let file = r.dir.join(r.family.settings_file());
            let mut doc = read_settings(&file)?;
            let hooks = d.resources.hooks.as_deref().unwrap_or(&[]);
            m.hooks = super::hooks::apply(&mut doc, &m.hooks, hooks)?;
            atomic_write(&file, doc.to_string().as_bytes())
        }
        ProfileResourceKind::Mcp => Ok(()),
    }
}

/// The JSON settings file (`{}` when absent); an unreadable or unparsable file is an error, never
/// silently replaced (it is the user's as much as the SDK's).
fn read_settings(file: &Path) -> Result<serde_json::Value, ProfileError> {
    match fs::read_to_string(file) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| ProfileError::io(file, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(serde_json::json!({})),
        Err(e) => Err(ProfileError::io(file, e)),
    }
}

/// Removes what the SDK wrote earlier and no longer wants; already gone is fine, anything else is an
/// error (a stale skill or agent left in place would keep reaching the CLI).
fn remove_stale(path: &Path, remove: fn(&Path) -> std::io::Result<()>) -> Result<(), ProfileError> {
    match remove(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ProfileError::io(path, e)),
        _ => Ok(()),
    }
}

fn write_skills(dir: &Path, skills: &[MaterializedSkill], m: &mut Manifest) -> Result<(), ProfileError> {
    let root = dir.join("skills");
    fs::create_dir_all(&root).map_err(|e| ProfileError::io(&root, e))?;
    let wanted: Vec<String> = skills.iter().map(|s| s.key.clone()).collect();
    for old in m.skills.iter().filter(|k| !wanted.contains(k)) {
        remove_stale(&root.join(old), |p| fs::remove_dir_all(p))?;
    }
    for s in skills {
        // Written beside, then swapped in: a run starting meanwhile sees the old or the new skill.
        let tmp = root.join(format!(".{}.{}", s.key, uuid::Uuid::new_v4().simple()));
        copy_tree(&s.dir, &tmp)?;
        let target = root.join(&s.key);
        if target.exists() {
            fs::remove_dir_all(&target).map_err(|e| ProfileError::io(&target, e))?;
        }
        fs::rename(&tmp, &target).map_err(|e| ProfileError::io(&target, e))?;
    }
    m.skills = wanted;
    Ok(())
}

fn write_agents(dir: &Path, agents: &[super::AgentSpec], m: &mut Manifest) -> Result<(), ProfileError> {
    let root = dir.join("agents");
    let wanted: Vec<String> = agents.iter().map(|a| super::family::safe_name(&a.name)).collect();
    for old in m.agents.iter().filter(|k| !wanted.contains(k)) {
        remove_stale(&root.join(format!("{old}.md")), |p| fs::remove_file(p))?;
    }
    for (a, name) in agents.iter().zip(&wanted) {
        let text = format!(
            "---\nname: {name}\ndescription: {}\n---\n\n{}\n",
            a.description.replace('\n', " "),
            a.prompt
        );
        atomic_write(&root.join(format!("{name}.md")), text.as_bytes())?;
    }
    m.agents = wanted;
    Ok(())
}

/// `text` with the SDK's marked block replaced by `block` (removed when `None`); the rest is kept.
pub fn replace_block(text: &str, block: Option<&str>) -> String {
    let mut rest = text.to_owned();
    if let (Some(b), Some(e)) = (rest.find(BLOCK_BEGIN), rest.find(BLOCK_END))
        && b < e
    {
        let end = e + BLOCK_END.len();
        let end = if rest[end..].starts_with('\n') {
            end + 1
        } else {
            end
        };
        rest.replace_range(b..end, "");
    }
    match block {
        None => rest,
        Some(body) => {
            let mut out = rest.trim_end().to_owned();
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&format!("{BLOCK_BEGIN}\n{}\n{BLOCK_END}\n", body.trim_end()));
            out
        }
    }
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut serde_json::Value, patch: &serde_json::Value) {
    let serde_json::Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = serde_json::json!({});
    }
    let t = target.as_object_mut().expect("an object");
    for (k, v) in p {
        if v.is_null() {
            t.remove(k);
        } else {
            merge_patch(t.entry(k.clone()).or_insert(serde_json::Value::Null), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_instructions_block_is_replaced_and_the_rest_kept() {
        let once = replace_block("mine\n", Some("SDK one"));
        assert_eq!(once, format!("mine\n\n{BLOCK_BEGIN}\nSDK one\n{BLOCK_END}\n"));
        let twice = replace_block(&once, Some("SDK two"));
        assert!(twice.starts_with("mine\n") && twice.contains("SDK two") && !twice.contains("SDK one"));
        assert_eq!(replace_block(&twice, None).trim_end(), "mine");
    }

    #[test]
    fn merge_patches_follow_rfc_7386() {
        let mut doc = serde_json::json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge_patch(&mut doc, &serde_json::json!({"a": null, "b": {"c": 9}, "e": [1]}));
        assert_eq!(doc, serde_json::json!({"b": {"c": 9, "d": 3}, "e": [1]}));
    }
}
