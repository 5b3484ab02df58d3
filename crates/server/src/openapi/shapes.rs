//! Request shapes as the document states them where the Rust type cannot say it itself: the `mcp[]`
//! servers a run request may add (only HTTP and SSE; a stdio server is refused with 422) and the
//! `timing` of a supplemental message (a closed set). These types are never built: handlers parse the
//! real ones (`vocab::McpServer`, `driver::messages::Timing`), and `value_type` points the document here.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;
use utoipa::ToSchema;

/// An MCP server a run request adds to the agent's (where the agent's `allow_request.mcp` is set).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestMcpServer {
    /// Server name, unique per run.
    #[schema(min_length = 1)]
    name: String,
    /// How to reach it: streamable HTTP or SSE (stdio is never accepted from a request).
    transport: RequestMcpTransport,
    /// Fail the launch when it cannot be configured.
    #[serde(default)]
    required: bool,
}

/// The transport of a [`RequestMcpServer`].
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "type", deny_unknown_fields)]
pub enum RequestMcpTransport {
    /// Streamable HTTP.
    Http {
        /// URL.
        #[schema(min_length = 1)]
        url: String,
        /// Headers.
        #[serde(default)]
        headers: McpHeaders,
        /// Name of an environment variable of the service holding a bearer token.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
    /// Server-sent events.
    Sse {
        /// URL.
        #[schema(min_length = 1)]
        url: String,
        /// Headers.
        #[serde(default)]
        headers: McpHeaders,
        /// Name of an environment variable of the service holding a bearer token.
        #[serde(default)]
        bearer_token_env: Option<String>,
    },
}

/// The headers sent to a remote MCP server, by name (one named schema, so client generators make one
/// type for both transports).
#[derive(Deserialize, ToSchema, Default)]
pub struct McpHeaders(BTreeMap<String, String>);

/// When a supplemental message is delivered: `soon` (default, at the next point the driver can take
/// it), `interrupt` (stop the current turn for it) or `after_turn`.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MessageTiming {
    /// At the next point the driver can take it.
    Soon,
    /// Stop the current turn for it.
    Interrupt,
    /// After the current turn.
    AfterTurn,
}
