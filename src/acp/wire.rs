//! The ACP wire types this edge reads and writes, hand-written with serde (see `ARCHITECTURE.md`,
//! "Dependencies and why": the schema crate would turn on serde_json's `preserve_order` for the
//! whole build). Field names follow the ACP v1 schema (camelCase, `sessionUpdate`/`type` tags).
//! Unknown fields are ignored on input, as ACP's extensibility rules ask.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The ACP protocol version this edge speaks.
pub const PROTOCOL_VERSION: u16 = 1;

/// `initialize` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest version the client supports.
    pub protocol_version: u16,
    /// What the client offers (fs, terminal); this edge uses none of it.
    #[serde(default)]
    pub client_capabilities: Value,
}

/// `initialize` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// The version chosen.
    pub protocol_version: u16,
    /// What this agent does.
    pub agent_capabilities: AgentCapabilities,
    /// Authentication methods (none: the edge runs as the local user).
    pub auth_methods: Vec<Value>,
    /// Who answers.
    pub agent_info: Implementation,
}

/// The agent's capabilities.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `session/load` is implemented.
    pub load_session: bool,
    /// Content types accepted in prompts beyond text and resource links.
    pub prompt_capabilities: PromptCapabilities,
    /// MCP transports beyond stdio.
    pub mcp_capabilities: McpCapabilities,
}

/// Prompt content capabilities.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilities {
    /// Images.
    pub image: bool,
    /// Audio.
    pub audio: bool,
    /// Embedded `resource` blocks.
    pub embedded_context: bool,
}

/// MCP transport capabilities.
#[derive(Debug, Clone, Serialize)]
pub struct McpCapabilities {
    /// Streamable HTTP.
    pub http: bool,
    /// SSE.
    pub sse: bool,
}

/// Name and version of an implementation.
#[derive(Debug, Clone, Serialize)]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Display name.
    pub title: String,
    /// Version.
    pub version: String,
}

/// One MCP server of a `session/new` or `session/load`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum McpServerSpec {
    /// `{"type": "http" | "sse", name, url, headers}`.
    Remote {
        /// `http` or `sse`.
        #[serde(rename = "type")]
        kind: RemoteKind,
        /// Name.
        name: String,
        /// URL.
        url: String,
        /// Headers.
        #[serde(default)]
        headers: Vec<NameValue>,
    },
    /// `{name, command, args, env}` (stdio has no `type`).
    Stdio {
        /// Name.
        name: String,
        /// Command.
        command: String,
        /// Arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment.
        #[serde(default)]
        env: Vec<NameValue>,
    },
}

/// A remote MCP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RemoteKind {
    /// Streamable HTTP.
    Http,
    /// SSE.
    Sse,
}

/// A `{name, value}` pair (headers, environment).
#[derive(Debug, Clone, Deserialize)]
pub struct NameValue {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// `session/new` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionParams {
    /// The working directory (absolute).
    pub cwd: String,
    /// MCP servers for the session.
    pub mcp_servers: Vec<McpServerSpec>,
}

/// `session/new` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResponse {
    /// The new session's id (the thread key).
    pub session_id: String,
}

/// `session/load` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionParams {
    /// The session to load.
    pub session_id: String,
    /// The working directory (absolute).
    pub cwd: String,
    /// MCP servers for the session.
    pub mcp_servers: Vec<McpServerSpec>,
}

/// `session/prompt` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The session.
    pub session_id: String,
    /// The user message.
    pub prompt: Vec<ContentBlock>,
}

/// `session/prompt` result.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// The turn's token usage, when the agent observed it (ACP's end-of-turn usage shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
}

/// Token usage of one prompt turn.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUsage {
    /// Input plus output tokens.
    pub total_tokens: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from a prompt cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_read_tokens: Option<u64>,
}

/// Why a prompt turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The turn finished.
    EndTurn,
    /// The token limit was reached.
    MaxTokens,
    /// The turn's request limit was reached.
    MaxTurnRequests,
    /// The agent (or the approval policy) refused to continue.
    Refusal,
    /// The client cancelled the turn.
    Cancelled,
}

/// `session/cancel` parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelParams {
    /// The session whose turn to cancel.
    pub session_id: String,
}

/// A content block of a prompt or an update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image (not accepted: `promptCapabilities.image` is false).
    Image {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio (not accepted: `promptCapabilities.audio` is false).
    Audio {
        /// Base64 data.
        data: String,
        /// MIME type.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A link to a resource the agent may read.
    ResourceLink {
        /// URI.
        uri: String,
        /// Name.
        name: String,
    },
    /// An embedded resource.
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}

/// The contents of an embedded resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// URI.
    pub uri: String,
    /// Text contents (a blob resource has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// A `session/update` notification.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification {
    /// The session.
    pub session_id: String,
    /// The update.
    pub update: SessionUpdate,
}

/// One session update.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "sessionUpdate",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionUpdate {
    /// Part of the user's message (history replay).
    UserMessageChunk {
        /// Content.
        content: ContentBlock,
    },
    /// Part of the agent's answer.
    AgentMessageChunk {
        /// Content.
        content: ContentBlock,
    },
    /// Part of the agent's reasoning.
    AgentThoughtChunk {
        /// Content.
        content: ContentBlock,
    },
    /// A new tool call.
    ToolCall {
        /// Id, unique in the session.
        tool_call_id: String,
        /// Title.
        title: String,
        /// Category.
        kind: ToolKind,
        /// Status.
        status: ToolCallStatus,
        /// Raw input, once known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<Value>,
    },
    /// A change to a tool call.
    ToolCallUpdate {
        /// Id.
        tool_call_id: String,
        /// New status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<ToolCallStatus>,
        /// Raw input.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_input: Option<Value>,
        /// Raw output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        raw_output: Option<Value>,
        /// Produced content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<Vec<ToolCallContent>>,
    },
}

/// Content produced by a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCallContent {
    /// A content block.
    Content {
        /// The block.
        content: ContentBlock,
    },
}

/// Tool categories (for the client's icons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reading.
    Read,
    /// Editing.
    Edit,
    /// Deleting.
    Delete,
    /// Moving.
    Move,
    /// Searching.
    Search,
    /// Running a command.
    Execute,
    /// Thinking.
    Think,
    /// Fetching.
    Fetch,
    /// Anything else.
    Other,
}

/// Tool call status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Not started (input streaming, or awaiting approval).
    Pending,
    /// Running.
    InProgress,
    /// Done.
    Completed,
    /// Failed.
    Failed,
}

/// `session/request_permission` parameters (agent → client).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionParams {
    /// The session.
    pub session_id: String,
    /// The gated tool call.
    pub tool_call: PermissionToolCall,
    /// The options offered.
    pub options: Vec<PermissionOption>,
}

/// The tool call a permission request is about (a `ToolCallUpdate`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionToolCall {
    /// Id.
    pub tool_call_id: String,
    /// What is asked.
    pub title: String,
    /// Category.
    pub kind: ToolKind,
    /// Status (pending while asked).
    pub status: ToolCallStatus,
    /// Provider details of the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
}

/// One option of a permission request.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    /// Id answered back.
    pub option_id: String,
    /// Label.
    pub name: String,
    /// Kind.
    pub kind: PermissionOptionKind,
}

/// Kinds of permission options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this once.
    AllowOnce,
    /// Reject this once.
    RejectOnce,
}

/// `session/request_permission` result.
#[derive(Debug, Clone, Deserialize)]
pub struct RequestPermissionResponse {
    /// The outcome.
    pub outcome: PermissionOutcome,
}

/// What the client decided.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// The turn was cancelled before the user chose.
    Cancelled,
    /// The user chose an option.
    Selected {
        /// The option.
        #[serde(rename = "optionId")]
        option_id: String,
    },
}
