//! [`HostedTools`] in a build without the `tools` feature (no axum, no rmcp): the same API, but no value
//! of it can exist. [`HostedTools::bind`] checks the definitions as the real server does, then refuses
//! with [`BindError::Io`] (`Unsupported`), so an Agent given tools refuses its launches with that message.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;

use super::define::Tool;
use super::error::ToolDefinitionError;
use crate::vocab::McpServer;

/// The MCP server name host tools are declared under (a host MCP declaration may not reuse it).
pub const HOSTED_SERVER_NAME: &str = crate::vocab::HOSTED_TOOLS_SERVER;
/// Prefix of the per-Agent random variable that carries the bearer token.
pub const TOKEN_ENV_PREFIX: &str = "AGENT_ADAPTOR_TOOLS_TOKEN_";

/// An Agent-owned loopback MCP server offering host tools: not built (feature `tools` is off).
#[derive(Debug)]
pub struct HostedTools {
    never: Infallible,
}

impl HostedTools {
    /// Validates the tools, then refuses: this build has no MCP server.
    pub fn bind(tools: Vec<Tool>) -> Result<HostedTools, BindError> {
        for t in &tools {
            t.validate()?;
        }
        Err(BindError::Io(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "host tools need the `tools` feature of agent-adaptor-core",
        )))
    }

    /// Refuses, as [`HostedTools::bind`].
    pub async fn start(tools: Vec<Tool>) -> Result<HostedTools, BindError> {
        HostedTools::bind(tools)
    }

    /// Unreachable: no value exists.
    pub fn ensure_serving(&self) -> Result<(), BindError> {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn addr(&self) -> SocketAddr {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn url(&self) -> String {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn token(&self) -> &str {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn token_env(&self) -> &str {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn tools(&self) -> &[Tool] {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn declaration(&self) -> McpServer {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn env(&self) -> BTreeMap<String, String> {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn check_aliasing(&self, _servers: &[McpServer]) -> Result<(), String> {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub async fn shutdown(&self) -> Result<(), String> {
        match self.never {}
    }

    /// Unreachable: no value exists.
    pub fn is_shut_down(&self) -> bool {
        match self.never {}
    }
}

/// Why the hosted server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// A tool definition is invalid.
    #[error(transparent)]
    Definition(#[from] ToolDefinitionError),
    /// Binding the loopback listener failed (here: the build has no server).
    #[error("binding the host tools listener failed: {0}")]
    Io(#[from] std::io::Error),
}
