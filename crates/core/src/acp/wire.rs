//! The ACP wire types this edge reads and writes, hand-written with serde (see `ARCHITECTURE.md`,
//! "Dependencies and why": the schema crate would turn on serde_json's `preserve_order` for the
//! whole build). Field names follow the ACP v1 schema (camelCase, `sessionUpdate`/`type` tags).
//! Unknown fields are ignored on input, as ACP's extensibility rules ask.
//!
//! One definition serves both directions: the server edge (`agent-adaptor acp`) reads what a client
//! sends and writes what an agent answers; the ACP client driver (`providers::acp`) does the opposite.
//! Input is read leniently where the schema says so (`x-deserialize-default-on-error`): a missing
//! optional field takes its default, and an update of a kind this mirror does not know is reported by
//! [`parse_update`] rather than failing the frame.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The ACP protocol version this edge speaks.
pub const PROTOCOL_VERSION: u16 = 1;

/// `initialize` parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// The newest version the client supports.
    pub protocol_version: u16,
    /// What the client offers (fs, terminal); the server edge uses none of it, the client driver
    /// sends a [`ClientCapabilities`].
    #[serde(default)]
    pub client_capabilities: Value,
    /// Who asks (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Implementation>,
}

/// What a client offers an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// `fs/*` methods the client serves.
    #[serde(default)]
    pub fs: FileSystemCapabilities,
    /// `terminal/*` methods the client serves.
    #[serde(default)]
    pub terminal: bool,
}

/// The `fs/*` methods a client serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileSystemCapabilities {
    /// `fs/read_text_file`.
    #[serde(default)]
    pub read_text_file: bool,
    /// `fs/write_text_file`.
    #[serde(default)]
    pub write_text_file: bool,
}

/// `initialize` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// The version chosen.
    pub protocol_version: u16,
    /// What this agent does.
    #[serde(default, deserialize_with = "lenient")]
    pub agent_capabilities: AgentCapabilities,
    /// Authentication methods (none: the edge runs as the local user).
    #[serde(default, deserialize_with = "lenient")]
    pub auth_methods: Vec<Value>,
    /// Who answers.
    #[serde(default, deserialize_with = "lenient")]
    pub agent_info: Implementation,
}

/// The agent's capabilities.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `session/load` is implemented.
    #[serde(default, deserialize_with = "lenient")]
    pub load_session: bool,
    /// Content types accepted in prompts beyond text and resource links.
    #[serde(default, deserialize_with = "lenient")]
    pub prompt_capabilities: PromptCapabilities,
    /// MCP transports beyond stdio.
    #[serde(default, deserialize_with = "lenient")]
    pub mcp_capabilities: McpCapabilities,
    /// Session methods beyond `session/new` (and `session/load`, declared above).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "SessionCapabilities::is_empty"
    )]
    pub session_capabilities: SessionCapabilities,
}

/// Session capabilities: each method is supported when its object is present (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionCapabilities {
    /// `session/list`.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub list: Option<Value>,
    /// `session/resume` (stable since 2026-04-22).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub resume: Option<Value>,
    /// `session/fork` (unstable).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub fork: Option<Value>,
    /// `session/close`.
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub close: Option<Value>,
}

impl SessionCapabilities {
    /// True when no session method beyond `new`/`load` is declared.
    pub fn is_empty(&self) -> bool {
        *self == SessionCapabilities::default()
    }
}

/// Prompt content capabilities.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCapabilities {
    /// Images.
    #[serde(default, deserialize_with = "lenient")]
    pub image: bool,
    /// Audio.
    #[serde(default, deserialize_with = "lenient")]
    pub audio: bool,
    /// Embedded `resource` blocks.
    #[serde(default, deserialize_with = "lenient")]
    pub embedded_context: bool,
}

/// MCP transport capabilities.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct McpCapabilities {
    /// Streamable HTTP.
    #[serde(default, deserialize_with = "lenient")]
    pub http: bool,
    /// SSE.
    #[serde(default, deserialize_with = "lenient")]
    pub sse: bool,
}

/// Name and version of an implementation.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Implementation {
    /// Programmatic name.
    #[serde(default)]
    pub name: String,
    /// Display name.
    #[serde(default)]
    pub title: String,
    /// Version.
    #[serde(default)]
    pub version: String,
}

/// `authenticate` parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticateParams {
    /// One of the `authMethods` ids the agent advertised.
    pub method_id: String,
}

/// Deserializes `T`, or its default when the value does not fit (the schema's
/// `x-deserialize-default-on-error`).
fn lenient<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).unwrap_or_default())
}

/// Deserializes a list, skipping the items that do not fit (`x-deserialize-skip-invalid-items`);
/// anything but a list is an empty one.
fn lenient_items<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|i| serde_json::from_value(i).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// [`lenient_items`] for an optional list (`null` or absent: `None`).
fn lenient_opt_items<'de, D, T>(d: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Null => None,
        Value::Array(items) => Some(
            items
                .into_iter()
                .filter_map(|i| serde_json::from_value(i).ok())
                .collect(),
        ),
        _ => None,
    })
}

/// One MCP server of a `session/new` or `session/load`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RemoteKind {
    /// Streamable HTTP.
    Http,
    /// SSE.
    Sse,
}

/// A `{name, value}` pair (headers, environment).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameValue {
    /// Name.
    pub name: String,
    /// Value.
    pub value: String,
}

/// `session/new` parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionParams {
    /// The working directory (absolute).
    pub cwd: String,
    /// MCP servers for the session.
    pub mcp_servers: Vec<McpServerSpec>,
}

/// `session/new` result (also `session/fork`'s).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NewSessionResponse {
    /// The new session's id (the thread key).
    pub session_id: String,
}

/// `session/load` parameters (`session/resume` and `session/fork` read [`ResumeSessionParams`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoadSessionParams {
    /// The session to load.
    pub session_id: String,
    /// The working directory (absolute).
    pub cwd: String,
    /// MCP servers for the session.
    pub mcp_servers: Vec<McpServerSpec>,
}

/// `session/resume` parameters (also `session/fork`'s: the same fields). Unlike `session/load`,
/// `mcpServers` is optional here, as the schema has it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumeSessionParams {
    /// The session to resume (or to fork from).
    pub session_id: String,
    /// The working directory (absolute).
    pub cwd: String,
    /// MCP servers for the session.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerSpec>,
}

/// `session/list` parameters (all optional).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsParams {
    /// Only sessions in this working directory (absolute).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `session/list` result.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSessionsResponse {
    /// One page of sessions.
    #[serde(default, deserialize_with = "lenient_items")]
    pub sessions: Vec<SessionInfo>,
    /// Present when there are more sessions: pass it as the next request's `cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// One session of a `session/list` page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// The session id.
    pub session_id: String,
    /// Its working directory.
    pub cwd: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it last changed (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// `session/set_mode` parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModeParams {
    /// The session.
    pub session_id: String,
    /// One of the modes the agent listed.
    pub mode_id: String,
}

/// `session/set_model` parameters (unstable).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetModelParams {
    /// The session.
    pub session_id: String,
    /// The model.
    pub model_id: String,
}

/// `session/prompt` parameters.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptParams {
    /// The session.
    pub session_id: String,
    /// The user message.
    pub prompt: Vec<ContentBlock>,
}

/// `session/prompt` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptResponse {
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// The turn's token usage, when the agent observed it (ACP's end-of-turn usage shape).
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<TurnUsage>,
}

/// Token usage of one prompt turn.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnUsage {
    /// Input plus output tokens.
    #[serde(default)]
    pub total_tokens: u64,
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens read from a prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_read_tokens: Option<u64>,
}

/// Why a prompt turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
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
        #[serde(default)]
        title: String,
        /// Category.
        #[serde(default, deserialize_with = "lenient")]
        kind: ToolKind,
        /// Status.
        #[serde(default, deserialize_with = "lenient")]
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
        #[serde(
            default,
            deserialize_with = "lenient_opt_items",
            skip_serializing_if = "Option::is_none"
        )]
        content: Option<Vec<ToolCallContent>>,
    },
    /// The agent's plan (replaces the previous one whole).
    Plan {
        /// The entries.
        #[serde(default, deserialize_with = "lenient_items")]
        entries: Vec<PlanEntry>,
    },
    /// The slash commands the agent offers.
    AvailableCommandsUpdate {
        /// The commands (kept as JSON: only relayed).
        #[serde(default, deserialize_with = "lenient_items")]
        available_commands: Vec<Value>,
    },
    /// The session's mode changed.
    CurrentModeUpdate {
        /// The new mode.
        current_mode_id: String,
    },
    /// Context window use and cumulative cost.
    UsageUpdate {
        /// Tokens in the context.
        #[serde(default)]
        used: u64,
        /// The context window.
        #[serde(default)]
        size: u64,
        /// Cumulative cost of the session.
        #[serde(
            default,
            deserialize_with = "lenient",
            skip_serializing_if = "Option::is_none"
        )]
        cost: Option<Cost>,
    },
    /// Session metadata (title) changed.
    SessionInfoUpdate {
        /// The title.
        #[serde(
            default,
            deserialize_with = "lenient",
            skip_serializing_if = "Option::is_none"
        )]
        title: Option<String>,
    },
}

/// The `sessionUpdate` kinds [`SessionUpdate`] mirrors.
pub const KNOWN_UPDATES: &[&str] = &[
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "usage_update",
    "session_info_update",
];

/// What one `update` object of a `session/update` is.
#[derive(Debug, Clone, PartialEq)]
pub enum ParsedUpdate {
    /// A kind this mirror knows, parsed.
    Known(SessionUpdate),
    /// A kind this mirror does not know (newer protocol, extension): relay, never fail.
    Unknown {
        /// The `sessionUpdate` tag (empty when missing).
        kind: String,
    },
    /// A known kind whose fields do not fit.
    Invalid {
        /// The `sessionUpdate` tag.
        kind: String,
        /// Why.
        error: String,
    },
}

/// Classifies and parses the `update` object of a `session/update`.
pub fn parse_update(update: &Value) -> ParsedUpdate {
    let kind = update
        .get("sessionUpdate")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if !KNOWN_UPDATES.contains(&kind.as_str()) {
        return ParsedUpdate::Unknown { kind };
    }
    match serde_json::from_value::<SessionUpdate>(update.clone()) {
        Ok(u) => ParsedUpdate::Known(u),
        Err(e) => ParsedUpdate::Invalid {
            kind,
            error: e.to_string(),
        },
    }
}

/// One entry of a [`SessionUpdate::Plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanEntry {
    /// What the step is.
    pub content: String,
    /// `high`, `medium` or `low`.
    #[serde(default)]
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    #[serde(default)]
    pub status: String,
}

/// A cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    /// Amount.
    pub amount: f64,
    /// ISO 4217 currency.
    pub currency: String,
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
    /// A file change.
    Diff {
        /// The file (absolute).
        path: String,
        /// The text before (absent for a new file).
        #[serde(default, rename = "oldText", skip_serializing_if = "Option::is_none")]
        old_text: Option<String>,
        /// The text after.
        #[serde(rename = "newText")]
        new_text: String,
    },
    /// A terminal the client runs (this mirror relays its id only).
    Terminal {
        /// The terminal.
        #[serde(rename = "terminalId")]
        terminal_id: String,
    },
}

/// Tool categories (for the client's icons).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
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
    #[default]
    Other,
}

/// Tool call status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Not started (input streaming, or awaiting approval).
    #[default]
    Pending,
    /// Running.
    InProgress,
    /// Done.
    Completed,
    /// Failed.
    Failed,
}

/// `session/request_permission` parameters (agent → client).
#[derive(Debug, Clone, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionToolCall {
    /// Id.
    pub tool_call_id: String,
    /// What is asked.
    #[serde(default, deserialize_with = "lenient")]
    pub title: String,
    /// Category.
    #[serde(default, deserialize_with = "lenient")]
    pub kind: ToolKind,
    /// Status (pending while asked).
    #[serde(default, deserialize_with = "lenient")]
    pub status: ToolCallStatus,
    /// Provider details of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
}

/// One option of a permission request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this once.
    AllowOnce,
    /// Allow this and every later request like it.
    AllowAlways,
    /// Reject this once.
    RejectOnce,
    /// Reject this and every later request like it.
    RejectAlways,
}

impl PermissionOptionKind {
    /// True for the allowing kinds.
    pub fn allows(self) -> bool {
        matches!(
            self,
            PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
        )
    }
}

/// `session/request_permission` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RequestPermissionResponse {
    /// The outcome.
    pub outcome: PermissionOutcome,
}

/// What the client decided.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// `fs/read_text_file` parameters (agent → client).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadTextFileParams {
    /// The session.
    pub session_id: String,
    /// The file (absolute).
    pub path: String,
    /// The first line to read (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// How many lines to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
}

/// `fs/read_text_file` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadTextFileResponse {
    /// The text.
    pub content: String,
}

/// `fs/write_text_file` parameters (agent → client).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteTextFileParams {
    /// The session.
    pub session_id: String,
    /// The file (absolute).
    pub path: String,
    /// The whole new text.
    pub content: String,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn updates_parse_leniently_and_unknown_kinds_are_reported_not_failed() {
        let call = json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Run", "kind": "bogus"});
        match parse_update(&call) {
            ParsedUpdate::Known(SessionUpdate::ToolCall { kind, status, .. }) => {
                assert_eq!((kind, status), (ToolKind::Other, ToolCallStatus::Pending));
            }
            other => panic!("{other:?}"),
        }
        let upd = json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
            "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}, {"type": "future"},
                        {"type": "diff", "path": "/w/a", "newText": "x"}]});
        match parse_update(&upd) {
            ParsedUpdate::Known(SessionUpdate::ToolCallUpdate { content: Some(c), .. }) => {
                assert_eq!(c.len(), 2, "the unknown item is skipped, the others kept");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_update(&json!({"sessionUpdate": "compaction_update", "x": 1})),
            ParsedUpdate::Unknown {
                kind: "compaction_update".into()
            }
        );
        assert!(matches!(
            parse_update(&json!({"sessionUpdate": "agent_message_chunk"})),
            ParsedUpdate::Invalid { .. }
        ));
        let usage = json!({"sessionUpdate": "usage_update", "used": 10, "size": 100,
            "cost": {"amount": 0.5, "currency": "USD"}});
        assert!(matches!(
            parse_update(&usage),
            ParsedUpdate::Known(SessionUpdate::UsageUpdate { used: 10, .. })
        ));
    }

    #[test]
    fn initialize_answers_tolerate_bad_capabilities() {
        let v = json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": "yes",
            "sessionCapabilities": {"resume": {}, "fork": {}}, "mcpCapabilities": {"http": true}},
            "authMethods": [{"id": "cursor_login"}]});
        let r: InitializeResponse = serde_json::from_value(v).unwrap();
        assert!(!r.agent_capabilities.load_session, "a bad value is its default");
        assert!(r.agent_capabilities.session_capabilities.resume.is_some());
        assert!(r.agent_capabilities.session_capabilities.list.is_none());
        assert!(r.agent_capabilities.mcp_capabilities.http);
        assert_eq!(r.auth_methods.len(), 1);
        let bare: InitializeResponse = serde_json::from_value(json!({"protocolVersion": 1})).unwrap();
        assert!(bare.agent_info.name.is_empty());
    }
}
