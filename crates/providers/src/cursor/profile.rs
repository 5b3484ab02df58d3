//! The profile directories (`CURSOR_HOME`, `CURSOR_CONFIG_DIR`, `CURSOR_DATA_DIR` under one root, `HOME`
//! pinned to it), the child's environment, and the resume guards they imply.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::driver::process::BASE_ENV_ALLOWLIST;
use crate::driver::{Request, SessionState, session::PARAM_CWD};

use super::config::CursorConfig;

/// Guard keys: the profile directories a chat lives in.
pub const PARAM_CURSOR_HOME: &str = "cursor_home";
/// See [`PARAM_CURSOR_HOME`].
pub const PARAM_CURSOR_CONFIG_DIR: &str = "cursor_config_dir";
/// See [`PARAM_CURSOR_HOME`].
pub const PARAM_CURSOR_DATA_DIR: &str = "cursor_data_dir";

/// The profile directories of one profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// The root (`HOME` of the child).
    pub root: PathBuf,
    /// `CURSOR_HOME`: `mcp.json`, agents, hooks.
    pub home: PathBuf,
    /// `CURSOR_CONFIG_DIR`: `cli-config.json`.
    pub config: PathBuf,
    /// `CURSOR_DATA_DIR`: chats.
    pub data: PathBuf,
}

impl Profile {
    /// The profile for `config` and the caller's profile name.
    pub fn new(config: &CursorConfig, profile: &str) -> Profile {
        let root = config.profile_dir.clone().unwrap_or_else(|| {
            let name: String = profile
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            let name = if name.is_empty() {
                "default".to_owned()
            } else {
                name
            };
            let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
            home.join(".agent-adaptor").join("cursor").join(name)
        });
        Profile {
            home: root.join("home"),
            config: root.join("config"),
            data: root.join("data"),
            root,
        }
    }

    pub(super) fn guards(&self) -> [(&'static str, &Path); 3] {
        [
            (PARAM_CURSOR_HOME, &self.home),
            (PARAM_CURSOR_CONFIG_DIR, &self.config),
            (PARAM_CURSOR_DATA_DIR, &self.data),
        ]
    }

    /// The explicit variables of the child.
    pub fn vars(
        &self,
        config: &CursorConfig,
        request_env: &BTreeMap<String, String>,
        tmp: &Path,
    ) -> BTreeMap<String, String> {
        let mut v = BTreeMap::new();
        v.extend(config.common.env.iter().map(|(k, val)| (k.clone(), val.clone())));
        v.extend(request_env.iter().map(|(k, val)| (k.clone(), val.clone())));
        let s = |p: &Path| p.to_string_lossy().into_owned();
        v.insert("HOME".into(), s(&self.root));
        v.insert("TMPDIR".into(), s(tmp));
        v.insert("CURSOR_HOME".into(), s(&self.home));
        v.insert("CURSOR_CONFIG_DIR".into(), s(&self.config));
        v.insert("CURSOR_DATA_DIR".into(), s(&self.data));
        v
    }
}

pub(super) fn inherited(name: &str) -> bool {
    (name.starts_with("CURSOR_") && !["CURSOR_HOME", "CURSOR_CONFIG_DIR", "CURSOR_DATA_DIR"].contains(&name))
        || BASE_ENV_ALLOWLIST
            .iter()
            .any(|allowed| match allowed.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == *allowed,
            })
}

/// A resume whose guards differ from this request is refused before launch.
pub(super) fn guard_violation(state: &SessionState, req: &Request, profile: &Profile) -> Option<String> {
    if let Some(cwd) = state.data.get(PARAM_CWD)
        && *cwd != req.cwd.to_string_lossy()
    {
        return Some(format!(
            "session working directory changed ({cwd} -> {})",
            req.cwd.display()
        ));
    }
    for (key, dir) in profile.guards() {
        if let Some(saved) = state.data.get(key)
            && *saved != dir.to_string_lossy()
        {
            return Some(format!(
                "cursor profile directory {key} changed ({saved} -> {})",
                dir.display()
            ));
        }
    }
    None
}
