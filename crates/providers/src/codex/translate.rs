//! Pure translation of `codex app-server` notifications into driver events, transcript items and the
//! state a response needs (final text, usage, the terminal turn).
//!
//! **Fencing.** Every turn-scoped notification must carry the run's thread id and the current turn
//! id. Frames of another thread (Codex subscribes to child threads) or of an older turn are kept in
//! Raw only. Frames that arrive before the thread/turn ids are known are queued in wire order and
//! replayed once [`Translator::begin_turn`] reveals them. `turn/completed` of the current turn is the
//! single terminal; a second one is ignored.
//!
//! **Streaming.** Agent-message and reasoning deltas are rendered as they come; `item/completed`
//! only adds what was not streamed (so text is never rendered twice). Tool items (command execution,
//! file change, MCP tool call, web search) become a tool lifecycle; command and file-change output
//! deltas are the tool's content chunks. Plans, warnings and retries become notices; unknown methods
//! and item types become `provider.unknown` notices.
//!
//! Every transcript item is both emitted (`transcript.item` notice) and kept, so the two mirror.

pub mod exec;
mod items;

use std::collections::{HashMap, HashSet};

use crate::driver::{
    DriverEvent, Notice, Phase, TextDelta, Thinking, TranscriptItem, TranscriptKind, TurnReport, Usage,
    notice_kind,
};

use super::wire::items::{ThreadItem, ThreadTokenUsage, Turn, TurnError, TurnStatus};
use super::wire::notify::ServerNotification;

pub use items::tool_of;

/// Where a notification belongs relative to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The run's thread and current turn (or thread-level): translated.
    Ours,
    /// Another thread or an older turn: Raw only.
    Foreign,
    /// The ids are not known yet: queued.
    Pending,
}

/// Translates one invocation's notifications (across turns of one thread).
#[derive(Debug, Default)]
pub struct Translator {
    thread_id: Option<String>,
    turn_id: Option<String>,
    queue: Vec<ServerNotification>,
    /// Streamed text per open agent-message item.
    text_open: HashMap<String, String>,
    /// Streamed text per open reasoning item.
    thinking_open: HashMap<String, String>,
    /// Open tool items: id → name.
    tools_open: HashMap<String, String>,
    tools_seen: HashSet<String>,
    turn_text: String,
    last_text: Option<String>,
    turn_usage: Option<Usage>,
    usage: Option<Usage>,
    last_error: Option<TurnError>,
    terminal: Option<Turn>,
    transcript: Vec<TranscriptItem>,
    client_ids: Vec<String>,
    foreign: u64,
}

impl Translator {
    /// A fresh translator.
    pub fn new() -> Translator {
        Translator::default()
    }

    /// The thread id, once known.
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// The current turn id, once known.
    pub fn turn_id(&self) -> Option<&str> {
        self.turn_id.as_deref()
    }

    /// The text of the last completed agent message of the invocation.
    pub fn last_text(&self) -> Option<&str> {
        self.last_text.as_deref()
    }

    /// Usage summed over the invocation's turns.
    pub fn usage(&self) -> Option<Usage> {
        Usage::sum(self.usage, self.turn_usage)
    }

    /// The `turn/completed` turn of the current turn, once received.
    pub fn terminal(&self) -> Option<&Turn> {
        self.terminal.as_ref()
    }

    /// The last non-retried `error` notification of the current turn.
    pub fn last_error(&self) -> Option<&TurnError> {
        self.last_error.as_ref()
    }

    /// `clientId`s of delivered `userMessage` items (delivery acknowledgements), in order.
    pub fn delivered_client_ids(&self) -> &[String] {
        &self.client_ids
    }

    /// How many frames were fenced off as foreign.
    pub fn foreign_frames(&self) -> u64 {
        self.foreign
    }

    /// Takes the transcript.
    pub fn take_transcript(&mut self) -> Vec<TranscriptItem> {
        std::mem::take(&mut self.transcript)
    }

    fn item(&mut self, out: &mut Vec<DriverEvent>, item: TranscriptItem) {
        out.push(DriverEvent::transcript(item.clone()));
        self.transcript.push(item);
    }

    /// Sets the thread (from the `thread/start|resume|fork` answer) and records the init item.
    pub fn begin_thread(&mut self, thread_id: &str, model: Option<&str>) -> Vec<DriverEvent> {
        self.thread_id = Some(thread_id.to_owned());
        let mut out = Vec::new();
        let mut init = TranscriptItem::new(TranscriptKind::Init, "");
        init.session_id = thread_id.to_owned();
        init.model = model.unwrap_or_default().to_owned();
        self.item(&mut out, init);
        out
    }

    /// Starts a new turn (from the `turn/start` answer) and replays the frames queued for it.
    pub fn begin_turn(&mut self, turn_id: &str) -> Vec<DriverEvent> {
        self.usage = Usage::sum(self.usage, self.turn_usage.take());
        self.turn_id = Some(turn_id.to_owned());
        self.terminal = None;
        self.last_error = None;
        self.turn_text.clear();
        let queued = std::mem::take(&mut self.queue);
        let mut out = Vec::new();
        for n in queued {
            out.extend(self.handle(n));
        }
        out
    }

    /// Where `n` belongs.
    pub fn scope(&self, n: &ServerNotification) -> Scope {
        let thread = thread_of(n);
        let turn = n.turn_id();
        if thread.is_none() && turn.is_none() {
            return Scope::Ours;
        }
        let Some(ours) = &self.thread_id else {
            return Scope::Pending;
        };
        if thread.is_some_and(|t| t != ours) {
            return Scope::Foreign;
        }
        match (turn, &self.turn_id) {
            (None, _) => Scope::Ours,
            (Some(_), None) => Scope::Pending,
            (Some(t), Some(cur)) if t == cur => Scope::Ours,
            // A turn we have not started yet (its `turn/start` answer is still in flight).
            (Some(_), Some(_)) if self.terminal.is_some() => Scope::Pending,
            (Some(_), Some(_)) => Scope::Foreign,
        }
    }

    /// Translates one notification.
    pub fn handle(&mut self, n: ServerNotification) -> Vec<DriverEvent> {
        match self.scope(&n) {
            Scope::Foreign => {
                self.foreign += 1;
                return Vec::new();
            }
            Scope::Pending => {
                self.queue.push(n);
                return Vec::new();
            }
            Scope::Ours => {}
        }
        if self.terminal.is_some() && n.turn_id().is_some() {
            // After the terminal of the current turn: Raw only.
            return Vec::new();
        }
        let mut out = Vec::new();
        match n {
            ServerNotification::AgentMessageDelta(d) => self.text_delta(&d.item_id, &d.delta, &mut out),
            ServerNotification::ReasoningSummaryTextDelta(d) | ServerNotification::ReasoningTextDelta(d) => {
                self.thinking_delta(&d.item_id, &d.delta, &mut out)
            }
            ServerNotification::CommandExecutionOutputDelta(d)
            | ServerNotification::FileChangeOutputDelta(d) => {
                if !d.delta.is_empty() && self.tools_open.contains_key(&d.item_id) {
                    out.push(items::tool_delta(&d.item_id, &d.delta));
                }
            }
            ServerNotification::ItemStarted(i) => self.item_started(i.item, &mut out),
            ServerNotification::ItemCompleted(i) => self.item_completed(i.item, &mut out),
            ServerNotification::ThreadTokenUsageUpdated(u) => self.token_usage(&u.token_usage),
            ServerNotification::Error(e) => {
                if e.will_retry {
                    out.push(DriverEvent::Notice(
                        Notice::new(notice_kind::PROVIDER_RETRY, e.error.message.clone())
                            .with_meta("source", "codex.error"),
                    ));
                } else {
                    self.last_error = Some(e.error);
                }
            }
            ServerNotification::TurnCompleted(t) => self.turn_completed(t.turn, &mut out),
            ServerNotification::TurnPlanUpdated(p) => {
                let steps: Vec<serde_json::Value> = p
                    .plan
                    .iter()
                    .map(|s| serde_json::json!({"step": s.step, "status": s.status}))
                    .collect();
                out.push(DriverEvent::Notice(
                    Notice::new(
                        notice_kind::STEP,
                        p.explanation.clone().unwrap_or_else(|| "plan".into()),
                    )
                    .with_meta("source", "codex.plan")
                    .with_data("plan", steps),
                ));
            }
            ServerNotification::ConfigWarning(w) | ServerNotification::DeprecationNotice(w) => {
                out.push(DriverEvent::Notice(
                    Notice::new(notice_kind::RUNTIME, w.summary).with_meta("source", "codex.warning"),
                ));
            }
            ServerNotification::Warning(w) => out.push(DriverEvent::Notice(
                Notice::new(notice_kind::RUNTIME, w.message).with_meta("source", "codex.warning"),
            )),
            ServerNotification::Unknown { method, params } => {
                if !QUIET.contains(&method.as_str()) {
                    out.push(DriverEvent::Notice(
                        Notice::new(notice_kind::PROVIDER_UNKNOWN, method.clone())
                            .with_meta("method", method)
                            .with_data("params", params),
                    ));
                }
            }
            ServerNotification::ThreadStarted(_)
            | ServerNotification::ThreadStatusChanged(_)
            | ServerNotification::TurnStarted(_)
            | ServerNotification::TurnDiffUpdated(_)
            | ServerNotification::PlanDelta(_)
            | ServerNotification::ReasoningSummaryPartAdded(_)
            | ServerNotification::ServerRequestResolved(_) => {}
        }
        out
    }

    fn text_delta(&mut self, id: &str, delta: &str, out: &mut Vec<DriverEvent>) {
        if delta.is_empty() {
            return;
        }
        if !self.text_open.contains_key(id) {
            self.text_open.insert(id.to_owned(), String::new());
            out.push(text_event(id, String::new(), Phase::Start));
        }
        if let Some(s) = self.text_open.get_mut(id) {
            s.push_str(delta);
        }
        out.push(text_event(id, delta.to_owned(), Phase::Content));
    }

    fn thinking_delta(&mut self, id: &str, delta: &str, out: &mut Vec<DriverEvent>) {
        if delta.is_empty() {
            return;
        }
        if !self.thinking_open.contains_key(id) {
            self.thinking_open.insert(id.to_owned(), String::new());
            out.push(thinking_event(id, String::new(), Phase::Start));
        }
        if let Some(s) = self.thinking_open.get_mut(id) {
            s.push_str(delta);
        }
        out.push(thinking_event(id, delta.to_owned(), Phase::Content));
    }

    fn item_started(&mut self, item: ThreadItem, out: &mut Vec<DriverEvent>) {
        match &item {
            ThreadItem::UserMessage(u) if u.client_id.is_some() => self.abandon_streams(out),
            ThreadItem::AgentMessage(_) | ThreadItem::Reasoning(_) | ThreadItem::UserMessage(_) => {}
            ThreadItem::Plan(_) | ThreadItem::ContextCompaction { .. } => {}
            ThreadItem::Unknown(v) => out.push(unknown_item(v)),
            _ => {
                if let Some((id, name, args)) = items::tool_of(&item)
                    && self.tools_seen.insert(id.clone())
                {
                    self.tools_open.insert(id.clone(), name.clone());
                    out.push(items::tool_start(&id, &name, args));
                }
            }
        }
    }

    /// Input steered into the running turn was delivered while a response was streaming: Codex
    /// abandons that response (its text and reasoning never complete and are not in later history),
    /// so the open blocks end here and a notice reports what was discarded.
    fn abandon_streams(&mut self, out: &mut Vec<DriverEvent>) {
        if self.text_open.is_empty() && self.thinking_open.is_empty() {
            return;
        }
        let mut text: Vec<_> = self.text_open.drain().collect();
        text.sort();
        let mut th: Vec<_> = self.thinking_open.drain().map(|(k, _)| k).collect();
        th.sort();
        let discarded: String = text.iter().map(|(_, t)| t.as_str()).collect();
        out.extend(
            text.iter()
                .map(|(id, _)| text_event(id, String::new(), Phase::End)),
        );
        out.extend(th.iter().map(|id| thinking_event(id, String::new(), Phase::End)));
        out.push(DriverEvent::Notice(
            Notice::new(
                notice_kind::RUNTIME,
                "steered input abandoned the in-flight response; its partial output is discarded",
            )
            .with_meta("source", "codex.steer")
            .with_data("discarded_text", discarded),
        ));
    }

    /// How many tool items are open (started, not completed) in the current turn.
    pub fn open_tools(&self) -> usize {
        self.tools_open.len()
    }

    /// The id of the one open tool call named `name` (`<server>/<tool>` for MCP); `None` when there
    /// is none or more than one.
    pub fn open_tool_named(&self, name: &str) -> Option<&str> {
        let mut ids = self
            .tools_open
            .iter()
            .filter(|(_, n)| *n == name)
            .map(|(id, _)| id.as_str());
        match (ids.next(), ids.next()) {
            (Some(id), None) => Some(id),
            _ => None,
        }
    }

    fn item_completed(&mut self, item: ThreadItem, out: &mut Vec<DriverEvent>) {
        match item {
            ThreadItem::AgentMessage(a) => {
                let streamed = self.text_open.remove(&a.id);
                close_block(&a.id, &a.text, streamed, out, text_event);
                if !a.text.is_empty() {
                    let mut t = TranscriptItem::new(TranscriptKind::Assistant, a.text.clone());
                    if let Some(p) = &a.phase {
                        t.metadata.insert("phase".into(), p.clone());
                    }
                    self.item(out, t);
                    self.turn_text = a.text.clone();
                    self.last_text = Some(a.text);
                }
            }
            ThreadItem::Reasoning(r) => {
                let parts = if r.summary.is_empty() {
                    &r.content
                } else {
                    &r.summary
                };
                let text = parts.join("\n\n");
                let streamed = self.thinking_open.remove(&r.id);
                close_block(&r.id, &text, streamed, out, thinking_event);
                if !text.is_empty() {
                    self.item(out, TranscriptItem::new(TranscriptKind::Thinking, text));
                }
            }
            ThreadItem::UserMessage(u) => {
                if let Some(c) = u.client_id {
                    self.client_ids.push(c);
                }
            }
            ThreadItem::Plan(p) => out.push(DriverEvent::Notice(
                Notice::new(notice_kind::STEP, p.text).with_meta("source", "codex.plan_item"),
            )),
            ThreadItem::ContextCompaction { .. } => out.push(DriverEvent::Notice(
                Notice::new(notice_kind::RUNTIME, "context compacted").with_meta("source", "codex"),
            )),
            ThreadItem::Unknown(v) => out.push(unknown_item(&v)),
            other => {
                let Some((id, name, args)) = items::tool_of(&other) else {
                    return;
                };
                if self.tools_seen.insert(id.clone()) {
                    out.push(items::tool_start(&id, &name, args.clone()));
                } else if self.tools_open.remove(&id).is_none() {
                    return;
                }
                self.tools_open.remove(&id);
                let (result, text, is_error) = items::tool_result(&other);
                out.extend(items::tool_end(&id, result));
                let mut call = TranscriptItem::new(TranscriptKind::ToolCall, "");
                call.tool_use_id = id.clone();
                call.tool_name = name;
                call.input = Some(serde_json::Value::Object(args.unwrap_or_default()));
                self.item(out, call);
                let mut res = TranscriptItem::new(TranscriptKind::ToolResult, text);
                res.tool_use_id = id;
                res.is_error = is_error;
                self.item(out, res);
            }
        }
    }

    fn token_usage(&mut self, u: &ThreadTokenUsage) {
        let last = Usage {
            input_tokens: u.last.input_tokens,
            output_tokens: u.last.output_tokens,
            cached_input_tokens: u.last.cached_input_tokens,
            estimated_cost_milli: 0,
        };
        self.turn_usage = Usage::sum(self.turn_usage, Some(last));
    }

    /// Closes every open lifecycle (a turn that ended without completing its items).
    fn close_open(&mut self, out: &mut Vec<DriverEvent>) {
        let mut text: Vec<_> = self.text_open.drain().map(|(k, _)| k).collect();
        text.sort();
        out.extend(
            text.into_iter()
                .map(|id| text_event(&id, String::new(), Phase::End)),
        );
        let mut th: Vec<_> = self.thinking_open.drain().map(|(k, _)| k).collect();
        th.sort();
        out.extend(
            th.into_iter()
                .map(|id| thinking_event(&id, String::new(), Phase::End)),
        );
        let mut tools: Vec<_> = self.tools_open.drain().map(|(k, _)| k).collect();
        tools.sort();
        for id in tools {
            out.extend(items::tool_end(&id, serde_json::Map::new()));
        }
    }

    fn turn_completed(&mut self, turn: Turn, out: &mut Vec<DriverEvent>) {
        self.close_open(out);
        let error = match turn.status {
            TurnStatus::Completed => None,
            TurnStatus::Interrupted => Some("the turn was interrupted".to_owned()),
            _ => Some(
                turn.error
                    .as_ref()
                    .or(self.last_error.as_ref())
                    .map(|e| e.message.clone())
                    .unwrap_or_else(|| "the turn failed".to_owned()),
            ),
        };
        let mut result = TranscriptItem::new(TranscriptKind::Result, self.turn_text.clone());
        result.session_id = self.thread_id.clone().unwrap_or_default();
        result.usage = self.turn_usage;
        result.subtype = status_name(turn.status).to_owned();
        result.is_error = error.is_some();
        result.errors = error.iter().cloned().collect();
        self.item(out, result);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: self.turn_text.clone(),
            usage: self.turn_usage,
            error,
        }));
        self.terminal = Some(turn);
    }

    /// Closes the current turn without a terminal (cancel, crash, timeout).
    pub fn abort_turn(&mut self, why: &str) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        if self.terminal.is_some() || self.turn_id.is_none() {
            return out;
        }
        self.close_open(&mut out);
        let mut result = TranscriptItem::new(TranscriptKind::Result, self.turn_text.clone());
        result.session_id = self.thread_id.clone().unwrap_or_default();
        result.is_error = true;
        result.subtype = "aborted".into();
        result.errors = vec![why.to_owned()];
        self.item(&mut out, result);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: self.turn_text.clone(),
            usage: self.turn_usage,
            error: Some(why.to_owned()),
        }));
        out
    }
}

/// Notifications that carry nothing for the event stream (kept in Raw).
const QUIET: &[&str] = &[
    "account/rateLimits/updated",
    "remoteControl/status/changed",
    "thread/settings/updated",
    "mcpServer/startupStatus/updated",
    "skills/changed",
];

/// `completed` | `interrupted` | `failed` | …
pub fn status_name(s: TurnStatus) -> &'static str {
    match s {
        TurnStatus::Completed => "completed",
        TurnStatus::Interrupted => "interrupted",
        TurnStatus::Failed => "failed",
        TurnStatus::InProgress => "inProgress",
        TurnStatus::Other => "other",
    }
}

fn thread_of(n: &ServerNotification) -> Option<&str> {
    let id = match n {
        ServerNotification::Error(e) => &e.thread_id,
        ServerNotification::ThreadStarted(t) => &t.thread.id,
        ServerNotification::ThreadStatusChanged(t) => &t.thread_id,
        ServerNotification::ThreadTokenUsageUpdated(t) => &t.thread_id,
        ServerNotification::TurnStarted(t) | ServerNotification::TurnCompleted(t) => &t.thread_id,
        ServerNotification::TurnPlanUpdated(t) => &t.thread_id,
        ServerNotification::TurnDiffUpdated(t) => &t.thread_id,
        ServerNotification::ItemStarted(i) | ServerNotification::ItemCompleted(i) => &i.thread_id,
        ServerNotification::AgentMessageDelta(d)
        | ServerNotification::PlanDelta(d)
        | ServerNotification::CommandExecutionOutputDelta(d)
        | ServerNotification::FileChangeOutputDelta(d) => &d.thread_id,
        ServerNotification::ReasoningSummaryTextDelta(d)
        | ServerNotification::ReasoningSummaryPartAdded(d)
        | ServerNotification::ReasoningTextDelta(d) => &d.thread_id,
        ServerNotification::ServerRequestResolved(r) => &r.thread_id,
        ServerNotification::Warning(w) => return w.thread_id.as_deref().filter(|t| !t.is_empty()),
        _ => return None,
    };
    (!id.is_empty()).then_some(id.as_str())
}

/// Ends a streamed block, emitting whatever `full` has beyond what was streamed (all of it when
/// nothing was).
fn close_block(
    id: &str,
    full: &str,
    streamed: Option<String>,
    out: &mut Vec<DriverEvent>,
    make: fn(&str, String, Phase) -> DriverEvent,
) {
    match streamed {
        Some(s) => {
            if let Some(rest) = full.strip_prefix(s.as_str())
                && !rest.is_empty()
            {
                out.push(make(id, rest.to_owned(), Phase::Content));
            }
            out.push(make(id, String::new(), Phase::End));
        }
        None if !full.is_empty() => {
            out.push(make(id, String::new(), Phase::Start));
            out.push(make(id, full.to_owned(), Phase::Content));
            out.push(make(id, String::new(), Phase::End));
        }
        None => {}
    }
}

fn unknown_item(v: &serde_json::Value) -> DriverEvent {
    let kind = v.get("type").and_then(|t| t.as_str()).unwrap_or("?").to_owned();
    DriverEvent::Notice(
        Notice::new(notice_kind::PROVIDER_UNKNOWN, format!("item {kind}"))
            .with_meta("item_type", kind)
            .with_data("item", v.clone()),
    )
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

#[cfg(test)]
mod tests;
