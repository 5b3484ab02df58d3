//! Materialization: turning a resolved [`SkillRef`] into a directory holding `SKILL.md` (plus whatever
//! files the skill ships), under the same size / count limits as archives.
//!
//! [`materialize_all`] resolves bare keys through the provider and materializes each skill into
//! `<root>/<key>`. A required skill's failure stops the launch; a missing source or unknown key of an
//! optional skill is skipped with a warning; an unsafe or oversized source always stops the launch
//! (a security refusal is never silent).

use std::fs;
use std::path::{Path, PathBuf};

use super::archive::{self, ArchiveError, Limits, safe_relative};
use super::error::SkillError;
use super::provider::SkillProvider;
use crate::vocab::{SkillRef, SkillSource};

/// The file every skill has.
pub const SKILL_FILE: &str = "SKILL.md";

/// A skill on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaterializedSkill {
    /// The key.
    pub key: String,
    /// The directory holding `SKILL.md`.
    pub dir: PathBuf,
    /// `name` from the `SKILL.md` front matter, when present.
    pub name: Option<String>,
    /// `description` from the `SKILL.md` front matter, when present.
    pub description: Option<String>,
}

/// Materializes one resolved skill into a fresh directory.
pub trait SkillMaterializer: Send + Sync {
    /// Writes `skill` under `dest` (which does not exist yet) and returns where its `SKILL.md` is.
    fn materialize(&self, skill: &SkillRef, dest: &Path) -> Result<MaterializedSkill, SkillError>;
}

/// The built-in materializer: directory copy (no symlinks), inline and embedded files, archives.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultSkillMaterializer {
    /// Size and count limits for every source kind.
    pub limits: Limits,
}

impl DefaultSkillMaterializer {
    /// A materializer with these limits.
    pub fn new(limits: Limits) -> Self {
        DefaultSkillMaterializer { limits }
    }
}

fn failed(key: &str, reason: impl std::fmt::Display) -> SkillError {
    SkillError::MaterializationFailed {
        key: key.to_owned(),
        reason: reason.to_string(),
    }
}

fn missing(key: &str, what: impl Into<String>) -> SkillError {
    SkillError::SourceMissing {
        key: key.to_owned(),
        what: what.into(),
    }
}

/// `name:` and `description:` of a `---` front matter block.
fn front_matter(text: &str) -> (Option<String>, Option<String>) {
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("---") {
        return (None, None);
    }
    let (mut name, mut description) = (None, None);
    for line in lines {
        if line.trim() == "---" {
            break;
        }
        let clean = |v: &str| v.trim().trim_matches('"').trim_matches('\'').to_owned();
        if let Some(v) = line.strip_prefix("name:") {
            name = Some(clean(v));
        } else if let Some(v) = line.strip_prefix("description:") {
            description = Some(clean(v));
        }
    }
    (name, description)
}

fn finish(key: &str, dir: PathBuf) -> Result<MaterializedSkill, SkillError> {
    let file = dir.join(SKILL_FILE);
    if !file.is_file() {
        return Err(missing(key, format!("{SKILL_FILE} in the skill source")));
    }
    let text = fs::read_to_string(&file).map_err(|e| failed(key, e))?;
    let (name, description) = front_matter(&text);
    Ok(MaterializedSkill {
        key: key.to_owned(),
        dir,
        name,
        description,
    })
}

/// Copies a directory tree, refusing symlinks and special files, under `limits`.
fn copy_tree(
    key: &str,
    from: &Path,
    to: &Path,
    limits: Limits,
    seen: &mut (usize, u64),
) -> Result<(), SkillError> {
    fs::create_dir_all(to).map_err(|e| failed(key, e))?;
    let mut entries: Vec<_> = fs::read_dir(from)
        .map_err(|e| failed(key, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| failed(key, e))?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        seen.0 += 1;
        if seen.0 > limits.max_entries {
            return Err(failed(
                key,
                ArchiveError::TooManyEntries {
                    limit: limits.max_entries,
                },
            ));
        }
        let ty = entry.file_type().map_err(|e| failed(key, e))?;
        let target = to.join(entry.file_name());
        if ty.is_dir() {
            copy_tree(key, &entry.path(), &target, limits, seen)?;
        } else if ty.is_file() {
            let len = entry.metadata().map_err(|e| failed(key, e))?.len();
            if len > limits.max_file_bytes {
                return Err(failed(
                    key,
                    ArchiveError::FileTooLarge {
                        path: entry.path().display().to_string(),
                        limit: limits.max_file_bytes,
                    },
                ));
            }
            seen.1 += len;
            if seen.1 > limits.max_total_bytes {
                return Err(failed(
                    key,
                    ArchiveError::TooLarge {
                        limit: limits.max_total_bytes,
                    },
                ));
            }
            fs::copy(entry.path(), &target).map_err(|e| failed(key, e))?;
        } else {
            return Err(failed(
                key,
                ArchiveError::UnsupportedEntry(entry.path().display().to_string()),
            ));
        }
    }
    Ok(())
}

/// Where `SKILL.md` sits in an extracted archive: the root, or its single top-level directory.
fn skill_root(dest: &Path) -> PathBuf {
    if dest.join(SKILL_FILE).is_file() {
        return dest.to_owned();
    }
    let dirs: Vec<PathBuf> = fs::read_dir(dest)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    match dirs.as_slice() {
        [only] if only.is_dir() => only.clone(),
        _ => dest.to_owned(),
    }
}

impl DefaultSkillMaterializer {
    fn write(&self, skill: &SkillRef, dest: &Path) -> Result<MaterializedSkill, SkillError> {
        let key = skill.key.as_str();
        match &skill.source {
            SkillSource::Dir { path } => {
                if !path.is_dir() {
                    return Err(missing(key, format!("directory {}", path.display())));
                }
                if !path.join(SKILL_FILE).is_file() {
                    return Err(missing(key, format!("{SKILL_FILE} in {}", path.display())));
                }
                copy_tree(key, path, dest, self.limits, &mut (0, 0))?;
                finish(key, dest.to_owned())
            }
            SkillSource::Inline { content } => {
                if content.trim().is_empty() {
                    return Err(failed(key, "the inline SKILL.md is empty"));
                }
                if content.len() as u64 > self.limits.max_file_bytes {
                    return Err(failed(
                        key,
                        ArchiveError::FileTooLarge {
                            path: SKILL_FILE.into(),
                            limit: self.limits.max_file_bytes,
                        },
                    ));
                }
                fs::create_dir_all(dest).map_err(|e| failed(key, e))?;
                fs::write(dest.join(SKILL_FILE), content).map_err(|e| failed(key, e))?;
                finish(key, dest.to_owned())
            }
            SkillSource::Files { files } => {
                if files.len() > self.limits.max_entries {
                    return Err(failed(
                        key,
                        ArchiveError::TooManyEntries {
                            limit: self.limits.max_entries,
                        },
                    ));
                }
                let total: u64 = files.values().map(|v| v.len() as u64).sum();
                if total > self.limits.max_total_bytes {
                    return Err(failed(
                        key,
                        ArchiveError::TooLarge {
                            limit: self.limits.max_total_bytes,
                        },
                    ));
                }
                fs::create_dir_all(dest).map_err(|e| failed(key, e))?;
                for (name, content) in files {
                    let rel = safe_relative(name)
                        .and_then(|r| r.ok_or_else(|| ArchiveError::UnsafePath(name.clone())))
                        .map_err(|e| failed(key, e))?;
                    if content.len() as u64 > self.limits.max_file_bytes {
                        return Err(failed(
                            key,
                            ArchiveError::FileTooLarge {
                                path: name.clone(),
                                limit: self.limits.max_file_bytes,
                            },
                        ));
                    }
                    let path = dest.join(rel);
                    if let Some(p) = path.parent() {
                        fs::create_dir_all(p).map_err(|e| failed(key, e))?;
                    }
                    fs::write(path, content).map_err(|e| failed(key, e))?;
                }
                finish(key, dest.to_owned())
            }
            SkillSource::Archive { path } => {
                if !path.is_file() {
                    return Err(missing(key, format!("archive {}", path.display())));
                }
                archive::extract_file(path, None, dest, self.limits).map_err(|e| failed(key, e))?;
                finish(key, skill_root(dest))
            }
            SkillSource::Key => Err(SkillError::NotFound(key.to_owned())),
        }
    }
}

impl SkillMaterializer for DefaultSkillMaterializer {
    fn materialize(&self, skill: &SkillRef, dest: &Path) -> Result<MaterializedSkill, SkillError> {
        let r = self.write(skill, dest);
        if r.is_err() {
            let _ = fs::remove_dir_all(dest);
        }
        r
    }
}

/// A usable key: 1–64 characters of `[A-Za-z0-9._-]`, not starting with a dot.
pub fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 64
        && !key.starts_with('.')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The outcome of [`materialize_all`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Materialization {
    /// The skills on disk, in request order.
    pub skills: Vec<MaterializedSkill>,
    /// Optional skills skipped (missing source or unknown key), one line each.
    pub warnings: Vec<String>,
}

/// Resolves and materializes `skills` under `root/<key>`. Stops at the first error that must stop the
/// launch (see the module docs).
pub fn materialize_all(
    skills: &[SkillRef],
    provider: Option<&dyn SkillProvider>,
    materializer: &dyn SkillMaterializer,
    root: &Path,
) -> Result<Materialization, SkillError> {
    let mut out = Materialization::default();
    for skill in skills {
        if !valid_key(&skill.key) {
            return Err(SkillError::KeyMissing(skill.key.clone()));
        }
        let resolved = match &skill.source {
            SkillSource::Key => provider.and_then(|p| p.resolve(&skill.key)).map(|mut r| {
                r.key.clone_from(&skill.key);
                r.required |= skill.required;
                r
            }),
            _ => Some(skill.clone()),
        };
        let result = match resolved {
            Some(r) if r.source == SkillSource::Key => Err(SkillError::NotFound(skill.key.clone())),
            Some(r) => materializer.materialize(&r, &root.join(&skill.key)),
            None => Err(SkillError::NotFound(skill.key.clone())),
        };
        match result {
            Ok(m) => out.skills.push(m),
            Err(e @ (SkillError::NotFound(_) | SkillError::SourceMissing { .. })) if !skill.required => {
                out.warnings.push(format!("optional skill skipped: {e}"));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_read() {
        let (n, d) = front_matter("---\nname: review\ndescription: \"Reviews code\"\n---\n# Body");
        assert_eq!(n.as_deref(), Some("review"));
        assert_eq!(d.as_deref(), Some("Reviews code"));
        assert_eq!(front_matter("# no front matter"), (None, None));
    }

    #[test]
    fn keys_are_checked() {
        assert!(valid_key("code-review_2.1"));
        for bad in ["", ".hidden", "a/b", "../x", "sp ace"] {
            assert!(!valid_key(bad), "{bad}");
        }
    }
}
