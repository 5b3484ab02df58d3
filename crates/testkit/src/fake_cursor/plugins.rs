//! The skills the fake finds in its `--plugin-dir` plugins, read as Cursor's plugins reference documents
//! them (`cursor.com/docs/reference/plugins.md`): a plugin needs `.cursor-plugin/plugin.json` with a valid
//! `name` (`providers::cursor::plugin::valid_name`), and its skills are `skills/<dir>/SKILL.md`, named by
//! the frontmatter `name` (else the directory) and described by `description`. The fake's own choices: a
//! directory that is not a valid plugin is skipped with a warning on stderr (the real CLI's reaction is not
//! documented); a manifest `skills` path field is not honoured (the driver never writes one); frontmatter
//! values are read from single-line `key: value` entries.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::providers::cursor::plugin::{MANIFEST, valid_name};

/// One skill found in a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSkill {
    /// The plugin's manifest name.
    pub plugin: String,
    /// The skill's name.
    pub name: String,
    /// The skill's description (empty when it has none).
    pub description: String,
}

/// The skills of every valid plugin in `dirs`, sorted by plugin and name.
pub fn skills(dirs: &[PathBuf], err: &mut dyn Write) -> Vec<FoundSkill> {
    let mut found = Vec::new();
    for dir in dirs {
        match plugin_name(dir) {
            Ok(plugin) => found.extend(plugin_skills(dir, &plugin)),
            Err(why) => {
                let _ = writeln!(err, "Warning: ignoring plugin {}: {why}", dir.display());
            }
        }
    }
    found.sort_by(|a, b| (&a.plugin, &a.name).cmp(&(&b.plugin, &b.name)));
    found
}

fn plugin_name(dir: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).map_err(|e| format!("no {MANIFEST}: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("invalid {MANIFEST}: {e}"))?;
    match v.get("name").and_then(|n| n.as_str()) {
        Some(n) if valid_name(n) => Ok(n.to_owned()),
        Some(n) => Err(format!("invalid plugin name {n:?}")),
        None => Err("the manifest has no name".into()),
    }
}

fn plugin_skills(dir: &Path, plugin: &str) -> Vec<FoundSkill> {
    let Ok(entries) = std::fs::read_dir(dir.join("skills")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join("SKILL.md")).ok()?;
            let field = |key: &str| frontmatter(&text, key);
            Some(FoundSkill {
                plugin: plugin.to_owned(),
                name: field("name").unwrap_or_else(|| e.file_name().to_string_lossy().into_owned()),
                description: field("description").unwrap_or_default(),
            })
        })
        .collect()
}

/// A single-line `key: value` of the leading `---` frontmatter block.
fn frontmatter(text: &str, key: &str) -> Option<String> {
    let mut lines = text.lines();
    if lines.next()?.trim() != "---" {
        return None;
    }
    lines
        .take_while(|l| l.trim() != "---")
        .find_map(|l| {
            l.strip_prefix(key)?
                .strip_prefix(':')
                .map(|v| v.trim().to_owned())
        })
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plugin(root: &Path, name: &str, skills: &[(&str, &str)]) -> PathBuf {
        let dir = root.join(name.replace(['"', ' '], "_"));
        std::fs::create_dir_all(dir.join(".cursor-plugin")).unwrap();
        std::fs::write(dir.join(MANIFEST), format!("{{\"name\":\"{name}\"}}")).unwrap();
        for (key, body) in skills {
            std::fs::create_dir_all(dir.join("skills").join(key)).unwrap();
            std::fs::write(dir.join("skills").join(key).join("SKILL.md"), body).unwrap();
        }
        dir
    }

    #[test]
    fn only_valid_plugins_count_and_frontmatter_names_win() {
        let t = tempfile::tempdir().unwrap();
        let good = plugin(
            t.path(),
            "run-skills",
            &[
                ("a", "---\nname: alpha\ndescription: first one\n---\nbody\n"),
                ("b", "no frontmatter\n"),
            ],
        );
        let bad = plugin(t.path(), "Bad Name", &[("c", "---\nname: gamma\n---\n")]);
        let missing = t.path().join("nothing");
        let mut err = Vec::new();
        let found = skills(&[good, bad, missing], &mut err);
        let names: Vec<_> = found
            .iter()
            .map(|s| (s.name.as_str(), s.description.as_str()))
            .collect();
        assert_eq!(names, [("alpha", "first one"), ("b", "")]);
        assert!(found.iter().all(|s| s.plugin == "run-skills"));
        let err = String::from_utf8(err).unwrap();
        assert_eq!(err.matches("Warning: ignoring plugin").count(), 2, "{err}");
    }
}
