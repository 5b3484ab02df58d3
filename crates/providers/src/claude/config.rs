//! The Claude driver's configuration: [`Config`] (the spec's `CommonConfig`, `Model`, `Effort`,
//! `MaxTurnsPerRun`, plus the optional `PermissionMode`, where the SDK-owned `CLAUDE_CONFIG_DIR` lives, the
//! handshake timer and the persistent process's idle timeout) and its validation.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{CommonConfig, InvalidConfig};

pub use crate::stream_json::config::PermissionMode;
use crate::stream_json::config::opt_millis;

/// The environment variable naming the `claude` binary when no command is configured.
pub const BIN_VAR: &str = "AGENT_ADAPTOR_CLAUDE_BIN";

/// `--effort`: the reasoning effort the CLI asks the model for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    Xhigh,
    /// `max`.
    Max,
}

impl Effort {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
            Effort::Max => "max",
        }
    }
}

/// Default wait for the `initialize` answer (≈0.3 s on an idle machine; generous for a loaded one).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// Configuration of the Claude Code driver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Command, directory, env, instructions, timeouts, grace period, extra args.
    #[serde(flatten)]
    pub common: CommonConfig,
    /// `--model`; a per-call model wins.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<Effort>,
    /// `--max-turns`: the CLI's own limit of model requests per provider turn.
    pub max_turns_per_run: Option<u32>,
    /// `--permission-mode`; `None` derives it from the approval policy (see `argv.rs`).
    pub permission_mode: Option<PermissionMode>,
    /// The SDK-owned `CLAUDE_CONFIG_DIR` (sessions, plans). `None` uses
    /// `$HOME/.agent-adaptor/claude/<profile>` (the identity's profile, or `default`). Sessions live in it,
    /// so it must stay the same for a thread to resume.
    pub config_dir: Option<PathBuf>,
    /// Wait for the `initialize` answer; `None` means [`DEFAULT_HANDSHAKE_TIMEOUT`].
    #[serde(with = "opt_millis")]
    pub handshake_timeout: Option<Duration>,
    /// How long a thread's persistent `claude` process may stay idle before it is stopped; `None`
    /// means [`DEFAULT_IDLE_TIMEOUT`](crate::driver::process::DEFAULT_IDLE_TIMEOUT).
    #[serde(with = "opt_millis")]
    pub idle_timeout: Option<Duration>,
}

impl Config {
    /// The effective handshake timeout.
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout.unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT)
    }

    /// The effective idle timeout of a thread's persistent process.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
            .unwrap_or(crate::driver::process::DEFAULT_IDLE_TIMEOUT)
    }

    /// The program to run: the configured command, else `$AGENT_ADAPTOR_CLAUDE_BIN`, else `claude` on `PATH`.
    pub fn program(&self) -> PathBuf {
        if let Some(c) = &self.common.command {
            return c.clone();
        }
        match std::env::var_os(BIN_VAR) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from("claude"),
        }
    }

    /// Checks the configuration.
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let bad = |reason: String| InvalidConfig {
            driver: super::DRIVER_TYPE.into(),
            reason,
        };
        if let Some(cmd) = &self.common.command
            && cmd.as_os_str().is_empty()
        {
            return Err(bad("command must not be empty".into()));
        }
        if self.model.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(bad("model must not be empty when set".into()));
        }
        if self.max_turns_per_run == Some(0) {
            return Err(bad("max_turns_per_run must be at least 1".into()));
        }
        if let Some(dir) = &self.config_dir
            && !dir.is_absolute()
        {
            return Err(bad(format!("config_dir must be absolute, got {}", dir.display())));
        }
        if self.handshake_timeout.is_some_and(|t| t.is_zero()) {
            return Err(bad("handshake_timeout must be positive".into()));
        }
        if self.idle_timeout.is_some_and(|t| t.is_zero()) {
            return Err(bad("idle_timeout must be positive".into()));
        }
        super::argv::check_extra_args(&self.common.extra_args).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_values_are_refused() {
        assert!(Config::default().validate().is_ok());
        let zero = Config {
            max_turns_per_run: Some(0),
            ..Default::default()
        };
        assert!(zero.validate().unwrap_err().reason.contains("max_turns"));
        let rel = Config {
            config_dir: Some("relative/dir".into()),
            ..Default::default()
        };
        assert!(rel.validate().is_err());
        let empty_model = Config {
            model: Some("  ".into()),
            ..Default::default()
        };
        assert!(empty_model.validate().is_err());
        let idle = Config {
            idle_timeout: Some(Duration::ZERO),
            ..Default::default()
        };
        assert!(idle.validate().unwrap_err().reason.contains("idle_timeout"));
        let mut owned = Config::default();
        owned.common.extra_args = vec!["--output-format".into(), "json".into()];
        assert!(owned.validate().unwrap_err().reason.contains("--output-format"));
    }

    #[test]
    fn config_round_trips_through_json_with_wire_names() {
        let c = Config {
            model: Some("claude-x".into()),
            effort: Some(Effort::Xhigh),
            permission_mode: Some(PermissionMode::AcceptEdits),
            handshake_timeout: Some(Duration::from_millis(1500)),
            idle_timeout: Some(Duration::from_millis(2500)),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["permission_mode"], "acceptEdits");
        assert_eq!(v["effort"], "xhigh");
        assert_eq!(v["handshake_timeout"], 1500);
        assert_eq!(v["idle_timeout"], 2500);
        let back: Config = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn a_configured_command_wins_over_the_default_program() {
        let mut c = Config::default();
        c.common.command = Some("/opt/claude".into());
        assert_eq!(c.program(), PathBuf::from("/opt/claude"));
    }
}
