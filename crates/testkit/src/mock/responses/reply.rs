//! The [`Reply`] builder: the output items one mock answer streams (text, reasoning, function and
//! custom tool calls, tool search, raw items), its usage and pacing, and injected failures (HTTP
//! errors with OpenAI bodies, dropped or failed streams).

use std::time::Duration;

use serde_json::{Value, json};

/// Token usage reported in `response.completed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// `usage.input_tokens`.
    pub input_tokens: u64,
    /// `usage.input_tokens_details.cached_tokens`.
    pub cached_input_tokens: u64,
    /// `usage.output_tokens`.
    pub output_tokens: u64,
    /// `usage.output_tokens_details.reasoning_tokens`.
    pub reasoning_tokens: u64,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input_tokens: 100,
            cached_input_tokens: 0,
            output_tokens: 20,
            reasoning_tokens: 0,
        }
    }
}

/// One output item of a reply, in the order the model streams it.
#[derive(Debug, Clone)]
pub enum Element {
    /// An assistant `message` with one `output_text` part streamed as these deltas.
    Text {
        /// The deltas; their concatenation is the final text.
        deltas: Vec<String>,
        /// Sleep between two deltas (a paced stream that a test can steer into).
        delta_delay: Duration,
    },
    /// A `reasoning` item: summary deltas (`response.reasoning_summary_text.delta`) and optional
    /// raw reasoning deltas (`response.reasoning_text.delta`).
    Reasoning {
        /// Summary text deltas (one summary part).
        summary: Vec<String>,
        /// Raw reasoning text deltas (one content part); empty for none.
        content: Vec<String>,
    },
    /// A `function_call` item whose JSON arguments are streamed in pieces.
    FunctionCall {
        /// Tool name, e.g. `exec_command`, `request_user_input`.
        name: String,
        /// Optional namespace (MCP tools after `tool_search`, e.g. `mcp__server`).
        namespace: Option<String>,
        /// The arguments object; serialized and split into deltas.
        arguments: Value,
        /// Explicit call id; `call_mock_<n>_<i>` when absent.
        call_id: Option<String>,
    },
    /// A `custom_tool_call` (freeform tools such as `apply_patch`); the input is streamed raw.
    CustomToolCall {
        /// Tool name, e.g. `apply_patch`.
        name: String,
        /// The freeform input.
        input: String,
        /// Explicit call id; `call_mock_<n>_<i>` when absent.
        call_id: Option<String>,
    },
    /// A client-executed `tool_search_call` (how Codex reaches deferred MCP tools).
    ToolSearchCall {
        /// The `arguments` object, e.g. `{"query":"add"}`.
        arguments: Value,
        /// Explicit call id; `call_mock_<n>_<i>` when absent.
        call_id: Option<String>,
    },
    /// Any other output item, sent as `output_item.added` then `output_item.done` unchanged
    /// (e.g. a `web_search_call`).
    Raw(Value),
    /// A sleep between two items.
    Pause(Duration),
}

/// How a reply ends when it is not a normal `response.completed`.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// Answer with this HTTP status and OpenAI error body instead of a stream.
    Http {
        /// HTTP status code.
        status: u16,
        /// JSON body, usually `{"error":{message,type,param,code}}`.
        body: Value,
        /// `retry-after` header in seconds, if any.
        retry_after: Option<u64>,
    },
    /// Stream the first `after_events` SSE events, then abort the connection (no terminal event).
    DropStream {
        /// How many events to send before the drop.
        after_events: usize,
    },
    /// Stream everything, but end with `response.failed` carrying this error instead of
    /// `response.completed`.
    ResponseFailed {
        /// `response.error.code`.
        code: String,
        /// `response.error.message`.
        message: String,
    },
}

/// One answer: output items streamed as SSE, or an injected failure.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) elements: Vec<Element>,
    pub(crate) usage: Usage,
    pub(crate) event_delay: Duration,
    pub(crate) first_byte_delay: Duration,
    pub(crate) failure: Option<Failure>,
    pub(crate) model: Option<String>,
}

impl Default for Reply {
    fn default() -> Self {
        Self::new()
    }
}

impl Reply {
    /// An empty successful reply (only `response.created` and `response.completed`).
    pub fn new() -> Self {
        Self {
            elements: Vec::new(),
            usage: Usage::default(),
            event_delay: Duration::ZERO,
            first_byte_delay: Duration::ZERO,
            failure: None,
            model: None,
        }
    }

    /// Appends a text message, split into a few deltas of roughly 8 characters.
    pub fn text(self, text: impl Into<String>) -> Self {
        let text = text.into();
        self.text_deltas(split_deltas(&text, 8))
    }

    /// Appends a text message streamed as exactly these deltas.
    pub fn text_deltas<S: Into<String>>(self, deltas: impl IntoIterator<Item = S>) -> Self {
        self.text_paced(deltas, Duration::ZERO)
    }

    /// Appends a text message whose deltas are `delay` apart (to steer or interrupt mid-stream).
    pub fn text_paced<S: Into<String>>(
        mut self,
        deltas: impl IntoIterator<Item = S>,
        delay: Duration,
    ) -> Self {
        let deltas = deltas.into_iter().map(Into::into).collect();
        self.elements.push(Element::Text {
            deltas,
            delta_delay: delay,
        });
        self
    }

    /// Appends a reasoning item with this summary (split into deltas) and no raw content.
    pub fn reasoning(mut self, summary: impl Into<String>) -> Self {
        let summary = split_deltas(&summary.into(), 12);
        self.elements.push(Element::Reasoning {
            summary,
            content: Vec::new(),
        });
        self
    }

    /// Appends a reasoning item with a summary and raw reasoning text.
    pub fn reasoning_full(mut self, summary: impl Into<String>, content: impl Into<String>) -> Self {
        let summary = split_deltas(&summary.into(), 12);
        let content = split_deltas(&content.into(), 12);
        self.elements.push(Element::Reasoning { summary, content });
        self
    }

    /// Appends a `function_call` with these JSON arguments.
    pub fn function_call(mut self, name: impl Into<String>, arguments: Value) -> Self {
        self.elements.push(Element::FunctionCall {
            name: name.into(),
            namespace: None,
            arguments,
            call_id: None,
        });
        self
    }

    /// Appends a namespaced `function_call` (an MCP tool found through `tool_search`).
    pub fn namespaced_call(
        mut self,
        namespace: impl Into<String>,
        name: impl Into<String>,
        arguments: Value,
    ) -> Self {
        self.elements.push(Element::FunctionCall {
            name: name.into(),
            namespace: Some(namespace.into()),
            arguments,
            call_id: None,
        });
        self
    }

    /// Appends an `exec_command` call (the shell tool of the gpt-5.x tool set) running `cmd`.
    pub fn exec_command(self, cmd: impl Into<String>) -> Self {
        self.function_call("exec_command", json!({ "cmd": cmd.into() }))
    }

    /// Appends an `exec_command` call that asks for escalated permissions (raises an approval in
    /// app-server with `on-request`).
    pub fn exec_command_escalated(self, cmd: impl Into<String>, justification: impl Into<String>) -> Self {
        self.function_call(
            "exec_command",
            json!({
                "cmd": cmd.into(),
                "sandbox_permissions": "require_escalated",
                "justification": justification.into(),
            }),
        )
    }

    /// Appends an `apply_patch` custom tool call with this patch text
    /// (`*** Begin Patch` … `*** End Patch`).
    pub fn apply_patch(mut self, patch: impl Into<String>) -> Self {
        self.elements.push(Element::CustomToolCall {
            name: "apply_patch".into(),
            input: patch.into(),
            call_id: None,
        });
        self
    }

    /// Appends a `request_user_input` call with these questions
    /// (`[{id, header, question, options:[{label, description}]}]`).
    pub fn request_user_input(self, questions: Value) -> Self {
        self.function_call("request_user_input", json!({ "questions": questions }))
    }

    /// Appends a client-executed `tool_search_call` with this query.
    pub fn tool_search(mut self, query: impl Into<String>) -> Self {
        self.elements.push(Element::ToolSearchCall {
            arguments: json!({ "query": query.into() }),
            call_id: None,
        });
        self
    }

    /// Appends a server-side `web_search_call` item for this query.
    pub fn web_search(mut self, query: impl Into<String>) -> Self {
        let query = query.into();
        self.elements.push(Element::Raw(json!({
            "type": "web_search_call", "status": "completed",
            "action": { "type": "search", "query": query, "queries": [query] },
        })));
        self
    }

    /// Appends any element.
    pub fn element(mut self, element: Element) -> Self {
        self.elements.push(element);
        self
    }

    /// Appends a sleep between items.
    pub fn pause(mut self, d: Duration) -> Self {
        self.elements.push(Element::Pause(d));
        self
    }

    /// Sets the usage reported in `response.completed`.
    pub fn usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// Sleeps this long between every two SSE events (a slow stream).
    pub fn event_delay(mut self, d: Duration) -> Self {
        self.event_delay = d;
        self
    }

    /// Sleeps this long before the response headers (a slow first byte).
    pub fn first_byte_delay(mut self, d: Duration) -> Self {
        self.first_byte_delay = d;
        self
    }

    /// Overrides the `model` echoed in the response objects (default: the request's model).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// Answers with an HTTP error and an OpenAI error body instead of a stream.
    pub fn http_error(status: u16, error_type: &str, code: Option<&str>, message: &str) -> Self {
        let body =
            json!({ "error": { "message": message, "type": error_type, "param": null, "code": code } });
        Self {
            failure: Some(Failure::Http {
                status,
                body,
                retry_after: None,
            }),
            ..Self::new()
        }
    }

    /// 429 `rate_limit_exceeded` with a `retry-after` header.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::http_error(
            429,
            "rate_limit_error",
            Some("rate_limit_exceeded"),
            "Rate limit reached (mock)",
        )
        .retry_after(retry_after_secs)
    }

    /// 500 `server_error`.
    pub fn server_error() -> Self {
        Self::http_error(500, "server_error", None, "The server had an error (mock)")
    }

    /// 400 `invalid_request_error`.
    pub fn bad_request(message: &str) -> Self {
        Self::http_error(400, "invalid_request_error", None, message)
    }

    /// 401 `invalid_api_key`.
    pub fn unauthorized() -> Self {
        Self::http_error(
            401,
            "invalid_request_error",
            Some("invalid_api_key"),
            "Incorrect API key provided (mock)",
        )
    }

    /// Adds a `retry-after` header to an HTTP error reply (no effect on streamed replies).
    pub fn retry_after(mut self, secs: u64) -> Self {
        if let Some(Failure::Http { retry_after, .. }) = &mut self.failure {
            *retry_after = Some(secs);
        }
        self
    }

    /// Streams the first `after_events` events of this reply, then drops the connection.
    pub fn drop_after(mut self, after_events: usize) -> Self {
        self.failure = Some(Failure::DropStream { after_events });
        self
    }

    /// Ends the stream with `response.failed` instead of `response.completed`.
    pub fn response_failed(mut self, code: &str, message: &str) -> Self {
        self.failure = Some(Failure::ResponseFailed {
            code: code.into(),
            message: message.into(),
        });
        self
    }
}

/// Splits `text` into pieces of about `size` characters (on char boundaries); never empty.
fn split_deltas(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_deltas_keeps_text_and_char_boundaries() {
        let parts = split_deltas("héllo wörld, this is long", 8);
        assert_eq!(parts.concat(), "héllo wörld, this is long");
        assert!(parts.len() >= 3);
        assert_eq!(split_deltas("", 8), vec![String::new()]);
    }

    #[test]
    fn error_builders_set_status_and_retry_after() {
        let r = Reply::rate_limited(2);
        assert_eq!(
            r.failure,
            Some(Failure::Http {
                status: 429,
                body: json!({"error":{"message":"Rate limit reached (mock)","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}),
                retry_after: Some(2),
            })
        );
        assert!(matches!(
            Reply::new().drop_after(3).failure,
            Some(Failure::DropStream { after_events: 3 })
        ));
    }
}
