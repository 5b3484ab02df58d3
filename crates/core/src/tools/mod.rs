//! Host tools: Rust functions an Agent offers the model, delivered to every provider CLI through an
//! Agent-owned, authenticated loopback MCP server.
//!
//! * [`define`] builds a [`Tool`] from a typed async handler; its input (and, when it is an object, output)
//!   JSON Schema is derived from the Rust types with schemars, with [`Tool::input_schema_json`] /
//!   [`Tool::output_schema_json`] as explicit escape hatches; read-only / idempotent hints; a semantic
//!   [`Tool::revision`] that a Thread needs (it is part of the thread's compatibility fingerprint).
//! * [`reject`] is the only failure the model sees verbatim; any other error or a panic is sanitized.
//! * [`HostedTools`] is the MCP server (rmcp, streamable HTTP on `127.0.0.1:0`): a random bearer token
//!   handed to the CLI through a random environment variable name, Host and Origin checks, shut down by
//!   `Agent::close`. It needs the `tools` feature (default; axum and rmcp): without it the same API
//!   exists, but binding refuses, so an Agent given tools refuses its launches.

mod define;
mod error;
#[cfg(feature = "tools")]
mod server;
#[cfg(not(feature = "tools"))]
#[path = "unhosted.rs"]
mod server;

pub use define::{Tool, ToolHints, define, fingerprint};
pub use error::{Rejection, ToolDefinitionError, ToolError, reject};
pub use server::{BindError, HOSTED_SERVER_NAME, HostedTools, TOKEN_ENV_PREFIX};
