//! Pure translation of Claude Code frames into driver events, transcript items and accumulated state.
//!
//! Streaming: with `--include-partial-messages` every model block arrives twice, first as `stream_event`
//! deltas and then as one complete `assistant` frame (one frame per block, sharing `message.id`). Deltas
//! are rendered; the complete frame only adds the transcript item, unless no deltas were seen for that
//! block (synthetic error messages, the partial message kept after an interrupt when its stream was cut),
//! in which case the whole block is emitted as one start/content/end lifecycle.
//!
//! Usage: per API message id the latest observed usage (`message_start`, `message_delta`, `assistant`) is
//! kept, so repeats never double count; a `result`'s own usage wins for its turn, and the run's usage is
//! the sum over turns. The final text of a turn comes only from its `result` line.
//!
//! Every transcript item is both emitted (`transcript.item` notice) and kept, so the two always mirror.
//! Control frames and `command_lifecycle` are not translated here: the transport handles them.

use serde_json::Value;

use crate::driver::{
    DriverEvent, JsonMap, Notice, SubagentKind, SubagentUpdate, ToolResult, TranscriptItem, TranscriptKind,
    TurnReport, Usage, notice_kind,
};

use crate::stream_json::blocks::{self, Blocks, CutRule, Start};
use crate::stream_json::events;

use super::wire::{
    self, ApiRetry, ContentBlock, Delta, Frame, MessageContent, ResultFrame, StreamEvent, System, Task,
};

mod classify;

pub use classify::{classify, result_failure};

/// Translates one invocation's frames (across processes and turns).
#[derive(Debug)]
pub struct Translator {
    session_id: Option<String>,
    model: Option<String>,
    blocks: Blocks,
    transcript: Vec<TranscriptItem>,
    message_usage: Vec<(String, Usage)>,
    usage: Option<Usage>,
    /// The streamed usage last reported in a `usage` notice.
    reported: Option<Usage>,
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
            blocks: Blocks::new(CutRule::Prefix),
            transcript: Vec::new(),
            message_usage: Vec::new(),
            usage: None,
            reported: None,
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

    /// Usage summed over every turn (each turn's terminal usage, or its deduplicated streamed usage).
    pub fn usage(&self) -> Option<Usage> {
        Usage::sum(self.usage, self.streamed_usage())
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

    /// Records the latest usage of API message `id` (replacing earlier observations of it).
    fn observe_usage(&mut self, id: &str, u: &wire::Usage) {
        if id.is_empty() {
            return;
        }
        let u = usage(u, None);
        match self.message_usage.iter_mut().find(|(m, _)| m == id) {
            Some((_, old)) => {
                // message_delta carries the final output count; input counts arrive with message_start.
                old.input_tokens = old.input_tokens.max(u.input_tokens);
                old.output_tokens = old.output_tokens.max(u.output_tokens);
                old.cached_input_tokens = old.cached_input_tokens.max(u.cached_input_tokens);
            }
            None => self.message_usage.push((id.to_owned(), u)),
        }
    }

    /// The deduplicated usage streamed since the last `result`.
    fn streamed_usage(&self) -> Option<Usage> {
        self.message_usage
            .iter()
            .fold(None, |acc, (_, u)| Usage::sum(acc, Some(*u)))
    }

    /// A line that is not JSON (or not a frame).
    pub fn invalid(&mut self, raw: &str, error: &str) -> DriverEvent {
        events::invalid_line("Claude", raw, error)
    }

    /// Translates one frame.
    pub fn frame(&mut self, frame: &Frame) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match frame {
            Frame::System(System::Init(i)) => {
                self.session_id = Some(i.session_id.clone());
                if !i.model.is_empty() {
                    self.model = Some(i.model.clone());
                }
                let mut item = TranscriptItem::new(TranscriptKind::Init, String::new());
                item.session_id.clone_from(&i.session_id);
                item.model.clone_from(&i.model);
                item.metadata
                    .insert("permission_mode".into(), i.permission_mode.clone());
                item.metadata.insert("cwd".into(), i.cwd.clone());
                if let Some(v) = &i.claude_code_version {
                    item.metadata.insert("version".into(), v.clone());
                }
                item.data.insert("tools".into(), i.tools.len().into());
                item.data
                    .insert("mcp_servers".into(), Value::Array(i.mcp_servers.clone()));
                self.item(&mut out, item);
            }
            Frame::System(System::ApiRetry(r)) => out.push(retry_notice(r)),
            Frame::System(System::TaskStarted(t)) => out.push(task(t, SubagentKind::Started)),
            Frame::System(System::TaskNotification(t)) => {
                let finished = matches!(
                    t.status.as_deref(),
                    Some("completed" | "failed" | "stopped" | "killed" | "cancelled")
                );
                out.push(task(
                    t,
                    if finished {
                        SubagentKind::Finished
                    } else {
                        SubagentKind::State
                    },
                ));
            }
            Frame::System(System::Status(_) | System::ThinkingTokens(_)) => {}
            Frame::ControlRequest(_)
            | Frame::ControlResponse(_)
            | Frame::ControlCancelRequest(_)
            | Frame::CommandLifecycle(_) => {}
            Frame::StreamEvent(f) if f.parent_tool_use_id.is_none() => self.stream(&f.event, &mut out),
            Frame::StreamEvent(_) => {}
            Frame::Assistant(a) => match &a.parent_tool_use_id {
                None => {
                    if let Some(u) = &a.message.usage {
                        let id = a.message.id.clone();
                        self.observe_usage(&id, u);
                    }
                    for block in &a.message.content {
                        self.assistant_block(block, &a.message.model, &mut out);
                    }
                }
                Some(task) => out.push(subagent_message(task, &a.message.content)),
            },
            Frame::User(u) if u.is_replay == Some(true) => {}
            Frame::User(u) if u.parent_tool_use_id.is_some() => {}
            Frame::User(u) => self.user(&u.message.content, u.tool_use_result.as_ref(), &mut out),
            Frame::Result(r) => self.result(r, &mut out),
            Frame::Unknown(v) => out.push(events::unknown_frame("Claude", v)),
        }
        // The turn's usage so far, whenever it grew (metering and budgets act on it mid-turn).
        let streamed = self.streamed_usage();
        if streamed != self.reported {
            if let Some(u) = streamed {
                out.push(DriverEvent::Notice(u.progress_notice()));
            }
            self.reported = streamed;
        }
        out
    }

    fn stream(&mut self, event: &StreamEvent, out: &mut Vec<DriverEvent>) {
        match event {
            StreamEvent::MessageStart { message } => {
                self.blocks.message_start(&message.id);
                if let Some(u) = &message.usage {
                    let id = message.id.clone();
                    self.observe_usage(&id, u);
                }
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
            StreamEvent::MessageDelta { usage: Some(u), .. } => {
                let id = self.blocks.message_id().to_owned();
                self.observe_usage(&id, u);
            }
            StreamEvent::MessageDelta { .. }
            | StreamEvent::MessageStop
            | StreamEvent::Ping
            | StreamEvent::Error { .. }
            | StreamEvent::Unknown(_) => {}
        }
    }

    fn assistant_block(&mut self, block: &ContentBlock, model: &str, out: &mut Vec<DriverEvent>) {
        match block {
            ContentBlock::Text { text } => {
                self.blocks.complete_text(text, out);
                if !text.is_empty() {
                    let mut item = TranscriptItem::new(TranscriptKind::Assistant, text.clone());
                    model.clone_into(&mut item.model);
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
            ContentBlock::RedactedThinking { .. } | ContentBlock::ToolResult { .. } | ContentBlock::Other => {
            }
        }
    }

    fn user(&mut self, content: &MessageContent, structured: Option<&Value>, out: &mut Vec<DriverEvent>) {
        match content {
            MessageContent::Text(t) => {
                if !t.is_empty() {
                    self.item(out, TranscriptItem::new(TranscriptKind::User, t.clone()));
                }
            }
            MessageContent::Blocks(blocks) => {
                for b in blocks {
                    match b {
                        ContentBlock::ToolResult {
                            tool_use_id,
                            is_error,
                            ..
                        } => {
                            let text = b.tool_result_text().unwrap_or_default();
                            let is_error = is_error.unwrap_or(false);
                            let mut result = JsonMap::new();
                            result.insert("text".into(), text.clone().into());
                            result.insert("is_error".into(), is_error.into());
                            result.insert("tool_use_id".into(), tool_use_id.clone().into());
                            if let Some(s) = structured {
                                result.insert("output".into(), s.clone());
                            }
                            out.push(DriverEvent::ToolResult(ToolResult {
                                id: tool_use_id.clone(),
                                result,
                            }));
                            let mut item = TranscriptItem::new(TranscriptKind::ToolResult, text);
                            item.tool_use_id.clone_from(tool_use_id);
                            if let Some(name) = self.blocks.tool_name(tool_use_id) {
                                name.clone_into(&mut item.tool_name);
                            }
                            item.is_error = is_error;
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

    /// Ends a turn Claude left without `result` (cancelled, crashed): closes what is open and reports the
    /// turn with `error`. The streamed usage is kept for the run's total.
    pub fn abort_turn(&mut self, error: &str) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        self.blocks.close_open(&mut out);
        let usage = self.streamed_usage();
        self.usage = Usage::sum(self.usage, usage);
        self.message_usage.clear();
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: String::new(),
            usage,
            error: Some(error.to_owned()),
        }));
        self.blocks.end_turn();
        out
    }

    fn result(&mut self, r: &ResultFrame, out: &mut Vec<DriverEvent>) {
        // Anything still open belongs to this turn.
        self.blocks.close_open(out);
        if !r.session_id.is_empty() {
            self.session_id = Some(r.session_id.clone());
        }
        // The terminal usage wins over what was streamed for this turn.
        let turn_usage = match &r.usage {
            Some(u) => Some(usage(u, None)),
            None => self.streamed_usage(),
        };
        self.message_usage.clear();
        self.usage = Usage::sum(self.usage, turn_usage);
        let text = final_text(r);
        let mut item = TranscriptItem::new(TranscriptKind::Result, r.result.clone().unwrap_or_default());
        item.is_error = r.is_error;
        item.subtype.clone_from(&r.subtype);
        item.session_id.clone_from(&r.session_id);
        item.usage = turn_usage;
        item.cost_usd = Some(r.total_cost_usd);
        item.errors = r.errors.clone().unwrap_or_default();
        if let Some(t) = &r.terminal_reason {
            item.metadata.insert("terminal_reason".into(), t.clone());
        }
        self.item(out, item);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text,
            usage: turn_usage,
            error: result_failure(r).map(|f| f.message),
        }));
        self.blocks.end_turn();
        self.last_result = Some(r.clone());
    }
}

/// The turn's answer: the `result` string of a successful turn (the only authority), else empty.
pub fn final_text(r: &ResultFrame) -> String {
    if r.is_error {
        return String::new();
    }
    r.result.clone().unwrap_or_default()
}

fn usage(u: &wire::Usage, cost: Option<f64>) -> Usage {
    Usage {
        input_tokens: u.input_tokens.unwrap_or(0),
        output_tokens: u.output_tokens.unwrap_or(0),
        cached_input_tokens: u.cache_read_input_tokens.unwrap_or(0),
        estimated_cost_milli: cost.map_or(0, |c| (c * 1000.0).round() as i64),
    }
}

fn retry_notice(r: &ApiRetry) -> DriverEvent {
    let status = r
        .error_status
        .map_or_else(|| "connection".to_owned(), |s| s.to_string());
    DriverEvent::Notice(
        Notice::new(
            notice_kind::PROVIDER_RETRY,
            format!(
                "model request failed ({status} {}); retry {}/{} in {} ms",
                r.error.as_deref().unwrap_or("error"),
                r.attempt,
                r.max_retries,
                r.retry_delay_ms
            ),
        )
        .with_meta("attempt", r.attempt.to_string())
        .with_meta("status", status)
        .with_data("retry_delay_ms", r.retry_delay_ms),
    )
}

fn task(t: &Task, kind: SubagentKind) -> DriverEvent {
    let mut data = JsonMap::new();
    if let Some(id) = &t.tool_use_id {
        data.insert("tool_use_id".into(), id.clone().into());
    }
    if let Some(ty) = &t.task_type {
        data.insert("task_type".into(), ty.clone().into());
    }
    DriverEvent::SubagentUpdate(SubagentUpdate {
        task: t.task_id.clone(),
        member: t.task_type.clone().unwrap_or_default(),
        state: t.status.clone().unwrap_or_else(|| "started".into()),
        summary: t
            .summary
            .clone()
            .or_else(|| t.description.clone())
            .unwrap_or_default(),
        kind,
        data,
        ..Default::default()
    })
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
