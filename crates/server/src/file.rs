//! The TOML configuration file of `agent-adaptor serve --config <path>` (or `AGENT_ADAPTOR_CONFIG`).
//!
//! Every table refuses unknown keys, so a typo is an error naming the key and its line rather than a
//! silently ignored setting. Durations are strings with a unit (`"500ms"`, `"30s"`, `"15m"`, `"2h"`, `"7d"`).
//! API keys are given as plain values (`keys`) or as names of environment variables holding them
//! (`keys_env`); both are hashed as soon as they are read. `examples/serve.toml` is a complete example
//! (parsed by a test so it cannot rot). Command-line flags override the file. Every duration and count
//! is range-checked ([`super::ranges::check_config`]); a value out of range is an error naming its key.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::auth::{AuthConfigError, TenantSpec};
use super::config::{AgentSpec, BusyPolicy, ServerConfig};
use super::ip_limits::IpLimits;
use super::limits::Limits;
use super::telemetry::LogFormat;

/// Why a configuration file is unusable.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The TOML is malformed, or a key is unknown or has the wrong type (the message names it).
    #[error("{path}: {message}")]
    Parse {
        /// The file (`<inline>` for text).
        path: PathBuf,
        /// The parser's message, with the line and the offending key.
        message: String,
    },
    /// A `keys_env` variable is unset or empty.
    #[error("tenant {tenant:?}: environment variable {var} (keys_env) is not set")]
    MissingKeyEnv {
        /// The tenant.
        tenant: String,
        /// The variable.
        var: String,
    },
    /// A tenant or key is unusable.
    #[error("{0}")]
    Tenant(#[from] AuthConfigError),
    /// A value is out of range.
    #[error("{field}: {message}")]
    Invalid {
        /// The key.
        field: String,
        /// What is wrong.
        message: String,
    },
}

/// A duration written with a unit: `ms`, `s`, `m`, `h` or `d` (`"30s"`, `"7d"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

/// Parses `"<integer><unit>"` with unit `ms`, `s`, `m`, `h` or `d`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("invalid duration {s:?}: expected e.g. \"500ms\", \"30s\", \"15m\", \"2h\", \"7d\"")
    })?;
    let secs = |k: u64| {
        n.checked_mul(k)
            .map(Duration::from_secs)
            .ok_or_else(|| format!("duration {s:?} is too large"))
    };
    match unit.trim() {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => secs(1),
        "m" => secs(60),
        "h" => secs(3600),
        "d" => secs(86_400),
        other => Err(format!(
            "invalid duration unit {other:?} in {s:?}: use ms, s, m, h or d"
        )),
    }
}

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(HumanDuration)
            .map_err(serde::de::Error::custom)
    }
}

/// One `[[tenants]]` entry.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantFile {
    /// The tenant name.
    pub name: String,
    /// API keys given in the file.
    #[serde(default)]
    pub keys: Vec<String>,
    /// Names of environment variables, each holding one API key.
    #[serde(default)]
    pub keys_env: Vec<String>,
    /// Limits overriding `[limits]` for this tenant.
    #[serde(default)]
    pub limits: Limits,
    /// An operator tenant: its keys also read every tenant's usage (`GET /v1/usage`).
    #[serde(default)]
    pub admin: bool,
}

/// The `[retention]` table.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetentionFile {
    /// Delete events older than this.
    #[serde(default)]
    pub max_age: Option<HumanDuration>,
    /// Keep at most this many events per tenant.
    #[serde(default)]
    pub max_events_per_tenant: Option<u64>,
    /// How often to apply it (default `1h`).
    #[serde(default)]
    pub interval: Option<HumanDuration>,
}

/// The `[connections]` table: the listener's timeouts and connection bounds.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionsFile {
    /// From the first byte of a request head to its end (default `30s`).
    #[serde(default)]
    pub header_read_timeout: Option<HumanDuration>,
    /// From a request head to the end of its body (default `60s`).
    #[serde(default)]
    pub body_read_timeout: Option<HumanDuration>,
    /// How long a connection may wait for its next request (default `120s`).
    #[serde(default)]
    pub idle_timeout: Option<HumanDuration>,
    /// Connections open at once (default 4096).
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// Connections open at once from one client IP (default 256).
    #[serde(default)]
    pub max_connections_per_ip: Option<usize>,
}

impl ConnectionsFile {
    fn apply(self, c: &mut super::connections::Connections) {
        if let Some(v) = self.header_read_timeout {
            c.header_read_timeout = v.0;
        }
        if let Some(v) = self.body_read_timeout {
            c.body_read_timeout = v.0;
        }
        if let Some(v) = self.idle_timeout {
            c.idle_timeout = v.0;
        }
        if let Some(v) = self.max_connections {
            c.max_connections = v;
        }
        if let Some(v) = self.max_connections_per_ip {
            c.max_connections_per_ip = v;
        }
    }
}

/// The `[proxies]` table: the peers whose `X-Forwarded-For` names the client.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProxiesFile {
    /// Addresses and CIDR ranges (`10.0.0.0/8`) of the trusted proxies.
    #[serde(default)]
    pub trusted: Vec<String>,
}

/// The whole file. Every key is optional; what is absent keeps its default (or the flag's value).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Address to listen on.
    #[serde(default)]
    pub bind: Option<SocketAddr>,
    /// Store URL: `memory`, `sqlite://path`, `postgres://...`.
    #[serde(default)]
    pub store: Option<String>,
    /// Add one agent per supported CLI found on `PATH`.
    #[serde(default)]
    pub discover_clis: Option<bool>,
    /// Serve a non-loopback address without API keys (dev mode only).
    #[serde(default)]
    pub allow_remote_without_auth: Option<bool>,
    /// Allowed CORS origins (`*` for any).
    #[serde(default)]
    pub cors_origins: Option<Vec<String>>,
    /// What an AG-UI run does when a run is active on its thread: `refuse` or `supplement`.
    #[serde(default)]
    pub busy_policy: Option<BusyPolicy>,
    /// How long an unanswered approval request waits.
    #[serde(default)]
    pub approval_timeout: Option<HumanDuration>,
    /// How long graceful shutdown waits for runs.
    #[serde(default)]
    pub shutdown_grace: Option<HumanDuration>,
    /// The SSE keep-alive interval.
    #[serde(default)]
    pub keep_alive: Option<HumanDuration>,
    /// The largest accepted request body, in bytes.
    #[serde(default)]
    pub body_limit: Option<usize>,
    /// The agents (`[[agents]]`: name, provider, config, exposure); replace the built-in `reference`.
    #[serde(default)]
    pub agents: Option<Vec<AgentSpec>>,
    /// Default per-tenant limits.
    #[serde(default)]
    pub limits: Option<Limits>,
    /// Tenants and their API keys (`[[tenants]]`).
    #[serde(default)]
    pub tenants: Vec<TenantFile>,
    /// Event-log retention.
    #[serde(default)]
    pub retention: Option<RetentionFile>,
    /// The per-client-IP limit of unauthenticated requests (`[ip_limits]`).
    #[serde(default)]
    pub ip_limits: Option<IpLimits>,
    /// The listener's timeouts and connection bounds (`[connections]`).
    #[serde(default)]
    pub connections: Option<ConnectionsFile>,
    /// The trusted proxies (`[proxies]`).
    #[serde(default)]
    pub proxies: Option<ProxiesFile>,
    /// Log lines as `text` (default) or `json`.
    #[serde(default)]
    pub log_format: Option<LogFormat>,
    /// How many of a run's events may be live before the store committed them (at least 1).
    #[serde(default)]
    pub record_backlog: Option<usize>,
    /// How many committed events of each run stay in memory for live subscribers (at least 1).
    #[serde(default)]
    pub live_window: Option<usize>,
    /// The price table (`[[prices]]`: agent, model, dollars per million input/output/cached tokens).
    #[serde(default)]
    pub prices: Vec<super::metering::Price>,
    /// Budgets (`[[budgets]]`: per, tenant, agent, period, max_tokens, max_cost_usd).
    #[serde(default)]
    pub budgets: Vec<super::budget::BudgetSpec>,
    /// Caps on kept CLI processes and admitted runs (`[processes]`: max_kept, max_active).
    #[serde(default)]
    pub processes: Option<super::capacity::Processes>,
    /// How long a drain (SIGTERM) lets active runs finish before interrupting them (default `30s`).
    #[serde(default)]
    pub drain_grace: Option<HumanDuration>,
    /// Webhook delivery (`[webhooks]`: max_attempts, backoff_initial, backoff_max, backoff_factor,
    /// timeout, poll_interval, concurrency, allow_private_targets, enabled).
    #[serde(default)]
    pub webhooks: Option<super::webhooks::WebhooksFile>,
}

impl FileConfig {
    /// Parses TOML text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })
    }

    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Applies the file on top of `base`, reading `keys_env` variables through `env`.
    pub fn apply(
        self,
        mut base: ServerConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<ServerConfig, ConfigError> {
        if let Some(v) = self.bind {
            base.bind = v;
        }
        if let Some(v) = self.store {
            base.store_url = if v == "memory" { "memory:".into() } else { v };
        }
        if let Some(v) = self.discover_clis {
            base.discover_clis = v;
        }
        if let Some(v) = self.allow_remote_without_auth {
            base.allow_remote_without_auth = v;
        }
        if let Some(v) = self.cors_origins {
            base.cors_origins = v;
        }
        if let Some(v) = self.busy_policy {
            base.busy_policy = v;
        }
        if let Some(v) = self.approval_timeout {
            base.approval_timeout = v.0;
        }
        if let Some(v) = self.shutdown_grace {
            base.shutdown_grace = v.0;
        }
        if let Some(v) = self.keep_alive {
            if v.0.is_zero() {
                return Err(invalid("keep_alive", "must be positive"));
            }
            base.keep_alive = v.0;
        }
        if let Some(v) = self.ip_limits {
            v.validate().map_err(|m| invalid("ip_limits", m))?;
            base.ip_limits = v;
        }
        if let Some(v) = self.connections {
            v.apply(&mut base.connections);
        }
        if let Some(v) = self.proxies {
            base.trusted_proxies = super::proxies::TrustedProxies::parse(&v.trusted)
                .map_err(|e| invalid("proxies.trusted", e.to_string()))?;
        }
        if let Some(v) = self.log_format {
            base.log_format = v;
        }
        if let Some(v) = self.body_limit {
            base.body_limit = v;
        }
        if let Some(v) = self.record_backlog {
            if v == 0 {
                return Err(invalid("record_backlog", "must be at least 1"));
            }
            base.record_backlog = v;
        }
        if let Some(v) = self.live_window {
            if v == 0 {
                return Err(invalid("live_window", "must be at least 1"));
            }
            base.live_window = v;
        }
        if let Some(v) = self.agents {
            base.agents = v;
        }
        for (i, p) in self.prices.iter().enumerate() {
            p.validate().map_err(|m| invalid(&format!("prices[{i}]"), m))?;
        }
        if !self.prices.is_empty() {
            base.prices = self.prices;
        }
        for (i, b) in self.budgets.iter().enumerate() {
            b.validate().map_err(|m| invalid(&format!("budgets[{i}]"), m))?;
        }
        if !self.budgets.is_empty() {
            base.budgets = self.budgets;
        }
        if let Some(v) = self.processes {
            v.validate().map_err(|(field, m)| invalid(field, m))?;
            base.processes = v;
        }
        if let Some(v) = self.drain_grace {
            base.drain_grace = v.0;
        }
        if let Some(v) = self.webhooks {
            base.webhooks = v.apply(base.webhooks).map_err(|(field, m)| invalid(field, m))?;
        }
        if let Some(v) = self.limits {
            v.validate().map_err(|m| invalid("limits", m))?;
            base.limits = v;
        }
        if let Some(r) = self.retention {
            if let Some(v) = r.max_age {
                base.retention.max_age = Some(v.0);
            }
            if let Some(v) = r.max_events_per_tenant {
                base.retention.max_events_per_tenant = Some(v);
            }
            if let Some(v) = r.interval {
                if v.0.is_zero() {
                    return Err(invalid("retention.interval", "must be positive"));
                }
                base.retention.interval = v.0;
            }
        }
        let mut tenants = Vec::with_capacity(self.tenants.len());
        for t in self.tenants {
            t.limits
                .validate()
                .map_err(|m| invalid(&format!("tenants.{}.limits", t.name), m))?;
            let mut spec = TenantSpec::new(&t.name).limits(t.limits).admin(t.admin);
            for k in &t.keys {
                spec = spec.key(k)?;
            }
            for var in &t.keys_env {
                let value = env(var)
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| ConfigError::MissingKeyEnv {
                        tenant: t.name.clone(),
                        var: var.clone(),
                    })?;
                spec = spec.key(&value)?;
            }
            tenants.push(spec);
        }
        if !tenants.is_empty() {
            base.tenants = tenants;
        }
        // Refuse duplicate names and keys now, with the file's error type.
        super::auth::Auth::new(&base.tenants)?;
        super::ranges::check_config(&base).map_err(|e| invalid(&e.field, e.message))?;
        Ok(base)
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field: field.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_need_a_known_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
        assert!(parse_duration("7").unwrap_err().contains("unit"));
        assert!(parse_duration("7w").unwrap_err().contains("unit"));
        assert!(parse_duration("x1s").is_err());
        assert!(parse_duration("99999999999999999999d").is_err());
    }
}
