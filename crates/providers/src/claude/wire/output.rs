//! Frames the CLI writes on stdout that are not part of the control protocol: `system/*`,
//! `stream_event`, `assistant`, `user`, `result` and `command_lifecycle`.
//!
//! Fields are those observed from Claude Code 2.1.332; all but the essentials are optional, and
//! unknown fields are ignored. Large, rarely needed parts (plugins, per-agent stats) stay as `Value`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::{ApiMessage, MessageContent, ModelUsageMap, StreamEvent, Usage};

/// `system` frames, by `subtype`.
#[derive(Debug, Clone, PartialEq)]
pub enum System {
    /// `init`: once per user message in stream-json input mode, once per run in print mode.
    Init(Init),
    /// `status`: `requesting` before each model request (only with `--include-partial-messages`),
    /// or a permission-mode change (`status:null`, `permissionMode`).
    Status(Status),
    /// `api_retry`: the CLI is backing off before retrying a failed model request.
    ApiRetry(ApiRetry),
    /// `thinking_tokens`: running estimate while a thinking block streams.
    ThinkingTokens(ThinkingTokens),
    /// `task_started`: a background task (long Bash, subagent) began.
    TaskStarted(Task),
    /// `task_notification`: a background task changed state or finished.
    TaskNotification(Task),
}

/// `system/init`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Init {
    /// The session id (also the resume id).
    pub session_id: String,
    /// Working directory.
    #[serde(default)]
    pub cwd: String,
    /// Model name the CLI will request.
    #[serde(default)]
    pub model: String,
    /// `default`, `plan`, `acceptEdits`, `bypassPermissions`, `dontAsk`, `auto`, …
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: String,
    /// Tool names offered to the model.
    #[serde(default)]
    pub tools: Vec<String>,
    /// MCP servers with their status (`{name,status,source}`).
    #[serde(default)]
    pub mcp_servers: Vec<Value>,
    /// `ANTHROPIC_API_KEY`, `none`, …
    #[serde(default, rename = "apiKeySource")]
    pub api_key_source: Option<String>,
    /// e.g. `2.1.332`.
    #[serde(default)]
    pub claude_code_version: Option<String>,
    /// Protocol capabilities (`msg_lifecycle_v1`, `interrupt_receipt_v1`, …).
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Slash commands available.
    #[serde(default)]
    pub slash_commands: Vec<String>,
    /// Agent names.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Skill names.
    #[serde(default)]
    pub skills: Vec<String>,
    /// Output style.
    #[serde(default)]
    pub output_style: Option<String>,
    /// Frame uuid.
    #[serde(default)]
    pub uuid: Option<String>,
    /// The client uuids of the user messages this init belongs to (stream-json input with `uuid`).
    #[serde(default)]
    pub user_message_uuids: Option<Vec<String>>,
}

/// `system/status`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Status {
    /// `requesting`, or null for a mode change.
    #[serde(default)]
    pub status: Option<String>,
    /// The new permission mode, on mode changes (e.g. after ExitPlanMode is approved).
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: Option<String>,
    /// The client uuids carried by the request about to be sent: the delivery point of a message.
    #[serde(default)]
    pub user_message_uuids: Option<Vec<String>>,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Frame uuid.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// `system/api_retry`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ApiRetry {
    /// 1-based attempt number.
    #[serde(default)]
    pub attempt: u32,
    /// `CLAUDE_CODE_MAX_RETRIES` (10 by default).
    #[serde(default)]
    pub max_retries: u32,
    /// Backoff before the next try.
    #[serde(default)]
    pub retry_delay_ms: u64,
    /// HTTP status of the failure (null for connection errors).
    #[serde(default)]
    pub error_status: Option<u16>,
    /// Short category: `overloaded`, `server_error`, …
    #[serde(default)]
    pub error: Option<String>,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `system/thinking_tokens`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ThinkingTokens {
    /// Running estimate.
    #[serde(default)]
    pub estimated_tokens: u64,
    /// Increment since the last frame.
    #[serde(default)]
    pub estimated_tokens_delta: u64,
}

/// `system/task_started` and `system/task_notification` (not recorded here; shapes from earlier runs).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Task {
    /// Task id.
    #[serde(default)]
    pub task_id: String,
    /// The tool_use that started it.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// `local_bash`, `subagent`, …
    #[serde(default)]
    pub task_type: Option<String>,
    /// Notification status (`completed`, …).
    #[serde(default)]
    pub status: Option<String>,
    /// Notification summary.
    #[serde(default)]
    pub summary: Option<String>,
}

/// `stream_event`: one raw API stream event (only with `--include-partial-messages`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamEventFrame {
    /// The event.
    pub event: StreamEvent,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Set inside subagents.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The API message id the event belongs to.
    #[serde(default)]
    pub api_message_id: Option<String>,
    /// On `message_start`: time to first token.
    #[serde(default)]
    pub ttft_ms: Option<u64>,
    /// On the synthetic `message_stop` after an abort: blocks from this index on were dropped.
    #[serde(default)]
    pub abandoned_blocks: Option<AbandonedBlocks>,
}

/// `abandoned_blocks` of an aborted stream.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct AbandonedBlocks {
    /// The message.
    #[serde(default)]
    pub api_message_id: String,
    /// First abandoned block index.
    #[serde(default)]
    pub from_block_index: u32,
}

/// `assistant`: one content block of a model message (several frames share `message.id`), or a
/// CLI-made error message (`message.model == "<synthetic>"`, `error` set).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AssistantFrame {
    /// The message with one block.
    pub message: ApiMessage,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Set inside subagents.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// Frame uuid.
    #[serde(default)]
    pub uuid: Option<String>,
    /// The API request id (`request-id` response header).
    #[serde(default)]
    pub request_id: Option<String>,
    /// `authentication_failed`, … on synthetic error messages.
    #[serde(default)]
    pub error: Option<String>,
    /// True on synthetic error messages.
    #[serde(default)]
    pub is_api_error_message: Option<bool>,
    /// HTTP status behind a synthetic error message.
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// True for the partial message kept after an interrupt.
    #[serde(default)]
    pub aborted: Option<bool>,
    /// The client uuid of the user message this answers.
    #[serde(default)]
    pub user_message_uuid: Option<String>,
}

/// `user`: tool results (and interrupt markers) the CLI fed back to the model, or a replayed input
/// message (`isReplay`, with `--replay-user-messages`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserFrame {
    /// The message.
    pub message: UserMessage,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Set inside subagents.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// Frame uuid (the client's uuid on replays).
    #[serde(default)]
    pub uuid: Option<String>,
    /// Structured tool output: an object (Bash: stdout/stderr/interrupted…) or a string
    /// (e.g. `"User rejected tool use"`, `"Error: …"`).
    #[serde(default)]
    pub tool_use_result: Option<Value>,
    /// Per tool_result: how permission was decided (`permission_decision`) or why it did not run
    /// (`non_execution_kind`).
    #[serde(default)]
    pub tool_result_meta: Option<Vec<Value>>,
    /// True when echoing a consumed input frame.
    #[serde(default, rename = "isReplay")]
    pub is_replay: Option<bool>,
}

/// The `message` of a user frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserMessage {
    /// `user`.
    #[serde(default)]
    pub role: String,
    /// Text or blocks.
    pub content: MessageContent,
}

/// `result`: the end of one turn. Note `"type":"result"` is not the first key.
///
/// `is_error` is the authority: API failures come as `subtype:"success"` with `is_error:true` and
/// `terminal_reason:"api_error"`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ResultFrame {
    /// `success`, `error_during_execution`, `error_max_turns`, `error_max_structured_output_retries`, …
    pub subtype: String,
    /// Whether the turn failed.
    #[serde(default)]
    pub is_error: bool,
    /// Final text (absent on `error_during_execution`).
    #[serde(default)]
    pub result: Option<String>,
    /// Session id (checkpoint for `--resume`).
    #[serde(default)]
    pub session_id: String,
    /// `completed`, `aborted_streaming`, `aborted_tools`, `api_error`, `max_turns`, …
    #[serde(default)]
    pub terminal_reason: Option<String>,
    /// Last stop reason.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Model requests in the turn (+1 per synthetic step).
    #[serde(default)]
    pub num_turns: u32,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: u64,
    /// Time in API calls.
    #[serde(default)]
    pub duration_api_ms: u64,
    /// Cumulative cost for the session so far.
    #[serde(default)]
    pub total_cost_usd: f64,
    /// Usage of this turn.
    #[serde(default)]
    pub usage: Option<Usage>,
    /// Cumulative usage per model.
    #[serde(default, rename = "modelUsage")]
    pub model_usage: Option<ModelUsageMap>,
    /// Denied tool uses (`{tool_name, tool_use_id, tool_input}`).
    #[serde(default)]
    pub permission_denials: Vec<Value>,
    /// Validated `--json-schema` output.
    #[serde(default)]
    pub structured_output: Option<Value>,
    /// Error details (`No conversation found …`, `[ede_diagnostic] …`).
    #[serde(default)]
    pub errors: Option<Vec<String>>,
    /// HTTP status of the failing API call.
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// The last client uuid of this turn's user messages.
    #[serde(default)]
    pub user_message_uuid: Option<String>,
    /// All client uuids delivered in this turn (folded `next` messages included).
    #[serde(default)]
    pub user_message_uuids: Option<Vec<String>>,
    /// Messages still waiting to run.
    #[serde(default)]
    pub queued_turn_count: Option<u32>,
    /// 0-based index of this result in the process.
    #[serde(default)]
    pub result_index: Option<u32>,
    /// Frame uuid.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// `command_lifecycle`: delivery state of a user frame that carried a `uuid`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CommandLifecycle {
    /// The client's uuid.
    pub command_uuid: String,
    /// The state.
    pub state: LifecycleState,
    /// Session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Frame uuid.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// `command_lifecycle.state`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LifecycleState {
    /// Received, waiting.
    Queued,
    /// Entered a model request (delivered).
    Started,
    /// Its turn (or the request it was folded into) finished.
    Completed,
    /// Withdrawn (interrupt, `cancel_async_message`, `cancel_queued`).
    Cancelled,
    /// Any other state.
    #[serde(other)]
    Other,
}
