//! AG-UI event types (the subset we emit), serialized exactly as the clients validate them:
//! `type` in SCREAMING_SNAKE_CASE, camelCase fields, optional fields omitted (never `null`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An interrupt in a `RUN_FINISHED` outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Interrupt {
    /// Interrupt id (answered by `resume[].interruptId`).
    pub id: String,
    /// `tool_call`, `input_required`, `confirmation`.
    pub reason: String,
    /// Human-readable prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The tool call it gates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// JSON Schema of the expected resume payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    /// ISO-8601 expiry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Extra data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// `RUN_FINISHED.outcome` (only the variants both clients accept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// Finished.
    Success,
    /// Paused for the listed interrupts.
    Interrupt {
        /// At least one.
        interrupts: Vec<Interrupt>,
    },
}

/// The AG-UI events we emit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum AguiEvent {
    /// Always first.
    RunStarted {
        /// Thread id (the client's).
        thread_id: String,
        /// Run id (the client's).
        run_id: String,
    },
    /// Successful (or interrupted) end.
    RunFinished {
        /// Thread id.
        thread_id: String,
        /// Run id.
        run_id: String,
        /// The final result payload.
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Success or interrupt; omitted means success.
        #[serde(skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
    },
    /// Failed end.
    RunError {
        /// Message.
        message: String,
        /// Machine code (the run failure reason).
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// A step began.
    StepStarted {
        /// Step name.
        step_name: String,
    },
    /// A step ended.
    StepFinished {
        /// Step name.
        step_name: String,
    },
    /// A text message opens.
    TextMessageStart {
        /// Message id.
        message_id: String,
        /// `assistant` or `user`.
        role: String,
    },
    /// A text chunk.
    TextMessageContent {
        /// Message id.
        message_id: String,
        /// The chunk.
        delta: String,
    },
    /// A text message closes.
    TextMessageEnd {
        /// Message id.
        message_id: String,
    },
    /// A tool call opens.
    ToolCallStart {
        /// Tool call id.
        tool_call_id: String,
        /// Tool name.
        tool_call_name: String,
        /// The assistant message that owns the call.
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// A fragment of the JSON arguments.
    ToolCallArgs {
        /// Tool call id.
        tool_call_id: String,
        /// Fragment.
        delta: String,
    },
    /// A tool call closes.
    ToolCallEnd {
        /// Tool call id.
        tool_call_id: String,
    },
    /// A tool result (creates a tool message).
    ToolCallResult {
        /// Id of the tool message.
        message_id: String,
        /// Tool call id.
        tool_call_id: String,
        /// The result as a string.
        content: String,
        /// Always `tool`.
        role: String,
    },
    /// A reasoning message opens (role must be `reasoning`).
    ReasoningMessageStart {
        /// Message id.
        message_id: String,
        /// `reasoning`.
        role: String,
    },
    /// A reasoning chunk.
    ReasoningMessageContent {
        /// Message id.
        message_id: String,
        /// Chunk.
        delta: String,
    },
    /// A reasoning message closes.
    ReasoningMessageEnd {
        /// Message id.
        message_id: String,
    },
    /// Anything else, by name.
    Custom {
        /// Name.
        name: String,
        /// Value.
        value: Value,
    },
}

impl AguiEvent {
    /// The SSE frame (`data: <json>\n\n`, LF only).
    pub fn to_sse(&self) -> String {
        format!("data: {}\n\n", serde_json::to_string(self).unwrap_or_default())
    }

    /// True for `RUN_FINISHED` and `RUN_ERROR`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, AguiEvent::RunFinished { .. } | AguiEvent::RunError { .. })
    }
}
