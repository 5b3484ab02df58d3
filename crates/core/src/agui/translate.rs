//! Runtime events → AG-UI events, one translator per AG-UI run.
//!
//! Every id the translator mints is derived from the execution's run id (`meta.run_id`) and the
//! event's per-run sequence, so ids are unique across the runs of a thread (CopilotKit keys its
//! message and tool cards by them) and the same events translate into the same ids on replay:
//! text `<run>-m<seq>`, reasoning `<run>-r<seq>` (the sequence of the event that opened it), tool
//! calls [`tool_call_id`] (`<run>.<driver call id>`), the result text `<run>-result`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::events::{AguiEvent, Outcome};
use super::interrupts::decision_call_id;
use crate::driver::{Phase, Role, notice_kind};
use crate::runtime::{Event, Payload, RunOutcome};

/// Translates one execution's events for one AG-UI run.
#[derive(Debug)]
pub struct Translator {
    thread_id: String,
    run_id: String,
    /// The execution's run id (from the events; the AG-UI run id until one arrived): the prefix of
    /// every id this translator mints.
    ids: String,
    started: bool,
    finished: bool,
    /// driver text id -> (AG-UI id, open)
    texts: BTreeMap<String, (String, bool)>,
    /// driver reasoning id -> (AG-UI id, open)
    reasoning: BTreeMap<String, (String, bool)>,
    tools: BTreeMap<String, bool>,
    steps: BTreeSet<String>,
    streamed_assistant_text: bool,
    last_assistant_message: Option<String>,
    /// Approval requests shown as decision tool calls, by request id.
    decisions: BTreeMap<String, String>,
    /// The answers a resuming client gave, by request id (echoed in the decision's result).
    answers: BTreeMap<String, Value>,
}

/// The AG-UI id of tool call `call` of execution `run_id`: driver call ids repeat across runs
/// (`call-1` in every run), so the execution's run id makes them unique on a thread.
pub fn tool_call_id(run_id: &str, call: &str) -> String {
    format!("{run_id}.{call}")
}

fn tool_content(result: &serde_json::Map<String, Value>) -> String {
    for key in ["text", "content"] {
        if let Some(Value::String(s)) = result.get(key) {
            return s.clone();
        }
    }
    if let Some(Value::String(out)) = result.get("output") {
        return match result.get("exit_code").or_else(|| result.get("exitCode")) {
            Some(code) => format!("{out}\n[exit={code}]"),
            None => out.clone(),
        };
    }
    if let Some(Value::String(s)) = result.get("status") {
        return s.clone();
    }
    serde_json::to_string(result).unwrap_or_else(|_| "{}".into())
}

impl Translator {
    /// A translator for the client's `thread_id` and `run_id`.
    pub fn new(thread_id: impl Into<String>, run_id: impl Into<String>) -> Self {
        let run_id: String = run_id.into();
        Translator {
            thread_id: thread_id.into(),
            run_id: run_id.clone(),
            ids: run_id,
            started: false,
            finished: false,
            texts: BTreeMap::new(),
            reasoning: BTreeMap::new(),
            tools: BTreeMap::new(),
            steps: BTreeSet::new(),
            streamed_assistant_text: false,
            last_assistant_message: None,
            decisions: BTreeMap::new(),
            answers: BTreeMap::new(),
        }
    }

    /// `RUN_STARTED` (idempotent; emitted automatically before anything else).
    pub fn start(&mut self) -> Vec<AguiEvent> {
        if self.started {
            return Vec::new();
        }
        self.started = true;
        vec![AguiEvent::RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
        }]
    }

    /// Expects the resolution of approval request `request_id`, whose decision tool call an earlier
    /// AG-UI run showed: its `TOOL_CALL_RESULT` is emitted when the request resolves, with `answer`
    /// (the client's decision) next to the outcome when given.
    pub fn expect_decision(&mut self, request_id: &str, answer: Option<Value>) {
        self.decisions
            .insert(request_id.to_owned(), decision_call_id(request_id));
        if let Some(a) = answer {
            self.answers.insert(request_id.to_owned(), a);
        }
    }

    /// Ends this AG-UI run while the execution goes on (parked): closes every open lifecycle and
    /// emits `RUN_FINISHED` with `outcome` (an interrupt, or none when the decision tool calls are
    /// left to the client as frontend tools).
    pub fn pause(&mut self, outcome: Option<Outcome>) -> Vec<AguiEvent> {
        let mut out = self.start();
        if self.finished {
            return Vec::new();
        }
        out.extend(self.close_all());
        out.push(AguiEvent::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.run_id.clone(),
            result: None,
            outcome,
        });
        self.finished = true;
        out
    }

    /// True after the terminal was produced.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn open_text(&mut self, out: &mut Vec<AguiEvent>, driver_id: &str, role: Role, seq: u64) -> String {
        if let Some((id, true)) = self.texts.get(driver_id) {
            return id.clone();
        }
        let id = format!("{}-m{seq}", self.ids);
        self.texts.insert(driver_id.to_owned(), (id.clone(), true));
        out.push(AguiEvent::TextMessageStart {
            message_id: id.clone(),
            role: if role == Role::User {
                "user".into()
            } else {
                "assistant".into()
            },
        });
        if role == Role::Assistant {
            self.last_assistant_message = Some(id.clone());
        }
        id
    }

    fn close_texts(&mut self, out: &mut Vec<AguiEvent>) {
        for (_, (id, open)) in self.texts.iter_mut() {
            if *open {
                *open = false;
                out.push(AguiEvent::TextMessageEnd {
                    message_id: id.clone(),
                });
            }
        }
    }

    fn open_tool(&mut self, out: &mut Vec<AguiEvent>, id: &str, name: &str) {
        let id = &self.tool_id(id);
        self.open_minted_tool(out, id, name);
    }

    /// The AG-UI id of driver tool call `id` (decision tool calls keep theirs).
    fn tool_id(&self, id: &str) -> String {
        tool_call_id(&self.ids, id)
    }

    fn open_minted_tool(&mut self, out: &mut Vec<AguiEvent>, id: &str, name: &str) {
        if self.tools.get(id) == Some(&true) {
            return;
        }
        // A tool call ends the current text segment: later text gets a fresh message id.
        self.close_texts(out);
        self.tools.insert(id.to_owned(), true);
        out.push(AguiEvent::ToolCallStart {
            tool_call_id: id.to_owned(),
            tool_call_name: if name.is_empty() {
                "tool".into()
            } else {
                name.to_owned()
            },
            parent_message_id: self.last_assistant_message.clone(),
        });
    }

    fn close_tool(&mut self, out: &mut Vec<AguiEvent>, id: &str) {
        let id = &self.tool_id(id);
        self.close_minted_tool(out, id);
    }

    fn close_minted_tool(&mut self, out: &mut Vec<AguiEvent>, id: &str) {
        if self.tools.get(id) == Some(&true) {
            self.tools.insert(id.to_owned(), false);
            out.push(AguiEvent::ToolCallEnd {
                tool_call_id: id.to_owned(),
            });
        }
    }

    /// Translates one runtime event. `Done` produces the terminal; nothing follows it.
    pub fn event(&mut self, ev: &Event) -> Vec<AguiEvent> {
        let mut out = self.start();
        if self.finished {
            return Vec::new();
        }
        if !ev.meta.run_id.is_empty() && ev.meta.run_id != self.ids {
            self.ids.clone_from(&ev.meta.run_id);
        }
        let seq = ev.meta.sequence;
        match &ev.payload {
            Payload::TextDelta(t) => match t.phase {
                Phase::Start => {
                    self.open_text(&mut out, &t.message_id, t.role, seq);
                }
                Phase::Content => {
                    let id = self.open_text(&mut out, &t.message_id, t.role, seq);
                    if t.role == Role::Assistant {
                        self.streamed_assistant_text = true;
                    }
                    out.push(AguiEvent::TextMessageContent {
                        message_id: id,
                        delta: t.text.clone(),
                    });
                }
                Phase::End => {
                    if let Some((id, open)) = self.texts.get_mut(&t.message_id)
                        && *open
                    {
                        *open = false;
                        out.push(AguiEvent::TextMessageEnd {
                            message_id: id.clone(),
                        });
                    }
                }
            },
            Payload::Thinking(t) => {
                let (id, open) = match self.reasoning.get(&t.message_id) {
                    Some((id, open)) => (id.clone(), *open),
                    None => (String::new(), false),
                };
                let id = match t.phase {
                    Phase::Start | Phase::Content if !open => {
                        let id = format!("{}-r{seq}", self.ids);
                        self.reasoning.insert(t.message_id.clone(), (id.clone(), true));
                        out.push(AguiEvent::ReasoningMessageStart {
                            message_id: id.clone(),
                            role: "reasoning".into(),
                        });
                        id
                    }
                    _ => id,
                };
                match t.phase {
                    Phase::Content => out.push(AguiEvent::ReasoningMessageContent {
                        message_id: id,
                        delta: t.text.clone(),
                    }),
                    Phase::End if open => {
                        self.reasoning.insert(t.message_id.clone(), (id.clone(), false));
                        out.push(AguiEvent::ReasoningMessageEnd { message_id: id });
                    }
                    _ => {}
                }
            }
            Payload::ToolCall(c) => match c.phase {
                Phase::Start => {
                    self.open_tool(&mut out, &c.id, &c.name);
                    if let Some(args) = &c.args {
                        out.push(AguiEvent::ToolCallArgs {
                            tool_call_id: self.tool_id(&c.id),
                            delta: serde_json::to_string(args).unwrap_or_default(),
                        });
                    }
                }
                Phase::Content => {
                    self.open_tool(&mut out, &c.id, &c.name);
                    if !c.args_delta.is_empty() {
                        out.push(AguiEvent::ToolCallArgs {
                            tool_call_id: self.tool_id(&c.id),
                            delta: c.args_delta.clone(),
                        });
                    }
                }
                Phase::End => {
                    let was_open = self.tools.get(&self.tool_id(&c.id)) == Some(&true);
                    if !was_open && c.result.is_none() {
                        // An end without an open call is dropped (nothing to close).
                    } else {
                        self.open_tool(&mut out, &c.id, &c.name);
                        self.close_tool(&mut out, &c.id);
                        if let Some(r) = &c.result {
                            out.push(self.result_event(&self.tool_id(&c.id), r));
                        }
                    }
                }
            },
            Payload::ToolResult(r) => {
                self.close_tool(&mut out, &r.id);
                out.push(self.result_event(&self.tool_id(&r.id), &r.result));
            }
            Payload::Notice(n) if n.kind == notice_kind::STEP => {
                let name = n
                    .data
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(&n.text)
                    .to_owned();
                match n.data.get("phase").and_then(Value::as_str) {
                    Some("started") if self.steps.insert(name.clone()) => {
                        out.push(AguiEvent::StepStarted { step_name: name })
                    }
                    Some("finished") if self.steps.remove(&name) => {
                        out.push(AguiEvent::StepFinished { step_name: name })
                    }
                    _ => {}
                }
            }
            Payload::Notice(n) if n.kind == notice_kind::TRANSCRIPT_ITEM => {}
            Payload::Notice(n) if n.kind == notice_kind::APPROVAL_RESOLVED => {
                let request = n
                    .data
                    .get("request_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                if let Some(call) = self.decisions.remove(&request) {
                    self.close_minted_tool(&mut out, &call);
                    let mut content =
                        json!({ "result": n.data.get("outcome").cloned().unwrap_or(Value::Null) });
                    if let Some(a) = self.answers.remove(&request) {
                        content["decision"] = a;
                    }
                    out.push(AguiEvent::ToolCallResult {
                        message_id: format!("{call}:result"),
                        tool_call_id: call,
                        content: content.to_string(),
                        role: "tool".into(),
                    });
                }
            }
            Payload::Notice(n) => out.push(AguiEvent::Custom {
                name: n.kind.clone(),
                value: json!({ "text": n.text, "data": n.data, "metadata": n.metadata }),
            }),
            Payload::ApprovalRequest(req) => {
                let call = decision_call_id(&req.id);
                self.open_minted_tool(&mut out, &call, &format!("dec.{}", req.kind.as_str()));
                let gated =
                    (!req.tool_call_id.is_empty()).then(|| tool_call_id(&req.run_id, &req.tool_call_id));
                let args = json!({
                    "request_id": req.id, "run_id": req.run_id, "kind": req.kind.as_str(), "source": req.source,
                    "prompt": req.title,
                    "payload": req.details, "choices": req.choices, "tool_call_id": gated,
                    "deadline": req.deadline, "attempt": req.attempt,
                });
                out.push(AguiEvent::ToolCallArgs {
                    tool_call_id: call.clone(),
                    delta: args.to_string(),
                });
                self.decisions.insert(req.id.clone(), call);
            }
            Payload::Dropped(d) => out.push(AguiEvent::Custom {
                name: "stream.dropped".into(),
                value: serde_json::to_value(d).unwrap_or(Value::Null),
            }),
            Payload::SubagentUpdate(s) => out.push(AguiEvent::Custom {
                name: format!(
                    "subagent.{}",
                    serde_json::to_value(s.kind)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default()
                ),
                value: serde_json::to_value(s).unwrap_or(Value::Null),
            }),
            Payload::MessageUpdate(u) => out.push(AguiEvent::Custom {
                name: "message.update".into(),
                value: serde_json::to_value(u).unwrap_or(Value::Null),
            }),
            Payload::Done(d) => out.extend(self.finish(&d.outcome, None)),
            Payload::RunStarted(_)
            | Payload::RunFinished(_)
            | Payload::TurnEnd(_)
            | Payload::ProcessInfo(_) => {}
        }
        out
    }

    fn result_event(&self, id: &str, result: &serde_json::Map<String, Value>) -> AguiEvent {
        AguiEvent::ToolCallResult {
            message_id: format!("{id}:result"),
            tool_call_id: id.to_owned(),
            content: tool_content(result),
            role: "tool".into(),
        }
    }

    /// Closes every open lifecycle (sorted by id) without producing a terminal.
    pub fn close_all(&mut self) -> Vec<AguiEvent> {
        let mut out = Vec::new();
        self.close_texts(&mut out);
        for (id, open) in self.reasoning.values_mut() {
            if *open {
                *open = false;
                out.push(AguiEvent::ReasoningMessageEnd {
                    message_id: id.clone(),
                });
            }
        }
        let tools: Vec<String> = self
            .tools
            .iter()
            .filter(|(_, o)| **o)
            .map(|(k, _)| k.clone())
            .collect();
        for id in tools {
            self.close_minted_tool(&mut out, &id);
        }
        for step in std::mem::take(&mut self.steps) {
            out.push(AguiEvent::StepFinished { step_name: step });
        }
        out
    }

    /// Produces the terminal for `outcome` (or an interrupt outcome) after closing everything.
    /// When no assistant text was streamed but the result has text, it is emitted as one message.
    pub fn finish(&mut self, outcome: &RunOutcome, interrupt: Option<Outcome>) -> Vec<AguiEvent> {
        let mut out = self.start();
        if self.finished {
            return Vec::new();
        }
        out.extend(self.close_all());
        match outcome {
            Ok(result) => {
                if !self.streamed_assistant_text && !result.text.is_empty() {
                    let id = format!("{}-result", self.ids);
                    out.push(AguiEvent::TextMessageStart {
                        message_id: id.clone(),
                        role: "assistant".into(),
                    });
                    out.push(AguiEvent::TextMessageContent {
                        message_id: id.clone(),
                        delta: result.text.clone(),
                    });
                    out.push(AguiEvent::TextMessageEnd { message_id: id });
                }
                out.push(AguiEvent::RunFinished {
                    thread_id: self.thread_id.clone(),
                    run_id: self.run_id.clone(),
                    result: None,
                    outcome: interrupt,
                });
            }
            Err(e) => out.push(AguiEvent::RunError {
                message: e.to_string(),
                code: Some(e.reason().map(|r| r.to_string()).unwrap_or_else(|| e.code())),
            }),
        }
        self.finished = true;
        out
    }

    /// A terminal `RUN_ERROR` for a failure outside the execution (e.g. a refused request).
    pub fn error(&mut self, code: &str, message: &str) -> Vec<AguiEvent> {
        let mut out = self.start();
        if self.finished {
            return Vec::new();
        }
        out.extend(self.close_all());
        out.push(AguiEvent::RunError {
            message: message.to_owned(),
            code: Some(code.to_owned()),
        });
        self.finished = true;
        out
    }
}
