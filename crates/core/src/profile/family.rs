//! Where each provider family keeps what in a config dir, and which profile resources it can hold.
//!
//! | | Claude Code (`CLAUDE_CONFIG_DIR`) | Codex (`CODEX_HOME`) |
//! |---|---|---|
//! | native dir | `~/.claude` | `~/.codex` |
//! | settings | `settings.json` | `config.toml` |
//! | MCP | `.claude.json` `mcpServers` (native: `~/.claude.json`) | `config.toml` `[mcp_servers]` |
//! | skills | `skills/<name>/SKILL.md` | `skills/<name>/SKILL.md` |
//! | instructions | `CLAUDE.md` | `AGENTS.md` |
//! | auth | `.credentials.json` | `auth.json` |
//! | agents | `agents/<name>.md` | — |
//! | hooks | `settings.json` `hooks` | — (needs user-granted hook trust) |

use std::path::{Path, PathBuf};

use super::{ProfileResourceKind, ProfileResourceMaterialization, ProfileResourceSupport};

/// A provider family with a config dir layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
}

impl Family {
    /// The family of a driver type (`None`: profile selection is not supported).
    pub fn for_driver(driver_type: &str) -> Option<Family> {
        match driver_type {
            "claude" => Some(Family::Claude),
            "codex" => Some(Family::Codex),
            _ => None,
        }
    }

    /// The provider name.
    pub fn name(self) -> &'static str {
        match self {
            Family::Claude => "claude",
            Family::Codex => "codex",
        }
    }

    /// The user's own config dir under `home`.
    pub fn native_dir(self, home: &Path) -> PathBuf {
        match self {
            Family::Claude => home.join(".claude"),
            Family::Codex => home.join(".codex"),
        }
    }

    /// The settings file.
    pub fn settings_file(self) -> &'static str {
        match self {
            Family::Claude => "settings.json",
            Family::Codex => "config.toml",
        }
    }

    /// The credentials file.
    pub fn auth_file(self) -> &'static str {
        match self {
            Family::Claude => ".credentials.json",
            Family::Codex => "auth.json",
        }
    }

    /// The instructions (memory) file the CLI reads from its config dir.
    pub fn instructions_file(self) -> &'static str {
        match self {
            Family::Claude => "CLAUDE.md",
            Family::Codex => "AGENTS.md",
        }
    }

    /// The file holding the MCP declarations of `dir` (Claude keeps them in `.claude.json`, next to the
    /// dir for the native `~/.claude`, inside it otherwise); `None` when they live in the settings.
    pub fn mcp_file(self, dir: &Path, native: bool) -> Option<PathBuf> {
        match self {
            Family::Claude if native => dir.parent().map(|p| p.join(".claude.json")),
            Family::Claude => Some(dir.join(".claude.json")),
            Family::Codex => None,
        }
    }

    /// How this family supports `kind` and how the SDK materializes it into a managed profile (the
    /// explanation is reported as a warning when it is not materialized).
    pub fn support(
        self,
        kind: ProfileResourceKind,
    ) -> (
        ProfileResourceSupport,
        ProfileResourceMaterialization,
        Option<&'static str>,
    ) {
        use ProfileResourceMaterialization as M;
        use ProfileResourceSupport as S;
        match (self, kind) {
            (_, ProfileResourceKind::Skills) => (S::PortableCore, M::FileManaged, None),
            // Delivered with every run through the driver's per-run MCP mechanism (Claude
            // `--mcp-config`, Codex `-c mcp_servers.*`), never written into a shared file.
            (_, ProfileResourceKind::Mcp) => (S::PortableCore, M::NativeManaged, None),
            (_, ProfileResourceKind::Instructions) => (S::PortableCore, M::FileManaged, None),
            (Family::Claude, ProfileResourceKind::Agents) => (S::PortableExtended, M::FileManaged, None),
            (Family::Claude, ProfileResourceKind::Config) => (S::PortableExtended, M::FileManaged, None),
            (Family::Codex, ProfileResourceKind::Agents) => (
                S::Unsupported,
                M::NotMaterialized,
                Some("Codex has no subagent definitions"),
            ),
            (Family::Codex, ProfileResourceKind::Config) => (
                S::Unsupported,
                M::NotMaterialized,
                Some("the Codex driver owns config.toml (use the driver configuration)"),
            ),
            (Family::Claude, ProfileResourceKind::Hooks) => (S::PortableExtended, M::FileManaged, None),
            // Codex 0.171.0 has lifecycle hooks (`hooks.json`), but runs a new or changed hook only
            // after the user trusted it (a persisted hash, or `--dangerously-bypass-hook-trust`): the
            // SDK does not grant that trust on the user's behalf.
            (Family::Codex, ProfileResourceKind::Hooks) => (
                S::Unsupported,
                M::NotMaterialized,
                Some(
                    "Codex runs hooks only after the user trusts them (hooks.json + persisted trust); \
                     the SDK does not grant hook trust on the user's behalf",
                ),
            ),
        }
    }
}

/// `name` reduced to a safe path component (`default` when nothing is left).
pub fn safe_name(name: &str) -> String {
    let s: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    if s.is_empty() { "default".into() } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_support_are_per_family() {
        assert_eq!(Family::for_driver("claude"), Some(Family::Claude));
        assert_eq!(Family::for_driver("cursor"), None);
        let h = Path::new("/h");
        assert_eq!(
            Family::Claude
                .mcp_file(&Family::Claude.native_dir(h), true)
                .unwrap(),
            Path::new("/h/.claude.json")
        );
        assert_eq!(
            Family::Claude.mcp_file(Path::new("/c"), false).unwrap(),
            Path::new("/c/.claude.json")
        );
        assert!(Family::Codex.mcp_file(Path::new("/c"), false).is_none());
        let (s, m, why) = Family::Codex.support(ProfileResourceKind::Agents);
        assert_eq!(
            (s, m),
            (
                ProfileResourceSupport::Unsupported,
                ProfileResourceMaterialization::NotMaterialized
            )
        );
        assert!(why.is_some());
        assert_eq!(safe_name("a/../b"), "ab");
        assert_eq!(safe_name(""), "default");
    }
}
