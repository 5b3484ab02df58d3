//! The agents the service offers: built from [`AgentSpec`]s, plus one per supported CLI found on the machine.
//!
//! Providers, their discovery and the construction of their drivers are the library's
//! ([`crate::providers::registry`]); this module adds what a served agent has beyond its driver
//! (policy, resources, host tools, services, exposure).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::config::{AgentSpec, ServerConfig};
use super::resources::AgentResources;
use crate::driver::{DecisionMode, Descriptor, Driver, Policy, QuestionMode};
use crate::providers::registry;
use crate::recorder::ExposurePolicy;
use crate::runtime::Agent;
use crate::store::ThreadStore;

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

/// Builds the driver of an agent spec through the library's provider registry; `program` fills in an
/// unset command.
pub fn driver_for(
    spec: &AgentSpec,
    program: Option<PathBuf>,
    server: &ServerConfig,
) -> Result<Arc<dyn Driver>, AgentError> {
    let defaults = registry::Defaults {
        program,
        reference_chunk_delay: Some(server.reference_chunk_delay),
    };
    registry::driver(&spec.provider, &spec.config, &defaults).map_err(|e| match e {
        registry::RegistryError::UnknownProvider(p) => AgentError::UnknownProvider(p),
        registry::RegistryError::InvalidConfig { source, .. } => AgentError::InvalidConfig {
            agent: spec.name.clone(),
            source,
        },
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
        for (provider, _) in registry::discover() {
            if specs.iter().any(|s| s.name == provider.name) {
                continue;
            }
            specs.push(AgentSpec::new(provider.name, provider.name));
        }
    }
    let mut agents = Agents::default();
    for spec in specs {
        if agents.by_name.contains_key(&spec.name) {
            return Err(AgentError::Duplicate(spec.name));
        }
        let driver = driver_for(&spec, None, config)?;
        let descriptor = driver.descriptor();
        let refuse = |reason: String| AgentError::Resources {
            agent: spec.name.clone(),
            reason,
        };
        AgentResources::check(&spec, &descriptor).map_err(refuse)?;
        let policy = service_policy(&descriptor, config.approval_timeout);
        // Named after the configured agent: its threads are its own (tenant, agent, key).
        let mut builder = Agent::builder_arc(driver)
            .name(spec.name.clone())
            .thread_store(store.clone())
            .policy(policy);
        if let Some(n) = spec.events.buffer {
            if !(1..=1_000_000).contains(&n) {
                return Err(refuse(format!("events.buffer must be 1 to 1000000, not {n}")));
            }
            builder = builder.event_buffer(n);
        }
        if spec.events.blocking {
            builder = builder.blocking_events();
        }
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
