//! Pure translation of an ACP agent's `session/update`s into driver events and transcript items.
//!
//! | update | events | transcript |
//! |---|---|---|
//! | `agent_message_chunk` (text) | text start (first chunk of a message), content, end when something else arrives or the turn ends | `assistant` (the whole message) |
//! | `agent_thought_chunk` (text) | thinking start/content/end, the same way | `thinking` |
//! | `tool_call` | tool start (name: `name`, a vendor `_meta.*.toolName`, the title or the kind) | `tool_call` |
//! | `tool_call_update` `completed` / `failed` | tool end (args, result) and the tool result | `tool_result` |
//! | `user_message_chunk` | — | `user` |
//! | `plan`, `available_commands_update`, `current_mode_update`, `usage_update`, `session_info_update` | a notice (`plan`, `acp.commands`, `acp.mode`, `usage`, `acp.session_info`) | — |
//! | a non-text content block | `provider.unknown` notice | — |
//! | an unknown kind | `provider.unknown` notice with the raw update | — |
//! | a known kind that does not parse | `provider.invalid` notice with the raw update | — |
//!
//! The end of a prompt ([`Translator::end_turn`]) closes what is open, adds a `result` item (its
//! subtype is the `stopReason`) and reports the turn. Transcript items are emitted as they are kept,
//! so the notices always mirror the transcript.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::driver::{
    DriverEvent, JsonMap, Notice, Phase, TextDelta, Thinking, ToolCall, ToolResult, TranscriptItem,
    TranscriptKind, TurnReport, Usage, notice_kind,
};
use agent_adaptor_core::acp::wire::{
    ContentBlock, ParsedUpdate, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, ToolKind,
    TurnUsage,
};

/// Notice kind of an agent's plan.
pub const NOTICE_PLAN: &str = "plan";
/// Notice kind of the agent's slash commands.
pub const NOTICE_COMMANDS: &str = "acp.commands";
/// Notice kind of a mode change.
pub const NOTICE_MODE: &str = "acp.mode";
/// Notice kind of context use and cost.
pub const NOTICE_USAGE: &str = "usage";
/// Notice kind of session metadata.
pub const NOTICE_SESSION_INFO: &str = "acp.session_info";

#[derive(Debug, Default)]
struct Tool {
    args: Option<Value>,
    closed: bool,
}

/// Translates the updates of one invocation (across its prompt turns).
#[derive(Debug, Default)]
pub struct Translator {
    seq: u64,
    /// The open text message: its id and text so far.
    text: Option<(String, String)>,
    /// The open thinking block.
    thinking: Option<(String, String)>,
    tools: HashMap<String, Tool>,
    /// Tool ids in opening order (to close what is left deterministically).
    order: Vec<String>,
    /// The current turn's assistant text.
    turn_text: String,
    /// The last finished turn's assistant text.
    last_text: String,
    transcript: Vec<TranscriptItem>,
    /// The latest cumulative cost reported by `usage_update`, in USD millis.
    cost_milli: Option<i64>,
}

/// The tool name of a `tool_call` (raw update): `name`, any `_meta.<vendor>.toolName`, the title,
/// else the kind.
pub fn tool_name(raw: &Value, title: &str, kind: ToolKind) -> String {
    if let Some(n) = raw.get("name").and_then(Value::as_str).filter(|n| !n.is_empty()) {
        return n.to_owned();
    }
    if let Some(meta) = raw.get("_meta").and_then(Value::as_object) {
        for v in meta.values() {
            if let Some(n) = v
                .get("toolName")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
            {
                return n.to_owned();
            }
        }
    }
    if !title.is_empty() {
        return title.to_owned();
    }
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "tool".into())
}

fn block_text(b: &ContentBlock) -> Option<&str> {
    match b {
        ContentBlock::Text { text } => Some(text),
        _ => None,
    }
}

fn contents_text(content: &[ToolCallContent]) -> String {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content { content } => block_text(content).map(str::to_owned),
            ToolCallContent::Diff { path, .. } => Some(format!("edited {path}")),
            ToolCallContent::Terminal { terminal_id } => Some(format!("terminal {terminal_id}")),
        })
        .collect::<Vec<_>>()
        .join("\n")
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

    fn next_id(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}-{}", self.seq)
    }

    fn close_text(&mut self, out: &mut Vec<DriverEvent>) {
        if let Some((id, text)) = self.text.take() {
            out.push(DriverEvent::TextDelta(TextDelta {
                message_id: id,
                phase: Phase::End,
                ..Default::default()
            }));
            self.item(out, TranscriptItem::new(TranscriptKind::Assistant, text));
        }
    }

    fn close_thinking(&mut self, out: &mut Vec<DriverEvent>) {
        if let Some((id, text)) = self.thinking.take() {
            out.push(DriverEvent::Thinking(Thinking {
                message_id: id,
                phase: Phase::End,
                ..Default::default()
            }));
            self.item(out, TranscriptItem::new(TranscriptKind::Thinking, text));
        }
    }

    fn close_streams(&mut self, out: &mut Vec<DriverEvent>) {
        self.close_text(out);
        self.close_thinking(out);
    }

    fn chunk_text(&mut self, chunk: &str, out: &mut Vec<DriverEvent>) {
        self.close_thinking(out);
        if self.text.is_none() {
            let id = self.next_id("msg");
            out.push(DriverEvent::TextDelta(TextDelta {
                message_id: id.clone(),
                phase: Phase::Start,
                ..Default::default()
            }));
            self.text = Some((id, String::new()));
        }
        if let Some((id, text)) = &mut self.text {
            text.push_str(chunk);
            out.push(DriverEvent::TextDelta(TextDelta {
                message_id: id.clone(),
                text: chunk.to_owned(),
                ..Default::default()
            }));
        }
        self.turn_text.push_str(chunk);
    }

    fn chunk_thought(&mut self, chunk: &str, out: &mut Vec<DriverEvent>) {
        self.close_text(out);
        if self.thinking.is_none() {
            let id = self.next_id("thought");
            out.push(DriverEvent::Thinking(Thinking {
                message_id: id.clone(),
                phase: Phase::Start,
                ..Default::default()
            }));
            self.thinking = Some((id, String::new()));
        }
        if let Some((id, text)) = &mut self.thinking {
            text.push_str(chunk);
            out.push(DriverEvent::Thinking(Thinking {
                message_id: id.clone(),
                text: chunk.to_owned(),
                ..Default::default()
            }));
        }
    }

    fn non_text(kind: &str, raw: &Value) -> DriverEvent {
        DriverEvent::Notice(
            Notice::new(
                notice_kind::PROVIDER_UNKNOWN,
                format!("a non-text content block in {kind}"),
            )
            .with_data("update", raw.clone()),
        )
    }

    /// Translates one `update` object (`raw`) of a `session/update`, as [`agent_adaptor_core::acp::wire::parse_update`]
    /// classified it.
    pub fn update(&mut self, parsed: ParsedUpdate, raw: &Value) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match parsed {
            ParsedUpdate::Unknown { kind } => out.push(DriverEvent::Notice(
                Notice::new(
                    notice_kind::PROVIDER_UNKNOWN,
                    format!("an unknown session update {kind:?}"),
                )
                .with_data("update", raw.clone()),
            )),
            ParsedUpdate::Invalid { kind, error } => out.push(DriverEvent::Notice(
                Notice::new(
                    notice_kind::PROVIDER_INVALID,
                    format!("a {kind} update that does not fit the schema: {error}"),
                )
                .with_data("update", raw.clone()),
            )),
            ParsedUpdate::Known(u) => self.known(u, raw, &mut out),
        }
        out
    }

    fn known(&mut self, u: SessionUpdate, raw: &Value, out: &mut Vec<DriverEvent>) {
        match u {
            SessionUpdate::AgentMessageChunk { content } => match block_text(&content) {
                Some(t) if !t.is_empty() => self.chunk_text(t, out),
                Some(_) => {}
                None => out.push(Self::non_text("agent_message_chunk", raw)),
            },
            SessionUpdate::AgentThoughtChunk { content } => match block_text(&content) {
                Some(t) if !t.is_empty() => self.chunk_thought(t, out),
                Some(_) => {}
                None => out.push(Self::non_text("agent_thought_chunk", raw)),
            },
            SessionUpdate::UserMessageChunk { content } => match block_text(&content) {
                Some(t) if !t.is_empty() => {
                    self.close_streams(out);
                    self.item(out, TranscriptItem::new(TranscriptKind::User, t));
                }
                Some(_) => {}
                None => out.push(Self::non_text("user_message_chunk", raw)),
            },
            SessionUpdate::ToolCall {
                tool_call_id,
                title,
                kind,
                status,
                raw_input,
            } => {
                self.close_streams(out);
                let name = tool_name(raw, &title, kind);
                self.open_tool(&tool_call_id, name, raw_input, &title, out);
                if matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed) {
                    let content = raw
                        .get("content")
                        .cloned()
                        .and_then(|c| serde_json::from_value::<Vec<ToolCallContent>>(c).ok());
                    let output = raw.get("rawOutput").cloned();
                    self.close_tool(&tool_call_id, status, content, output, out);
                }
            }
            SessionUpdate::ToolCallUpdate {
                tool_call_id,
                status,
                raw_input,
                raw_output,
                content,
            } => {
                self.close_streams(out);
                if let Some(input) = raw_input
                    && let Some(t) = self.tools.get_mut(&tool_call_id)
                {
                    t.args = Some(input);
                }
                if let Some(s @ (ToolCallStatus::Completed | ToolCallStatus::Failed)) = status {
                    if !self.tools.contains_key(&tool_call_id) {
                        // An update for a call never announced: open it so the lifecycle stays whole.
                        let title = raw.get("title").and_then(Value::as_str).unwrap_or_default();
                        let name = tool_name(raw, title, ToolKind::Other);
                        self.open_tool(&tool_call_id, name, None, title, out);
                    }
                    self.close_tool(&tool_call_id, s, content, raw_output, out);
                }
            }
            SessionUpdate::Plan { entries } => {
                self.close_streams(out);
                let n = entries.len();
                out.push(DriverEvent::Notice(
                    Notice::new(NOTICE_PLAN, format!("a plan of {n} steps"))
                        .with_data("entries", serde_json::to_value(entries).unwrap_or_default()),
                ));
            }
            SessionUpdate::AvailableCommandsUpdate { available_commands } => {
                out.push(DriverEvent::Notice(
                    Notice::new(
                        NOTICE_COMMANDS,
                        format!("{} commands available", available_commands.len()),
                    )
                    .with_data("commands", Value::Array(available_commands)),
                ));
            }
            SessionUpdate::CurrentModeUpdate { current_mode_id } => {
                out.push(DriverEvent::Notice(
                    Notice::new(NOTICE_MODE, format!("mode {current_mode_id}"))
                        .with_meta("mode", current_mode_id),
                ));
            }
            SessionUpdate::UsageUpdate { used, size, cost } => {
                let mut n = Notice::new(NOTICE_USAGE, format!("{used} of {size} context tokens"))
                    .with_data("used", used)
                    .with_data("size", size);
                if let Some(c) = cost {
                    if c.currency.eq_ignore_ascii_case("USD") && c.amount.is_finite() {
                        self.cost_milli = Some((c.amount * 1000.0).round() as i64);
                    }
                    n = n.with_data("cost", json!({"amount": c.amount, "currency": c.currency}));
                }
                out.push(DriverEvent::Notice(n));
            }
            SessionUpdate::SessionInfoUpdate { title } => {
                let mut n = Notice::new(NOTICE_SESSION_INFO, "session information");
                if let Some(t) = title {
                    n = n.with_meta("title", t);
                }
                out.push(DriverEvent::Notice(n));
            }
        }
    }

    fn open_tool(
        &mut self,
        id: &str,
        name: String,
        args: Option<Value>,
        title: &str,
        out: &mut Vec<DriverEvent>,
    ) {
        if self.tools.contains_key(id) {
            return;
        }
        out.push(DriverEvent::ToolCall(ToolCall {
            id: id.to_owned(),
            name: name.clone(),
            args: args.as_ref().and_then(Value::as_object).cloned(),
            phase: Phase::Start,
            ..Default::default()
        }));
        let mut item = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
        item.tool_use_id = id.to_owned();
        item.tool_name.clone_from(&name);
        item.input.clone_from(&args);
        if !title.is_empty() {
            item.metadata.insert("title".into(), title.to_owned());
        }
        self.item(out, item);
        self.tools.insert(id.to_owned(), Tool { args, closed: false });
        self.order.push(id.to_owned());
    }

    fn close_tool(
        &mut self,
        id: &str,
        status: ToolCallStatus,
        content: Option<Vec<ToolCallContent>>,
        output: Option<Value>,
        out: &mut Vec<DriverEvent>,
    ) {
        let Some(tool) = self.tools.get_mut(id).filter(|t| !t.closed) else {
            return;
        };
        tool.closed = true;
        let failed = status == ToolCallStatus::Failed;
        let content = content.unwrap_or_default();
        let mut text = contents_text(&content);
        if text.is_empty()
            && let Some(o) = &output
        {
            text = o.as_str().map_or_else(|| o.to_string(), str::to_owned);
        }
        let mut result = JsonMap::new();
        result.insert("text".into(), text.clone().into());
        result.insert("is_error".into(), failed.into());
        result.insert(
            "status".into(),
            if failed { "failed" } else { "completed" }.into(),
        );
        if let Some(o) = output {
            result.insert("raw_output".into(), o);
        }
        if !content.is_empty() {
            result.insert(
                "content".into(),
                serde_json::to_value(&content).unwrap_or_default(),
            );
        }
        let args = tool.args.as_ref().and_then(Value::as_object).cloned();
        out.push(DriverEvent::ToolCall(ToolCall {
            id: id.to_owned(),
            args,
            result: Some(result.clone()),
            phase: Phase::End,
            ..Default::default()
        }));
        out.push(DriverEvent::ToolResult(ToolResult {
            id: id.to_owned(),
            result,
        }));
        let mut item = TranscriptItem::new(TranscriptKind::ToolResult, text);
        item.tool_use_id = id.to_owned();
        item.is_error = failed;
        self.item(out, item);
    }

    /// Ends a prompt turn with `stop` (and the agent's `usage`, when it reported one); `error` is the
    /// turn's failure message. Closes what is open, adds the `result` item and reports the turn.
    pub fn end_turn(
        &mut self,
        stop: Option<StopReason>,
        usage: Option<&TurnUsage>,
        error: Option<String>,
    ) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        self.close_streams(&mut out);
        self.close_tools(&mut out);
        let subtype = stop
            .and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "error".into());
        let text = std::mem::take(&mut self.turn_text);
        let mut item = TranscriptItem::new(TranscriptKind::Result, text.clone());
        item.subtype = subtype;
        item.is_error = error.is_some();
        item.usage = usage.map(to_usage);
        if let Some(e) = &error {
            item.errors.push(e.clone());
        }
        self.item(&mut out, item);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: text.clone(),
            usage: usage.map(to_usage),
            error,
        }));
        self.last_text = text;
        out
    }

    fn close_tools(&mut self, out: &mut Vec<DriverEvent>) {
        for id in &self.order {
            if let Some(t) = self.tools.get_mut(id)
                && !t.closed
            {
                t.closed = true;
                out.push(DriverEvent::ToolCall(ToolCall {
                    id: id.clone(),
                    phase: Phase::End,
                    ..Default::default()
                }));
            }
        }
    }

    /// Closes whatever is still open (a crash or a cancel mid-turn) without reporting a turn.
    pub fn close_all(&mut self) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        self.close_streams(&mut out);
        self.close_tools(&mut out);
        out
    }

    /// The last finished turn's text, or the current one's when no turn finished.
    pub fn text(&self) -> &str {
        if self.last_text.is_empty() {
            &self.turn_text
        } else {
            &self.last_text
        }
    }

    /// The cumulative session cost the agent last reported, in USD millis.
    pub fn cost_milli(&self) -> Option<i64> {
        self.cost_milli
    }

    /// The transcript so far.
    pub fn into_transcript(self) -> Vec<TranscriptItem> {
        self.transcript
    }
}

/// ACP's end-of-turn usage as the contract's [`Usage`].
pub fn to_usage(u: &TurnUsage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        cached_input_tokens: u.cached_read_tokens.unwrap_or(0),
        estimated_cost_milli: 0,
    }
}

#[cfg(test)]
mod tests;
