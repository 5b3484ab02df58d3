//! The Codex driver's configuration: [`CodexConfig`] (the spec's `CommonConfig`, `Model`,
//! `ReasoningEffort`, `FastMode`), the custom [`ModelProvider`] written into the SDK-owned
//! `config.toml`, where that `CODEX_HOME` lives, and the timers that bound a run.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::driver::{CommonConfig, InvalidConfig};

use super::transport::TransportPreference;

/// The environment variable naming the Codex binary when `command` is unset.
pub const BIN_ENV: &str = "AGENT_ADAPTOR_CODEX_BIN";
/// The environment variable with a Responses API base URL for the default `codex` agent.
pub const BASE_URL_ENV: &str = "AGENT_ADAPTOR_CODEX_BASE_URL";
/// The environment variable with the API key for [`BASE_URL_ENV`].
pub const API_KEY_ENV: &str = "AGENT_ADAPTOR_CODEX_API_KEY";

/// `model_reasoning_effort` / `turn/start.effort`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `xhigh`.
    Xhigh,
}

impl ReasoningEffort {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
        }
    }
}

/// A custom model provider (`[model_providers.<id>]` in `config.toml`): how tests and self-hosted
/// gateways point Codex elsewhere (Codex ignores `OPENAI_BASE_URL` for this).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelProvider {
    /// Provider id (`model_provider = "<id>"`); letters, digits, `-` and `_`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Base URL, e.g. `http://127.0.0.1:8080/v1` (Codex posts to `{base_url}/responses`).
    pub base_url: String,
    /// The environment variable holding the API key (sent as `Authorization: Bearer …`).
    #[serde(default)]
    pub env_key: Option<String>,
    /// Wire API: `responses`.
    #[serde(default = "default_wire_api")]
    pub wire_api: String,
    /// `request_max_retries`.
    #[serde(default)]
    pub request_max_retries: Option<u32>,
    /// `stream_max_retries`.
    #[serde(default)]
    pub stream_max_retries: Option<u32>,
    /// `stream_idle_timeout_ms`.
    #[serde(default)]
    pub stream_idle_timeout_ms: Option<u64>,
}

fn default_wire_api() -> String {
    "responses".into()
}

impl ModelProvider {
    /// A Responses-API provider at `base_url` whose key is read from `env_key`.
    pub fn responses(id: &str, base_url: &str, env_key: Option<&str>) -> Self {
        ModelProvider {
            id: id.into(),
            name: id.into(),
            base_url: base_url.into(),
            env_key: env_key.map(str::to_owned),
            wire_api: default_wire_api(),
            request_max_retries: None,
            stream_max_retries: None,
            stream_idle_timeout_ms: None,
        }
    }
}

/// Default wait for the `initialize` and `thread/*` answers.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default wall-clock bound of one turn (Codex retries an unreachable model endpoint forever).
pub const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// Configuration of the Codex driver.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CodexConfig {
    /// Command, directory, env, instructions, timeouts, grace period, extra args.
    #[serde(flatten)]
    pub common: CommonConfig,
    /// Model slug; a per-call model wins.
    pub model: Option<String>,
    /// Reasoning effort.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Fast mode (`service_tier = "fast"`).
    pub fast_mode: bool,
    /// Run every turn in Codex's experimental Plan collaboration mode (`collaborationMode: plan`, with
    /// `experimentalApi`): the model plans instead of editing and may ask questions
    /// (`request_user_input`), which reach the run's question policy.
    pub plan_mode: bool,
    /// A custom model provider written into `config.toml`.
    pub provider: Option<ModelProvider>,
    /// The SDK-owned `CODEX_HOME`. `None` uses `$HOME/.agent-adaptor/codex/<profile>`. Threads live in
    /// it, so it must stay the same for a thread to resume.
    pub codex_home: Option<PathBuf>,
    /// Wait for the handshake answers; `None` means [`DEFAULT_HANDSHAKE_TIMEOUT`].
    #[serde(with = "opt_millis")]
    pub handshake_timeout: Option<Duration>,
    /// Wall-clock bound of one turn; `None` means the request timeout, then [`DEFAULT_TURN_TIMEOUT`].
    #[serde(with = "opt_millis")]
    pub turn_timeout: Option<Duration>,
    /// How long a thread's persistent app-server may stay idle before it is stopped; `None` means
    /// [`DEFAULT_IDLE_TIMEOUT`](crate::driver::process::DEFAULT_IDLE_TIMEOUT).
    #[serde(with = "opt_millis")]
    pub idle_timeout: Option<Duration>,
    /// Which transport carries a run: `auto` (exec only where it is indistinguishable from
    /// app-server), `app_server` or `exec` (see `transport.rs`).
    pub transport: TransportPreference,
}

impl CodexConfig {
    /// The configuration for the default `codex` agent from the process environment: the binary
    /// from [`BIN_ENV`] (or `codex` on `PATH`), and a Responses provider at [`BASE_URL_ENV`] with its key
    /// from [`API_KEY_ENV`] when set.
    pub fn from_env() -> Self {
        let mut c = CodexConfig::default();
        if let Ok(base) = std::env::var(BASE_URL_ENV)
            && !base.trim().is_empty()
        {
            let key_var = "AGENT_ADAPTOR_CODEX_PROVIDER_KEY";
            let key = std::env::var(API_KEY_ENV).unwrap_or_default();
            c.common.env.insert(key_var.into(), key);
            c.provider = Some(ModelProvider::responses(
                "agent-adaptor",
                base.trim(),
                Some(key_var),
            ));
        }
        c
    }

    /// The effective handshake timeout.
    pub fn handshake_timeout(&self) -> Duration {
        self.handshake_timeout.unwrap_or(DEFAULT_HANDSHAKE_TIMEOUT)
    }

    /// The effective idle timeout of a persistent app-server.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
            .unwrap_or(crate::driver::process::DEFAULT_IDLE_TIMEOUT)
    }

    /// The program to run: the configured command, else [`BIN_ENV`], else `codex` on `PATH`.
    pub fn program(&self) -> PathBuf {
        if let Some(c) = &self.common.command {
            return c.clone();
        }
        match std::env::var_os(BIN_ENV) {
            Some(p) if !p.is_empty() => PathBuf::from(p),
            _ => PathBuf::from("codex"),
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
        if let Some(dir) = &self.codex_home
            && !dir.is_absolute()
        {
            return Err(bad(format!("codex_home must be absolute, got {}", dir.display())));
        }
        if let Some(p) = &self.provider {
            let id_ok = !p.id.is_empty()
                && p.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !id_ok {
                return Err(bad(format!("provider id {:?} must be [A-Za-z0-9_-]+", p.id)));
            }
            if !(p.base_url.starts_with("http://") || p.base_url.starts_with("https://")) {
                return Err(bad(format!("provider base_url {:?} must be http(s)", p.base_url)));
            }
            if p.wire_api != "responses" {
                return Err(bad(format!(
                    "provider wire_api {:?} is not supported",
                    p.wire_api
                )));
            }
            if let Some(k) = &p.env_key
                && (k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            {
                return Err(bad(format!("provider env_key {k:?} is not a variable name")));
            }
        }
        if self.plan_mode && self.transport == TransportPreference::Exec {
            return Err(bad(
                "transport = \"exec\" cannot carry plan_mode (questions need app-server)".into(),
            ));
        }
        for t in [self.handshake_timeout, self.turn_timeout, self.idle_timeout]
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

mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.as_millis() as u64).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_refuses_bad_values() {
        assert!(CodexConfig::default().validate().is_ok());
        let c = CodexConfig {
            model: Some(" ".into()),
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let c = CodexConfig {
            codex_home: Some("rel".into()),
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let mut p = ModelProvider::responses("mock", "http://127.0.0.1:1/v1", Some("KEY"));
        let c = CodexConfig {
            provider: Some(p.clone()),
            ..Default::default()
        };
        assert!(c.validate().is_ok());
        p.id = "bad id".into();
        let c = CodexConfig {
            provider: Some(p),
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().reason.contains("provider id"));
        let c = CodexConfig {
            provider: Some(ModelProvider::responses("m", "ftp://x", None)),
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let c = CodexConfig {
            turn_timeout: Some(Duration::ZERO),
            ..Default::default()
        };
        assert!(c.validate().is_err());
        let c = CodexConfig {
            plan_mode: true,
            transport: TransportPreference::Exec,
            ..Default::default()
        };
        assert!(c.validate().unwrap_err().reason.contains("plan_mode"));
    }

    #[test]
    fn config_round_trips_through_json() {
        let c = CodexConfig {
            model: Some("gpt-5.5".into()),
            reasoning_effort: Some(ReasoningEffort::High),
            fast_mode: true,
            provider: Some(ModelProvider::responses(
                "mock",
                "http://127.0.0.1:1/v1",
                Some("K"),
            )),
            turn_timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["reasoning_effort"], "high");
        assert_eq!(v["turn_timeout"], 1500);
        assert_eq!(v["transport"], "auto");
        let back: CodexConfig = serde_json::from_value(v).unwrap();
        assert_eq!(back, c);
    }
}
