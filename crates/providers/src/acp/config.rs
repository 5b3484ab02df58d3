//! The ACP driver's configuration ([`AcpConfig`]): the agent command and its arguments (any ACP agent:
//! `npx @agentclientprotocol/claude-agent-acp`, `gemini --acp`, `agent acp`, …), its environment, and
//! the few protocol choices a host makes (an `authenticate` method, a session mode, serving `fs/*`).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{CommonConfig, InvalidConfig};

/// How long `initialize` and the session call may take by default (`claude-agent-acp` needs seconds
/// for `session/new`; a hung agent must not hold a run forever).
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(120);

/// Configuration of the ACP client driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AcpConfig {
    /// The agent command (required), its directory, environment, instructions, timeouts and grace period;
    /// `extra_args` are appended after [`AcpConfig::args`].
    #[serde(flatten)]
    pub common: CommonConfig,
    /// The agent's arguments (e.g. `["acp"]` for Cursor, `["--acp"]` for Gemini CLI).
    pub args: Vec<String>,
    /// A display name; default: the `title` the agent gives in `initialize`.
    pub name: Option<String>,
    /// An `authenticate` method id to call after `initialize` (e.g. `cursor_login`); default: none
    /// (agents authenticate from their own environment).
    pub auth_method: Option<String>,
    /// A session mode to set after the session opens (`session/set_mode`).
    pub mode: Option<String>,
    /// Serve `fs/read_text_file` and `fs/write_text_file`, confined to the run's workspace (default
    /// true). `terminal/*` is never offered: agents run commands themselves.
    pub client_fs: bool,
    /// How long `initialize`, `authenticate` and the session call may take, in seconds (default 120).
    #[serde(with = "opt_secs")]
    pub handshake_timeout: Option<Duration>,
}

impl Default for AcpConfig {
    fn default() -> Self {
        AcpConfig {
            common: CommonConfig::default(),
            args: Vec::new(),
            name: None,
            auth_method: None,
            mode: None,
            client_fs: true,
            handshake_timeout: None,
        }
    }
}

impl AcpConfig {
    /// A configuration running `command` with `args`.
    pub fn command(command: impl Into<std::path::PathBuf>, args: &[&str]) -> AcpConfig {
        let mut c = AcpConfig {
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..Default::default()
        };
        c.common.command = Some(command.into());
        c
    }

    /// The effective handshake timeout.
    pub fn handshake(&self) -> Duration {
        self.handshake_timeout
            .filter(|d| !d.is_zero())
            .unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT)
    }

    /// Every argument: [`AcpConfig::args`] then `extra_args`.
    pub fn argv(&self) -> Vec<String> {
        self.args
            .iter()
            .chain(self.common.extra_args.iter())
            .cloned()
            .collect()
    }

    /// Checks the configuration: a command is required (an ACP agent has no default binary).
    pub fn validate(&self) -> Result<(), InvalidConfig> {
        let bad = |reason: &str| InvalidConfig {
            driver: super::DRIVER_TYPE.into(),
            reason: reason.into(),
        };
        match &self.common.command {
            None => return Err(bad("command is required: the ACP agent to launch")),
            Some(c) if c.as_os_str().is_empty() => return Err(bad("command must not be empty")),
            Some(_) => {}
        }
        if self.auth_method.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(bad("auth_method must not be empty when set"));
        }
        if self.mode.as_deref().is_some_and(|m| m.trim().is_empty()) {
            return Err(bad("mode must not be empty when set"));
        }
        Ok(())
    }
}

mod opt_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.as_secs_f64()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        match Option::<f64>::deserialize(d)? {
            Some(s) if !(0.0..=1e9).contains(&s) || s.is_nan() => Err(serde::de::Error::custom(
                "duration seconds must be between 0 and 1e9",
            )),
            Some(s) => Ok(Some(Duration::from_secs_f64(s))),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_is_required_and_args_come_before_extra_args() {
        assert!(AcpConfig::default().validate().is_err());
        let mut c = AcpConfig::command("agent", &["acp"]);
        c.common.extra_args = vec!["--model".into(), "m".into()];
        assert!(c.validate().is_ok());
        assert_eq!(c.argv(), ["acp", "--model", "m"]);
        assert!(c.client_fs, "fs is served by default");
        assert_eq!(c.handshake(), DEFAULT_HANDSHAKE_TIMEOUT);
        let parsed: AcpConfig = serde_json::from_value(serde_json::json!({
            "command": "npx", "args": ["x"], "client_fs": false, "handshake_timeout": 5
        }))
        .unwrap();
        assert!(!parsed.client_fs);
        assert_eq!(parsed.handshake(), Duration::from_secs(5));
        c.auth_method = Some(" ".into());
        assert!(c.validate().is_err());
    }
}
