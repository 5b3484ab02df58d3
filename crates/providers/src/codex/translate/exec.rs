//! Pure translation of `codex exec --json` events into driver events, transcript items and the state a
//! response needs.
//!
//! exec streams no deltas: an `agent_message` arrives whole in `item.completed` and becomes one text
//! block (start, the full text as one content delta, end) plus the transcript item; a `reasoning` item
//! likewise becomes one thinking block. Tool items map to the tool names of the app-server path
//! (`shell`, `apply_patch`, `<server>/<tool>`, `web_search`); a command's output that grows in
//! `item.updated` is streamed as tool content chunks, the rest at completion. `todo_list` becomes a
//! `step` notice, `error` items `runtime` notices, `Reconnecting…` errors `provider.retry` notices,
//! unknown events and item types `provider.unknown` notices. `turn.completed` (with usage) and
//! `turn.failed` are the terminals; a top-level `error` that is not a retry is the failure's text
//! when the process ends without `turn.failed`.
//!
//! Item ids (`item_<n>`) restart in every exec process, so per-item state is reset at `turn.started`.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::driver::{
    DriverEvent, JsonMap, Notice, Phase, TranscriptItem, TranscriptKind, TurnReport, Usage, notice_kind,
};

use super::super::wire::exec::{ExecEvent, ExecItem, ExecItemStatus, ExecUsage};
use super::items::{tool_delta, tool_end, tool_start};
use super::{text_event, thinking_event, unknown_item};

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecTerminal {
    /// `turn.completed`.
    Completed,
    /// `turn.failed` with its message.
    Failed(String),
}

/// Translates the events of one or more exec processes of one thread.
#[derive(Debug, Default)]
pub struct ExecTranslator {
    model: String,
    thread_id: Option<String>,
    /// Open tool items of the current turn: id → output streamed so far.
    tools_open: HashMap<String, usize>,
    tools_seen: HashSet<String>,
    turn_started: bool,
    turn_text: String,
    last_text: Option<String>,
    usage: Option<Usage>,
    last_error: Option<String>,
    terminal: Option<ExecTerminal>,
    transcript: Vec<TranscriptItem>,
}

fn status(s: ExecItemStatus) -> &'static str {
    match s {
        ExecItemStatus::InProgress => "in_progress",
        ExecItemStatus::Completed => "completed",
        ExecItemStatus::Failed => "failed",
        ExecItemStatus::Declined => "declined",
        ExecItemStatus::Other => "other",
    }
}

fn object(v: Value) -> JsonMap {
    match v {
        Value::Object(m) => m,
        _ => JsonMap::new(),
    }
}

/// `(id, name, args)` of a tool item.
fn tool_of(item: &ExecItem) -> Option<(String, String, JsonMap)> {
    let (id, name, args) = match item {
        ExecItem::CommandExecution(c) => (&c.id, "shell".to_owned(), json!({"command": c.command})),
        ExecItem::FileChange(f) => (
            &f.id,
            "apply_patch".to_owned(),
            json!({"changes": f.changes.iter().map(|c| json!({"path": c.path, "kind": c.kind})).collect::<Vec<_>>()}),
        ),
        ExecItem::McpToolCall(m) => (
            &m.id,
            format!("{}/{}", m.server, m.tool),
            json!({"arguments": m.arguments}),
        ),
        ExecItem::WebSearch(w) => (&w.id, "web_search".to_owned(), json!({"query": w.query})),
        _ => return None,
    };
    Some((id.clone(), name, object(args)))
}

/// The result map, transcript text and error flag of a completed tool item.
fn tool_result(item: &ExecItem) -> (JsonMap, String, bool) {
    let (v, text, ok) = match item {
        ExecItem::CommandExecution(c) => (
            json!({"status": status(c.status), "exit_code": c.exit_code, "output": c.aggregated_output}),
            c.aggregated_output.clone(),
            c.status == ExecItemStatus::Completed && c.exit_code.is_none_or(|e| e == 0),
        ),
        ExecItem::FileChange(f) => {
            let paths: Vec<&str> = f.changes.iter().map(|c| c.path.as_str()).collect();
            (
                json!({"status": status(f.status), "paths": paths}),
                format!("{} {}", status(f.status), paths.join(", ")),
                f.status == ExecItemStatus::Completed,
            )
        }
        ExecItem::McpToolCall(m) => (
            json!({"status": status(m.status), "result": m.result, "error": m.error}),
            m.result
                .as_ref()
                .or(m.error.as_ref())
                .map(Value::to_string)
                .unwrap_or_default(),
            m.status == ExecItemStatus::Completed && m.error.as_ref().is_none_or(Value::is_null),
        ),
        ExecItem::WebSearch(w) => (
            json!({"query": w.query, "action": w.action}),
            w.query.clone(),
            true,
        ),
        _ => (json!({}), String::new(), true),
    };
    (object(v), text, !ok)
}

impl ExecTranslator {
    /// A translator reporting `model` in the transcript's init item.
    pub fn new(model: &str) -> ExecTranslator {
        ExecTranslator {
            model: model.to_owned(),
            ..Default::default()
        }
    }

    /// The thread id, once `thread.started` arrived.
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// The text of the last agent message.
    pub fn last_text(&self) -> Option<&str> {
        self.last_text.as_deref()
    }

    /// Usage summed over the turns.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// The current turn's terminal, once received.
    pub fn terminal(&self) -> Option<&ExecTerminal> {
        self.terminal.as_ref()
    }

    /// The last top-level `error` that was not a retry notice.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Takes the transcript.
    pub fn take_transcript(&mut self) -> Vec<TranscriptItem> {
        std::mem::take(&mut self.transcript)
    }

    fn item(&mut self, out: &mut Vec<DriverEvent>, item: TranscriptItem) {
        out.push(DriverEvent::transcript(item.clone()));
        self.transcript.push(item);
    }

    /// Translates one event.
    pub fn handle(&mut self, ev: ExecEvent) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        match ev {
            ExecEvent::ThreadStarted { thread_id } => {
                if self.thread_id.is_none() {
                    let mut init = TranscriptItem::new(TranscriptKind::Init, "");
                    init.session_id = thread_id.clone();
                    init.model = self.model.clone();
                    self.item(&mut out, init);
                }
                self.thread_id = Some(thread_id);
            }
            ExecEvent::TurnStarted => {
                self.turn_started = true;
                self.terminal = None;
                self.last_error = None;
                self.turn_text.clear();
                self.tools_open.clear();
                self.tools_seen.clear();
            }
            ExecEvent::ItemStarted(item) | ExecEvent::ItemUpdated(item) => self.item_progress(item, &mut out),
            ExecEvent::ItemCompleted(item) => self.item_completed(item, &mut out),
            ExecEvent::TurnCompleted { usage } => self.end_turn(Some(usage), None, &mut out),
            ExecEvent::TurnFailed { error } => self.end_turn(None, Some(error.message), &mut out),
            ExecEvent::Error { message } => {
                if message.starts_with("Reconnecting...") {
                    out.push(DriverEvent::Notice(
                        Notice::new(notice_kind::PROVIDER_RETRY, message).with_meta("source", "codex.error"),
                    ));
                } else {
                    self.last_error = Some(message);
                }
            }
            ExecEvent::Unknown(v) => {
                let kind = v.get("type").and_then(Value::as_str).unwrap_or("?").to_owned();
                out.push(DriverEvent::Notice(
                    Notice::new(notice_kind::PROVIDER_UNKNOWN, format!("exec event {kind}"))
                        .with_meta("event_type", kind)
                        .with_data("event", v),
                ));
            }
        }
        out
    }

    fn item_progress(&mut self, item: ExecItem, out: &mut Vec<DriverEvent>) {
        match &item {
            ExecItem::TodoList(_) => out.push(todo_notice(&item)),
            ExecItem::Unknown(v) => out.push(unknown_item(v)),
            _ => {
                if let Some((id, name, args)) = tool_of(&item) {
                    if self.tools_seen.insert(id.clone()) {
                        self.tools_open.insert(id.clone(), 0);
                        out.push(tool_start(&id, &name, Some(args)));
                    }
                    self.stream_output(&item, out);
                }
            }
        }
    }

    /// Streams a command's output beyond what was already streamed.
    fn stream_output(&mut self, item: &ExecItem, out: &mut Vec<DriverEvent>) {
        let ExecItem::CommandExecution(c) = item else {
            return;
        };
        let Some(sent) = self.tools_open.get_mut(&c.id) else {
            return;
        };
        if let Some(rest) = c.aggregated_output.get(*sent..)
            && !rest.is_empty()
        {
            out.push(tool_delta(&c.id, rest));
            *sent = c.aggregated_output.len();
        }
    }

    fn item_completed(&mut self, item: ExecItem, out: &mut Vec<DriverEvent>) {
        match item {
            ExecItem::AgentMessage(a) => {
                if a.text.is_empty() {
                    return;
                }
                out.push(text_event(&a.id, String::new(), Phase::Start));
                out.push(text_event(&a.id, a.text.clone(), Phase::Content));
                out.push(text_event(&a.id, String::new(), Phase::End));
                self.item(
                    out,
                    TranscriptItem::new(TranscriptKind::Assistant, a.text.clone()),
                );
                self.turn_text = a.text.clone();
                self.last_text = Some(a.text);
            }
            ExecItem::Reasoning(r) => {
                if r.text.is_empty() {
                    return;
                }
                out.push(thinking_event(&r.id, String::new(), Phase::Start));
                out.push(thinking_event(&r.id, r.text.clone(), Phase::Content));
                out.push(thinking_event(&r.id, String::new(), Phase::End));
                self.item(out, TranscriptItem::new(TranscriptKind::Thinking, r.text));
            }
            ExecItem::TodoList(_) => out.push(todo_notice(&item)),
            ExecItem::Error(e) => out.push(DriverEvent::Notice(
                Notice::new(notice_kind::RUNTIME, e.message).with_meta("source", "codex.error_item"),
            )),
            ExecItem::Unknown(v) => out.push(unknown_item(&v)),
            other => {
                let Some((id, name, args)) = tool_of(&other) else {
                    return;
                };
                if self.tools_seen.insert(id.clone()) {
                    self.tools_open.insert(id.clone(), 0);
                    out.push(tool_start(&id, &name, Some(args.clone())));
                } else if !self.tools_open.contains_key(&id) {
                    return;
                }
                self.stream_output(&other, out);
                self.tools_open.remove(&id);
                let (result, text, is_error) = tool_result(&other);
                out.extend(tool_end(&id, result));
                let mut call = TranscriptItem::new(TranscriptKind::ToolCall, "");
                call.tool_use_id = id.clone();
                call.tool_name = name;
                call.input = Some(Value::Object(args));
                self.item(out, call);
                let mut res = TranscriptItem::new(TranscriptKind::ToolResult, text);
                res.tool_use_id = id;
                res.is_error = is_error;
                self.item(out, res);
            }
        }
    }

    fn end_turn(&mut self, usage: Option<ExecUsage>, error: Option<String>, out: &mut Vec<DriverEvent>) {
        if self.terminal.is_some() {
            return;
        }
        self.close_tools(out);
        let turn_usage = usage.map(|u| Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cached_input_tokens: u.cached_input_tokens,
            estimated_cost_milli: 0,
        });
        self.usage = Usage::sum(self.usage, turn_usage);
        let mut result = TranscriptItem::new(TranscriptKind::Result, self.turn_text.clone());
        result.session_id = self.thread_id.clone().unwrap_or_default();
        result.usage = turn_usage;
        result.subtype = if error.is_some() { "failed" } else { "completed" }.into();
        result.is_error = error.is_some();
        result.errors = error.iter().cloned().collect();
        self.item(out, result);
        out.push(DriverEvent::TurnCompleted(TurnReport {
            text: self.turn_text.clone(),
            usage: turn_usage,
            error: error.clone(),
        }));
        self.terminal = Some(match error {
            None => ExecTerminal::Completed,
            Some(e) => ExecTerminal::Failed(e),
        });
    }

    fn close_tools(&mut self, out: &mut Vec<DriverEvent>) {
        let mut open: Vec<_> = self.tools_open.drain().map(|(k, _)| k).collect();
        open.sort();
        for id in open {
            out.extend(tool_end(&id, JsonMap::new()));
        }
    }

    /// Closes a started turn that has no terminal (the process died, was cancelled or timed out).
    pub fn abort_turn(&mut self, why: &str) -> Vec<DriverEvent> {
        let mut out = Vec::new();
        if self.turn_started && self.terminal.is_none() {
            self.end_turn(None, Some(why.to_owned()), &mut out);
        }
        out
    }
}

fn todo_notice(item: &ExecItem) -> DriverEvent {
    let ExecItem::TodoList(t) = item else {
        return unknown_item(&Value::Null);
    };
    let steps: Vec<Value> = t
        .items
        .iter()
        .map(|e| json!({"step": e.text, "completed": e.completed}))
        .collect();
    DriverEvent::Notice(
        Notice::new(notice_kind::STEP, "plan")
            .with_meta("source", "codex.todo_list")
            .with_data("plan", steps),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::wire::exec::parse_exec_line;
    use crate::driver::{ToolCall, ToolResult};

    fn fixture(name: &str) -> Vec<ExecEvent> {
        let path = format!(
            "{}/tests/fixtures/codex/exec/{name}.stdout.jsonl",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        );
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| parse_exec_line(l).unwrap())
            .collect()
    }

    fn run(name: &str) -> (ExecTranslator, Vec<DriverEvent>) {
        let mut t = ExecTranslator::new("gpt-5.5");
        let out = fixture(name).into_iter().flat_map(|e| t.handle(e)).collect();
        (t, out)
    }

    fn texts(out: &[DriverEvent]) -> String {
        out.iter()
            .filter_map(|e| match e {
                DriverEvent::TextDelta(d) => Some(d.text.as_str()),
                _ => None,
            })
            .collect()
    }

    fn tools(out: &[DriverEvent]) -> Vec<(&str, &ToolCall)> {
        out.iter()
            .filter_map(|e| match e {
                DriverEvent::ToolCall(c) => Some((c.name.as_str(), c)),
                _ => None,
            })
            .collect()
    }

    fn results(out: &[DriverEvent]) -> Vec<&ToolResult> {
        out.iter()
            .filter_map(|e| match e {
                DriverEvent::ToolResult(r) => Some(r),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_text_turn_is_one_block_per_message_with_usage_and_a_terminal() {
        let (mut t, out) = run("text");
        assert_eq!(t.terminal(), Some(&ExecTerminal::Completed));
        let text = t.last_text().unwrap().to_owned();
        assert!(!text.is_empty());
        assert_eq!(texts(&out), text, "the full text once, no duplicate");
        let thinking: String = out
            .iter()
            .filter_map(|e| match e {
                DriverEvent::Thinking(d) => Some(d.text.as_str()),
                _ => None,
            })
            .collect();
        assert!(!thinking.is_empty(), "reasoning becomes thinking");
        let usage = t.usage().unwrap();
        assert!(usage.input_tokens > 0 && usage.output_tokens > 0);
        assert!(t.thread_id().is_some());
        let kinds: Vec<_> = t.take_transcript().into_iter().map(|i| i.kind).collect();
        assert_eq!(kinds.first(), Some(&TranscriptKind::Init));
        assert_eq!(kinds.last(), Some(&TranscriptKind::Result));
        assert!(kinds.contains(&TranscriptKind::Assistant));
        assert!(matches!(out.last(), Some(DriverEvent::TurnCompleted(r)) if r.error.is_none()));
    }

    #[test]
    fn a_command_is_a_shell_tool_with_its_output_and_result() {
        let (t, out) = run("command");
        let calls = tools(&out);
        let (name, start) = calls.first().unwrap();
        assert_eq!(*name, "shell");
        assert_eq!(start.phase, Phase::Start);
        assert!(
            start.args.as_ref().unwrap()["command"]
                .as_str()
                .unwrap()
                .contains("echo")
        );
        let chunks: String = calls
            .iter()
            .filter(|(_, c)| c.phase == Phase::Content)
            .map(|(_, c)| c.args_delta.as_str())
            .collect();
        let r = results(&out);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].result["exit_code"], 0);
        assert_eq!(
            r[0].result["output"].as_str().unwrap(),
            chunks,
            "output streamed once"
        );
        assert!(calls.iter().any(|(_, c)| c.phase == Phase::End));
        assert_eq!(t.terminal(), Some(&ExecTerminal::Completed));
    }

    #[test]
    fn file_changes_and_web_searches_are_tools() {
        let (_, out) = run("apply_patch");
        let calls = tools(&out);
        assert_eq!(calls[0].0, "apply_patch");
        let r = results(&out);
        assert_eq!(r[0].result["status"], "completed");
        assert!(r[0].result["paths"][0].as_str().unwrap().ends_with(".txt"));

        let (_, out) = run("web_search");
        let calls = tools(&out);
        assert_eq!(calls[0].0, "web_search");
        assert_eq!(calls[0].1.id, "raw_mock_0001_0");
        assert_eq!(
            calls[0].1.args.as_ref().unwrap()["query"],
            "rust serde tolerant enums"
        );
        let r = results(&out);
        assert_eq!(r.len(), 1, "started and completed: one lifecycle");
        assert_eq!(r[0].result["query"], "rust serde tolerant enums");
        assert_eq!(r[0].result["action"]["type"], "search");
    }

    #[test]
    fn failures_end_the_turn_with_their_message_and_retries_are_notices() {
        let (t, out) = run("model_error_400");
        let Some(ExecTerminal::Failed(m)) = t.terminal() else {
            panic!("{:?}", t.terminal())
        };
        assert!(m.contains("Bad request (mock)"));
        assert!(matches!(out.last(), Some(DriverEvent::TurnCompleted(r)) if r.error.is_some()));
        let (t, out) = run("dropped_stream");
        assert!(matches!(t.terminal(), Some(ExecTerminal::Failed(_))));
        assert!(
            out.iter()
                .any(|e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_RETRY))
        );
        assert!(t.last_error().unwrap().starts_with("stream disconnected"));
    }

    #[test]
    fn unknown_events_items_todo_lists_and_error_items_are_notices() {
        let mut t = ExecTranslator::new("m");
        let lines = [
            r#"{"type":"thread.started","thread_id":"th"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"turn.paused","x":1}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"hologram"}}"#,
            r#"{"type":"item.updated","item":{"id":"item_1","type":"todo_list","items":[{"text":"a","completed":true}]}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"error","message":"Model metadata not found"}}"#,
            r#"{"type":"item.started","item":{"id":"item_3","type":"command_execution","command":"sleep 9","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            r#"{"type":"item.updated","item":{"id":"item_3","type":"command_execution","command":"sleep 9","aggregated_output":"ab","exit_code":null,"status":"in_progress"}}"#,
        ];
        let out: Vec<_> = lines
            .iter()
            .flat_map(|l| t.handle(parse_exec_line(l).unwrap()))
            .collect();
        let kinds: Vec<_> = out
            .iter()
            .filter_map(|e| match e {
                DriverEvent::Notice(n) if n.kind != notice_kind::TRANSCRIPT_ITEM => Some(n.kind.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            kinds,
            [
                notice_kind::PROVIDER_UNKNOWN,
                notice_kind::PROVIDER_UNKNOWN,
                notice_kind::STEP,
                notice_kind::RUNTIME
            ]
        );
        assert!(matches!(&tools(&out)[1].1, c if c.args_delta == "ab"));
        // The process dies: the open tool and the turn are closed, once.
        let out = t.abort_turn("codex exited");
        assert!(matches!(&out[0], DriverEvent::ToolCall(c) if c.phase == Phase::End));
        assert!(
            matches!(out.last(), Some(DriverEvent::TurnCompleted(r)) if r.error.as_deref() == Some("codex exited"))
        );
        assert!(t.abort_turn("again").is_empty());
    }

    #[test]
    fn a_resumed_process_restarts_item_ids_and_keeps_one_init() {
        let mut t = ExecTranslator::new("m");
        let mut out = Vec::new();
        for name in ["resume_first", "resume"] {
            for e in fixture(name) {
                out.extend(t.handle(e));
            }
        }
        let tr = t.take_transcript();
        assert_eq!(tr.iter().filter(|i| i.kind == TranscriptKind::Init).count(), 1);
        assert_eq!(tr.iter().filter(|i| i.kind == TranscriptKind::Result).count(), 2);
        assert_eq!(
            out.iter()
                .filter(|e| matches!(e, DriverEvent::TurnCompleted(_)))
                .count(),
            2
        );
        assert!(t.usage().unwrap().input_tokens > 0);
    }
}
