//! The agents the service offers: built from [`AgentSpec`]s, plus one per supported CLI found on the machine.
//!
//! # Adding a provider
//! A provider is ONE entry in [`PROVIDERS`] (its name, default command and `AGENT_ADAPTOR_<P>_BIN` variable)
//! and ONE match arm in [`driver_for`] that turns the spec's JSON config into the provider's driver. Discovery,
//! the routes, AG-UI, approvals and recording need nothing else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::config::{AgentSpec, ServerConfig};
use super::resources::AgentResources;
use crate::driver::{DecisionMode, Descriptor, Driver, Policy, QuestionMode};
use crate::providers::claude;
use crate::providers::codebuddy::{CodeBuddyConfig, CodeBuddyDriver};
use crate::providers::codex::{CodexConfig, CodexDriver};
use crate::providers::cursor::{CursorConfig, CursorDriver};
use crate::recorder::ExposurePolicy;
use crate::runtime::Agent;
use crate::store::ThreadStore;

/// A provider the service can drive: `(name, default command, environment variable naming the binary)`.
pub const PROVIDERS: &[(&str, &str, &str)] = &[
    ("claude", "claude", "AGENT_ADAPTOR_CLAUDE_BIN"),
    ("codex", "codex", "AGENT_ADAPTOR_CODEX_BIN"),
    ("codebuddy", "codebuddy", "AGENT_ADAPTOR_CODEBUDDY_BIN"),
    ("cursor", "cursor-agent", "AGENT_ADAPTOR_CURSOR_BIN"),
];

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// No provider of that name.
    #[error("unknown provider {0:?}")]
    UnknownProvider(String),
    /// The config does not fit the provider's config type.
    #[error("invalid config for agent {agent:?}: {source}")]
    InvalidConfig {
        /// The agent.
        agent: String,
        /// The decoding error.
        source: serde_json::Error,
    },
    /// Two agents share a name.
    #[error("duplicate agent name {0:?}")]
    Duplicate(String),
    /// The agent's resources (MCP servers, skills, tools, grants) do not fit its driver.
    #[error("agent {agent:?}: {reason}")]
    Resources {
        /// The agent.
        agent: String,
        /// Why.
        reason: String,
    },
    /// Host resources (tools, a service manager, run service providers) were given for an agent the
    /// configuration does not have.
    #[error("host resources given for an unknown agent {0:?}")]
    ToolsForUnknownAgent(String),
}

/// What the embedding host gives one agent (see [`super::HostResources`]).
#[derive(Default)]
pub(crate) struct HostParts {
    pub tools: Option<Vec<crate::tools::Tool>>,
    pub manager: Option<Arc<dyn crate::runtime::ServiceManager>>,
    pub providers: Vec<Arc<dyn crate::runtime::RunServiceProvider>>,
}

/// One agent as the service holds it.
#[derive(Clone, Debug)]
pub struct AgentEntry {
    /// The name in the URL.
    pub name: String,
    /// The provider.
    pub provider: String,
    /// The runtime agent.
    pub agent: Agent,
    /// The exposure policy its records are written under.
    pub exposure: ExposurePolicy,
    /// Its configured resources and what a run request may add.
    pub resources: AgentResources,
}

impl AgentEntry {
    /// The capability descriptor.
    pub fn descriptor(&self) -> &Descriptor {
        self.agent.descriptor()
    }
}

/// The agents by name, with the default agent's name.
#[derive(Clone, Debug, Default)]
pub struct Agents {
    by_name: BTreeMap<String, AgentEntry>,
    default: Option<String>,
}

impl Agents {
    /// The agent called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentEntry> {
        self.by_name.get(name)
    }

    /// The default agent (the first configured).
    pub fn default_agent(&self) -> Option<&AgentEntry> {
        self.default.as_deref().and_then(|n| self.by_name.get(n))
    }

    /// Every agent, by name.
    pub fn iter(&self) -> impl Iterator<Item = &AgentEntry> {
        self.by_name.values()
    }

    /// Closes every agent (cancels their executions) within `deadline`.
    pub async fn close(&self, deadline: Duration) {
        for a in self.by_name.values() {
            let _ = a.agent.close(deadline).await;
        }
    }
}

/// Builds the driver of `provider` from its JSON `config`; `program` fills in an unset command.
pub fn driver_for(
    spec: &AgentSpec,
    program: Option<PathBuf>,
    server: &ServerConfig,
) -> Result<Arc<dyn Driver>, AgentError> {
    let invalid = |source| AgentError::InvalidConfig {
        agent: spec.name.clone(),
        source,
    };
    let config = match &spec.config {
        Value::Null => Value::Object(Default::default()),
        v => v.clone(),
    };
    Ok(match spec.provider.as_str() {
        #[cfg(feature = "testkit")]
        "reference" => {
            use crate::testkit::reference::{ReferenceConfig, ReferenceDriver};
            let delay = config
                .get("chunk_delay_ms")
                .and_then(Value::as_u64)
                .map(Duration::from_millis)
                .unwrap_or(server.reference_chunk_delay);
            // `"fork": false` declares no session fork (to exercise the service's refusal).
            let descriptor = (config.get("fork") == Some(&Value::Bool(false))).then(|| {
                let mut d = ReferenceDriver::new(ReferenceConfig::default()).descriptor();
                d.sessions.fork = false;
                d
            });
            // `"report_resources": true` takes MCP servers and skills and reports them in the metadata.
            let report_resources = config.get("report_resources") == Some(&Value::Bool(true));
            Arc::new(ReferenceDriver::new(ReferenceConfig {
                chunk_delay: delay,
                descriptor,
                report_resources,
                ..Default::default()
            }))
        }
        "claude" => {
            let mut c: claude::Config = serde_json::from_value(config).map_err(invalid)?;
            if c.common.command.is_none() {
                c.common.command = program;
            }
            Arc::new(claude::Driver::new(c))
        }
        "codex" => {
            // `AGENT_ADAPTOR_CODEX_BASE_URL` / `_API_KEY` give the default agent a custom model provider.
            let defaults = serde_json::to_value(CodexConfig::from_env()).map_err(invalid)?;
            let mut c: CodexConfig = serde_json::from_value(merge(defaults, config)).map_err(invalid)?;
            if c.common.command.is_none() {
                c.common.command = program;
            }
            Arc::new(CodexDriver::new(c))
        }
        "codebuddy" => {
            let mut c: CodeBuddyConfig = serde_json::from_value(config).map_err(invalid)?;
            if c.common.command.is_none() {
                c.common.command = program;
            }
            Arc::new(CodeBuddyDriver::new(c))
        }
        "cursor" => {
            let mut c: CursorConfig = serde_json::from_value(config).map_err(invalid)?;
            if c.common.command.is_none() {
                c.common.command = program;
            }
            Arc::new(CursorDriver::new(c))
        }
        other => return Err(AgentError::UnknownProvider(other.to_owned())),
    })
}

/// The default policy of a served agent: like the library's, except that questions are asked of the
/// client (it answers them over `POST /v1/runs/{id}/approvals/{id}` or in its AG-UI frontend) when the
/// driver can ask; a library caller without a UI keeps the portable auto-deny. Unanswered requests wait
/// the service's `approval_timeout`.
fn service_policy(descriptor: &Descriptor, approval_timeout: Duration) -> Policy {
    let mut policy = Policy::default();
    policy.approvals = policy.approvals.with_timeout(approval_timeout);
    if descriptor.run_policy.question.contains(&DecisionMode::Ask) {
        policy.approvals.question = QuestionMode::Ask;
    }
    policy
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

/// The binary of a provider: `$AGENT_ADAPTOR_<P>_BIN` when it names a file, else the command on `PATH`.
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

/// Builds every configured agent, then (when enabled) one agent per provider whose CLI is present and
/// that no configured agent already uses under the provider's name.
/// Builds the agents of `config` over `store`; `host` holds the host's tools, service managers and
/// run service providers by agent name.
pub fn build(
    config: &ServerConfig,
    store: &Arc<dyn ThreadStore>,
    mut host: super::HostResources,
) -> Result<Agents, AgentError> {
    let mut specs = config.agents.clone();
    if config.discover_clis {
        for (provider, command, env_var) in PROVIDERS {
            if specs.iter().any(|s| s.name == *provider) {
                continue;
            }
            if find_cli(command, env_var).is_some() {
                specs.push(AgentSpec::new(*provider, *provider));
            }
        }
    }
    let mut agents = Agents::default();
    for spec in specs {
        if agents.by_name.contains_key(&spec.name) {
            return Err(AgentError::Duplicate(spec.name));
        }
        let program = PROVIDERS
            .iter()
            .find(|(p, _, _)| *p == spec.provider)
            .and_then(|(_, command, env_var)| find_cli(command, env_var));
        let driver = driver_for(&spec, program, config)?;
        let descriptor = driver.descriptor();
        let refuse = |reason: String| AgentError::Resources {
            agent: spec.name.clone(),
            reason,
        };
        AgentResources::check(&spec, &descriptor).map_err(refuse)?;
        let policy = service_policy(&descriptor, config.approval_timeout);
        let mut builder = Agent::builder_arc(driver)
            .thread_store(store.clone())
            .policy(policy);
        let parts = host.take(&spec.name);
        let has_tools = parts.tools.is_some();
        if let Some(host_tools) = parts.tools {
            if !descriptor.mcp.http {
                return Err(refuse(format!(
                    "host tools need HTTP MCP, which the {} driver does not take",
                    descriptor.driver_type
                )));
            }
            builder = builder.tools(host_tools);
        }
        builder = with_services(&spec, builder, parts.manager, parts.providers).map_err(refuse)?;
        let (with_resources, mut resources) = AgentResources::install(&spec, builder);
        builder = with_resources;
        if has_tools {
            resources = resources.with_host_tools();
        }
        // The driver config's `directory` (CommonConfig: "default working directory") is the agent's
        // default workspace; without it runs work in the service's current directory.
        if let Some(dir) = default_directory(&spec.config) {
            builder = builder.workspace(dir);
        }
        let agent = builder.build();
        agents.default.get_or_insert_with(|| spec.name.clone());
        agents.by_name.insert(
            spec.name.clone(),
            AgentEntry {
                name: spec.name,
                provider: spec.provider,
                agent,
                exposure: spec.exposure,
                resources,
            },
        );
    }
    if let Some(name) = host.leftover() {
        return Err(AgentError::ToolsForUnknownAgent(name));
    }
    Ok(agents)
}

/// Gives the agent the host's service manager and run service providers; services declared (or offered
/// to requests) without a manager are refused here, at startup, rather than failing every run.
fn with_services(
    spec: &AgentSpec,
    mut builder: crate::runtime::AgentBuilder,
    manager: Option<Arc<dyn crate::runtime::ServiceManager>>,
    providers: Vec<Arc<dyn crate::runtime::RunServiceProvider>>,
) -> Result<crate::runtime::AgentBuilder, String> {
    match manager {
        Some(m) => builder = builder.service_manager(m),
        None if !spec.services.is_empty() || !spec.service_catalog.is_empty() => {
            let names: Vec<&str> = spec
                .services
                .iter()
                .chain(&spec.service_catalog)
                .map(|s| s.name.as_str())
                .collect();
            return Err(format!(
                "services {names:?} declared but the agent has no service manager \
                 (service_manager_missing: give one with HostResources::service_manager)"
            ));
        }
        None => {}
    }
    for p in providers {
        builder = builder.run_service_provider(p);
    }
    Ok(builder)
}

/// The non-empty `directory` of a driver config (every provider's `CommonConfig` has it).
fn default_directory(config: &Value) -> Option<PathBuf> {
    config
        .get("directory")
        .and_then(Value::as_str)
        .filter(|d| !d.trim().is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_config_directory_is_the_default_workspace() {
        assert_eq!(
            default_directory(&json!({"directory": "/srv/proj"})),
            Some(PathBuf::from("/srv/proj"))
        );
        assert_eq!(default_directory(&json!({"directory": " "})), None);
        assert_eq!(default_directory(&json!({"directory": 3})), None);
        assert_eq!(default_directory(&json!({})), None);
    }
}
