//! Per-run skill overlays and skill fingerprints.
//!
//! A profile's config dir is shared by every run of that profile, so one run's skills must not be
//! written into it (a concurrent run would see them, and removing them would race). Instead each run
//! gets its own **overlay**: a fresh directory under the system temp dir holding one symlink per skill
//! (`<overlay>/<layout>/<key>` → the materialized skill directory), handed to the CLI through a per-run
//! mechanism (Claude Code: `--add-dir <overlay>` with the layout `.claude/skills`; Codex: the
//! app-server's `skills/extraRoots/set` with the skills directory itself; CodeBuddy:
//! `CODEBUDDY_SESSION_SKILL_DIRS`). Cursor gets a **copied** overlay ([`SkillOverlay::create_copied`], a
//! plugin passed with `--plugin-dir`): its docs say nothing about symlinked skills and no real binary is
//! here to try, so it gets plain files. Dropping the overlay removes it; the skill directories themselves
//! belong to the core.
//!
//! [`fingerprint`] hashes what the model can see of a set of skills (keys, relative paths and file
//! contents), so a changed skill changes a thread's profile guard even when its reference did not.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::MaterializedSkill;

/// One run's skill overlay; dropping it removes the directory (never the skills it points to).
#[derive(Debug)]
pub struct SkillOverlay {
    root: PathBuf,
    skills_dir: PathBuf,
}

impl SkillOverlay {
    /// Creates `<temp>/agent-adaptor-skill-overlays/<label>-<run id>/<layout>/<key>` symlinks for
    /// `skills`; `None` when there are none.
    pub fn create(
        label: &str,
        run_id: &str,
        layout: &Path,
        skills: &[MaterializedSkill],
    ) -> io::Result<Option<SkillOverlay>> {
        SkillOverlay::build(label, run_id, layout, skills, false)
    }

    /// Like [`create`](Self::create), but `<layout>/<key>` is a copy of each skill directory (regular
    /// files and directories; symlinks inside a skill are followed, as the materializer left them).
    pub fn create_copied(
        label: &str,
        run_id: &str,
        layout: &Path,
        skills: &[MaterializedSkill],
    ) -> io::Result<Option<SkillOverlay>> {
        SkillOverlay::build(label, run_id, layout, skills, true)
    }

    fn build(
        label: &str,
        run_id: &str,
        layout: &Path,
        skills: &[MaterializedSkill],
        copy: bool,
    ) -> io::Result<Option<SkillOverlay>> {
        if skills.is_empty() {
            return Ok(None);
        }
        let name = crate::driver::file_label(&format!("{label}-{run_id}"));
        let root = std::env::temp_dir()
            .join("agent-adaptor-skill-overlays")
            .join(format!("{name}-{}", uuid::Uuid::new_v4().simple()));
        let overlay = SkillOverlay {
            skills_dir: root.join(layout),
            root,
        };
        fs::create_dir_all(&overlay.skills_dir)?;
        for s in skills {
            let target = fs::canonicalize(&s.dir)?;
            let entry = overlay.skills_dir.join(&s.key);
            if copy {
                copy_tree(&target, &entry)?;
            } else {
                std::os::unix::fs::symlink(target, entry)?;
            }
        }
        Ok(Some(overlay))
    }

    /// The overlay's root (Claude Code's `--add-dir`).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding one entry per skill (Codex's extra skills root).
    pub fn skills_dir(&self) -> &Path {
        &self.skills_dir
    }
}

impl Drop for SkillOverlay {
    fn drop(&mut self) {
        if let Err(e) = fs::remove_dir_all(&self.root)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %self.root.display(), "cannot remove a skill overlay: {e}");
        }
    }
}

/// Copies the tree at `from` to `to` (created), following symlinks; special files and dangling
/// symlinks are skipped, any other I/O error is returned. Shared with the profile's clones and syncs.
pub(crate) fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let meta = match fs::metadata(&src) {
            Ok(m) => m,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(err),
        };
        if meta.is_dir() {
            copy_tree(&src, &dst)?;
        } else if meta.is_file() {
            fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// The content fingerprint of `skills` (order-independent): each key with every file below its
/// directory (relative path and bytes). Unreadable entries count by name, so a failure still changes
/// the fingerprint instead of hiding a change. Empty for no skills.
pub fn fingerprint(skills: &[MaterializedSkill]) -> String {
    if skills.is_empty() {
        return String::new();
    }
    let mut sorted: Vec<&MaterializedSkill> = skills.iter().collect();
    sorted.sort_by(|a, b| a.key.cmp(&b.key));
    let mut h = Sha256::new();
    for s in sorted {
        h.update(s.key.as_bytes());
        h.update([0]);
        hash_tree(&mut h, &s.dir, Path::new(""));
        h.update([1]);
    }
    hex::encode(h.finalize())
}

/// Hashes the tree at `dir` into `h` (entries sorted by name; symlinks followed once by `metadata`).
pub fn hash_tree(h: &mut Sha256, dir: &Path, rel: &Path) {
    let mut entries: Vec<_> = match fs::read_dir(dir) {
        Ok(d) => d.flatten().collect(),
        Err(e) => {
            h.update(format!("unreadable {}: {e}", rel.display()).as_bytes());
            return;
        }
    };
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let rel = rel.join(e.file_name());
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => hash_tree(h, &path, &rel),
            Ok(_) => match fs::read(&path) {
                Ok(bytes) => {
                    h.update((bytes.len() as u64).to_le_bytes());
                    h.update(&bytes);
                }
                Err(err) => h.update(format!("unreadable: {err}").as_bytes()),
            },
            Err(err) => h.update(format!("unreadable: {err}").as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(root: &Path, key: &str, body: &str) -> MaterializedSkill {
        let dir = root.join(key);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("SKILL.md"), body).unwrap();
        MaterializedSkill {
            key: key.into(),
            dir,
            name: None,
            description: None,
        }
    }

    #[test]
    fn the_overlay_links_each_skill_under_its_layout_and_goes_away_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let a = skill(t.path(), "alpha", "---\nname: alpha\n---\n");
        let o = SkillOverlay::create("claude", "run/1", Path::new(".claude/skills"), &[a])
            .unwrap()
            .unwrap();
        let link = o.root().join(".claude/skills/alpha");
        assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(
            fs::read_to_string(link.join("SKILL.md")).unwrap(),
            "---\nname: alpha\n---\n"
        );
        assert_eq!(o.skills_dir(), o.root().join(".claude/skills"));
        let root = o.root().to_owned();
        drop(o);
        assert!(!root.exists(), "the overlay is removed");
        assert!(
            t.path().join("alpha/SKILL.md").is_file(),
            "the skill itself stays"
        );
        assert!(
            SkillOverlay::create("x", "r", Path::new(""), &[])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn a_copied_overlay_holds_plain_files_and_goes_away_on_drop() {
        let t = tempfile::tempdir().unwrap();
        let a = skill(t.path(), "alpha", "---\nname: alpha\n---\n");
        fs::create_dir_all(a.dir.join("scripts")).unwrap();
        fs::write(a.dir.join("scripts/run.sh"), "echo hi").unwrap();
        let o = SkillOverlay::create_copied("cursor", "r/1", Path::new("skills"), &[a])
            .unwrap()
            .unwrap();
        let entry = o.skills_dir().join("alpha");
        assert!(fs::symlink_metadata(&entry).unwrap().is_dir(), "a real directory");
        assert_eq!(
            fs::read_to_string(entry.join("SKILL.md")).unwrap(),
            "---\nname: alpha\n---\n"
        );
        assert_eq!(
            fs::read_to_string(entry.join("scripts/run.sh")).unwrap(),
            "echo hi"
        );
        let root = o.root().to_owned();
        drop(o);
        assert!(!root.exists(), "the overlay is removed");
        assert!(t.path().join("alpha/scripts/run.sh").is_file(), "the skill stays");
    }

    #[test]
    fn copy_tree_skips_dangling_links_and_reports_a_missing_source() {
        let t = tempfile::tempdir().unwrap();
        let from = t.path().join("from");
        fs::create_dir_all(from.join("sub")).unwrap();
        fs::write(from.join("sub/a.md"), "a").unwrap();
        std::os::unix::fs::symlink(t.path().join("gone"), from.join("dangling")).unwrap();
        copy_tree(&from, &t.path().join("to")).unwrap();
        assert_eq!(fs::read_to_string(t.path().join("to/sub/a.md")).unwrap(), "a");
        assert!(fs::symlink_metadata(t.path().join("to/dangling")).is_err());
        let err = copy_tree(&t.path().join("nope"), &t.path().join("to2")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn the_fingerprint_follows_content_not_order() {
        let t = tempfile::tempdir().unwrap();
        let a = skill(t.path(), "a", "one");
        let b = skill(t.path(), "b", "two");
        let fp = fingerprint(&[a.clone(), b.clone()]);
        assert_eq!(fp, fingerprint(&[b.clone(), a.clone()]));
        assert_eq!(fingerprint(&[]), "");
        fs::write(b.dir.join("extra.txt"), "x").unwrap();
        let with_file = fingerprint(&[a.clone(), b.clone()]);
        assert_ne!(fp, with_file, "a new file changes it");
        fs::write(b.dir.join("extra.txt"), "y").unwrap();
        assert_ne!(with_file, fingerprint(&[a, b]), "changed bytes change it");
    }
}
