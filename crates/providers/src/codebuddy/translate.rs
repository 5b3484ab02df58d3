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

use serde_json::Value;

use crate::driver::{DriverEvent, JsonMap, ToolResult, TranscriptItem, TranscriptKind, TurnReport, Usage};

use crate::stream_json::blocks::{self, Blocks, CutRule, Start};
use crate::stream_json::events;

use super::wire::{self, ContentBlock, Delta, Frame, ResultFrame, StreamEvent, UserContent};

mod classify;

pub use classify::{classify, result_failure};

/// Translates one invocation's frames (across processes and turns).
#[derive(Debug)]
pub struct Translator {
    session_id: Option<String>,
    model: Option<String>,
    blocks: Blocks,
    transcript: Vec<TranscriptItem>,
    usage: Option<Usage>,
    last_result: Option<ResultFrame>,
}

impl Default for Translator {
    fn default() -> Translator {
        Translator::new()
    }
}

impl Translator {
    /// A fresh translator.
    pub fn new() -> Translator {
        Translator {
            session_id: None,
            model: None,
            blocks: Blocks::new(CutRule::Exact),
            transcript: Vec::new(),
            usage: None,
            last_result: None,
        }
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
        self.blocks.turn_text()
    }

    /// Takes the transcript gathered so far.
    pub fn take_transcript(&mut self) -> Vec<TranscriptItem> {
        std::mem::take(&mut self.transcript)
    }

    fn item(&mut self, out: &mut Vec<DriverEvent>, item: TranscriptItem) {
        self.transcript.push(item.clone());
        out.push(DriverEvent::transcript(item));
    }

    /// A line that is not JSON (or not a frame).
    pub fn invalid(&mut self, raw: &str, error: &str) -> DriverEvent {
        events::invalid_line("CodeBuddy", raw, error)
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
                out.push(events::unknown_frame("CodeBuddy", v));
            }
        }
        out
    }

    fn stream(&mut self, event: &StreamEvent, out: &mut Vec<DriverEvent>) {
        match event {
            StreamEvent::MessageStart { message } => {
                self.blocks
                    .message_start(message.id.as_deref().unwrap_or_default());
            }
            StreamEvent::ContentBlockStart { index, content_block } => {
                let start = match content_block {
                    ContentBlock::Text { .. } => Start::Text,
                    ContentBlock::Thinking { .. } => Start::Thinking,
                    ContentBlock::ToolUse { id, name, .. } => Start::Tool { id, name },
                    _ => return,
                };
                self.blocks.start(*index, start, out);
            }
            StreamEvent::ContentBlockDelta { index, delta } => {
                let delta = match delta {
                    Delta::Text(s) => blocks::Delta::Text(s),
                    Delta::Thinking(s) => blocks::Delta::Thinking(s),
                    Delta::InputJson(s) => blocks::Delta::InputJson(s),
                    _ => return,
                };
                self.blocks.delta(*index, delta, out);
            }
            StreamEvent::ContentBlockStop { index } => self.blocks.stop(*index, out),
            StreamEvent::MessageDelta { .. } | StreamEvent::MessageStop | StreamEvent::Other { .. } => {}
        }
    }

    fn assistant_block(&mut self, block: &ContentBlock, model: Option<&str>, out: &mut Vec<DriverEvent>) {
        match block {
            ContentBlock::Text { text } => {
                self.blocks.complete_text(text, out);
                if !text.is_empty() {
                    let mut item = TranscriptItem::new(TranscriptKind::Assistant, text.clone());
                    item.model = model.unwrap_or_default().to_owned();
                    self.item(out, item);
                }
            }
            ContentBlock::Thinking { thinking, .. } => {
                self.blocks.complete_thinking(thinking, out);
                if !thinking.is_empty() {
                    self.item(
                        out,
                        TranscriptItem::new(TranscriptKind::Thinking, thinking.clone()),
                    );
                }
            }
            ContentBlock::ToolUse { id, name, input } => {
                self.blocks.complete_tool(id, name, input, out);
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
                            if self.blocks.knows_tool(tool_use_id) {
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

    /// Ends a turn CodeBuddy left without `result` (stalled, cancelled, crashed): closes what is open and
    /// reports the turn with `error`.
    pub fn abort_turn(&mut self, error: &str) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        self.blocks.close_open(&mut out);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: self.blocks.end_turn(),
            usage: None,
            error: Some(error.to_owned()),
        }));
        out
    }

    fn result(&mut self, r: &ResultFrame, out: &mut Vec<DriverEvent>) {
        // Anything still open belongs to this turn.
        self.blocks.close_open(out);
        self.session_id = Some(r.session_id.clone());
        let usage = r.usage.as_ref().map(|u| usage(u, r.total_cost_usd));
        self.usage = Usage::sum(self.usage, usage);
        let text = final_text(r, self.blocks.turn_text());
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
        self.blocks.end_turn();
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

fn subagent_message(task: &str, content: &[ContentBlock]) -> DriverEvent {
    let texts = content.iter().filter_map(|b| match b {
        ContentBlock::Text { text } => Some(text.as_str()),
        _ => None,
    });
    events::subagent_message(task, texts)
}

#[cfg(test)]
mod tests;
