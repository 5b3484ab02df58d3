//! Renders a [`Reply`] into the OpenAI Responses streaming events Codex consumes:
//! `response.created`, `response.in_progress`, per item `response.output_item.added` … deltas …
//! `response.output_item.done`, and `response.completed` (with usage) or `response.failed`.
//!
//! Ids follow a fixed pattern so recorded transcripts stay readable: the response is
//! `resp_mock_<n>`, items are `msg_mock_<n>_<i>` / `rs_mock_<n>_<i>` / `fc_mock_<n>_<i>`, calls are
//! `call_mock_<n>_<i>` (n = 1-based request number, i = output index).

use std::time::Duration;

use serde_json::{Value, json};

use super::reply::{Element, Reply};

/// One step of a rendered stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// An SSE event: `event: <name>` and `data: <json>`.
    Event(Value),
    /// Sleep before the next frame.
    Sleep(Duration),
}

impl Frame {
    /// The SSE text of an event frame (`event:` + `data:` + blank line); empty for a sleep.
    pub fn to_sse(&self) -> String {
        match self {
            Frame::Event(v) => {
                let name = v.get("type").and_then(Value::as_str).unwrap_or("message");
                format!("event: {name}\ndata: {v}\n\n")
            }
            Frame::Sleep(_) => String::new(),
        }
    }
}

/// Renders `reply` as the stream answering request number `n` (1-based) for `model`.
pub fn render(reply: &Reply, n: usize, model: &str) -> Vec<Frame> {
    let model = reply.model.as_deref().unwrap_or(model);
    let resp_id = format!("resp_mock_{n:04}");
    let mut out = Vec::new();
    let mut done_items = Vec::new();
    let base = json!({
        "id": resp_id, "object": "response", "created_at": 1_700_000_000u64, "status": "in_progress",
        "model": model, "output": [],
    });
    out.push(Frame::Event(
        json!({ "type": "response.created", "response": base }),
    ));
    out.push(Frame::Event(
        json!({ "type": "response.in_progress", "response": base }),
    ));
    let mut index = 0usize;
    for el in &reply.elements {
        let call_id = |explicit: &Option<String>| {
            explicit
                .clone()
                .unwrap_or_else(|| format!("call_mock_{n:04}_{index}"))
        };
        let item = match el {
            Element::Pause(d) => {
                out.push(Frame::Sleep(*d));
                continue;
            }
            Element::Text { deltas, delta_delay } => text_item(&mut out, n, index, deltas, *delta_delay),
            Element::Reasoning { summary, content } => reasoning_item(&mut out, n, index, summary, content),
            Element::FunctionCall {
                name,
                namespace,
                arguments,
                call_id: explicit,
            } => {
                let id = call_id(explicit);
                function_item(&mut out, n, index, name, namespace.as_deref(), arguments, &id)
            }
            Element::CustomToolCall {
                name,
                input,
                call_id: explicit,
            } => {
                let id = call_id(explicit);
                custom_item(&mut out, n, index, name, input, &id)
            }
            Element::Raw(raw) => {
                let mut item = raw.clone();
                if item.get("id").is_none() {
                    item["id"] = json!(format!("raw_mock_{n:04}_{index}"));
                }
                out.push(added(index, &item));
                item
            }
            Element::ToolSearchCall {
                arguments,
                call_id: explicit,
            } => {
                let item = json!({
                    "id": format!("tsc_mock_{n:04}_{index}"), "type": "tool_search_call", "call_id": call_id(explicit),
                    "execution": "client", "status": "completed", "arguments": arguments,
                });
                out.push(added(index, &item));
                item
            }
        };
        out.push(Frame::Event(
            json!({ "type": "response.output_item.done", "output_index": index, "item": item }),
        ));
        done_items.push(item);
        index += 1;
    }
    let u = &reply.usage;
    let usage = json!({
        "input_tokens": u.input_tokens,
        "input_tokens_details": { "cached_tokens": u.cached_input_tokens },
        "output_tokens": u.output_tokens,
        "output_tokens_details": { "reasoning_tokens": u.reasoning_tokens },
        "total_tokens": u.input_tokens + u.output_tokens,
    });
    let mut fin = base;
    fin["output"] = Value::Array(done_items);
    fin["usage"] = usage;
    match &reply.failure {
        Some(super::reply::Failure::ResponseFailed { code, message }) => {
            fin["status"] = json!("failed");
            fin["error"] = json!({ "code": code, "message": message });
            out.push(Frame::Event(
                json!({ "type": "response.failed", "response": fin }),
            ));
        }
        _ => {
            fin["status"] = json!("completed");
            out.push(Frame::Event(
                json!({ "type": "response.completed", "response": fin }),
            ));
        }
    }
    if !reply.event_delay.is_zero() {
        out = interleave_delay(out, reply.event_delay);
    }
    out
}

/// Inserts a sleep before every event but the first.
fn interleave_delay(frames: Vec<Frame>, d: Duration) -> Vec<Frame> {
    let mut out = Vec::with_capacity(frames.len() * 2);
    for (i, f) in frames.into_iter().enumerate() {
        if i > 0 && matches!(f, Frame::Event(_)) {
            out.push(Frame::Sleep(d));
        }
        out.push(f);
    }
    out
}

fn added(index: usize, item: &Value) -> Frame {
    Frame::Event(json!({ "type": "response.output_item.added", "output_index": index, "item": item }))
}

fn text_item(out: &mut Vec<Frame>, n: usize, index: usize, deltas: &[String], delay: Duration) -> Value {
    let id = format!("msg_mock_{n:04}_{index}");
    let text: String = deltas.concat();
    out.push(added(
        index,
        &json!({ "id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": [] }),
    ));
    let part = |t: &str| json!({ "type": "output_text", "text": t, "annotations": [] });
    out.push(Frame::Event(json!({
        "type": "response.content_part.added", "item_id": id, "output_index": index, "content_index": 0, "part": part(""),
    })));
    for (i, d) in deltas.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            out.push(Frame::Sleep(delay));
        }
        out.push(Frame::Event(json!({
            "type": "response.output_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": d,
        })));
    }
    out.push(Frame::Event(json!({
        "type": "response.output_text.done", "item_id": id, "output_index": index, "content_index": 0, "text": text,
    })));
    out.push(Frame::Event(json!({
        "type": "response.content_part.done", "item_id": id, "output_index": index, "content_index": 0, "part": part(&text),
    })));
    json!({ "id": id, "type": "message", "status": "completed", "role": "assistant", "content": [part(&text)] })
}

fn reasoning_item(
    out: &mut Vec<Frame>,
    n: usize,
    index: usize,
    summary: &[String],
    content: &[String],
) -> Value {
    let id = format!("rs_mock_{n:04}_{index}");
    out.push(added(
        index,
        &json!({ "id": id, "type": "reasoning", "summary": [] }),
    ));
    let summary_text: String = summary.concat();
    if !summary_text.is_empty() {
        let part = |t: &str| json!({ "type": "summary_text", "text": t });
        out.push(Frame::Event(json!({
            "type": "response.reasoning_summary_part.added", "item_id": id, "output_index": index, "summary_index": 0, "part": part(""),
        })));
        for d in summary {
            out.push(Frame::Event(json!({
                "type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index, "summary_index": 0, "delta": d,
            })));
        }
        out.push(Frame::Event(json!({
            "type": "response.reasoning_summary_text.done", "item_id": id, "output_index": index, "summary_index": 0, "text": summary_text,
        })));
        out.push(Frame::Event(json!({
            "type": "response.reasoning_summary_part.done", "item_id": id, "output_index": index, "summary_index": 0, "part": part(&summary_text),
        })));
    }
    let content_text: String = content.concat();
    for d in content {
        out.push(Frame::Event(json!({
            "type": "response.reasoning_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": d,
        })));
    }
    if !content_text.is_empty() {
        out.push(Frame::Event(json!({
            "type": "response.reasoning_text.done", "item_id": id, "output_index": index, "content_index": 0, "text": content_text,
        })));
    }
    let mut item = json!({
        "id": id, "type": "reasoning",
        "summary": if summary_text.is_empty() { json!([]) } else { json!([{ "type": "summary_text", "text": summary_text }]) },
        "encrypted_content": null,
    });
    if !content_text.is_empty() {
        item["content"] = json!([{ "type": "reasoning_text", "text": content_text }]);
    }
    item
}

fn function_item(
    out: &mut Vec<Frame>,
    n: usize,
    index: usize,
    name: &str,
    namespace: Option<&str>,
    arguments: &Value,
    call_id: &str,
) -> Value {
    let id = format!("fc_mock_{n:04}_{index}");
    let args = arguments.to_string();
    let mut item = json!({ "id": id, "type": "function_call", "status": "in_progress", "call_id": call_id, "name": name, "arguments": "" });
    if let Some(ns) = namespace {
        item["namespace"] = json!(ns);
    }
    out.push(added(index, &item));
    for piece in chunks(&args, 16) {
        out.push(Frame::Event(json!({
            "type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": piece,
        })));
    }
    out.push(Frame::Event(json!({
        "type": "response.function_call_arguments.done", "item_id": id, "output_index": index, "arguments": args,
    })));
    item["arguments"] = json!(args);
    item["status"] = json!("completed");
    item
}

fn custom_item(
    out: &mut Vec<Frame>,
    n: usize,
    index: usize,
    name: &str,
    input: &str,
    call_id: &str,
) -> Value {
    let id = format!("ctc_mock_{n:04}_{index}");
    let mut item = json!({ "id": id, "type": "custom_tool_call", "status": "in_progress", "call_id": call_id, "name": name, "input": "" });
    out.push(added(index, &item));
    for piece in chunks(input, 24) {
        out.push(Frame::Event(json!({
            "type": "response.custom_tool_call_input.delta", "item_id": id, "output_index": index, "delta": piece,
        })));
    }
    out.push(Frame::Event(json!({
        "type": "response.custom_tool_call_input.done", "item_id": id, "output_index": index, "input": input,
    })));
    item["input"] = json!(input);
    item["status"] = json!("completed");
    item
}

/// Splits on char boundaries into pieces of `size` chars.
fn chunks(s: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mock::responses::reply::Usage;

    fn types(frames: &[Frame]) -> Vec<String> {
        frames
            .iter()
            .filter_map(|f| match f {
                Frame::Event(v) => v["type"].as_str().map(str::to_owned),
                Frame::Sleep(_) => None,
            })
            .collect()
    }

    #[test]
    fn text_reply_renders_the_full_message_sequence() {
        let frames = render(&Reply::new().text_deltas(["Hi ", "there"]), 1, "gpt-5.5");
        assert_eq!(
            types(&frames),
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        let Some(Frame::Event(done)) = frames.last() else {
            panic!("no completed")
        };
        assert_eq!(done["response"]["output"][0]["content"][0]["text"], "Hi there");
        assert_eq!(done["response"]["usage"]["total_tokens"], 120);
        assert!(frames[0].to_sse().starts_with("event: response.created\ndata: {"));
    }

    #[test]
    fn function_and_custom_calls_stream_arguments() {
        let reply = Reply::new()
            .exec_command("echo a-rather-long-command-line")
            .apply_patch("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n")
            .usage(Usage {
                input_tokens: 1,
                cached_input_tokens: 0,
                output_tokens: 2,
                reasoning_tokens: 0,
            });
        let frames = render(&reply, 2, "m");
        let t = types(&frames);
        assert!(
            t.iter()
                .filter(|x| *x == "response.function_call_arguments.delta")
                .count()
                >= 2
        );
        assert!(t.contains(&"response.custom_tool_call_input.done".to_owned()));
        let Some(Frame::Event(done)) = frames.last() else {
            panic!("no completed")
        };
        assert_eq!(done["response"]["output"][0]["call_id"], "call_mock_0002_0");
        assert_eq!(done["response"]["output"][1]["type"], "custom_tool_call");
        let args: Value =
            serde_json::from_str(done["response"]["output"][0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["cmd"], "echo a-rather-long-command-line");
    }

    #[test]
    fn reasoning_failed_and_delays() {
        let reply = Reply::new()
            .reasoning_full("thinking about it", "raw chain")
            .response_failed("server_error", "boom")
            .event_delay(Duration::from_millis(5));
        let frames = render(&reply, 1, "m");
        let t = types(&frames);
        assert!(t.contains(&"response.reasoning_summary_text.delta".to_owned()));
        assert!(t.contains(&"response.reasoning_text.delta".to_owned()));
        assert_eq!(t.last().map(String::as_str), Some("response.failed"));
        assert!(
            frames
                .iter()
                .any(|f| matches!(f, Frame::Sleep(d) if *d == Duration::from_millis(5)))
        );
    }
}
