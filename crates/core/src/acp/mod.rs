//! The Agent Client Protocol itself: its wire types ([`wire`]) and JSON-RPC 2.0 over newline-delimited
//! frames ([`rpc`]). Shared by the two ends this project has: the ACP client driver
//! (`agent_adaptor_providers::acp`) and the ACP server edge (`agent_adaptor_server::acp`, re-exporting
//! both modules under its own path). Neither end lives here.

pub mod rpc;
pub mod wire;
