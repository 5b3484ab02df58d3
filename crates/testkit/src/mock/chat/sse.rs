//! Rendering a [`StreamReply`] as OpenAI Chat Completions stream chunks (`data: {chunk}\n\n` … `data: [DONE]`)
//! or as one non-streaming `chat.completion` object.

use serde_json::{Value, json};

use super::script::{Part, StreamReply};

/// The `created` timestamp every chunk carries (fixed, so recordings are stable).
pub const CREATED: u64 = 1_796_000_000;

/// The chunk id for the `n`-th completion request (1-based): `chatcmpl-mock-0001`.
pub fn default_completion_id(n: usize) -> String {
    format!("chatcmpl-mock-{n:04}")
}

/// The tool call id for call `index` of request `n`: `call_mock_0001_0`.
pub fn default_call_id(n: usize, index: usize) -> String {
    format!("call_mock_{n:04}_{index}")
}

fn chunk(id: &str, model: &str, delta: Value, finish: Option<&str>) -> Value {
    json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    })
}

/// The chunk JSON values of `reply` for request `n`, in order (without the `[DONE]` marker).
pub fn chunks(reply: &StreamReply, n: usize) -> Vec<Value> {
    let id = reply.id.clone().unwrap_or_else(|| default_completion_id(n));
    let model = reply.model.as_str();
    let mut out = Vec::new();
    let mut role_sent = false;
    let mut tool_index = 0usize;
    for part in &reply.parts {
        match part {
            Part::Text(pieces) => {
                for p in pieces {
                    let d = with_role(json!({"content": p}), &mut role_sent);
                    out.push(chunk(&id, model, d, None));
                }
            }
            Part::Reasoning(pieces) => {
                for p in pieces {
                    let d = with_role(json!({"reasoning_content": p}), &mut role_sent);
                    out.push(chunk(&id, model, d, None));
                }
            }
            Part::ToolCall {
                id: call_id,
                name,
                arguments,
                pieces,
            } => {
                let call_id = call_id.clone().unwrap_or_else(|| default_call_id(n, tool_index));
                let head = json!({"tool_calls": [{"index": tool_index, "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": ""}}]});
                out.push(chunk(&id, model, with_role(head, &mut role_sent), None));
                for piece in split_even(arguments, *pieces) {
                    let d = json!({"tool_calls": [{"index": tool_index, "function": {"arguments": piece}}]});
                    out.push(chunk(&id, model, d, None));
                }
                tool_index += 1;
            }
        }
    }
    if let Some(f) = &reply.finish_reason {
        out.push(chunk(&id, model, json!({}), Some(f.as_str())));
    }
    if let Some(u) = reply.usage {
        out.push(json!({
            "id": id, "object": "chat.completion.chunk", "created": CREATED, "model": model, "choices": [],
            "usage": {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens,
                      "total_tokens": u.prompt_tokens + u.completion_tokens},
        }));
    }
    out
}

/// Adds `role: assistant` to the first delta of a completion.
fn with_role(mut delta: Value, role_sent: &mut bool) -> Value {
    if !*role_sent {
        if let Some(o) = delta.as_object_mut() {
            o.insert("role".into(), json!("assistant"));
        }
        *role_sent = true;
    }
    delta
}

/// The SSE frames of `reply` for request `n`: one `data: …\n\n` per chunk, then `data: [DONE]\n\n` if asked.
pub fn frames(reply: &StreamReply, n: usize) -> Vec<String> {
    let mut out: Vec<String> = chunks(reply, n)
        .iter()
        .map(|c| format!("data: {c}\n\n"))
        .collect();
    if reply.done_marker {
        out.push("data: [DONE]\n\n".to_owned());
    }
    out
}

/// The non-streaming answer: one `chat.completion` object assembled from the parts.
pub fn completion(reply: &StreamReply, n: usize) -> Value {
    let id = reply.id.clone().unwrap_or_else(|| default_completion_id(n));
    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for part in &reply.parts {
        match part {
            Part::Text(p) => text.extend(p.iter().map(String::as_str)),
            Part::Reasoning(p) => reasoning.extend(p.iter().map(String::as_str)),
            Part::ToolCall {
                id, name, arguments, ..
            } => {
                let call_id = id.clone().unwrap_or_else(|| default_call_id(n, calls.len()));
                calls.push(json!({"id": call_id, "type": "function",
                    "function": {"name": name, "arguments": arguments}}));
            }
        }
    }
    let mut message = json!({"role": "assistant", "content": text});
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let usage = reply.usage.unwrap_or_default();
    json!({
        "id": id, "object": "chat.completion", "created": CREATED, "model": reply.model,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": reply.finish_reason.as_ref().map(|f| f.as_str())}],
        "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                  "total_tokens": usage.prompt_tokens + usage.completion_tokens},
    })
}

/// Splits `s` into `pieces` parts of nearly equal byte length, at char boundaries (at least one part).
fn split_even(s: &str, pieces: usize) -> Vec<String> {
    let pieces = pieces.max(1);
    let target = s.len().div_ceil(pieces).max(1);
    let mut out = Vec::with_capacity(pieces);
    let mut cur = String::new();
    for c in s.chars() {
        if cur.len() >= target && out.len() + 1 < pieces {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
    }
    out.push(cur);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::chat::script::{FinishReason, StreamReply};

    #[test]
    fn text_reply_has_role_once_finish_usage_and_done() {
        let r = StreamReply::text_chunks(["Hel", "lo"]);
        let f = frames(&r, 1);
        assert_eq!(f.len(), 5, "{f:?}");
        assert!(f[0].contains(r#""role":"assistant""#) && f[0].contains(r#""content":"Hel""#));
        assert!(!f[1].contains("role"));
        assert!(f[2].contains(r#""finish_reason":"stop""#));
        assert!(f[3].contains(r#""choices":[]"#) && f[3].contains(r#""total_tokens":15"#));
        assert_eq!(f[4], "data: [DONE]\n\n");
        assert!(f[0].contains("chatcmpl-mock-0001"));
    }

    #[test]
    fn tool_call_arguments_reassemble() {
        let args = json!({"command": "echo hi", "description": "say hi"});
        let r = StreamReply::tool_call("Bash", &args);
        let c = chunks(&r, 3);
        let mut joined = String::new();
        for ch in &c {
            if let Some(a) = ch["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str() {
                joined.push_str(a);
            }
        }
        assert_eq!(serde_json::from_str::<Value>(&joined).unwrap(), args);
        assert_eq!(
            c[0]["choices"][0]["delta"]["tool_calls"][0]["id"],
            "call_mock_0003_0"
        );
        assert_eq!(
            c[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
            "Bash"
        );
        assert!(
            c.iter()
                .any(|ch| ch["choices"][0]["finish_reason"] == "tool_calls")
        );
    }

    #[test]
    fn split_even_keeps_chars_and_count() {
        let parts = split_even("héllo wörld", 3);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), "héllo wörld");
        assert_eq!(split_even("", 2), vec![String::new()]);
    }

    #[test]
    fn completion_object_collects_parts() {
        let r = StreamReply::text_then_tool("Running.", "Bash", &json!({"command": "ls"}));
        let c = completion(&r, 2);
        assert_eq!(c["choices"][0]["message"]["content"], "Running.");
        assert_eq!(
            c["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
            "Bash"
        );
        assert_eq!(c["choices"][0]["finish_reason"], FinishReason::ToolCalls.as_str());
    }
}
