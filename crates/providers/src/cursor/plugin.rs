//! A run's skills as a per-run Cursor plugin, passed with `--plugin-dir`.
//!
//! Layout, from Cursor's plugins reference (`cursor.com/docs/reference/plugins.md`): a plugin is a
//! directory with a `.cursor-plugin/plugin.json` manifest whose one required field is `name` (lowercase
//! kebab-case: alphanumerics, hyphens and periods, starting and ending alphanumeric), and its skills in
//! `skills/<skill>/SKILL.md`. `--plugin-dir` itself comes from the Go original (`cursor/driver.go`), not
//! from Cursor's CLI parameter docs, and nothing here was checked against a real Cursor binary.
//!
//! The plugin is a copied skill overlay (`skills::SkillOverlay::create_copied`) plus the manifest; it
//! lives under the system temp dir, never in the profile, and dropping it removes it.

use std::io;
use std::path::Path;

use crate::skills::{MaterializedSkill, SkillOverlay};

/// The manifest's `name`.
pub const PLUGIN_NAME: &str = "agent-adaptor-run-skills";

/// Where the manifest sits inside a plugin.
pub const MANIFEST: &str = ".cursor-plugin/plugin.json";

/// Where skills sit inside a plugin.
pub const SKILLS_LAYOUT: &str = "skills";

/// Whether `name` is a valid plugin name (see the module docs).
pub fn valid_name(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    edge(name.chars().next())
        && edge(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// The run's plugin, or `None` without skills.
pub fn project(run_id: &str, skills: &[MaterializedSkill]) -> io::Result<Option<SkillOverlay>> {
    let Some(overlay) = SkillOverlay::create_copied("cursor", run_id, Path::new(SKILLS_LAYOUT), skills)?
    else {
        return Ok(None);
    };
    let manifest = overlay.root().join(MANIFEST);
    if let Some(dir) = manifest.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let body = serde_json::json!({
        "name": PLUGIN_NAME,
        "description": "The skills of one agent-adaptor run",
    });
    std::fs::write(&manifest, format!("{body:#}\n"))?;
    Ok(Some(overlay))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugin_has_the_documented_layout_and_goes_away() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("k");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("SKILL.md"), "---\nname: k\ndescription: d\n---\n").unwrap();
        let skill = MaterializedSkill {
            key: "k".into(),
            dir,
            name: None,
            description: None,
        };
        assert!(project("r", &[]).unwrap().is_none(), "no skills, no plugin");
        let p = project("r1", &[skill]).unwrap().unwrap();
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p.root().join(MANIFEST)).unwrap()).unwrap();
        assert_eq!(manifest["name"], PLUGIN_NAME);
        assert!(valid_name(PLUGIN_NAME));
        assert!(p.root().join("skills/k/SKILL.md").is_file());
        let root = p.root().to_owned();
        drop(p);
        assert!(!root.exists());
    }

    #[test]
    fn plugin_names_follow_the_documented_rule() {
        for ok in ["my-plugin", "prompts.chat", "a", "a1"] {
            assert!(valid_name(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "My-plugin", "a_b", ".a", "a b"] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
