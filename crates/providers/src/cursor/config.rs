//! The Cursor driver's configuration ([`CursorConfig`]: the spec's `CommonConfig`, `Model`, `Mode`,
//! `HookRelay`, plus the profile root) and the command line it produces ([`args`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::driver::{CommonConfig, InvalidConfig};

/// `--mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CursorMode {
    /// `agent`: the default, edits and commands.
    Agent,
    /// `ask`: read-only answers.
    Ask,
    /// `plan`: planning only.
    Plan,
}

impl CursorMode {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            CursorMode::Agent => "agent",
            CursorMode::Ask => "ask",
            CursorMode::Plan => "plan",
        }
    }
}

/// How the driver talks to the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CursorTransport {
    /// `cursor-agent -p --output-format stream-json`, one process per turn (the default: Cursor's
    /// documented headless mode; skills through `--plugin-dir`).
    #[default]
    Print,
    /// `agent acp`: the Agent Client Protocol over stdio (`providers::acp`): token-level text,
    /// permissions asked through the run's policy, turn-end input in the same process, resume by
    /// `session/load`.
    Acp,
}

impl CursorTransport {
    /// The name (`print`, `acp`), reported as the result's `transport`.
    pub fn as_str(self) -> &'static str {
        match self {
            CursorTransport::Print => "print",
            CursorTransport::Acp => "acp",
        }
    }
}

/// Configuration of the Cursor agent driver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CursorConfig {
    /// Command (default `cursor-agent` on `PATH`; newer installs also provide `agent`), directory, env,
    /// instructions, timeouts, grace period, extra args.
    #[serde(flatten)]
    pub common: CommonConfig,
    /// `--model`; a per-call model wins.
    pub model: Option<String>,
    /// `--mode`.
    pub mode: Option<CursorMode>,
    /// The command Cursor hooks would run to relay tool-boundary input to the host. Hooks are not wired in
    /// this driver: when set, each run says so with a `cursor_hook_unavailable` lifecycle notice and
    /// supplemental input is delivered by turn-end resume.
    pub hook_relay: Option<Vec<String>>,
    /// The profile root holding `home/` (`CURSOR_HOME`), `config/` (`CURSOR_CONFIG_DIR`) and `data/`
    /// (`CURSOR_DATA_DIR`, the chats `--resume` needs). `None` uses
    /// `$HOME/.agent-adaptor/cursor/<profile>` (the identity's profile, or `default`).
    pub profile_dir: Option<PathBuf>,
    /// The transport (`print`, the default, or `acp`).
    pub transport: CursorTransport,
}

/// Flags the driver sets itself; a host passing one in `extra_args` is a configuration error.
pub const OWNED_FLAGS: &[&str] = &[
    "-p",
    "--print",
    "--output-format",
    "--workspace",
    "--data-dir",
    "--plugin-dir",
    "--resume",
    "-m",
    "--model",
    "--mode",
    "-f",
    "--force",
    "--yolo",
];

impl CursorConfig {
    /// The program to run.
    pub fn program(&self) -> PathBuf {
        self.common
            .command
            .clone()
            .unwrap_or_else(|| PathBuf::from("cursor-agent"))
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let bad = |reason: String| InvalidConfig {
            driver: super::DRIVER_TYPE.into(),
            reason,
        };
        if self
            .common
            .command
            .as_ref()
            .is_some_and(|c| c.as_os_str().is_empty())
        {
            return Err(bad("command must not be empty".into()));
        }
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(bad("model must not be empty when set".into()));
        }
        if let Some(relay) = &self.hook_relay
            && (relay.is_empty() || relay.iter().any(|a| a.is_empty()))
        {
            return Err(bad(
                "hook_relay must be a non-empty command without empty words".into()
            ));
        }
        if let Some(dir) = &self.profile_dir
            && !dir.is_absolute()
        {
            return Err(bad(format!(
                "profile_dir must be absolute, got {}",
                dir.display()
            )));
        }
        for arg in &self.common.extra_args {
            let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
            if OWNED_FLAGS.contains(&name) {
                return Err(bad(format!(
                    "extra argument {name} overrides a flag the cursor driver sets itself"
                )));
            }
        }
        Ok(())
    }
}

/// What one command line depends on.
#[derive(Debug, Clone)]
pub struct Invocation<'a> {
    /// The workspace.
    pub workspace: &'a std::path::Path,
    /// `--plugin-dir <dir>`: the run's skills as a plugin (`plugin.rs`).
    pub plugin_dir: Option<&'a std::path::Path>,
    /// `--resume <chat id>`.
    pub resume: Option<&'a str>,
    /// A per-call model.
    pub model: Option<&'a str>,
    /// `--force` (only when permission requests are auto-approved).
    pub force: bool,
}

/// `-p --output-format stream-json --workspace <dir> [--plugin-dir d] [--resume id] [--model m] [--mode m]
/// [--force] <extra>`; the prompt goes on stdin.
pub fn args(config: &CursorConfig, inv: &Invocation<'_>) -> Vec<String> {
    let mut a: Vec<String> = vec![
        "-p".into(),
        "--output-format".into(),
        "stream-json".into(),
        "--workspace".into(),
        inv.workspace.to_string_lossy().into_owned(),
    ];
    if let Some(dir) = inv.plugin_dir {
        a.extend(["--plugin-dir".into(), dir.to_string_lossy().into_owned()]);
    }
    if let Some(id) = inv.resume {
        a.extend(["--resume".into(), id.to_owned()]);
    }
    if let Some(m) = inv.model.or(config.model.as_deref()) {
        a.extend(["--model".into(), m.to_owned()]);
    }
    if let Some(m) = config.mode {
        a.extend(["--mode".into(), m.as_str().into()]);
    }
    if inv.force {
        a.push("--force".into());
    }
    a.extend(config.common.extra_args.iter().cloned());
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn args_follow_the_documented_order_and_force_is_opt_in() {
        let c = CursorConfig {
            model: Some("gpt-5".into()),
            mode: Some(CursorMode::Ask),
            common: CommonConfig {
                extra_args: vec!["--foo".into()],
                ..Default::default()
            },
            ..Default::default()
        };
        let inv = Invocation {
            workspace: Path::new("/w"),
            plugin_dir: None,
            resume: Some("chat-1"),
            model: None,
            force: false,
        };
        assert_eq!(
            args(&c, &inv),
            [
                "-p",
                "--output-format",
                "stream-json",
                "--workspace",
                "/w",
                "--resume",
                "chat-1",
                "--model",
                "gpt-5",
                "--mode",
                "ask",
                "--foo"
            ]
        );
        let forced = args(
            &c,
            &Invocation {
                force: true,
                model: Some("m2"),
                ..inv
            },
        );
        assert!(forced.contains(&"--force".to_string()) && forced.contains(&"m2".to_string()));
        assert!(
            !forced.contains(&"--plugin-dir".to_string()),
            "no skills, no plugin"
        );
        let plugin = args(
            &c,
            &Invocation {
                plugin_dir: Some(Path::new("/p")),
                ..inv
            },
        );
        assert_eq!(plugin[5..7], ["--plugin-dir", "/p"], "right after the workspace");
    }

    #[test]
    fn validation_refuses_owned_flags_and_empty_relays() {
        assert!(CursorConfig::default().validate().is_ok());
        let mut c = CursorConfig::default();
        c.common.extra_args = vec!["--force".into()];
        assert!(c.validate().unwrap_err().reason.contains("--force"));
        c.common.extra_args = vec!["--model=x".into()];
        assert!(c.validate().is_err());
        let relay = CursorConfig {
            hook_relay: Some(vec![]),
            ..Default::default()
        };
        assert!(relay.validate().is_err());
        assert_eq!(CursorConfig::default().program(), PathBuf::from("cursor-agent"));
    }
}
