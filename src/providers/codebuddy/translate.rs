//! Pure translation of CodeBuddy frames into driver events, transcript items and accumulated state.
//!
//! Streaming: with `--include-partial-messages` every model block arrives twice, first as `stream_event`
//! deltas and then as one complete `assistant` frame. Deltas are rendered; the complete frame only adds the
//! transcript item, unless no deltas were seen for that block (synthesized messages such as error texts,
//! "Interrupted by user", or a run without partial messages), in which case the whole block is emitted as
//! one start/content/end lifecycle. `message_start.message.content` repeats the first delta and is ignored.
//!
//! Every transcript item is both emitted (`transcript.item` notice) and kept, so the two always mirror.
//! Control frames are not translated here: the transport answers them.

use std::collections::HashMap;

use serde_json::Value;

use crate::driver::{
    DriverEvent, JsonMap, Notice, Phase, SubagentKind, SubagentUpdate, TextDelta, Thinking, ToolCall,
    ToolResult, TranscriptItem, TranscriptKind, TurnReport, Usage, notice_kind,
};

use super::wire::{self, ContentBlock, Delta, Frame, ResultFrame, StreamEvent, UserContent};

mod classify;

pub use classify::{classify, result_failure};

/// A block being streamed, by its index in the current model message.
#[derive(Debug)]
enum Open {
    Text { id: String, text: String },
    Thinking { id: String, text: String },
    Tool { id: String, args: String },
}

/// A block that finished streaming and still waits for its complete `assistant` frame.
#[derive(Debug, PartialEq)]
enum Streamed {
    Text(String),
    Thinking(String),
    Tool(String),
}

/// Translates one invocation's frames (across processes and turns).
#[derive(Debug, Default)]
pub struct Translator {
    session_id: Option<String>,
    model: Option<String>,
    message_id: String,
    seq: u64,
    open: HashMap<u32, Open>,
    streamed: Vec<Streamed>,
    turn_text: String,
    tools: HashMap<String, String>,
    transcript: Vec<TranscriptItem>,
    usage: Option<Usage>,
    last_result: Option<ResultFrame>,
}

impl Translator {
    /// A fresh translator.
    pub fn new() -> Translator {
        Translator::default()
    }

    /// The session id of the latest `system/init` or `result`.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The model `system/init` reported.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Usage summed over every `result`.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// The latest `result`.
    pub fn last_result(&self) -> Option<&ResultFrame> {
        self.last_result.as_ref()
    }

    /// The assistant text of the turn in progress.
    pub fn turn_text(&self) -> &str {
        &self.turn_text
    }

    /// Takes the transcript gathered so far.
    pub fn take_transcript(&mut self) -> Vec<TranscriptItem> {
        std::mem::take(&mut self.transcript)
    }

    fn item(&mut self, out: &mut Vec<DriverEvent>, item: TranscriptItem) {
        self.transcript.push(item.clone());
        out.push(DriverEvent::transcript(item));
    }

    fn next_id(&mut self, base: &str) -> String {
        self.seq += 1;
        let base = if base.is_empty() { "msg" } else { base };
        format!("{base}-{}", self.seq)
    }

    /// A line that is not JSON (or not a frame).
    pub fn invalid(&mut self, raw: &str, error: &str) -> DriverEvent {
        let raw: String = raw.chars().take(2048).collect();
        DriverEvent::Notice(
            Notice::new(
                notice_kind::PROVIDER_INVALID,
                format!("unparseable CodeBuddy line: {error}"),
            )
            .with_data("raw", raw),
        )
    }

    /// Translates one frame.
    pub fn frame(&mut self, frame: &Frame) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match frame {
            Frame::SystemInit(i) => {
                self.session_id = Some(i.session_id.clone());
                if i.model.is_some() {
                    self.model.clone_from(&i.model);
                }
                let mut item = TranscriptItem::new(TranscriptKind::Init, String::new());
                item.session_id.clone_from(&i.session_id);
                item.model = i.model.clone().unwrap_or_default();
                if let Some(mode) = &i.permission_mode {
                    item.metadata.insert("permission_mode".into(), mode.clone());
                }
                if let Some(cwd) = &i.cwd {
                    item.metadata.insert("cwd".into(), cwd.clone());
                }
                item.data.insert("tools".into(), i.tools.len().into());
                item.data
                    .insert("mcp_servers".into(), Value::Array(i.mcp_servers.clone()));
                self.item(&mut out, item);
            }
            Frame::SystemStatus(_) | Frame::FileHistorySnapshot(_) => {}
            Frame::ControlRequest(_) | Frame::ControlResponse(_) => {}
            Frame::StreamEvent(f) if f.parent_tool_use_id.is_none() => self.stream(&f.event, &mut out),
            Frame::StreamEvent(_) => {}
            Frame::Assistant(a) => match &a.parent_tool_use_id {
                None => {
                    for block in &a.message.content {
                        self.assistant_block(block, a.message.model.as_deref(), &mut out);
                    }
                }
                Some(task) => out.push(subagent_message(task, &a.message.content)),
            },
            Frame::User(u) => self.user(&u.message.content, &mut out),
            Frame::Result(r) => self.result(r, &mut out),
            Frame::Error(e) => {
                let mut item = TranscriptItem::new(TranscriptKind::Error, e.error.clone());
                item.is_error = true;
                self.item(&mut out, item);
            }
            Frame::SystemOther(v) | Frame::Unknown(v) => {
                let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
                let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
                out.push(DriverEvent::Notice(
                    Notice::new(
                        notice_kind::PROVIDER_UNKNOWN,
                        format!(
                            "unrecognized CodeBuddy frame {kind}{}{sub}",
                            if sub.is_empty() { "" } else { "/" }
                        ),
                    )
                    .with_data("raw", v.clone()),
                ));
            }
        }
        out
    }

    fn stream(&mut self, event: &StreamEvent, out: &mut Vec<DriverEvent>) {
        match event {
            StreamEvent::MessageStart { message } => {
                self.message_id = message.id.clone().unwrap_or_default();
            }
            StreamEvent::ContentBlockStart { index, content_block } => {
                let base = self.message_id.clone();
                let open = match content_block {
                    ContentBlock::Text { .. } => {
                        let id = self.next_id(&base);
                        out.push(text_event(&id, String::new(), Phase::Start));
                        Open::Text {
                            id,
                            text: String::new(),
                        }
                    }
                    ContentBlock::Thinking { .. } => {
                        let id = self.next_id(&base);
                        out.push(thinking_event(&id, String::new(), Phase::Start));
                        Open::Thinking {
                            id,
                            text: String::new(),
                        }
                    }
                    ContentBlock::ToolUse { id, name, .. } => {
                        out.push(DriverEvent::ToolCall(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            phase: Phase::Start,
                            ..Default::default()
                        }));
                        self.tools.insert(id.clone(), name.clone());
                        Open::Tool {
                            id: id.clone(),
                            args: String::new(),
                        }
                    }
                    _ => return,
                };
                // A block index reused without a stop: close the old one first.
                if let Some(old) = self.open.insert(*index, open) {
                    self.close(old, out);
                }
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let Some(open) = self.open.get_mut(index) else {
                    return;
                };
                match (open, delta) {
                    (Open::Text { id, text }, Delta::Text(s)) if !s.is_empty() => {
                        text.push_str(s);
                        self.turn_text.push_str(s);
                        out.push(text_event(id, s.clone(), Phase::Content));
                    }
                    (Open::Thinking { id, text }, Delta::Thinking(s)) if !s.is_empty() => {
                        text.push_str(s);
                        out.push(thinking_event(id, s.clone(), Phase::Content));
                    }
                    (Open::Tool { id, args }, Delta::InputJson(s)) if !s.is_empty() => {
                        args.push_str(s);
                        out.push(DriverEvent::ToolCall(ToolCall {
                            id: id.clone(),
                            args_delta: s.clone(),
                            ..Default::default()
                        }));
                    }
                    _ => {}
                }
            }
            StreamEvent::ContentBlockStop { index } => {
                if let Some(open) = self.open.remove(index) {
                    self.close(open, out);
                }
            }
            StreamEvent::MessageDelta { .. } | StreamEvent::MessageStop | StreamEvent::Other { .. } => {}
        }
    }

    fn close(&mut self, open: Open, out: &mut Vec<DriverEvent>) {
        match open {
            Open::Text { id, text } => {
                out.push(text_event(&id, String::new(), Phase::End));
                self.streamed.push(Streamed::Text(text));
            }
            Open::Thinking { id, text } => {
                out.push(thinking_event(&id, String::new(), Phase::End));
                self.streamed.push(Streamed::Thinking(text));
            }
            Open::Tool { id, args } => {
                let args = serde_json::from_str::<Value>(&args)
                    .ok()
                    .and_then(|v| v.as_object().cloned());
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.clone(),
                    args,
                    phase: Phase::End,
                    ..Default::default()
                }));
                self.streamed.push(Streamed::Tool(id));
            }
        }
    }

    /// True (and forgotten) when `s` was already streamed. A block still open with exactly that content
    /// (an interrupt cut its stream before `content_block_stop`) is closed first.
    fn was_streamed(&mut self, s: &Streamed, out: &mut Vec<DriverEvent>) -> bool {
        let index = self.open.iter().find_map(|(i, o)| {
            let same = match (o, s) {
                (Open::Text { text, .. }, Streamed::Text(t)) => text == t,
                (Open::Thinking { text, .. }, Streamed::Thinking(t)) => text == t,
                (Open::Tool { id, .. }, Streamed::Tool(t)) => id == t,
                _ => false,
            };
            same.then_some(*i)
        });
        if let Some(open) = index.and_then(|i| self.open.remove(&i)) {
            self.close(open, out);
        }
        match self.streamed.iter().position(|x| x == s) {
            Some(i) => {
                self.streamed.remove(i);
                true
            }
            None => false,
        }
    }

    fn assistant_block(&mut self, block: &ContentBlock, model: Option<&str>, out: &mut Vec<DriverEvent>) {
        match block {
            ContentBlock::Text { text } => {
                if !self.was_streamed(&Streamed::Text(text.clone()), out) && !text.is_empty() {
                    let id = self.next_id("text");
                    for (t, p) in [(String::new(), Phase::Start), (text.clone(), Phase::Content)] {
                        out.push(text_event(&id, t, p));
                    }
                    out.push(text_event(&id, String::new(), Phase::End));
                    self.turn_text.push_str(text);
                }
                if !text.is_empty() {
                    let mut item = TranscriptItem::new(TranscriptKind::Assistant, text.clone());
                    item.model = model.unwrap_or_default().to_owned();
                    self.item(out, item);
                }
            }
            ContentBlock::Thinking { thinking, .. } => {
                if !self.was_streamed(&Streamed::Thinking(thinking.clone()), out) && !thinking.is_empty() {
                    let id = self.next_id("thinking");
                    out.push(thinking_event(&id, String::new(), Phase::Start));
                    out.push(thinking_event(&id, thinking.clone(), Phase::Content));
                    out.push(thinking_event(&id, String::new(), Phase::End));
                }
                if !thinking.is_empty() {
                    self.item(
                        out,
                        TranscriptItem::new(TranscriptKind::Thinking, thinking.clone()),
                    );
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                if !self.was_streamed(&Streamed::Tool(id.clone()), out) {
                    out.push(DriverEvent::ToolCall(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        phase: Phase::Start,
                        ..Default::default()
                    }));
                    out.push(DriverEvent::ToolCall(ToolCall {
                        id: id.clone(),
                        args: input.as_object().cloned(),
                        phase: Phase::End,
                        ..Default::default()
                    }));
                }
                self.tools.insert(id.clone(), name.clone());
                let mut item = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
                item.tool_use_id.clone_from(id);
                item.tool_name.clone_from(name);
                item.input = Some(input.clone());
                self.item(out, item);
            }
            ContentBlock::ToolResult { .. } | ContentBlock::Other { .. } => {}
        }
    }

    fn user(&mut self, content: &UserContent, out: &mut Vec<DriverEvent>) {
        match content {
            UserContent::Text(t) => {
                if !t.is_empty() {
                    self.item(out, TranscriptItem::new(TranscriptKind::User, t.clone()));
                }
            }
            UserContent::Blocks(blocks) => {
                for b in blocks {
                    match b {
                        ContentBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                            meta,
                        } => {
                            let text = content.text();
                            let mut result = JsonMap::new();
                            result.insert("text".into(), text.clone().into());
                            result.insert("is_error".into(), (*is_error).into());
                            if let Some(m) = meta {
                                result.insert("meta".into(), m.clone());
                            }
                            if self.tools.contains_key(tool_use_id) {
                                out.push(DriverEvent::ToolResult(ToolResult {
                                    id: tool_use_id.clone(),
                                    result,
                                }));
                            }
                            let mut item = TranscriptItem::new(TranscriptKind::ToolResult, text);
                            item.tool_use_id.clone_from(tool_use_id);
                            item.is_error = *is_error;
                            self.item(out, item);
                        }
                        ContentBlock::Text { text } if !text.is_empty() => {
                            self.item(out, TranscriptItem::new(TranscriptKind::User, text.clone()));
                        }
                        _ => {}
                    }
                }
            }
        }
    }

    /// Closes every block still streaming (in index order), so no lifecycle dangles.
    fn close_open(&mut self, out: &mut Vec<DriverEvent>) {
        let mut open: Vec<(u32, Open)> = self.open.drain().collect();
        open.sort_by_key(|(i, _)| *i);
        for (_, o) in open {
            self.close(o, out);
        }
    }

    /// Ends a turn CodeBuddy left without `result` (stalled, cancelled, crashed): closes what is open and
    /// reports the turn with `error`.
    pub fn abort_turn(&mut self, error: &str) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        self.close_open(&mut out);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: std::mem::take(&mut self.turn_text),
            usage: None,
            error: Some(error.to_owned()),
        }));
        self.streamed.clear();
        out
    }

    fn result(&mut self, r: &ResultFrame, out: &mut Vec<DriverEvent>) {
        // Anything still open belongs to this turn.
        self.close_open(out);
        self.session_id = Some(r.session_id.clone());
        let usage = r.usage.as_ref().map(|u| usage(u, r.total_cost_usd));
        self.usage = Usage::sum(self.usage, usage);
        let text = final_text(r, &self.turn_text);
        let mut item = TranscriptItem::new(TranscriptKind::Result, text.clone());
        item.is_error = r.is_error;
        item.subtype.clone_from(&r.subtype);
        item.session_id.clone_from(&r.session_id);
        item.usage = usage;
        item.cost_usd = r.total_cost_usd;
        item.errors.clone_from(&r.errors);
        self.item(out, item);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text,
            usage,
            error: result_failure(r).map(|f| f.message),
        }));
        self.turn_text.clear();
        self.streamed.clear();
        self.last_result = Some(r.clone());
    }
}

/// The turn's answer: the `result` string when present, else the streamed text (errors carry none).
pub fn final_text(r: &ResultFrame, streamed: &str) -> String {
    match &r.result {
        Some(t) => t.clone(),
        None => streamed.to_owned(),
    }
}

fn usage(u: &wire::Usage, cost: Option<f64>) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cached_input_tokens: u.cache_read_input_tokens.unwrap_or(0),
        estimated_cost_milli: cost.map_or(0, |c| (c * 1000.0).round() as i64),
    }
}

fn text_event(id: &str, text: String, phase: Phase) -> DriverEvent {
    DriverEvent::TextDelta(TextDelta {
        message_id: id.to_owned(),
        text,
        phase,
        ..Default::default()
    })
}

fn thinking_event(id: &str, text: String, phase: Phase) -> DriverEvent {
    DriverEvent::Thinking(Thinking {
        message_id: id.to_owned(),
        text,
        phase,
    })
}

fn subagent_message(task: &str, content: &[ContentBlock]) -> DriverEvent {
    let summary: String = content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    DriverEvent::SubagentUpdate(SubagentUpdate {
        task: task.to_owned(),
        summary,
        kind: SubagentKind::Message,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests;
