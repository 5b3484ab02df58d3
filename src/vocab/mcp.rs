//! MCP server declarations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum McpTransport {
    /// A child process speaking MCP on stdio.
    Stdio {
        /// Command.
        command: String,
        /// Arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment.
        #[serde(default)]
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        /// URL.
        url: String,
        /// Headers.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Name of an env var holding a bearer token.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
    /// Server-sent events.
    Sse {
        /// URL.
        url: String,
        /// Headers.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Name of an env var holding a bearer token.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
}

impl McpTransport {
    /// The transport name.
    pub fn name(&self) -> &'static str {
        match self {
            McpTransport::Stdio { .. } => "stdio",
            McpTransport::Http { .. } => "http",
            McpTransport::Sse { .. } => "sse",
        }
    }
}

/// One MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct McpServer {
    /// Server name (unique per run).
    pub name: String,
    /// Transport.
    pub transport: McpTransport,
    /// Fail the launch when it cannot be configured.
    #[serde(default)]
    pub required: bool,
}

impl McpServer {
    /// A stdio server.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: Vec<String>) -> Self {
        McpServer {
            name: name.into(),
            transport: McpTransport::Stdio {
                command: command.into(),
                args,
                env: BTreeMap::new(),
            },
            required: false,
        }
    }

    /// A streamable-HTTP server.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServer {
            name: name.into(),
            transport: McpTransport::Http {
                url: url.into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            },
            required: false,
        }
    }

    /// Checks the declaration.
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("MCP server name is empty".into());
        }
        match &self.transport {
            McpTransport::Stdio { command, .. } if command.trim().is_empty() => {
                Err(format!("MCP server {:?}: stdio command is empty", self.name))
            }
            McpTransport::Http { url, .. } | McpTransport::Sse { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                Err(format!(
                    "MCP server {:?}: url must be http(s), got {url:?}",
                    self.name
                ))
            }
            _ => Ok(()),
        }
    }
}
