//! Runtime services (spec §12): what a host declares ([`ServiceSpec`]), what a service manager or a
//! run-scoped provider publishes for one execution ([`ServiceRef`]) and what a result reports about
//! them ([`ServiceReport`]). Plain data; the orchestration lives in `runtime::services`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::McpServer;

/// A declarative runtime service (name, opaque settings and labels). A service manager turns it into
/// [`ServiceRef`]s; without a manager no endpoint is invented (the launch is refused).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ServiceSpec {
    /// Service name.
    pub name: String,
    /// Opaque settings for the service manager (image, version, size, …).
    #[serde(default)]
    pub settings: BTreeMap<String, String>,
    /// Labels the manager attaches to what it provisions (`ReleaseByLabels` selects by them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

impl ServiceSpec {
    /// A spec with a name and no settings.
    pub fn new(name: impl Into<String>) -> Self {
        ServiceSpec {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Adds one setting.
    pub fn setting(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.settings.insert(key.into(), value.into());
        self
    }

    /// Adds one label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }
}

/// A service made available to one execution.
///
/// `env` and `secret_env` both reach the provider process's environment; `secret_env` values reach
/// *only* the process: they are never put in an event, a record, a [`ServiceReport`] or this type's
/// `Debug` output. `mcp` is appended to the execution's MCP set and reaches the driver like a declared
/// MCP server (its bearer token, if any, belongs in `secret_env` under the declared variable name).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct ServiceRef {
    /// Service name.
    pub name: String,
    /// Where the service listens (a URL, a socket path, …); empty when it has no endpoint.
    pub endpoint: String,
    /// Public environment for the provider process.
    pub env: BTreeMap<String, String>,
    /// Secret environment for the provider process only.
    pub secret_env: BTreeMap<String, String>,
    /// An MCP server the service publishes.
    pub mcp: Option<McpServer>,
    /// Labels (ownership, run, purpose).
    pub labels: BTreeMap<String, String>,
}

impl ServiceRef {
    /// A reference with a name and an endpoint.
    pub fn new(name: impl Into<String>, endpoint: impl Into<String>) -> Self {
        ServiceRef {
            name: name.into(),
            endpoint: endpoint.into(),
            ..Default::default()
        }
    }

    /// Adds one public environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Adds one secret environment variable (process only).
    pub fn secret_env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.secret_env.insert(key.into(), value.into());
        self
    }

    /// Publishes an MCP server.
    pub fn mcp(mut self, server: McpServer) -> Self {
        self.mcp = Some(server);
        self
    }

    /// Adds one label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }
}

impl std::fmt::Debug for ServiceRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceRef")
            .field("name", &self.name)
            .field("endpoint", &self.endpoint)
            .field("env", &self.env)
            .field("secret_env", &self.secret_env.keys().collect::<Vec<_>>())
            .field("mcp", &self.mcp.as_ref().map(|m| &m.name))
            .field("labels", &self.labels)
            .finish()
    }
}

/// Where a reported service came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceOrigin {
    /// Ensured by the Agent's service manager.
    #[default]
    Manager,
    /// Published by a run service provider's attachment.
    Run,
}

/// A runtime service observed during an execution. It never echoes secret env values or the MCP
/// declaration: only the names of the variables and of the MCP server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServiceReport {
    /// Service name.
    pub name: String,
    /// `released`, `release_failed` (see `error`) or `ensured` (cleanup not reached).
    pub state: String,
    /// Endpoint, when public.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub endpoint: String,
    /// Who provided it.
    #[serde(default)]
    pub origin: ServiceOrigin,
    /// The names (never the values) of the environment variables it published, public and secret.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env_names: Vec<String>,
    /// The name of the MCP server it published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Why its cleanup failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ServiceReport {
    /// The report of `service`, provided by `origin`, in state `ensured`.
    pub fn of(service: &ServiceRef, origin: ServiceOrigin) -> Self {
        ServiceReport {
            name: service.name.clone(),
            state: "ensured".into(),
            endpoint: service.endpoint.clone(),
            origin,
            env_names: service
                .env
                .keys()
                .chain(service.secret_env.keys())
                .cloned()
                .collect(),
            mcp_server: service.mcp.as_ref().map(|m| m.name.clone()),
            labels: service.labels.clone(),
            error: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_stay_out_of_debug_and_reports() {
        let s = ServiceRef::new("db", "postgres://127.0.0.1:5432/x")
            .env("DB_HOST", "127.0.0.1")
            .secret_env("DB_PASSWORD", "hunter2-value")
            .mcp(McpServer::http("dbtools", "http://127.0.0.1:1/mcp"));
        let dbg = format!("{s:?}");
        assert!(!dbg.contains("hunter2-value"), "{dbg}");
        assert!(dbg.contains("DB_PASSWORD"), "{dbg}");
        let report = ServiceReport::of(&s, ServiceOrigin::Run);
        let json = serde_json::to_string(&report).unwrap();
        assert!(!json.contains("hunter2-value"), "{json}");
        assert!(
            !json.contains("http://127.0.0.1:1/mcp"),
            "no MCP declaration: {json}"
        );
        assert_eq!(report.env_names, ["DB_HOST", "DB_PASSWORD"]);
        assert_eq!(report.mcp_server.as_deref(), Some("dbtools"));
        assert_eq!(report.state, "ensured");
    }

    #[test]
    fn a_spec_without_labels_serializes_as_before() {
        let s = ServiceSpec::new("db").setting("image", "postgres:16");
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"name":"db","settings":{"image":"postgres:16"}}"#,
            "thread fingerprints of specs without labels are unchanged"
        );
        let back: ServiceSpec = serde_json::from_str(r#"{"name":"db"}"#).unwrap();
        assert_eq!(back, ServiceSpec::new("db"));
    }
}
