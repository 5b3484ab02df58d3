//! The resource vocabulary hosts hand an Agent: skills, MCP servers and runtime services.
//!
//! Plain data plus validation; materialization into each provider's native configuration
//! happens in the drivers.

pub mod mcp;
pub mod skill;

pub use mcp::{HOSTED_TOOLS_SERVER, McpServer, McpTransport};
pub use skill::{SkillRef, SkillSource};

/// A declarative runtime service (name plus opaque settings). Without a service manager no
/// endpoint is invented.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceSpec {
    /// Service name.
    pub name: String,
    /// Opaque settings for the service manager.
    #[serde(default)]
    pub settings: std::collections::BTreeMap<String, String>,
}
