//! Anthropic Messages API shapes as the CLI relays them: messages, content blocks, usage, and the raw
//! stream events inside `stream_event` frames.
//!
//! Stream events are decoded through a flat intermediate struct (no serde tag buffering), because they
//! are the bulk of every stream; an unknown event or delta type becomes an `Unknown` variant.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Token counts as the API reports them (`usage` of a message, `message_delta`, or `result`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// `input_tokens`.
    #[serde(default)]
    pub input_tokens: Option<u64>,
    /// `output_tokens`.
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// `cache_creation_input_tokens`.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    /// `cache_read_input_tokens`.
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
}

/// One entry of `result.modelUsage` (camelCase on the wire), keyed by model name.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    /// `inputTokens`.
    #[serde(default)]
    pub input_tokens: u64,
    /// `outputTokens`.
    #[serde(default)]
    pub output_tokens: u64,
    /// `cacheReadInputTokens`.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// `cacheCreationInputTokens`.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// `webSearchRequests`.
    #[serde(default)]
    pub web_search_requests: u64,
    /// `costUSD`.
    #[serde(default, rename = "costUSD")]
    pub cost_usd: f64,
    /// `contextWindow`.
    #[serde(default)]
    pub context_window: Option<u64>,
    /// `maxOutputTokens`.
    #[serde(default)]
    pub max_output_tokens: Option<u64>,
}

/// `modelUsage`: per-model usage.
pub type ModelUsageMap = BTreeMap<String, ModelUsage>;

/// A content block of an assistant or user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// `{"type":"text","text"}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"thinking","thinking","signature"}`.
    Thinking {
        /// The reasoning text (may be empty when the display mode hides it).
        #[serde(default)]
        thinking: String,
        /// The opaque signature.
        #[serde(default)]
        signature: String,
    },
    /// `{"type":"redacted_thinking","data"}`.
    RedactedThinking {
        /// Encrypted reasoning.
        #[serde(default)]
        data: String,
    },
    /// `{"type":"tool_use","id","name","input"}`.
    ToolUse {
        /// The tool_use id.
        id: String,
        /// The tool name (`Bash`, `AskUserQuestion`, `mcp__server__tool`, …).
        name: String,
        /// The tool input.
        #[serde(default)]
        input: Value,
    },
    /// `{"type":"tool_result","tool_use_id","content","is_error"}` (in user frames).
    ToolResult {
        /// The tool_use it answers.
        tool_use_id: String,
        /// A string, or a list of content blocks (text, image, …).
        #[serde(default)]
        content: Value,
        /// Whether the tool failed (absent means false).
        #[serde(default)]
        is_error: Option<bool>,
    },
    /// Any other block type (image, server tool blocks, …).
    #[serde(other)]
    Other,
}

impl ContentBlock {
    /// For a `tool_result`: its content as text (the string, or its text blocks joined with `\n`).
    pub fn tool_result_text(&self) -> Option<String> {
        let ContentBlock::ToolResult { content, .. } = self else {
            return None;
        };
        Some(match content {
            Value::String(s) => s.clone(),
            Value::Array(items) => items
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
    }
}

/// An API message as relayed in `assistant` frames and `message_start` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApiMessage {
    /// `msg_…` from the API, or a uuid for CLI-synthesized messages (model `<synthetic>`).
    #[serde(default)]
    pub id: String,
    /// The model that answered, or `<synthetic>` for messages the CLI made up (API errors).
    #[serde(default)]
    pub model: String,
    /// `assistant`.
    #[serde(default)]
    pub role: String,
    /// The blocks. In `assistant` frames the CLI sends ONE block per frame (same `id` repeated).
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// Null in relayed assistant frames (the stop reason arrives in `message_delta`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The matched stop sequence, if any.
    #[serde(default)]
    pub stop_sequence: Option<String>,
    /// Usage as of this message (for `assistant` frames: the `message_start` usage).
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// The body of a user message: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// `"content": "text"`.
    Text(String),
    /// `"content": [blocks]`.
    Blocks(Vec<ContentBlock>),
}

/// A delta inside `content_block_delta`.
#[derive(Debug, Clone, PartialEq)]
pub enum Delta {
    /// `text_delta`.
    Text(String),
    /// `input_json_delta`: a piece of the tool input JSON (concatenate; parse at block stop).
    InputJson(String),
    /// `thinking_delta`.
    Thinking(String),
    /// `signature_delta`.
    Signature(String),
    /// Any other delta type (e.g. `citations_delta`), by name.
    Unknown(String),
}

/// `message_delta.delta`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct MessageDeltaBody {
    /// `end_turn`, `tool_use`, `max_tokens`, …
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The matched stop sequence.
    #[serde(default)]
    pub stop_sequence: Option<String>,
}

/// One Anthropic stream event as wrapped by a `stream_event` frame. The CLI does not relay `ping`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(from = "RawEvent")]
pub enum StreamEvent {
    /// `message_start`.
    MessageStart {
        /// The message shell (id, model, initial usage).
        message: ApiMessage,
    },
    /// `content_block_start`.
    ContentBlockStart {
        /// Block index within the message.
        index: u32,
        /// The empty block (tool_use carries id and name here).
        content_block: ContentBlock,
    },
    /// `content_block_delta`.
    ContentBlockDelta {
        /// Block index.
        index: u32,
        /// The delta.
        delta: Delta,
    },
    /// `content_block_stop`.
    ContentBlockStop {
        /// Block index.
        index: u32,
    },
    /// `message_delta`: stop reason and final usage.
    MessageDelta {
        /// Stop reason.
        delta: MessageDeltaBody,
        /// Final usage of the message.
        usage: Option<Usage>,
    },
    /// `message_stop`.
    MessageStop,
    /// `ping` (not relayed by 2.1.332, kept for completeness).
    Ping,
    /// `error` inside the stream.
    Error {
        /// The error object.
        error: Value,
    },
    /// Any other event type, by name.
    Unknown(String),
}

/// Flat decoding target for [`StreamEvent`]: every field any event has, all optional.
#[derive(Deserialize)]
struct RawEvent {
    #[serde(rename = "type", default)]
    ty: String,
    #[serde(default)]
    index: Option<u32>,
    #[serde(default)]
    message: Option<ApiMessage>,
    #[serde(default)]
    content_block: Option<ContentBlock>,
    #[serde(default)]
    delta: Option<RawDelta>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<Value>,
}

/// Flat decoding target for both delta shapes (content block deltas and `message_delta.delta`).
#[derive(Deserialize)]
struct RawDelta {
    #[serde(rename = "type", default)]
    ty: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    partial_json: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    stop_sequence: Option<String>,
}

impl From<RawEvent> for StreamEvent {
    fn from(r: RawEvent) -> StreamEvent {
        let index = r.index.unwrap_or(0);
        match r.ty.as_str() {
            "message_start" => match r.message {
                Some(message) => StreamEvent::MessageStart { message },
                None => StreamEvent::Unknown(r.ty),
            },
            "content_block_start" => match r.content_block {
                Some(content_block) => StreamEvent::ContentBlockStart { index, content_block },
                None => StreamEvent::Unknown(r.ty),
            },
            "content_block_delta" => {
                let Some(d) = r.delta else {
                    return StreamEvent::Unknown(r.ty);
                };
                let delta = match d.ty.as_deref().unwrap_or_default() {
                    "text_delta" => Delta::Text(d.text.unwrap_or_default()),
                    "input_json_delta" => Delta::InputJson(d.partial_json.unwrap_or_default()),
                    "thinking_delta" => Delta::Thinking(d.thinking.unwrap_or_default()),
                    "signature_delta" => Delta::Signature(d.signature.unwrap_or_default()),
                    other => Delta::Unknown(other.to_owned()),
                };
                StreamEvent::ContentBlockDelta { index, delta }
            }
            "content_block_stop" => StreamEvent::ContentBlockStop { index },
            "message_delta" => StreamEvent::MessageDelta {
                delta: r
                    .delta
                    .map(|d| MessageDeltaBody {
                        stop_reason: d.stop_reason,
                        stop_sequence: d.stop_sequence,
                    })
                    .unwrap_or_default(),
                usage: r.usage,
            },
            "message_stop" => StreamEvent::MessageStop,
            "ping" => StreamEvent::Ping,
            "error" => StreamEvent::Error {
                error: r.error.unwrap_or(Value::Null),
            },
            _ => StreamEvent::Unknown(r.ty),
        }
    }
}
