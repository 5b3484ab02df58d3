//! What the mock answers: [`Reply`] values (a streamed message, an HTTP error, a cut stream) and the
//! [`Script`] that picks one per request — a queue, or a closure over the [`RequestLog`].
//!
//! This module only describes replies; rendering them into SSE or JSON lives in `sse.rs`, and the HTTP
//! side (latency, delays, cutting the connection) in `server.rs`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::log::RequestLog;

/// Why the model stopped, as sent in `message_delta.delta.stop_reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// `end_turn`: the model finished its answer.
    EndTurn,
    /// `tool_use`: the model wants the CLI to run the tool_use blocks.
    ToolUse,
    /// `max_tokens`: the answer was cut by the token limit.
    MaxTokens,
    /// `stop_sequence`: a stop sequence matched.
    StopSequence,
    /// `refusal`: the model refused.
    Refusal,
    /// `pause_turn`: a long server-side turn was paused.
    PauseTurn,
    /// Any other string, sent verbatim.
    Other(String),
}

impl StopReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            StopReason::EndTurn => "end_turn",
            StopReason::ToolUse => "tool_use",
            StopReason::MaxTokens => "max_tokens",
            StopReason::StopSequence => "stop_sequence",
            StopReason::Refusal => "refusal",
            StopReason::PauseTurn => "pause_turn",
            StopReason::Other(s) => s,
        }
    }
}

/// Token counts reported in `message_start` and `message_delta`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `input_tokens`.
    pub input_tokens: u64,
    /// `output_tokens` (the final count, sent in `message_delta`).
    pub output_tokens: u64,
    /// `cache_creation_input_tokens`.
    pub cache_creation_input_tokens: u64,
    /// `cache_read_input_tokens`.
    pub cache_read_input_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            input_tokens: 100,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
        }
    }
}

/// One content block of a scripted assistant message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// A text block streamed as one `text_delta` per chunk.
    Text {
        /// The pieces, in order; their concatenation is the text.
        chunks: Vec<String>,
    },
    /// A thinking block: `thinking_delta` per chunk, then one `signature_delta`.
    Thinking {
        /// The pieces of the thinking text.
        chunks: Vec<String>,
        /// The opaque signature the CLI must send back on the next request.
        signature: String,
    },
    /// A tool call; the input JSON is streamed as `input_json_delta` pieces.
    ToolUse {
        /// The tool_use id; `None` means `toolu_mock_<request>_<index>`.
        id: Option<String>,
        /// The tool name, e.g. `Bash`.
        name: String,
        /// The full input object.
        input: Value,
        /// How many `input_json_delta` pieces to split the serialized input into (at least 1).
        pieces: usize,
    },
}

impl Block {
    /// A text block split into pieces of at most 12 bytes (at char boundaries).
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text {
            chunks: split_chunks(&text.into(), 12),
        }
    }

    /// A text block streamed exactly as the given pieces.
    pub fn text_chunks<I, S>(chunks: I) -> Block
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Block::Text {
            chunks: chunks.into_iter().map(Into::into).collect(),
        }
    }

    /// A thinking block with a signature, split into pieces of at most 16 bytes.
    pub fn thinking(thinking: impl Into<String>, signature: impl Into<String>) -> Block {
        Block::Thinking {
            chunks: split_chunks(&thinking.into(), 16),
            signature: signature.into(),
        }
    }

    /// A tool_use block with a generated id, input streamed in 3 pieces.
    pub fn tool_use(name: impl Into<String>, input: Value) -> Block {
        Block::ToolUse {
            id: None,
            name: name.into(),
            input,
            pieces: 3,
        }
    }

    /// A tool_use block with a chosen id.
    pub fn tool_use_with_id(id: impl Into<String>, name: impl Into<String>, input: Value) -> Block {
        Block::ToolUse {
            id: Some(id.into()),
            name: name.into(),
            input,
            pieces: 3,
        }
    }
}

/// A scripted assistant message, streamed as SSE (or returned as JSON when the request is not streaming).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageReply {
    /// The message id; `None` means `msg_mock_<request number, 4 digits>`.
    pub id: Option<String>,
    /// The model echoed back; `None` means the request's `model`.
    pub model: Option<String>,
    /// The content blocks, in order.
    pub blocks: Vec<Block>,
    /// The stop reason; `None` means `tool_use` when a tool_use block is present, else `end_turn`.
    pub stop_reason: Option<StopReason>,
    /// Token counts.
    pub usage: Usage,
}

impl MessageReply {
    /// The effective stop reason.
    pub fn effective_stop_reason(&self) -> StopReason {
        match &self.stop_reason {
            Some(s) => s.clone(),
            None if self.blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) => StopReason::ToolUse,
            None => StopReason::EndTurn,
        }
    }
}

/// An HTTP error answer with an Anthropic error body `{"type":"error","error":{"type","message"}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorReply {
    /// The HTTP status, e.g. 529.
    pub status: u16,
    /// `error.type`, e.g. `overloaded_error`.
    pub error_type: String,
    /// `error.message`.
    pub message: String,
}

impl ErrorReply {
    /// The conventional Anthropic error type for a status: 400 `invalid_request_error`,
    /// 401 `authentication_error`, 403 `permission_error`, 404 `not_found_error`, 413 `request_too_large`,
    /// 429 `rate_limit_error`, 529 `overloaded_error`, anything else `api_error`.
    pub fn for_status(status: u16) -> ErrorReply {
        let error_type = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            413 => "request_too_large",
            429 => "rate_limit_error",
            529 => "overloaded_error",
            _ => "api_error",
        };
        let message = match status {
            400 => "Bad request (mock)",
            401 => "invalid x-api-key (mock)",
            529 => "Overloaded (mock)",
            _ => "Internal server error (mock)",
        };
        ErrorReply {
            status,
            error_type: error_type.to_owned(),
            message: message.to_owned(),
        }
    }
}

/// What to send back, plus how to deliver it (latency, pacing, cut).
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The body.
    pub body: ReplyBody,
    /// Sleep this long before sending the response headers.
    pub latency: Duration,
    /// Sleep this long before each SSE event after the first.
    pub event_delay: Duration,
    /// Close the connection (no terminating chunk) after this many SSE events.
    pub cut_after_events: Option<usize>,
}

/// The body of a [`Reply`].
#[derive(Debug, Clone, PartialEq)]
pub enum ReplyBody {
    /// A 200 assistant message.
    Message(MessageReply),
    /// An HTTP error with an Anthropic error JSON body.
    Error(ErrorReply),
}

impl Reply {
    /// An assistant message with the given blocks.
    pub fn blocks(blocks: Vec<Block>) -> Reply {
        Reply {
            body: ReplyBody::Message(MessageReply {
                id: None,
                model: None,
                blocks,
                stop_reason: None,
                usage: Usage::default(),
            }),
            latency: Duration::ZERO,
            event_delay: Duration::ZERO,
            cut_after_events: None,
        }
    }

    /// One text block.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply::blocks(vec![Block::text(text)])
    }

    /// One tool_use block (stop reason `tool_use`).
    pub fn tool_use(name: impl Into<String>, input: Value) -> Reply {
        Reply::blocks(vec![Block::tool_use(name, input)])
    }

    /// An HTTP error with the conventional type and message for `status`.
    pub fn error(status: u16) -> Reply {
        Reply::error_with(ErrorReply::for_status(status))
    }

    /// An HTTP error with an explicit body.
    pub fn error_with(error: ErrorReply) -> Reply {
        Reply {
            body: ReplyBody::Error(error),
            latency: Duration::ZERO,
            event_delay: Duration::ZERO,
            cut_after_events: None,
        }
    }

    /// Sets the stop reason (messages only).
    pub fn stop(mut self, stop: StopReason) -> Reply {
        if let ReplyBody::Message(m) = &mut self.body {
            m.stop_reason = Some(stop);
        }
        self
    }

    /// Sets the usage numbers (messages only).
    pub fn usage(mut self, usage: Usage) -> Reply {
        if let ReplyBody::Message(m) = &mut self.body {
            m.usage = usage;
        }
        self
    }

    /// Sets the message id (messages only).
    pub fn id(mut self, id: impl Into<String>) -> Reply {
        if let ReplyBody::Message(m) = &mut self.body {
            m.id = Some(id.into());
        }
        self
    }

    /// Waits `latency` before answering.
    pub fn latency(mut self, latency: Duration) -> Reply {
        self.latency = latency;
        self
    }

    /// Waits `delay` between SSE events (a slow stream).
    pub fn slow(mut self, delay: Duration) -> Reply {
        self.event_delay = delay;
        self
    }

    /// Cuts the connection after `events` SSE events (a dropped stream).
    pub fn cut_after(mut self, events: usize) -> Reply {
        self.cut_after_events = Some(events);
        self
    }
}

/// A reply function: sees the logged request (with its `n`) and picks the reply.
pub type ReplyFn = dyn Fn(&RequestLog) -> Reply + Send + Sync;

/// Chooses the reply for each `POST /v1/messages` request.
///
/// Main requests (the conversation) go to the queue or closure. Side requests (see
/// [`RequestLog::is_side_request`]) go to the side handler, which by default answers a short text, so
/// that a stray title/haiku call never consumes a scripted reply.
#[derive(Clone)]
pub struct Script {
    main: Main,
    side: Arc<ReplyFn>,
}

#[derive(Clone)]
enum Main {
    Queue(Arc<Mutex<VecDeque<Reply>>>),
    Func(Arc<ReplyFn>),
}

impl std::fmt::Debug for Script {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.main {
            Main::Queue(q) => {
                let n = q.lock().map(|q| q.len()).unwrap_or(0);
                write!(f, "Script::Queue({n} left)")
            }
            Main::Func(_) => write!(f, "Script::Func"),
        }
    }
}

impl Script {
    /// Replies in order; once empty, every further request gets the text
    /// `mock script exhausted (request N)`.
    pub fn queue(replies: impl IntoIterator<Item = Reply>) -> Script {
        Script {
            main: Main::Queue(Arc::new(Mutex::new(replies.into_iter().collect()))),
            side: Arc::new(default_side_reply),
        }
    }

    /// Computes each reply from the request.
    pub fn from_fn(f: impl Fn(&RequestLog) -> Reply + Send + Sync + 'static) -> Script {
        Script {
            main: Main::Func(Arc::new(f)),
            side: Arc::new(default_side_reply),
        }
    }

    /// Replaces the side-request handler.
    pub fn on_side_request(mut self, f: impl Fn(&RequestLog) -> Reply + Send + Sync + 'static) -> Script {
        self.side = Arc::new(f);
        self
    }

    /// Picks the reply for a logged request.
    pub fn reply_for(&self, req: &RequestLog) -> Reply {
        if req.is_side_request() {
            return (self.side)(req);
        }
        match &self.main {
            Main::Queue(q) => {
                let next = q.lock().ok().and_then(|mut q| q.pop_front());
                next.unwrap_or_else(|| Reply::text(format!("mock script exhausted (request {})", req.n)))
            }
            Main::Func(f) => f(req),
        }
    }
}

/// The default answer to a side request: a short title-like text.
fn default_side_reply(_req: &RequestLog) -> Reply {
    Reply::text("Mock session title")
}

/// Splits `s` into pieces of at most `max` bytes, cutting only at char boundaries.
pub(crate) fn split_chunks(s: &str, max: usize) -> Vec<String> {
    let max = max.max(4);
    let mut out = Vec::new();
    let mut start = 0;
    while start < s.len() {
        let mut end = (start + max).min(s.len());
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        out.push(s[start..end].to_owned());
        start = end;
    }
    if out.is_empty() {
        out.push(String::new());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_char_boundaries_and_roundtrips() {
        let s = "héllo wörld, ünïcode ✓ text";
        let parts = split_chunks(s, 5);
        assert!(parts.len() > 3);
        assert_eq!(parts.concat(), s);
        assert!(parts.iter().all(|p| p.len() <= 5));
    }

    #[test]
    fn stop_reason_defaults_follow_blocks() {
        let r = Reply::tool_use("Bash", serde_json::json!({"command": "ls"}));
        let ReplyBody::Message(m) = r.body else {
            panic!("expected a message")
        };
        assert_eq!(m.effective_stop_reason(), StopReason::ToolUse);
        let ReplyBody::Message(m) = Reply::text("hi").body else {
            panic!("expected a message")
        };
        assert_eq!(m.effective_stop_reason(), StopReason::EndTurn);
    }

    #[test]
    fn error_types_follow_status() {
        assert_eq!(ErrorReply::for_status(529).error_type, "overloaded_error");
        assert_eq!(ErrorReply::for_status(401).error_type, "authentication_error");
        assert_eq!(ErrorReply::for_status(500).error_type, "api_error");
    }
}
