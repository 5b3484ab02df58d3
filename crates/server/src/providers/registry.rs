//! The provider registry: which providers exist, where their CLIs are on this machine, and how a
//! provider name plus its JSON configuration becomes a [`Driver`].
//!
//! One table ([`PROVIDERS`]) and one constructor ([`driver`]) serve every host: the service builds its
//! agents with them and the command line's `run` and `agents` use the same ones, so a CLI the service
//! offers is one `run --agent` can drive. Adding a provider is one [`PROVIDERS`] row and one match arm
//! in [`driver`].
//!
//! The `acp` provider drives any Agent Client Protocol agent: its configuration names the command
//! (`{"command": "npx", "args": ["@agentclientprotocol/claude-agent-acp"]}`); building it starts the
//! agent once to read what it declares (`providers::acp`), and an agent that cannot be started or does
//! not answer `initialize` is an invalid configuration. It has no binary to discover on `PATH`.
//!
//! The built-in `reference` provider (an in-memory driver that needs no CLI) is available with the
//! `testkit` feature, which the binary enables.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::acp::{AcpConfig, AcpDriver};
use super::claude;
use super::codebuddy::{CodeBuddyConfig, CodeBuddyDriver};
use super::codex::{CodexConfig, CodexDriver};
use super::cursor::{CursorConfig, CursorDriver};
use crate::driver::Driver;

/// A provider backed by a coding-agent CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Provider {
    /// The provider's name (`provider = "…"` in a configuration).
    pub name: &'static str,
    /// The command looked up on `PATH` when no binary is configured.
    pub command: &'static str,
    /// The environment variable that names the binary, checked before `PATH`.
    pub env_var: &'static str,
    /// One line for listings.
    pub description: &'static str,
}

impl Provider {
    /// The provider's binary on this machine, if any (see [`find_cli`]).
    pub fn locate(&self) -> Option<PathBuf> {
        find_cli(self.command, self.env_var)
    }
}

/// Every CLI-backed provider.
pub const PROVIDERS: &[Provider] = &[
    Provider {
        name: "claude",
        command: "claude",
        env_var: "AGENT_ADAPTOR_CLAUDE_BIN",
        description: "Claude Code (stream-json)",
    },
    Provider {
        name: "codex",
        command: "codex",
        env_var: "AGENT_ADAPTOR_CODEX_BIN",
        description: "OpenAI Codex (app-server / exec)",
    },
    Provider {
        name: "codebuddy",
        command: "codebuddy",
        env_var: "AGENT_ADAPTOR_CODEBUDDY_BIN",
        description: "CodeBuddy Code (stream-json)",
    },
    Provider {
        name: "cursor",
        command: "cursor-agent",
        env_var: "AGENT_ADAPTOR_CURSOR_BIN",
        description: "Cursor agent (stream-json print mode)",
    },
];

/// The name of the built-in provider that needs no CLI (with the `testkit` feature).
pub const REFERENCE: &str = "reference";

/// The name of the provider that drives any ACP agent (configured with a command; not discovered).
pub const ACP: &str = "acp";

/// The CLI-backed provider called `name`.
pub fn provider(name: &str) -> Option<&'static Provider> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// Every provider whose CLI is on this machine, with its binary.
pub fn discover() -> Vec<(&'static Provider, PathBuf)> {
    PROVIDERS
        .iter()
        .filter_map(|p| p.locate().map(|bin| (p, bin)))
        .collect()
}

/// Why a driver could not be built.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No provider of that name (or `reference` without the `testkit` feature).
    #[error("unknown provider {0:?}")]
    UnknownProvider(String),
    /// The configuration does not fit the provider's configuration type.
    #[error("invalid {provider} configuration: {source}")]
    InvalidConfig {
        /// The provider.
        provider: String,
        /// The decoding error.
        source: serde_json::Error,
    },
}

/// What [`driver`] may fill in that the configuration left unset.
#[derive(Debug, Clone, Default)]
pub struct Defaults {
    /// The binary when the configuration names no `command` (by default the one [`Provider::locate`]
    /// finds).
    pub program: Option<PathBuf>,
    /// The `reference` provider's delay between streamed chunks when its configuration has no
    /// `chunk_delay_ms`.
    pub reference_chunk_delay: Option<Duration>,
}

/// Builds the driver of `provider` from its JSON `config` (`null` or `{}` for the defaults). An unset
/// `command` is `defaults.program`, else the binary [`Provider::locate`] finds, else the provider's
/// plain command name (resolved on `PATH` at launch).
pub fn driver(provider: &str, config: &Value, defaults: &Defaults) -> Result<Arc<dyn Driver>, RegistryError> {
    let invalid = |source| RegistryError::InvalidConfig {
        provider: provider.to_owned(),
        source,
    };
    let config = match config {
        Value::Null => Value::Object(Default::default()),
        v => v.clone(),
    };
    let program = || {
        defaults
            .program
            .clone()
            .or_else(|| self::provider(provider).and_then(Provider::locate))
    };
    Ok(match provider {
        #[cfg(feature = "testkit")]
        REFERENCE => reference(&config, defaults),
        "claude" => {
            let mut c: claude::Config = serde_json::from_value(config).map_err(invalid)?;
            c.common.command = c.common.command.or_else(program);
            Arc::new(claude::Driver::new(c))
        }
        "codex" => {
            // `AGENT_ADAPTOR_CODEX_BASE_URL` / `_API_KEY` give the default agent a custom model provider.
            let defaults = serde_json::to_value(CodexConfig::from_env()).map_err(invalid)?;
            let mut c: CodexConfig = serde_json::from_value(merge(defaults, config)).map_err(invalid)?;
            c.common.command = c.common.command.or_else(program);
            Arc::new(CodexDriver::new(c))
        }
        "codebuddy" => {
            let mut c: CodeBuddyConfig = serde_json::from_value(config).map_err(invalid)?;
            c.common.command = c.common.command.or_else(program);
            Arc::new(CodeBuddyDriver::new(c))
        }
        "cursor" => {
            let mut c: CursorConfig = serde_json::from_value(config).map_err(invalid)?;
            c.common.command = c.common.command.or_else(program);
            Arc::new(CursorDriver::new(c))
        }
        ACP => {
            let mut c: AcpConfig = serde_json::from_value(config).map_err(invalid)?;
            c.common.command = c.common.command.or_else(|| defaults.program.clone());
            let driver = AcpDriver::connect_blocking(c)
                .map_err(|e| invalid(<serde_json::Error as serde::de::Error>::custom(e)))?;
            Arc::new(driver)
        }
        other => return Err(RegistryError::UnknownProvider(other.to_owned())),
    })
}

/// The reference driver: `chunk_delay_ms`, `"fork": false` (declares no session fork, to exercise a
/// host's refusal) and `"report_resources": true` (takes MCP servers and skills and reports them in the
/// result metadata).
#[cfg(feature = "testkit")]
fn reference(config: &Value, defaults: &Defaults) -> Arc<dyn Driver> {
    use crate::testkit::reference::{ReferenceConfig, ReferenceDriver};
    let chunk_delay = config
        .get("chunk_delay_ms")
        .and_then(Value::as_u64)
        .map(Duration::from_millis)
        .or(defaults.reference_chunk_delay)
        .unwrap_or(ReferenceConfig::default().chunk_delay);
    let descriptor = (config.get("fork") == Some(&Value::Bool(false))).then(|| {
        let mut d = ReferenceDriver::new(ReferenceConfig::default()).descriptor();
        d.sessions.fork = false;
        d
    });
    let report_resources = config.get("report_resources") == Some(&Value::Bool(true));
    Arc::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay,
        descriptor,
        report_resources,
        ..Default::default()
    }))
}

/// `overlay` on top of `base`, key by key (objects only; anything else replaces).
fn merge(base: Value, overlay: Value) -> Value {
    match (base, overlay) {
        (Value::Object(mut b), Value::Object(o)) => {
            for (k, v) in o {
                let merged = match b.remove(&k) {
                    Some(old) => merge(old, v),
                    None => v,
                };
                b.insert(k, merged);
            }
            Value::Object(b)
        }
        (_, o) => o,
    }
}

/// The binary of a provider: `$env_var` when it names a file, else `command` on `PATH`.
pub fn find_cli(command: &str, env_var: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env_var).map(PathBuf::from)
        && p.is_file()
    {
        return Some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_provider_builds_from_an_empty_config_and_unknown_ones_are_typed() {
        for p in PROVIDERS {
            let d = driver(p.name, &Value::Null, &Defaults::default()).expect(p.name);
            assert!(!d.descriptor().driver_type.is_empty(), "{}", p.name);
        }
        assert!(matches!(
            driver("nope", &json!({}), &Defaults::default()),
            Err(RegistryError::UnknownProvider(n)) if n == "nope"
        ));
        assert!(matches!(
            driver("claude", &json!({"command": 5}), &Defaults::default()),
            Err(RegistryError::InvalidConfig { provider, .. }) if provider == "claude"
        ));
    }

    #[test]
    fn an_acp_agent_needs_a_command_that_answers_initialize() {
        let Err(no_command) = driver(ACP, &Value::Null, &Defaults::default()) else {
            panic!("an acp agent without a command was built");
        };
        assert!(
            no_command.to_string().contains("command is required"),
            "{no_command}"
        );
        let Err(missing) = driver(
            ACP,
            &json!({"command": "/nonexistent/acp-agent"}),
            &Defaults::default(),
        ) else {
            panic!("an acp agent that cannot start was built");
        };
        assert!(
            matches!(&missing, RegistryError::InvalidConfig { provider, .. } if provider == ACP),
            "{missing}"
        );
        assert!(missing.to_string().contains("cannot start"), "{missing}");
    }

    #[test]
    fn merge_overlays_objects_key_by_key() {
        let merged = merge(
            json!({"a": {"x": 1, "y": 2}, "b": 1}),
            json!({"a": {"y": 3}, "c": 4}),
        );
        assert_eq!(merged, json!({"a": {"x": 1, "y": 3}, "b": 1, "c": 4}));
        assert_eq!(merge(json!({"a": 1}), json!(2)), json!(2));
    }
}
