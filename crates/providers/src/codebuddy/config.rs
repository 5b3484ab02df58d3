//! The CodeBuddy driver's configuration: [`CodeBuddyConfig`] (the spec's `CommonConfig`, `Model`, `Effort`,
//! `PermissionMode`, `MaxTurnsPerRun`, plus where the SDK-owned `CODEBUDDY_CONFIG_DIR` lives and the timers
//! that end turns CodeBuddy leaves open) and its validation.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{CommonConfig, InvalidConfig};

pub use crate::stream_json::config::PermissionMode;
use crate::stream_json::config::opt_millis;

/// `--effort`: the reasoning effort the CLI asks the model for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effort {
    /// `minimal`.
    Minimal,
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
            Effort::Minimal => "minimal",
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::Xhigh => "xhigh",
            Effort::Max => "max",
        }
    }
}

/// Default wait for the `initialize` answer (observed 3.3–11.8 s on a loaded 2-core machine).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(120);
/// Default wait for a `result` after CodeBuddy signalled it will not send one in the usual way (an
/// interrupt, a refused plan, an aborted model stream) before the driver ends the turn itself.
pub const DEFAULT_SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// Configuration of the CodeBuddy Code driver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CodeBuddyConfig {
    /// Command, directory, env, instructions, timeouts, grace period, extra args.
    #[serde(flatten)]
    pub common: CommonConfig,
    /// `--model`; a per-call model wins.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<Effort>,
    /// `--permission-mode`; `None` derives it from the approval policy (see `argv.rs`).
    pub permission_mode: Option<PermissionMode>,
    /// `--max-turns`: the CLI's own limit of agentic turns per provider turn.
    pub max_turns_per_run: Option<u32>,
    /// The SDK-owned `CODEBUDDY_CONFIG_DIR` (sessions, plans, materialized MCP config). `None` uses
    /// `$HOME/.agent-adaptor/codebuddy/<profile>` (the identity's profile, or `default`). Sessions live in
    /// it, so it must stay the same for a thread to resume.
    pub config_dir: Option<PathBuf>,
    /// Wait for the `initialize` answer; `None` means [`DEFAULT_HANDSHAKE_TIMEOUT`].
    #[serde(with = "opt_millis")]
    pub handshake_timeout: Option<Duration>,
    /// Wait for a `result` that may never come; `None` means [`DEFAULT_SETTLE_TIMEOUT`].
    #[serde(with = "opt_millis")]
    pub settle_timeout: Option<Duration>,
    /// How long a thread's persistent `codebuddy` process may stay idle before it is stopped; `None`
    /// means [`DEFAULT_IDLE_TIMEOUT`](crate::driver::process::DEFAULT_IDLE_TIMEOUT).
    #[serde(with = "opt_millis")]
    pub idle_timeout: Option<Duration>,
}

impl CodeBuddyConfig {
    /// The effective handshake timeout.
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout.unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT)
    }

    /// The effective settle timeout.
    pub fn settle_timeout(&self) -> Duration {
        self.settle_timeout.unwrap_or(DEFAULT_SETTLE_TIMEOUT)
    }

    /// The effective idle timeout of a thread's persistent process.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
            .unwrap_or(crate::driver::process::DEFAULT_IDLE_TIMEOUT)
    }

    /// The program to run: the configured command or `codebuddy` on `PATH`.
    pub fn program(&self) -> PathBuf {
        self.common
            .command
            .clone()
            .unwrap_or_else(|| PathBuf::from("codebuddy"))
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
        for t in [self.handshake_timeout, self.settle_timeout, self.idle_timeout]
            .into_iter()
            .flatten()
        {
            if t.is_zero() {
                return Err(bad("timeouts must be positive".into()));
            }
        }
        super::argv::check_extra_args(&self.common.extra_args).map_err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_values_are_refused() {
        assert!(CodeBuddyConfig::default().validate().is_ok());
        let zero = CodeBuddyConfig {
            max_turns_per_run: Some(0),
            ..Default::default()
        };
        assert!(zero.validate().unwrap_err().reason.contains("max_turns"));
        let rel = CodeBuddyConfig {
            config_dir: Some("relative/dir".into()),
            ..Default::default()
        };
        assert!(rel.validate().is_err());
        let mut owned = CodeBuddyConfig::default();
        owned.common.extra_args = vec!["--output-format".into(), "json".into()];
        assert!(owned.validate().unwrap_err().reason.contains("--output-format"));
    }

    #[test]
    fn config_round_trips_through_json_with_wire_names() {
        let c = CodeBuddyConfig {
            model: Some("glm-5.0".into()),
            effort: Some(Effort::Xhigh),
            permission_mode: Some(PermissionMode::AcceptEdits),
            settle_timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["permission_mode"], "acceptEdits");
        assert_eq!(v["effort"], "xhigh");
        assert_eq!(v["settle_timeout"], 1500);
        let back: CodeBuddyConfig = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
        assert_eq!(PermissionMode::BypassPermissions.as_str(), "bypassPermissions");
    }
}
