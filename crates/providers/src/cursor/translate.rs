//! Pure translation of `cursor-agent` stream-json lines into driver events and transcript items, with the
//! strict protocol rules checked on the way ([`wire::Validator`]).
//!
//! Cursor prints one complete `assistant` frame per message (no token deltas), so each becomes one
//! start/content/end text lifecycle. Tool calls open at `started` and close at `completed` with their
//! result envelope; a `taskToolCall` is also reported as a subagent. Transcript items are emitted and kept,
//! so the notices always mirror the transcript.

use std::collections::HashMap;

use serde_json::Value;

use crate::driver::{
    DriverEvent, JsonMap, Notice, Phase, SubagentKind, SubagentUpdate, TextDelta, ToolCall, ToolResult,
    TranscriptItem, TranscriptKind, TurnReport, notice_kind,
};

use super::wire::{self, Frame, ToolCallFrame, ToolKind, ToolOutcome, ToolVariant};

/// Translates one `cursor-agent` invocation.
#[derive(Debug, Default)]
pub struct Translator {
    validator: wire::Validator,
    model: Option<String>,
    text: String,
    seq: u64,
    open: HashMap<String, bool>,
    transcript: Vec<TranscriptItem>,
}

/// What a finished stream amounts to.
#[derive(Debug)]
pub struct Outcome {
    /// The strict-rule report (violations, session id, terminal).
    pub report: wire::Report,
    /// The assistant texts concatenated without separators.
    pub text: String,
    /// The model `system/init` named.
    pub model: Option<String>,
    /// The transcript.
    pub transcript: Vec<TranscriptItem>,
}

/// The tool name shown to hosts: the variant without `ToolCall` (`shell`, `read`, …), an MCP tool's full
/// name, or an unknown variant's key.
pub fn tool_name(v: &ToolVariant) -> String {
    match &v.kind {
        ToolKind::Mcp | ToolKind::Function => v
            .args
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| v.kind.key().to_owned(), str::to_owned),
        ToolKind::Other(k) => k.clone(),
        k => k.key().trim_end_matches("ToolCall").to_owned(),
    }
}

fn outcome_map(o: &ToolOutcome) -> JsonMap {
    let (status, value) = match o {
        ToolOutcome::Success(v) => ("success", v),
        ToolOutcome::Failure(v) => ("failure", v),
        ToolOutcome::Error(v) => ("error", v),
    };
    let mut m = JsonMap::new();
    m.insert("status".into(), status.into());
    m.insert("is_error".into(), (!o.is_success()).into());
    m.insert("value".into(), value.clone());
    m
}

fn outcome_text(o: &ToolOutcome) -> String {
    let v = match o {
        ToolOutcome::Success(v) | ToolOutcome::Failure(v) | ToolOutcome::Error(v) => v,
    };
    ["stdout", "content", "errorMessage", "result"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map_or_else(|| v.to_string(), str::to_owned)
}

impl Translator {
    /// A fresh translator.
    pub fn new() -> Translator {
        Translator::default()
    }

    fn item(&mut self, out: &mut Vec<DriverEvent>, item: TranscriptItem) {
        self.transcript.push(item.clone());
        out.push(DriverEvent::transcript(item));
    }

    /// Translates one stdout line (a bad line is a `provider.invalid` notice and a protocol violation).
    pub fn line(&mut self, raw: &str) -> Vec<DriverEvent> {
        match self.validator.push_line(raw) {
            Some(frame) => self.frame(&frame),
            None => {
                let raw: String = raw.chars().take(2048).collect();
                vec![DriverEvent::Notice(
                    Notice::new(notice_kind::PROVIDER_INVALID, "unparseable cursor-agent line")
                        .with_data("raw", raw),
                )]
            }
        }
    }

    fn frame(&mut self, frame: &Frame) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match frame {
            Frame::SystemInit(i) => {
                self.model.clone_from(&i.model);
                let mut item = TranscriptItem::new(TranscriptKind::Init, String::new());
                item.session_id = i.session_id.clone().unwrap_or_default();
                item.model = i.model.clone().unwrap_or_default();
                if let Some(cwd) = &i.cwd {
                    item.metadata.insert("cwd".into(), cwd.clone());
                }
                self.item(&mut out, item);
            }
            Frame::User(m) => {
                let text = m.message.text();
                if !text.is_empty() {
                    self.item(&mut out, TranscriptItem::new(TranscriptKind::User, text));
                }
            }
            Frame::Assistant(m) => {
                let text = m.message.text();
                if !text.is_empty() {
                    self.seq += 1;
                    let id = format!("assistant-{}", self.seq);
                    for (t, phase) in [
                        (String::new(), Phase::Start),
                        (text.clone(), Phase::Content),
                        (String::new(), Phase::End),
                    ] {
                        out.push(DriverEvent::TextDelta(TextDelta {
                            message_id: id.clone(),
                            text: t,
                            phase,
                            ..Default::default()
                        }));
                    }
                    self.text.push_str(&text);
                    let mut item = TranscriptItem::new(TranscriptKind::Assistant, text);
                    item.model = self.model.clone().unwrap_or_default();
                    self.item(&mut out, item);
                }
            }
            Frame::ToolCall(t) => self.tool(t, &mut out),
            Frame::Result(r) => {
                let text = r.result.clone().unwrap_or_default();
                let mut item = TranscriptItem::new(TranscriptKind::Result, text.clone());
                item.is_error = r.is_error != Some(false);
                item.subtype = r.subtype.clone().unwrap_or_default();
                item.session_id = r.session_id.clone().unwrap_or_default();
                if let Some(id) = &r.request_id {
                    item.metadata.insert("request_id".into(), id.clone());
                }
                self.item(&mut out, item);
                out.push(DriverEvent::TurnCompleted(TurnReport {
                    text: if self.text.is_empty() {
                        text.clone()
                    } else {
                        self.text.clone()
                    },
                    usage: None,
                    error: (!r.is_success()).then_some(text),
                }));
            }
            Frame::SystemOther(v) | Frame::Unknown(v) => {
                out.push(DriverEvent::Notice(
                    Notice::new(
                        notice_kind::PROVIDER_UNKNOWN,
                        format!("unrecognized cursor-agent frame {}", frame.kind()),
                    )
                    .with_data("raw", v.clone()),
                ));
            }
        }
        out
    }

    fn tool(&mut self, t: &ToolCallFrame, out: &mut Vec<DriverEvent>) {
        let (Some(id), Some(v)) = (t.call_id.clone(), t.tool_call.variant()) else {
            return;
        };
        let name = tool_name(&v);
        let start = |out: &mut Vec<DriverEvent>| {
            out.push(DriverEvent::ToolCall(ToolCall {
                id: id.clone(),
                name: name.clone(),
                phase: Phase::Start,
                ..Default::default()
            }))
        };
        let task = matches!(v.kind, ToolKind::Task);
        let subagent = |kind: SubagentKind, summary: String, data: JsonMap| {
            let member = v
                .args
                .pointer("/subagentType/custom/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            DriverEvent::SubagentUpdate(SubagentUpdate {
                task: id.clone(),
                member,
                summary,
                kind,
                data,
                ..Default::default()
            })
        };
        match t.subtype.as_str() {
            "started" if !self.open.contains_key(&id) => {
                start(out);
                self.open.insert(id.clone(), true);
                let mut item = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
                item.tool_use_id.clone_from(&id);
                item.tool_name.clone_from(&name);
                item.input = Some(v.args.clone());
                self.item(out, item);
                if task {
                    let desc = v
                        .args
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    out.push(subagent(SubagentKind::Started, desc.to_owned(), JsonMap::new()));
                }
            }
            "completed" => {
                if self.open.remove(&id).is_none() {
                    // Completed without a start: open it so the lifecycle stays whole.
                    start(out);
                    let mut item = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
                    item.tool_use_id.clone_from(&id);
                    item.tool_name.clone_from(&name);
                    item.input = Some(v.args.clone());
                    self.item(out, item);
                }
                let outcome = v.outcome();
                let result = outcome.as_ref().map(outcome_map);
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.clone(),
                    args: v.args.as_object().cloned(),
                    result: result.clone(),
                    phase: Phase::End,
                    ..Default::default()
                }));
                if let (Some(o), Some(result)) = (&outcome, result) {
                    out.push(DriverEvent::ToolResult(ToolResult {
                        id: id.clone(),
                        result: result.clone(),
                    }));
                    let mut item = TranscriptItem::new(TranscriptKind::ToolResult, outcome_text(o));
                    item.tool_use_id.clone_from(&id);
                    item.is_error = !o.is_success();
                    self.item(out, item);
                    if task {
                        out.push(subagent(SubagentKind::Finished, outcome_text(o), result));
                    }
                }
            }
            _ => {}
        }
    }

    /// Ends the stream: closes tool calls left open (a crash mid-tool) and returns the outcome.
    pub fn finish(mut self) -> (Outcome, Vec<DriverEvent>) {
        let mut out = Vec::new();
        let mut open: Vec<String> = self.open.drain().map(|(id, _)| id).collect();
        open.sort();
        for id in open {
            out.push(DriverEvent::ToolCall(ToolCall {
                id,
                phase: Phase::End,
                ..Default::default()
            }));
        }
        let outcome = Outcome {
            report: self.validator.finish(),
            text: self.text,
            model: self.model,
            transcript: self.transcript,
        };
        (outcome, out)
    }
}

/// Whether `stderr` says the chat to resume does not exist (the Go original's rule:
/// `(session|chat).*(not found|unknown|does not exist|invalid|expired)|unable to (resume|find).*(session|chat)`,
/// case-insensitive).
pub fn is_resume_rejection(stderr: &str) -> bool {
    let s = stderr.to_lowercase();
    let after = |word: &str| s.find(word).map(|i| &s[i + word.len()..]);
    for subject in ["session", "chat"] {
        if let Some(rest) = after(subject)
            && ["not found", "unknown", "does not exist", "invalid", "expired"]
                .iter()
                .any(|w| rest.contains(w))
        {
            return true;
        }
    }
    ["unable to resume", "unable to find"]
        .iter()
        .any(|p| after(p).is_some_and(|rest| rest.contains("session") || rest.contains("chat")))
}

#[cfg(test)]
mod tests;
