//! The resource vocabulary hosts hand an Agent: skills, MCP servers and runtime services.
//!
//! Plain data plus validation; materialization into each provider's native configuration
//! happens in the drivers.

pub mod mcp;
pub mod service;
pub mod skill;

pub use mcp::{HOSTED_TOOLS_SERVER, McpServer, McpTransport};
pub use service::{ServiceOrigin, ServiceRef, ServiceReport, ServiceSpec};
pub use skill::{SkillRef, SkillSource};
