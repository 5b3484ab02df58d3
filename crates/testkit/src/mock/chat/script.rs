//! What the mock answers: [`Reply`] values (a streamed completion or an HTTP error) and the [`Script`] that
//! picks one per request — a queue, or a closure over the [`RequestLog`].
//!
//! This module only describes replies. Rendering them as Chat Completions chunks lives in `sse.rs`; the HTTP
//! side (latency, pacing, cutting or hanging the stream) lives in `server.rs`.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::log::RequestLog;

/// `choices[0].finish_reason` of the last content chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`: the answer is complete.
    Stop,
    /// `tool_calls`: the client must run the streamed tool calls.
    ToolCalls,
    /// `length`: cut by the token limit.
    Length,
    /// `content_filter`: withheld by a filter.
    ContentFilter,
    /// Any other string, sent verbatim.
    Other(String),
}

impl FinishReason {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::Other(s) => s,
        }
    }
}

/// Token counts of the trailing usage chunk (`choices: []`, `usage: {...}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `prompt_tokens`.
    pub prompt_tokens: u64,
    /// `completion_tokens`.
    pub completion_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
        }
    }
}

/// One piece of a scripted assistant turn, streamed in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `delta.content`, one chunk per piece.
    Text(Vec<String>),
    /// `delta.reasoning_content`, one chunk per piece (the DeepSeek-style reasoning extension).
    Reasoning(Vec<String>),
    /// One tool call: a header chunk with id and name, then `function.arguments` pieces.
    ToolCall {
        /// The call id; `None` means `call_mock_<request>_<index>`.
        id: Option<String>,
        /// The function name, e.g. `Bash`.
        name: String,
        /// The serialized arguments, split into `pieces` argument deltas.
        arguments: String,
        /// How many argument deltas to send (at least 1).
        pieces: usize,
    },
}

/// How a stream stops early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CutKind {
    /// The connection is aborted: the chunked body never terminates properly (a transport error).
    Abort,
    /// The body ends cleanly without the remaining chunks and without `data: [DONE]`.
    Eof,
    /// Nothing more is sent and the connection stays open until the client leaves or the mock shuts down.
    Hang,
}

/// Stop the stream after `after` SSE frames have been sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Frames (`data: …` lines) sent before the cut.
    pub after: usize,
    /// What the cut looks like to the client.
    pub kind: CutKind,
}

/// A streamed completion (or a JSON `chat.completion` when the request did not ask for `stream`).
#[derive(Debug, Clone, PartialEq)]
pub struct StreamReply {
    /// The chunk `id`; `None` means `chatcmpl-mock-<request number, 4 digits>`.
    pub id: Option<String>,
    /// The chunk `model`.
    pub model: String,
    /// The content, in order.
    pub parts: Vec<Part>,
    /// The finish reason of the last content chunk; `None` sends no finish chunk.
    pub finish_reason: Option<FinishReason>,
    /// The trailing usage chunk; `None` sends none.
    pub usage: Option<Usage>,
    /// Whether `data: [DONE]` ends the stream.
    pub done_marker: bool,
    /// Wait before the response headers.
    pub first_byte_delay: Duration,
    /// Wait between two frames.
    pub chunk_delay: Duration,
    /// Stop early.
    pub cut: Option<Cut>,
}

impl StreamReply {
    fn new(parts: Vec<Part>, finish: FinishReason) -> StreamReply {
        StreamReply {
            id: None,
            model: "mock".to_owned(),
            parts,
            finish_reason: Some(finish),
            usage: Some(Usage::default()),
            done_marker: true,
            first_byte_delay: Duration::ZERO,
            chunk_delay: Duration::ZERO,
            cut: None,
        }
    }

    /// A text answer split into pieces of at most 12 bytes (at char boundaries), `finish_reason: stop`.
    pub fn text(text: &str) -> StreamReply {
        StreamReply::new(vec![Part::Text(split_chunks(text, 12))], FinishReason::Stop)
    }

    /// A text answer streamed exactly as the given pieces.
    pub fn text_chunks<I, S>(chunks: I) -> StreamReply
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let chunks = chunks.into_iter().map(Into::into).collect();
        StreamReply::new(vec![Part::Text(chunks)], FinishReason::Stop)
    }

    /// One tool call with generated id and arguments in 2 pieces, `finish_reason: tool_calls`.
    pub fn tool_call(name: &str, arguments: &Value) -> StreamReply {
        StreamReply::new(vec![tool_part(name, arguments)], FinishReason::ToolCalls)
    }

    /// Some text, then one tool call, `finish_reason: tool_calls`.
    pub fn text_then_tool(text: &str, name: &str, arguments: &Value) -> StreamReply {
        StreamReply::new(
            vec![Part::Text(split_chunks(text, 12)), tool_part(name, arguments)],
            FinishReason::ToolCalls,
        )
    }

    /// Any parts with any finish reason.
    pub fn parts(parts: Vec<Part>, finish: FinishReason) -> StreamReply {
        StreamReply::new(parts, finish)
    }

    /// Waits `delay` between frames (a slow stream).
    #[must_use]
    pub fn paced(mut self, delay: Duration) -> StreamReply {
        self.chunk_delay = delay;
        self
    }

    /// Waits `delay` before sending the response headers.
    #[must_use]
    pub fn delayed(mut self, delay: Duration) -> StreamReply {
        self.first_byte_delay = delay;
        self
    }

    /// Stops after `after` frames, the way `kind` says.
    #[must_use]
    pub fn cut_after(mut self, after: usize, kind: CutKind) -> StreamReply {
        self.cut = Some(Cut { after, kind });
        self
    }

    /// Sends no usage chunk.
    #[must_use]
    pub fn without_usage(mut self) -> StreamReply {
        self.usage = None;
        self
    }

    /// Uses this usage in the trailing chunk.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> StreamReply {
        self.usage = Some(usage);
        self
    }

    /// Uses this chunk id.
    #[must_use]
    pub fn with_id(mut self, id: impl Into<String>) -> StreamReply {
        self.id = Some(id.into());
        self
    }
}

fn tool_part(name: &str, arguments: &Value) -> Part {
    Part::ToolCall {
        id: None,
        name: name.to_owned(),
        arguments: arguments.to_string(),
        pieces: 2,
    }
}

/// An HTTP error answer: status, JSON body, optional `Retry-After`.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorReply {
    /// The HTTP status, e.g. 429.
    pub status: u16,
    /// The JSON body, by default OpenAI's `{"error":{"message","type","code"}}`.
    pub body: Value,
    /// `Retry-After` seconds.
    pub retry_after: Option<u64>,
    /// Wait before answering.
    pub delay: Duration,
}

impl ErrorReply {
    /// An error with OpenAI's body shape.
    pub fn new(status: u16, kind: &str, message: &str) -> ErrorReply {
        ErrorReply {
            status,
            body: json!({"error": {"message": message, "type": kind, "code": status.to_string()}}),
            retry_after: None,
            delay: Duration::ZERO,
        }
    }
}

/// One answer to one `POST …/chat/completions`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A (possibly slow, cut or hanging) completion.
    Stream(StreamReply),
    /// An HTTP error.
    Error(ErrorReply),
}

impl Reply {
    /// A text answer.
    pub fn text(text: &str) -> Reply {
        Reply::Stream(StreamReply::text(text))
    }

    /// One tool call.
    pub fn tool_call(name: &str, arguments: &Value) -> Reply {
        Reply::Stream(StreamReply::tool_call(name, arguments))
    }

    /// Text, then one tool call.
    pub fn text_then_tool(text: &str, name: &str, arguments: &Value) -> Reply {
        Reply::Stream(StreamReply::text_then_tool(text, name, arguments))
    }

    /// Any status with OpenAI's error body.
    pub fn error(status: u16, message: &str) -> Reply {
        let kind = match status {
            400 => "invalid_request_error",
            401 => "authentication_error",
            403 => "permission_error",
            404 => "not_found_error",
            429 => "rate_limit_error",
            _ => "server_error",
        };
        Reply::Error(ErrorReply::new(status, kind, message))
    }

    /// 400 invalid request.
    pub fn bad_request() -> Reply {
        Reply::error(400, "mock: invalid request")
    }

    /// 401 invalid API key.
    pub fn unauthorized() -> Reply {
        Reply::error(401, "mock: invalid api key")
    }

    /// 429 with `Retry-After: 1`.
    pub fn rate_limited() -> Reply {
        let mut e = ErrorReply::new(429, "rate_limit_error", "mock: rate limited");
        e.retry_after = Some(1);
        Reply::Error(e)
    }

    /// 500 internal error.
    pub fn server_error() -> Reply {
        Reply::error(500, "mock: internal error")
    }
}

impl From<StreamReply> for Reply {
    fn from(r: StreamReply) -> Reply {
        Reply::Stream(r)
    }
}

impl From<ErrorReply> for Reply {
    fn from(r: ErrorReply) -> Reply {
        Reply::Error(r)
    }
}

/// A closure that answers from the current request and the whole log (which ends with that request).
pub type ReplyFn = dyn Fn(&RequestLog, &[RequestLog]) -> Reply + Send + Sync;

/// How the mock picks the reply for each completion request.
#[derive(Clone)]
pub enum Script {
    /// Replies in order; when empty, a 500 saying the script is exhausted (so a test notices).
    Queue(Arc<Mutex<VecDeque<Reply>>>),
    /// A closure over the request log.
    Func(Arc<ReplyFn>),
}

impl fmt::Debug for Script {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Script::Queue(q) => {
                let left = q.lock().map(|q| q.len()).unwrap_or(0);
                f.debug_struct("Script::Queue").field("left", &left).finish()
            }
            Script::Func(_) => f.write_str("Script::Func"),
        }
    }
}

impl Script {
    /// Replies in this order.
    pub fn queue<I, R>(replies: I) -> Script
    where
        I: IntoIterator<Item = R>,
        R: Into<Reply>,
    {
        Script::Queue(Arc::new(Mutex::new(
            replies.into_iter().map(Into::into).collect(),
        )))
    }

    /// Replies computed by `f(current request, whole log)`.
    pub fn func<F>(f: F) -> Script
    where
        F: Fn(&RequestLog, &[RequestLog]) -> Reply + Send + Sync + 'static,
    {
        Script::Func(Arc::new(f))
    }

    /// Appends a reply to a queue script (no-op for a closure script).
    pub fn push(&self, reply: impl Into<Reply>) {
        if let Script::Queue(q) = self
            && let Ok(mut q) = q.lock()
        {
            q.push_back(reply.into());
        }
    }

    pub(crate) fn reply_for(&self, current: &RequestLog, log: &[RequestLog]) -> Reply {
        match self {
            Script::Queue(q) => q
                .lock()
                .ok()
                .and_then(|mut q| q.pop_front())
                .unwrap_or_else(|| Reply::error(500, "mock: script exhausted")),
            Script::Func(f) => f(current, log),
        }
    }
}

/// Splits `text` into pieces of at most `max` bytes, never inside a char.
pub fn split_chunks(text: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if !cur.is_empty() && cur.len() + c.len_utf8() > max {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    if !cur.is_empty() || out.is_empty() {
        out.push(cur);
    }
    out
}
