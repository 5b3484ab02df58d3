//! Message content blocks and the `stream_event` payloads (Anthropic-shaped events the CLI synthesizes from
//! the Chat Completions stream).
//!
//! Blocks, events and deltas are read through flat private structs (`#[serde(from)]`) so one pass over the
//! line is enough and an unknown kind becomes an `Other` variant instead of an error.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Usage;

/// One block of `message.content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawBlock", into = "RawBlock")]
pub enum ContentBlock {
    /// `{"type":"text","text"}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{"type":"thinking","thinking","signature"}` (from the model's `reasoning_content`; signature `""`).
    Thinking {
        /// The reasoning text.
        thinking: String,
        /// The signature (empty with Chat Completions models).
        signature: String,
    },
    /// `{"type":"tool_use","id","name","input"}`.
    ToolUse {
        /// The call id (the model's `tool_calls[].id`).
        id: String,
        /// The tool.
        name: String,
        /// The parsed arguments.
        input: Value,
    },
    /// `{"type":"tool_result","tool_use_id","content","is_error","_meta"}`.
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// Text or blocks.
        content: ToolResultContent,
        /// Whether the tool failed or was refused.
        is_error: bool,
        /// CodeBuddy's `_meta` (e.g. `rawResponse.exitCode` for Bash, `planFilePath` for ExitPlanMode).
        meta: Option<Value>,
    },
    /// Any other block type (kept by name only).
    Other {
        /// Its `type`.
        kind: String,
    },
}

/// `tool_result.content`: a string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// A plain string.
    Text(String),
    /// Blocks (`[{"type":"text","text":…}]` in every recording).
    Blocks(Vec<ContentBlock>),
}

impl ToolResultContent {
    /// The text: the string, or the text blocks joined.
    pub fn text(&self) -> String {
        match self {
            ToolResultContent::Text(s) => s.clone(),
            ToolResultContent::Blocks(b) => b
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// `user.message.content`: a string or blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// A plain string.
    Text(String),
    /// Blocks (tool results).
    Blocks(Vec<ContentBlock>),
}

#[derive(Serialize, Deserialize)]
struct RawBlock {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<ToolResultContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<Value>,
}

impl From<RawBlock> for ContentBlock {
    fn from(r: RawBlock) -> ContentBlock {
        match r.kind.as_str() {
            "text" => ContentBlock::Text {
                text: r.text.unwrap_or_default(),
            },
            "thinking" => ContentBlock::Thinking {
                thinking: r.thinking.unwrap_or_default(),
                signature: r.signature.unwrap_or_default(),
            },
            "tool_use" => ContentBlock::ToolUse {
                id: r.id.unwrap_or_default(),
                name: r.name.unwrap_or_default(),
                input: r.input.unwrap_or(Value::Null),
            },
            "tool_result" => ContentBlock::ToolResult {
                tool_use_id: r.tool_use_id.unwrap_or_default(),
                content: r
                    .content
                    .unwrap_or_else(|| ToolResultContent::Text(String::new())),
                is_error: r.is_error.unwrap_or(false),
                meta: r.meta,
            },
            _ => ContentBlock::Other { kind: r.kind },
        }
    }
}

impl From<ContentBlock> for RawBlock {
    fn from(b: ContentBlock) -> RawBlock {
        let mut r = RawBlock {
            kind: String::new(),
            text: None,
            thinking: None,
            signature: None,
            id: None,
            name: None,
            input: None,
            tool_use_id: None,
            content: None,
            is_error: None,
            meta: None,
        };
        match b {
            ContentBlock::Text { text } => {
                r.kind = "text".into();
                r.text = Some(text);
            }
            ContentBlock::Thinking { thinking, signature } => {
                r.kind = "thinking".into();
                r.thinking = Some(thinking);
                r.signature = Some(signature);
            }
            ContentBlock::ToolUse { id, name, input } => {
                r.kind = "tool_use".into();
                r.id = Some(id);
                r.name = Some(name);
                r.input = Some(input);
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
                meta,
            } => {
                r.kind = "tool_result".into();
                r.tool_use_id = Some(tool_use_id);
                r.content = Some(content);
                r.is_error = Some(is_error);
                r.meta = meta;
            }
            ContentBlock::Other { kind } => r.kind = kind,
        }
        r
    }
}

/// `message_start.message`. Note: its `content` already holds the first text delta, which then arrives
/// again as a `content_block_delta`; render the deltas, not this.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamMessage {
    /// The completion id.
    #[serde(default)]
    pub id: Option<String>,
    /// The model.
    #[serde(default)]
    pub model: Option<String>,
    /// See the type's note.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
}

/// `message_delta.delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageDeltaBody {
    /// `end_turn`, `tool_use`, …
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// The matched stop sequence.
    #[serde(default)]
    pub stop_sequence: Option<String>,
}

/// `content_block_delta.delta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawDelta", into = "RawDelta")]
pub enum Delta {
    /// `text_delta`.
    Text(String),
    /// `input_json_delta`: a piece of a tool call's arguments.
    InputJson(String),
    /// `thinking_delta`.
    Thinking(String),
    /// `signature_delta`.
    Signature(String),
    /// Any other delta type.
    Other {
        /// Its `type`.
        kind: String,
    },
}

/// Both delta shapes in one flat struct: `content_block_delta.delta` (has `type`) and
/// `message_delta.delta` (has `stop_reason`), so an event is read in one pass.
#[derive(Default, Serialize, Deserialize)]
struct RawDelta {
    #[serde(rename = "type", default, skip_serializing_if = "String::is_empty")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    partial_json: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stop_sequence: Option<String>,
}

impl From<RawDelta> for Delta {
    fn from(r: RawDelta) -> Delta {
        match r.kind.as_str() {
            "text_delta" => Delta::Text(r.text.unwrap_or_default()),
            "input_json_delta" => Delta::InputJson(r.partial_json.unwrap_or_default()),
            "thinking_delta" => Delta::Thinking(r.thinking.unwrap_or_default()),
            "signature_delta" => Delta::Signature(r.signature.unwrap_or_default()),
            _ => Delta::Other { kind: r.kind },
        }
    }
}

impl From<Delta> for RawDelta {
    fn from(d: Delta) -> RawDelta {
        let mut r = RawDelta::default();
        match d {
            Delta::Text(s) => (r.kind, r.text) = ("text_delta".into(), Some(s)),
            Delta::InputJson(s) => (r.kind, r.partial_json) = ("input_json_delta".into(), Some(s)),
            Delta::Thinking(s) => (r.kind, r.thinking) = ("thinking_delta".into(), Some(s)),
            Delta::Signature(s) => (r.kind, r.signature) = ("signature_delta".into(), Some(s)),
            Delta::Other { kind } => r.kind = kind,
        }
        r
    }
}

/// `stream_event.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "RawEvent", into = "RawEvent")]
pub enum StreamEvent {
    /// `message_start`.
    MessageStart {
        /// The message header (see [`StreamMessage`]).
        message: StreamMessage,
    },
    /// `content_block_start` (an empty text, thinking or tool_use block).
    ContentBlockStart {
        /// The block index.
        index: u32,
        /// The empty block (`tool_use` already has id and name).
        content_block: ContentBlock,
    },
    /// `content_block_delta`.
    ContentBlockDelta {
        /// The block index.
        index: u32,
        /// The piece.
        delta: Delta,
    },
    /// `content_block_stop`.
    ContentBlockStop {
        /// The block index.
        index: u32,
    },
    /// `message_delta`: the stop reason and final usage.
    MessageDelta {
        /// The stop reason.
        delta: MessageDeltaBody,
        /// Final counts.
        usage: Option<Usage>,
    },
    /// `message_stop`.
    MessageStop,
    /// Any other event type.
    Other {
        /// Its `type`.
        kind: String,
    },
}

#[derive(Serialize, Deserialize)]
struct RawEvent {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    index: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<StreamMessage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content_block: Option<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    delta: Option<RawDelta>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
}

impl From<RawEvent> for StreamEvent {
    fn from(r: RawEvent) -> StreamEvent {
        let index = r.index.unwrap_or(0);
        match r.kind.as_str() {
            "message_start" => StreamEvent::MessageStart {
                message: r.message.unwrap_or(StreamMessage {
                    id: None,
                    model: None,
                    content: Vec::new(),
                }),
            },
            "content_block_start" => StreamEvent::ContentBlockStart {
                index,
                content_block: r
                    .content_block
                    .unwrap_or(ContentBlock::Other { kind: String::new() }),
            },
            "content_block_delta" => StreamEvent::ContentBlockDelta {
                index,
                delta: r.delta.unwrap_or_default().into(),
            },
            "content_block_stop" => StreamEvent::ContentBlockStop { index },
            "message_delta" => {
                let d = r.delta.unwrap_or_default();
                StreamEvent::MessageDelta {
                    delta: MessageDeltaBody {
                        stop_reason: d.stop_reason,
                        stop_sequence: d.stop_sequence,
                    },
                    usage: r.usage,
                }
            }
            "message_stop" => StreamEvent::MessageStop,
            _ => StreamEvent::Other { kind: r.kind },
        }
    }
}

impl From<StreamEvent> for RawEvent {
    fn from(e: StreamEvent) -> RawEvent {
        let mut r = RawEvent {
            kind: String::new(),
            index: None,
            message: None,
            content_block: None,
            delta: None,
            usage: None,
        };
        match e {
            StreamEvent::MessageStart { message } => {
                (r.kind, r.message) = ("message_start".into(), Some(message))
            }
            StreamEvent::ContentBlockStart { index, content_block } => {
                (r.kind, r.index) = ("content_block_start".into(), Some(index));
                r.content_block = Some(content_block);
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                (r.kind, r.index) = ("content_block_delta".into(), Some(index));
                r.delta = Some(delta.into());
            }
            StreamEvent::ContentBlockStop { index } => {
                (r.kind, r.index) = ("content_block_stop".into(), Some(index));
            }
            StreamEvent::MessageDelta { delta, usage } => {
                r.kind = "message_delta".into();
                r.delta = Some(RawDelta {
                    stop_reason: delta.stop_reason,
                    stop_sequence: delta.stop_sequence,
                    ..RawDelta::default()
                });
                r.usage = usage;
            }
            StreamEvent::MessageStop => r.kind = "message_stop".into(),
            StreamEvent::Other { kind } => r.kind = kind,
        }
        r
    }
}
