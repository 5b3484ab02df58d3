//! Profiles: which provider config dir an Agent runs in ([`Selection`]), what the SDK materializes
//! into it ([`Resources`]), and the observed state ([`ProfileSnapshot`]).
//!
//! * [`family`] — where each provider family keeps what (native dir, settings, MCP, skills,
//!   instructions, auth) and which resources it can hold.
//! * [`clone`] — preparing a clone profile: copy settings / MCP / skills / auth, or link auth.
//! * [`hooks`] — hooks in Claude Code's `settings.json` shape, replacing only the SDK's own groups.
//! * [`sync`] — materializing resources into a managed profile dir and reporting desired versus
//!   materialized state, per resource, truthfully.
//!
//! The profile is construction-only (an Agent's selection never changes). A **native** profile is the
//! user's own config dir used in place: the SDK never writes into it (sync reports every resource as
//! not materialized there, with a warning). Every other selection is **host-managed**: the SDK owns
//! the dir and materializes resources into it.

pub mod clone;
pub mod family;
pub mod hooks;
pub mod sync;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::vocab::{McpServer, SkillRef};

pub use family::Family;

/// Which config dir an Agent's provider runs in.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Selection {
    /// The SDK-owned isolated dir of the driver (`$HOME/.agent-adaptor/<provider>/<profile>`, or the
    /// driver's configured dir).
    #[default]
    Default,
    /// The user's own dir (`~/.claude`, `~/.codex`), used in place and never modified by the SDK.
    Native,
    /// A host-chosen dir, owned by the SDK.
    Dedicated {
        /// The dir.
        dir: PathBuf,
    },
    /// An SDK-owned clone of the native dir (what is copied or linked is in the options).
    CloneNative {
        /// What the clone takes from the native dir.
        options: CloneOptions,
    },
    /// An SDK-owned clone of another dir.
    CloneFrom {
        /// The source dir.
        source: PathBuf,
        /// What the clone takes from the source.
        options: CloneOptions,
    },
}

impl Selection {
    /// The default profile.
    pub fn default_profile() -> Self {
        Selection::Default
    }

    /// The native profile.
    pub fn native() -> Self {
        Selection::Native
    }

    /// A dedicated dir.
    pub fn dedicated(dir: impl Into<PathBuf>) -> Self {
        Selection::Dedicated { dir: dir.into() }
    }

    /// A clone of the native dir.
    pub fn clone_native(options: CloneOptions) -> Self {
        Selection::CloneNative { options }
    }

    /// A clone of `source`.
    pub fn clone_from(source: impl Into<PathBuf>, options: CloneOptions) -> Self {
        Selection::CloneFrom {
            source: source.into(),
            options,
        }
    }
}

/// What a clone takes from its source. Copies are made once, when the clone dir is first prepared
/// (later changes to the source are not followed); a linked auth file follows the source.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CloneOptions {
    /// Copy the settings file (Claude `settings.json`, Codex `config.toml`).
    #[serde(default)]
    pub copy_settings: bool,
    /// Copy the MCP declarations (Claude `.claude.json`'s `mcpServers`; Codex: part of `config.toml`).
    #[serde(default)]
    pub copy_mcp: bool,
    /// Copy `skills/`.
    #[serde(default)]
    pub copy_skills: bool,
    /// Copy the credentials file (Claude `.credentials.json`, Codex `auth.json`).
    #[serde(default)]
    pub copy_auth: bool,
    /// Symlink the credentials file instead (a login refresh is shared with the source); wins over
    /// `copy_auth`.
    #[serde(default)]
    pub link_auth: bool,
    /// Where the clone lives (default: `$HOME/.agent-adaptor/<provider>/clones/<name>`).
    #[serde(default)]
    pub dir: Option<PathBuf>,
}

impl CloneOptions {
    /// Nothing copied or linked.
    pub fn new() -> Self {
        CloneOptions::default()
    }

    /// Copy the settings file.
    pub fn copy_settings(mut self) -> Self {
        self.copy_settings = true;
        self
    }

    /// Copy the MCP declarations.
    pub fn copy_mcp(mut self) -> Self {
        self.copy_mcp = true;
        self
    }

    /// Copy `skills/`.
    pub fn copy_skills(mut self) -> Self {
        self.copy_skills = true;
        self
    }

    /// Copy the credentials file.
    pub fn copy_auth(mut self) -> Self {
        self.copy_auth = true;
        self
    }

    /// Symlink the credentials file.
    pub fn link_auth(mut self) -> Self {
        self.link_auth = true;
        self
    }

    /// Applies `other`'s switches on top of these (a merge of option sets; `dir` replaces when set).
    pub fn with_options(mut self, other: CloneOptions) -> Self {
        self.copy_settings |= other.copy_settings;
        self.copy_mcp |= other.copy_mcp;
        self.copy_skills |= other.copy_skills;
        self.copy_auth |= other.copy_auth;
        self.link_auth |= other.link_auth;
        if other.dir.is_some() {
            self.dir = other.dir;
        }
        self
    }

    /// Places the clone in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }
}

/// A subagent definition (Claude Code `agents/<name>.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentSpec {
    /// Name (the file stem; letters, digits, `-`, `_`).
    pub name: String,
    /// What it is for (front matter `description`).
    pub description: String,
    /// Its system prompt (the file body).
    pub prompt: String,
}

/// A lifecycle hook: a shell command the CLI runs at an event of its agent loop. Materialized into
/// Claude Code's `settings.json` `hooks` (see [`sync`]); reported unsupported elsewhere.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSpec {
    /// The event, in the provider's vocabulary (Claude Code: `PreToolUse`, `PostToolUse`,
    /// `UserPromptSubmit`, `SessionStart`, `Stop`, …): letters and digits only.
    pub event: String,
    /// Which tools (or sources) the hook applies to, for events that filter (a tool name, `Edit|Write`,
    /// a regex); `None` matches everything.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matcher: Option<String>,
    /// The shell command; it reads the event as JSON on stdin. Exit code 2 blocks where the provider
    /// allows it (Claude Code: a `PreToolUse` hook exiting 2 refuses the tool call, its stderr is the
    /// reason the model sees).
    pub command: String,
    /// How long the command may run, in seconds (`None`: the provider's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

impl HookSpec {
    /// A hook running `command` at `event`, for every tool.
    pub fn new(event: impl Into<String>, command: impl Into<String>) -> Self {
        HookSpec {
            event: event.into(),
            matcher: None,
            command: command.into(),
            timeout_secs: None,
        }
    }

    /// Only for what `matcher` matches.
    pub fn matcher(mut self, matcher: impl Into<String>) -> Self {
        self.matcher = Some(matcher.into());
        self
    }

    /// With a timeout in seconds.
    pub fn timeout_secs(mut self, secs: u64) -> Self {
        self.timeout_secs = Some(secs);
        self
    }

    /// Why the hook cannot be materialized, if it cannot: an empty or non-alphanumeric event, an empty
    /// command, or a zero timeout.
    pub fn validate(&self) -> Result<(), String> {
        if self.event.is_empty() || !self.event.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!(
                "hook event {:?} is not an event name (letters and digits)",
                self.event
            ));
        }
        if self.command.trim().is_empty() {
            return Err(format!("the {} hook has an empty command", self.event));
        }
        if self.timeout_secs == Some(0) {
            return Err(format!("the {} hook has a zero timeout", self.event));
        }
        Ok(())
    }
}

/// A settings patch: a JSON merge patch (RFC 7386) applied to the profile's settings file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigPatch {
    /// The patch.
    pub patch: serde_json::Value,
}

/// What a profile holds besides the CLI's own state. Skills append; every other family is replaced
/// by a non-`None` value (an empty list clears it) — the merge rules of [`Resources::merge`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Resources {
    /// Skills (appended across scopes).
    #[serde(default)]
    pub skills: Vec<SkillRef>,
    /// MCP servers.
    #[serde(default)]
    pub mcp: Option<Vec<McpServer>>,
    /// Subagents.
    #[serde(default)]
    pub agents: Option<Vec<AgentSpec>>,
    /// Hooks.
    #[serde(default)]
    pub hooks: Option<Vec<HookSpec>>,
    /// Instructions (the profile's memory file).
    #[serde(default)]
    pub instructions: Option<String>,
    /// Settings patches, applied in order.
    #[serde(default)]
    pub config: Option<Vec<ConfigPatch>>,
}

impl Resources {
    /// `other` over `self`: skills append (a duplicate key with other content is refused by the core
    /// like any skill conflict), every other non-`None` family replaces.
    pub fn merge(mut self, other: Resources) -> Resources {
        self.skills.extend(other.skills);
        macro_rules! replace {
            ($($f:ident),*) => { $( if other.$f.is_some() { self.$f = other.$f; } )* };
        }
        replace!(mcp, agents, hooks, instructions, config);
        self
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
            && self.mcp.is_none()
            && self.agents.is_none()
            && self.hooks.is_none()
            && self.instructions.is_none()
            && self.config.is_none()
    }
}

/// Who owns the profile dir.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileKind {
    /// The user's own dir, shared with their interactive use (native): never written by the SDK.
    Shared,
    /// An SDK-owned dir (default, dedicated, clones).
    HostManaged,
}

/// The resource families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileResourceKind {
    /// Skills.
    Skills,
    /// MCP servers.
    Mcp,
    /// Subagents.
    Agents,
    /// Hooks.
    Hooks,
    /// Instructions.
    Instructions,
    /// Settings patches.
    Config,
}

impl ProfileResourceKind {
    /// Every family, in report order.
    pub const ALL: [ProfileResourceKind; 6] = [
        ProfileResourceKind::Skills,
        ProfileResourceKind::Mcp,
        ProfileResourceKind::Agents,
        ProfileResourceKind::Hooks,
        ProfileResourceKind::Instructions,
        ProfileResourceKind::Config,
    ];
}

/// How a provider supports a resource family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileResourceSupport {
    /// Native and portable across the built-in providers.
    PortableCore,
    /// Native on this provider, with provider-specific extras.
    PortableExtended,
    /// Only through a provider-specific escape hatch.
    NativeEscape,
    /// Emulated (e.g. injected into the prompt).
    Fallback,
    /// Not supported on this provider.
    Unsupported,
}

/// How a resource reached (or did not reach) the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileResourceMaterialization {
    /// Handed to the CLI through its native per-run mechanism (flags, `-c` overrides).
    NativeManaged,
    /// Written as files into the profile dir, where the CLI reads them.
    FileManaged,
    /// Injected into the prompt.
    PromptInjected,
    /// Emulated some other way.
    Fallback,
    /// Not materialized (unsupported, not declared, native profile, or a failure — see the warnings).
    NotMaterialized,
}

/// One resource family's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSnapshot {
    /// The family.
    pub kind: ProfileResourceKind,
    /// The desired state's fingerprint (empty when nothing is declared).
    pub fingerprint: String,
    /// Whether the SDK manages this family in the profile dir.
    pub managed: bool,
    /// What the profile holds that the SDK did not put there (e.g. skills already in the dir).
    pub external: Vec<String>,
    /// The provider's support.
    pub support: ProfileResourceSupport,
    /// How it is materialized now.
    pub materialization: ProfileResourceMaterialization,
    /// Warnings.
    pub warnings: Vec<String>,
    /// The materialization error, empty when none.
    pub error: String,
}

/// The identity of an Agent's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentProfile {
    /// The identity's profile name.
    pub name: String,
    /// The selection.
    pub selection: Selection,
    /// The resolved dir.
    pub dir: PathBuf,
    /// Where a clone came from.
    pub source: Option<PathBuf>,
}

/// Desired versus materialized state of an Agent's profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileSnapshot {
    /// The driver type.
    pub driver_type: String,
    /// The profile.
    pub profile: AgentProfile,
    /// Who owns the dir.
    pub kind: ProfileKind,
    /// The fingerprint of the whole desired profile (dir + every resource): the thread guard
    /// `profile_fingerprint`.
    pub fingerprint: String,
    /// One entry per family ([`ProfileResourceKind::ALL`]).
    pub resources: Vec<ResourceSnapshot>,
    /// Profile-level warnings.
    pub warnings: Vec<String>,
}

impl ProfileSnapshot {
    /// The entry of `kind`.
    pub fn resource(&self, kind: ProfileResourceKind) -> Option<&ResourceSnapshot> {
        self.resources.iter().find(|r| r.kind == kind)
    }
}

/// Why a profile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// The driver has no profile family (only the Claude and Codex families are built in).
    #[error("the {0} driver does not support profile selection")]
    Unsupported(String),
    /// The native dir does not exist (nothing to use or clone).
    #[error("the source profile {0} does not exist")]
    SourceMissing(PathBuf),
    /// A declared resource cannot be materialized as given (e.g. a hook without a command).
    #[error("invalid {kind:?} resource: {reason}")]
    Invalid {
        /// The family.
        kind: ProfileResourceKind,
        /// What is wrong.
        reason: String,
    },
    /// A file operation failed.
    #[error("profile {path}: {reason}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl ProfileError {
    pub(crate) fn io(path: &Path, e: impl std::fmt::Display) -> Self {
        ProfileError::Io {
            path: path.to_owned(),
            reason: e.to_string(),
        }
    }
}

/// A selection resolved to a dir for one provider family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The family.
    pub family: Family,
    /// The selection.
    pub selection: Selection,
    /// The dir the CLI runs with.
    pub dir: PathBuf,
    /// Where a clone copies from.
    pub source: Option<PathBuf>,
    /// Who owns the dir.
    pub kind: ProfileKind,
}

impl Resolved {
    /// Whether the SDK may write into the dir.
    pub fn managed(&self) -> bool {
        self.kind == ProfileKind::HostManaged
    }
}

/// Resolves `selection` for `family` under `home` (the user's home dir); `None` for
/// [`Selection::Default`], which the driver resolves itself. `profile` names a clone's default dir.
pub fn resolve(family: Family, selection: &Selection, home: &Path, profile: &str) -> Option<Resolved> {
    let clone_dir = |o: &CloneOptions| {
        o.dir.clone().unwrap_or_else(|| {
            home.join(".agent-adaptor")
                .join(family.name())
                .join("clones")
                .join(family::safe_name(profile))
        })
    };
    let (dir, source, kind) = match selection {
        Selection::Default => return None,
        Selection::Native => (family.native_dir(home), None, ProfileKind::Shared),
        Selection::Dedicated { dir } => (dir.clone(), None, ProfileKind::HostManaged),
        Selection::CloneNative { options } => (
            clone_dir(options),
            Some(family.native_dir(home)),
            ProfileKind::HostManaged,
        ),
        Selection::CloneFrom { source, options } => {
            (clone_dir(options), Some(source.clone()), ProfileKind::HostManaged)
        }
    };
    Some(Resolved {
        family,
        selection: selection.clone(),
        dir,
        source,
        kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_merge_by_family() {
        let base = Resources {
            skills: vec![SkillRef::inline("a", "x")],
            instructions: Some("base".into()),
            mcp: Some(vec![McpServer::stdio("s", "node", vec![])]),
            ..Default::default()
        };
        let call = Resources {
            skills: vec![SkillRef::inline("b", "y")],
            mcp: Some(vec![]),
            ..Default::default()
        };
        let m = base.merge(call);
        assert_eq!(m.skills.len(), 2, "skills append");
        assert_eq!(m.mcp, Some(vec![]), "a non-None empty list clears");
        assert_eq!(
            m.instructions.as_deref(),
            Some("base"),
            "None leaves a family alone"
        );
        assert!(Resources::default().is_empty() && !m.is_empty());
    }

    #[test]
    fn selections_resolve_per_family() {
        let home = Path::new("/h");
        assert_eq!(resolve(Family::Claude, &Selection::Default, home, "p"), None);
        let n = resolve(Family::Codex, &Selection::native(), home, "p").unwrap();
        assert_eq!(
            (n.dir.as_path(), n.kind),
            (Path::new("/h/.codex"), ProfileKind::Shared)
        );
        assert!(!n.managed());
        let c = resolve(
            Family::Claude,
            &Selection::clone_native(CloneOptions::new()),
            home,
            "team/x",
        )
        .unwrap();
        assert_eq!(c.dir, Path::new("/h/.agent-adaptor/claude/clones/teamx"));
        assert_eq!(c.source.as_deref(), Some(Path::new("/h/.claude")));
        assert!(c.managed());
        let f = resolve(
            Family::Codex,
            &Selection::clone_from("/src", CloneOptions::new().in_dir("/c")),
            home,
            "",
        )
        .unwrap();
        assert_eq!(
            (f.dir.as_path(), f.source.as_deref()),
            (Path::new("/c"), Some(Path::new("/src")))
        );
        let d = resolve(Family::Claude, &Selection::dedicated("/d"), home, "").unwrap();
        assert_eq!(
            (d.dir.as_path(), d.kind),
            (Path::new("/d"), ProfileKind::HostManaged)
        );
        let o = CloneOptions::new()
            .copy_auth()
            .with_options(CloneOptions::new().link_auth().in_dir("/z"));
        assert!(o.copy_auth && o.link_auth && o.dir.as_deref() == Some(Path::new("/z")));
    }
}
