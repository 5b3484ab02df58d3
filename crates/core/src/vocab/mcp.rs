//! MCP server declarations.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The MCP server name the Agent's host tools are declared under (`tools::HostedTools`). Drivers
/// pre-approve this server's tools (the host wrote them, and `tools::reject` is their policy); a host MCP
/// declaration may not reuse the name.
pub const HOSTED_TOOLS_SERVER: &str = "agent_adaptor_tools";

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", deny_unknown_fields)]
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
#[serde(deny_unknown_fields)]
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

    /// A legacy HTTP+SSE server (`url` is the `GET` event-stream endpoint).
    pub fn sse(name: impl Into<String>, url: impl Into<String>) -> Self {
        McpServer {
            name: name.into(),
            transport: McpTransport::Sse {
                url: url.into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            },
            required: false,
        }
    }

    /// Checks the declaration: the name is `[A-Za-z0-9_-]+` (every CLI builds tool names such as
    /// `mcp__<server>__<tool>` and config keys from it), a stdio command is set, a URL is http(s), and a
    /// bearer-token variable is a variable name (it is written as `${VAR}` or a config key).
    pub fn validate(&self) -> Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("MCP server name is empty".into());
        }
        if !self
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!(
                "MCP server name {:?} must be letters, digits, '_' or '-'",
                self.name
            ));
        }
        if let McpTransport::Http {
            bearer_token_env: Some(var),
            ..
        }
        | McpTransport::Sse {
            bearer_token_env: Some(var),
            ..
        } = &self.transport
            && (var.is_empty()
                || var.starts_with(|c: char| c.is_ascii_digit())
                || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        {
            return Err(format!(
                "MCP server {:?}: bearer_token_env {var:?} is not a variable name",
                self.name
            ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_refuses_names_and_token_variables_a_cli_cannot_use() {
        assert!(
            McpServer::http("ok_name-1", "http://127.0.0.1:1/mcp")
                .validate()
                .is_ok()
        );
        for bad in ["has space", "dot.ted", "slash/x", "é"] {
            assert!(McpServer::stdio(bad, "node", vec![]).validate().is_err(), "{bad}");
        }
        for (var, ok) in [
            ("TOKEN_1", true),
            ("1TOKEN", false),
            ("A-B", false),
            ("", false),
            ("${X}", false),
        ] {
            let mut s = McpServer::http("h", "http://127.0.0.1:1/mcp");
            if let McpTransport::Http { bearer_token_env, .. } = &mut s.transport {
                *bearer_token_env = Some(var.into());
            }
            assert_eq!(s.validate().is_ok(), ok, "{var:?}");
        }
        assert!(McpServer::http("h", "ftp://x").validate().is_err());
        assert!(McpServer::stdio("s", " ", vec![]).validate().is_err());
    }
}
