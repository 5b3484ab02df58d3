//! Rendering a scripted [`MessageReply`] the way the Anthropic Messages API sends it: the SSE event
//! sequence for streaming requests and the full message JSON for non-streaming ones, plus error bodies.
//!
//! Sequence: `message_start`, `ping`, per block `content_block_start` / `content_block_delta`… /
//! `content_block_stop`, then `message_delta` (stop_reason + usage) and `message_stop`.

use bytes::Bytes;
use serde_json::{Value, json};

use super::script::{Block, ErrorReply, MessageReply, split_chunks};

/// One server-sent event: the `event:` name and the `data:` JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct SseEvent {
    /// The event name, equal to `data.type`.
    pub name: &'static str,
    /// The JSON payload.
    pub data: Value,
}

impl SseEvent {
    /// The bytes on the wire: `event: <name>\ndata: <json>\n\n`.
    pub fn to_bytes(&self) -> Bytes {
        Bytes::from(format!("event: {}\ndata: {}\n\n", self.name, self.data))
    }
}

/// The message id used when the reply names none: `msg_mock_0001` for request 1.
pub fn default_message_id(n: usize) -> String {
    format!("msg_mock_{n:04}")
}

/// The request id sent in the `request-id` header: `req_mock_0001` for request 1.
pub fn request_id(n: usize) -> String {
    format!("req_mock_{n:04}")
}

/// The tool_use id used when the block names none: `toolu_mock_0001_1` for request 1, block 1.
pub fn default_tool_use_id(n: usize, index: usize) -> String {
    format!("toolu_mock_{n:04}_{index}")
}

/// The complete content blocks (as the non-streaming API returns them).
fn full_blocks(reply: &MessageReply, n: usize) -> Vec<Value> {
    reply
        .blocks
        .iter()
        .enumerate()
        .map(|(i, b)| match b {
            Block::Text { chunks } => json!({"type": "text", "text": chunks.concat()}),
            Block::Thinking { chunks, signature } => {
                json!({"type": "thinking", "thinking": chunks.concat(), "signature": signature})
            }
            Block::ToolUse { id, name, input, .. } => json!({
                "type": "tool_use",
                "id": id.clone().unwrap_or_else(|| default_tool_use_id(n, i)),
                "name": name,
                "input": input,
            }),
        })
        .collect()
}

/// The full message JSON for a non-streaming request.
pub fn message_json(reply: &MessageReply, n: usize, request_model: &str) -> Value {
    let u = reply.usage;
    json!({
        "id": reply.id.clone().unwrap_or_else(|| default_message_id(n)),
        "type": "message",
        "role": "assistant",
        "model": reply.model.as_deref().unwrap_or(request_model),
        "content": full_blocks(reply, n),
        "stop_reason": reply.effective_stop_reason().as_str(),
        "stop_sequence": null,
        "usage": {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "output_tokens": u.output_tokens,
        },
    })
}

/// The SSE events for a streaming request.
pub fn message_events(reply: &MessageReply, n: usize, request_model: &str) -> Vec<SseEvent> {
    let u = reply.usage;
    let mut out = vec![
        SseEvent {
            name: "message_start",
            data: json!({"type": "message_start", "message": {
                "id": reply.id.clone().unwrap_or_else(|| default_message_id(n)),
                "type": "message",
                "role": "assistant",
                "model": reply.model.as_deref().unwrap_or(request_model),
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {
                    "input_tokens": u.input_tokens,
                    "cache_creation_input_tokens": u.cache_creation_input_tokens,
                    "cache_read_input_tokens": u.cache_read_input_tokens,
                    "output_tokens": 1,
                },
            }}),
        },
        SseEvent {
            name: "ping",
            data: json!({"type": "ping"}),
        },
    ];
    for (index, block) in reply.blocks.iter().enumerate() {
        block_events(block, index, n, &mut out);
    }
    out.push(SseEvent {
        name: "message_delta",
        data: json!({"type": "message_delta",
        "delta": {"stop_reason": reply.effective_stop_reason().as_str(), "stop_sequence": null},
        "usage": {
            "input_tokens": u.input_tokens,
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "output_tokens": u.output_tokens,
        }}),
    });
    out.push(SseEvent {
        name: "message_stop",
        data: json!({"type": "message_stop"}),
    });
    out
}

fn delta(index: usize, delta: Value) -> SseEvent {
    SseEvent {
        name: "content_block_delta",
        data: json!({"type": "content_block_delta", "index": index, "delta": delta}),
    }
}

fn block_events(block: &Block, index: usize, n: usize, out: &mut Vec<SseEvent>) {
    let start = match block {
        Block::Text { .. } => json!({"type": "text", "text": ""}),
        Block::Thinking { .. } => json!({"type": "thinking", "thinking": "", "signature": ""}),
        Block::ToolUse { id, name, .. } => json!({
            "type": "tool_use",
            "id": id.clone().unwrap_or_else(|| default_tool_use_id(n, index)),
            "name": name,
            "input": {},
        }),
    };
    out.push(SseEvent {
        name: "content_block_start",
        data: json!({"type": "content_block_start", "index": index, "content_block": start}),
    });
    match block {
        Block::Text { chunks } => {
            for c in chunks {
                out.push(delta(index, json!({"type": "text_delta", "text": c})));
            }
        }
        Block::Thinking { chunks, signature } => {
            for c in chunks {
                out.push(delta(index, json!({"type": "thinking_delta", "thinking": c})));
            }
            out.push(delta(
                index,
                json!({"type": "signature_delta", "signature": signature}),
            ));
        }
        Block::ToolUse { input, pieces, .. } => {
            let text = input.to_string();
            let size = text.len().div_ceil((*pieces).max(1)).max(1);
            for c in split_chunks(&text, size) {
                out.push(delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": c}),
                ));
            }
        }
    }
    out.push(SseEvent {
        name: "content_block_stop",
        data: json!({"type": "content_block_stop", "index": index}),
    });
}

/// The Anthropic error body for an error reply.
pub fn error_json(err: &ErrorReply, n: usize) -> Value {
    json!({
        "type": "error",
        "error": {"type": err.error_type, "message": err.message},
        "request_id": request_id(n),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::anthropic::script::{Reply, ReplyBody};

    fn message(reply: Reply) -> MessageReply {
        match reply.body {
            ReplyBody::Message(m) => m,
            ReplyBody::Error(_) => panic!("expected a message"),
        }
    }

    #[test]
    fn text_stream_has_the_api_sequence() {
        let m = message(Reply::text("Hello there, this is a mock."));
        let ev = message_events(&m, 3, "claude-x");
        let names: Vec<_> = ev.iter().map(|e| e.name).collect();
        assert_eq!(names[..3], ["message_start", "ping", "content_block_start"]);
        assert_eq!(
            names[names.len() - 3..],
            ["content_block_stop", "message_delta", "message_stop"]
        );
        assert_eq!(ev[0].data["message"]["id"], "msg_mock_0003");
        assert_eq!(ev[0].data["message"]["model"], "claude-x");
        let text: String = ev
            .iter()
            .filter_map(|e| e.data["delta"]["text"].as_str())
            .collect();
        assert_eq!(text, "Hello there, this is a mock.");
        assert_eq!(ev[ev.len() - 2].data["delta"]["stop_reason"], "end_turn");
    }

    #[test]
    fn tool_input_pieces_concatenate_to_the_input() {
        let input = json!({"command": "touch x && ls", "description": "Create a file"});
        let m = message(Reply::tool_use("Bash", input.clone()));
        let ev = message_events(&m, 1, "m");
        let json_text: String = ev
            .iter()
            .filter_map(|e| e.data["delta"]["partial_json"].as_str())
            .collect();
        let back: Value = serde_json::from_str(&json_text).unwrap();
        assert_eq!(back, input);
        assert_eq!(ev[2].data["content_block"]["id"], "toolu_mock_0001_0");
        assert!(
            ev.iter()
                .filter(|e| e.data["delta"]["partial_json"].is_string())
                .count()
                >= 3
        );
        let full = message_json(&m, 1, "m");
        assert_eq!(full["content"][0]["input"], input);
        assert_eq!(full["stop_reason"], "tool_use");
    }

    #[test]
    fn thinking_ends_with_a_signature() {
        let m = message(Reply::blocks(vec![
            Block::thinking("hmm, let me think", "sig-1"),
            Block::text("ok"),
        ]));
        let ev = message_events(&m, 1, "m");
        let sig = ev
            .iter()
            .find(|e| e.data["delta"]["type"] == "signature_delta")
            .unwrap();
        assert_eq!(sig.data["delta"]["signature"], "sig-1");
        assert_eq!(sig.data["index"], 0);
        assert_eq!(
            String::from_utf8_lossy(&ev[1].to_bytes()),
            "event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
    }
}
