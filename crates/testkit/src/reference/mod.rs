//! The reference driver: fully in memory and scriptable, so every core behaviour can be tested
//! without a CLI. It can emit every event family, raise approvals of each kind, accept
//! supplemental messages at its declared boundaries (in the turn, at turn end, by interrupt),
//! resume and fork through a codec, and fail on demand.
//!
//! Without a script it improvises from the prompt, which makes it a usable demo agent: the words
//! `permission`/`approve`, `question`, `plan`, `slow`, `fail`, `stdout` and `notice` select behaviours,
//! and a JSON object at the end of a prompt that asks for a notice or an approval becomes the approvals'
//! `details` and the notice's `data` (and is not echoed).

mod script;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub use script::{Script, Step};

use crate::driver::{
    Ack, ApprovalMode, Boundary, Checkpoint, ConfigField, ConfigSchema, ContinueMode, DecisionChoice,
    DecisionKind, DecisionMode, DecisionOutcome, DecisionRequest, Descriptor, Driver, DriverEvent,
    EnvironmentCheck, EnvironmentReport, Failure, FailureCode, InspectError, InvalidConfig, JsonMap,
    JsonSessionCodec, McpCaps, MessageCaps, ModelInfo, Notice, Phase, ProcessCaps, Request, Response, RunIo,
    RunPolicyCaps, SessionCaps, SessionCodec, SessionPlan, SessionState, StreamCaps, StructuredCaps,
    TextDelta, Thinking, ToolCall, ToolResult, TranscriptItem, TranscriptKind, TurnReport, Usage,
    notice_kind,
};

/// Configuration of the reference driver.
#[derive(Clone, Debug)]
pub struct ReferenceConfig {
    /// Reported model.
    pub model: String,
    /// A fixed script for every turn; `None` improvises from the prompt.
    pub script: Option<Script>,
    /// Delay between streamed chunks.
    pub chunk_delay: Duration,
    /// How turn-end continuation happens (InRun: the driver continues; Resume: the core does).
    pub continue_mode: ContinueMode,
    /// Replaces the descriptor (capability tests).
    pub descriptor: Option<Descriptor>,
    /// Fail `validate_config`.
    pub invalid: bool,
    /// Declare MCP (stdio, HTTP, SSE) and skills, and report what each run received in the result's
    /// metadata (`mcp`: `name:transport` pairs, `skills`: keys, `instructions`, `cwd`), so a host can
    /// check how its resource configuration reaches a driver.
    pub report_resources: bool,
}

impl Default for ReferenceConfig {
    fn default() -> Self {
        ReferenceConfig {
            model: "reference-1".into(),
            script: None,
            chunk_delay: Duration::ZERO,
            continue_mode: ContinueMode::InRun,
            descriptor: None,
            invalid: false,
            report_resources: false,
        }
    }
}

/// The reference driver.
#[derive(Clone)]
pub struct ReferenceDriver {
    config: ReferenceConfig,
    sessions: Arc<Mutex<HashMap<String, Vec<String>>>>,
}

impl std::fmt::Debug for ReferenceDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReferenceDriver")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The reference descriptor: everything declared, because everything is tested.
pub fn reference_descriptor(continue_mode: ContinueMode) -> Descriptor {
    let binary = vec![
        DecisionMode::Ask,
        DecisionMode::AutoApprove,
        DecisionMode::AutoDeny,
    ];
    Descriptor {
        driver_type: "reference".into(),
        display_name: "Reference (in-memory)".into(),
        sessions: SessionCaps {
            resume: true,
            fork: true,
        },
        run_policy: RunPolicyCaps {
            sandbox: true,
            web_search: true,
            browser: true,
            permission: binary.clone(),
            plan_review: binary,
            question: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            retry: true,
        },
        messages: MessageCaps {
            boundaries: match continue_mode {
                ContinueMode::InRun => vec![Boundary::InTurn, Boundary::TurnEnd],
                _ => vec![Boundary::InTurn],
            },
            interrupt: continue_mode == ContinueMode::InRun,
            continue_mode,
            max_units: 64 * 1024,
            unit: "bytes".into(),
            confirmed_delivery: true,
            persists_delivered: true,
            min_version: None,
        },
        structured: StructuredCaps {
            native: true,
            prompt_validate: true,
            native_with_hitl: true,
        },
        stream: StreamCaps {
            token_level: true,
            reasoning: true,
            tool_call_args: true,
            hitl: true,
        },
        process: ProcessCaps { persistent: false },
        mcp: McpCaps::default(),
        skills: Default::default(),
        system_prompt_append: true,
    }
}

impl ReferenceDriver {
    /// A driver with `config`.
    pub fn new(config: ReferenceConfig) -> Self {
        ReferenceDriver {
            config,
            sessions: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// A driver that plays `script` on every turn.
    pub fn scripted(script: Script) -> Self {
        Self::new(ReferenceConfig {
            script: Some(script),
            ..Default::default()
        })
    }

    fn improvise(prompt: &str, schema: bool) -> Script {
        // A trailing object is for the driver only when the prompt asks for what carries it (a notice's
        // data, approvals' details); then it is never echoed. Otherwise it is conversation (a tool
        // result's JSON content, say) and the reply echoes it.
        let words = prompt.to_lowercase();
        let (prompt, object) = if ["notice", "permission", "approve", "plan", "question"]
            .iter()
            .any(|w| words.contains(w))
        {
            prompt_object(prompt)
        } else {
            (prompt, JsonMap::new())
        };
        let p = prompt.to_lowercase();
        let mut steps = vec![Step::Thinking(format!("Considering: {}", truncate(prompt, 60)))];
        if p.contains("stdout") {
            steps.push(Step::Stdout("reference process output\n".into()));
        }
        if let Some(count) = bulk_count(&p) {
            steps.push(Step::Bulk { count });
        }
        // `usage:<n>`: the turn reports <n> input tokens so far, mid-turn (metering and budget tests).
        let usage_so_far = p
            .split_whitespace()
            .find_map(|w| w.strip_prefix("usage:")?.parse::<u64>().ok());
        if let Some(n) = usage_so_far {
            let so_far = Usage {
                input_tokens: n,
                ..Default::default()
            };
            steps.push(Step::Notice(so_far.progress_notice()));
        }
        if p.contains("notice") {
            steps.push(Step::Notice(Notice {
                kind: "reference.note".into(),
                text: "a note from the reference agent".into(),
                data: object.clone(),
                ..Default::default()
            }));
        }
        steps.push(Step::Tool {
            name: "echo".into(),
            args: json!({ "text": truncate(prompt, 200) }),
            result: json!({ "text": truncate(prompt, 200) }),
        });
        if p.contains("permission") || p.contains("approve") {
            steps.push(Step::Approval {
                kind: DecisionKind::Permission,
                title: "write_file notes.txt".into(),
                choices: vec![],
            });
            steps.push(Step::Tool {
                name: "write_file".into(),
                args: json!({ "path": "notes.txt", "content": "hello" }),
                result: json!({ "text": "wrote 5 bytes to notes.txt" }),
            });
        }
        if p.contains("plan") {
            steps.push(Step::Approval {
                kind: DecisionKind::PlanReview,
                title: "Plan: 1. read the code 2. change it 3. run the tests".into(),
                choices: vec![],
            });
        }
        if p.contains("question") {
            steps.push(Step::Approval {
                kind: DecisionKind::Question,
                title: "Which colour should the button be?".into(),
                choices: ["red", "green", "blue"]
                    .iter()
                    .map(|c| DecisionChoice {
                        key: (*c).into(),
                        label: (*c).into(),
                        description: String::new(),
                    })
                    .collect(),
            });
        }
        if p.contains("fail") {
            steps.push(Step::Fail {
                code: FailureCode::AgentError,
                message: "reference failure requested".into(),
            });
        }
        if schema {
            steps.push(Step::Structured(json!({ "ok": true })));
        } else {
            let slow = p.contains("slow");
            steps.push(Step::Text {
                text: format!("Reference reply: {prompt}"),
                chunk_delay: slow.then_some(Duration::from_millis(60)),
            });
        }
        Script {
            steps,
            usage: Some(Usage {
                input_tokens: usage_so_far.unwrap_or(12),
                output_tokens: 34,
                ..Default::default()
            }),
            approval_details: object,
        }
    }
}

/// Most content deltas a `bulk:<n>` prompt asks for.
pub const BULK_MAX: usize = 1_000_000;

/// The `<n>` of a `bulk:<n>` word in a (lowercased) prompt: that many content deltas (memory and
/// throughput tests), at most [`BULK_MAX`].
fn bulk_count(prompt: &str) -> Option<usize> {
    prompt
        .split_whitespace()
        .find_map(|w| w.strip_prefix("bulk:")?.parse::<usize>().ok())
        .map(|n| n.min(BULK_MAX))
}

/// `prompt` without the JSON object that ends it (from its first `{`), and that object (empty if none).
fn prompt_object(prompt: &str) -> (&str, JsonMap) {
    prompt
        .find('{')
        .and_then(|i| {
            Some((
                prompt[..i].trim_end(),
                serde_json::from_str::<JsonMap>(&prompt[i..]).ok()?,
            ))
        })
        .unwrap_or((prompt, JsonMap::new()))
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        s.chars().take(n).collect::<String>() + "…"
    }
}

/// Per-invocation state of the reference driver.
struct Turn<'a> {
    io: &'a RunIo,
    transcript: Vec<TranscriptItem>,
    text: String,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    msg_seq: u32,
    call_seq: u32,
    structured: Option<Value>,
    interrupted: bool,
    chunk_delay: Duration,
    /// A denied permission skips the tool step it gated.
    skip_next_tool: bool,
    /// The current script's approval details.
    details: JsonMap,
}

enum StepOutcome {
    Continue,
    Stop(Failure),
}

impl Turn<'_> {
    async fn item(&mut self, item: TranscriptItem) {
        self.transcript.push(item.clone());
        self.io.events.emit(DriverEvent::transcript(item)).await;
    }

    async fn sleep(&self, d: Duration) -> bool {
        if d.is_zero() {
            return !self.io.cancel.is_cancelled();
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => true,
            _ = self.io.cancel.cancelled() => false,
        }
    }

    /// Claims in-turn input between steps; returns false when an interrupt is pending.
    async fn boundary(&mut self) -> bool {
        let Some(port) = &self.io.messages else {
            return true;
        };
        if port.pending().interrupt > 0 {
            self.interrupted = true;
            return false;
        }
        for claim in port.claim(Boundary::InTurn) {
            let note = format!("(noted: {}) ", claim.original);
            claim.ack(Ack::Delivered {
                mechanism: "reference.in_turn".into(),
            });
            self.text.push_str(&note);
        }
        true
    }

    async fn stream_text(&mut self, text: &str, delay: Duration) -> bool {
        self.msg_seq += 1;
        let id = format!("msg-{}", self.msg_seq);
        let ev = |text: String, phase| {
            DriverEvent::TextDelta(TextDelta {
                message_id: id.clone(),
                text,
                phase,
                ..Default::default()
            })
        };
        self.io.events.emit(ev(String::new(), Phase::Start)).await;
        let words: Vec<&str> = text.split_inclusive(' ').collect();
        for w in words {
            if !self.sleep(delay).await {
                return false;
            }
            self.text.push_str(w);
            self.io.events.emit(ev(w.to_owned(), Phase::Content)).await;
            if !self.boundary().await {
                break;
            }
        }
        self.io.events.emit(ev(String::new(), Phase::End)).await;
        self.item(TranscriptItem::new(TranscriptKind::Assistant, text))
            .await;
        true
    }

    async fn step(&mut self, step: &Step) -> StepOutcome {
        match step {
            Step::Text { text, chunk_delay } => {
                if !self
                    .stream_text(text, chunk_delay.unwrap_or(self.chunk_delay))
                    .await
                {
                    return StepOutcome::Stop(Failure::new(FailureCode::Cancelled, "cancelled"));
                }
            }
            Step::Thinking(t) => {
                self.msg_seq += 1;
                let id = format!("think-{}", self.msg_seq);
                for (phase, text) in [(Phase::Start, ""), (Phase::Content, t.as_str()), (Phase::End, "")] {
                    let ev = Thinking {
                        message_id: id.clone(),
                        text: text.into(),
                        phase,
                    };
                    self.io.events.emit(DriverEvent::Thinking(ev)).await;
                }
                self.item(TranscriptItem::new(TranscriptKind::Thinking, t.clone()))
                    .await;
            }
            Step::Tool { .. } if std::mem::take(&mut self.skip_next_tool) => {}
            Step::Tool { name, args, result } => {
                self.call_seq += 1;
                let id = format!("call-{}", self.call_seq);
                let args_json = serde_json::to_string(args).unwrap_or_default();
                self.io
                    .events
                    .emit(DriverEvent::ToolCall(ToolCall {
                        id: id.clone(),
                        name: name.clone(),
                        phase: Phase::Start,
                        ..Default::default()
                    }))
                    .await;
                self.io
                    .events
                    .emit(DriverEvent::ToolCall(ToolCall {
                        id: id.clone(),
                        args_delta: args_json,
                        ..Default::default()
                    }))
                    .await;
                self.io
                    .events
                    .emit(DriverEvent::ToolCall(ToolCall {
                        id: id.clone(),
                        args: args.as_object().cloned(),
                        phase: Phase::End,
                        ..Default::default()
                    }))
                    .await;
                let mut call = TranscriptItem::new(TranscriptKind::ToolCall, String::new());
                call.tool_use_id.clone_from(&id);
                call.tool_name.clone_from(name);
                call.input = Some(args.clone());
                self.item(call).await;
                let result_map = result.as_object().cloned().unwrap_or_else(|| {
                    let mut m = JsonMap::new();
                    m.insert("text".into(), result.clone());
                    m
                });
                self.io
                    .events
                    .emit(DriverEvent::ToolResult(ToolResult {
                        id: id.clone(),
                        result: result_map,
                    }))
                    .await;
                let mut res = TranscriptItem::new(TranscriptKind::ToolResult, result.to_string());
                res.tool_use_id = id;
                self.item(res).await;
            }
            Step::Approval { kind, title, choices } => {
                let outcome = self
                    .io
                    .decisions
                    .request(DecisionRequest {
                        kind: Some(*kind),
                        title: title.clone(),
                        source: format!("reference.{}", kind.as_str()),
                        tool_call_id: format!("call-{}", self.call_seq + 1),
                        choices: choices.clone(),
                        details: self.details.clone(),
                    })
                    .await;
                let note = match &outcome {
                    DecisionOutcome::Approved => format!("[{} approved] ", kind.as_str()),
                    DecisionOutcome::Answered { answer, .. } => format!("[answer: {answer}] "),
                    DecisionOutcome::Denied { reason, .. } => {
                        format!("[{} denied: {reason}] ", kind.as_str())
                    }
                };
                self.text.push_str(&note);
                if let DecisionOutcome::Denied {
                    interrupt: true,
                    reason,
                } = outcome
                {
                    let code = if self.io.cancel.is_cancelled() {
                        FailureCode::Cancelled
                    } else {
                        FailureCode::DecisionRejected
                    };
                    return StepOutcome::Stop(Failure::new(code, reason));
                }
            }
            Step::Stdout(s) => {
                self.stdout.extend_from_slice(s.as_bytes());
                self.io
                    .events
                    .emit(DriverEvent::ProcessInfo(crate::driver::ProcessInfo {
                        kind: crate::driver::ProcessKind::Stdout,
                        text: s.clone(),
                        bytes: None,
                        metadata: Default::default(),
                        data: Default::default(),
                    }))
                    .await;
            }
            Step::Stderr(s) => {
                self.stderr.extend_from_slice(s.as_bytes());
                self.io
                    .events
                    .emit(DriverEvent::ProcessInfo(crate::driver::ProcessInfo {
                        kind: crate::driver::ProcessKind::Stderr,
                        text: s.clone(),
                        bytes: None,
                        metadata: Default::default(),
                        data: Default::default(),
                    }))
                    .await;
            }
            Step::Notice(n) => self.io.events.notice(n.clone()).await,
            Step::Subagent(u) => self.io.events.emit(DriverEvent::SubagentUpdate(u.clone())).await,
            Step::Sleep(d) => {
                if !self.sleep(*d).await {
                    return StepOutcome::Stop(Failure::new(FailureCode::Cancelled, "cancelled"));
                }
            }
            Step::Fail { code, message } => {
                return StepOutcome::Stop(Failure::new(code.clone(), message.clone()));
            }
            Step::Structured(v) => {
                self.structured = Some(v.clone());
                let text = v.to_string();
                if !self.stream_text(&text, self.chunk_delay).await {
                    return StepOutcome::Stop(Failure::new(FailureCode::Cancelled, "cancelled"));
                }
                self.text = text;
            }
            Step::Bulk { count } => {
                for i in 0..*count {
                    self.io
                        .events
                        .emit(DriverEvent::TextDelta(TextDelta {
                            message_id: "bulk".into(),
                            text: format!("{i} "),
                            ..Default::default()
                        }))
                        .await;
                }
            }
        }
        if self.io.cancel.is_cancelled() {
            return StepOutcome::Stop(Failure::new(FailureCode::Cancelled, "cancelled"));
        }
        if !self.boundary().await {
            return StepOutcome::Continue;
        }
        StepOutcome::Continue
    }
}

#[async_trait::async_trait]
impl Driver for ReferenceDriver {
    fn descriptor(&self) -> Descriptor {
        self.config.descriptor.clone().unwrap_or_else(|| {
            let mut d = reference_descriptor(self.config.continue_mode);
            if self.config.report_resources {
                d.mcp = McpCaps {
                    stdio: true,
                    http: true,
                    sse: true,
                };
                d.skills.supported = true;
            }
            d
        })
    }

    fn validate_config(&self) -> Result<(), InvalidConfig> {
        if self.config.invalid || self.config.model.is_empty() {
            return Err(InvalidConfig {
                driver: "reference".into(),
                reason: "model must not be empty".into(),
            });
        }
        Ok(())
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }

    fn session_fingerprint(&self) -> Option<String> {
        Some(crate::driver::session::fingerprint(&[
            "reference",
            &self.config.model,
        ]))
    }

    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        Ok(EnvironmentReport::from_checks(
            "reference",
            Some(env!("CARGO_PKG_VERSION").into()),
            vec![EnvironmentCheck {
                code: "in_memory".into(),
                status: crate::driver::CheckStatus::Pass,
                message: "the reference driver needs no CLI".into(),
            }],
            self.descriptor().messages,
        ))
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, InspectError> {
        Ok(vec![ModelInfo {
            id: self.config.model.clone(),
            display_name: "Reference".into(),
            default: true,
        }])
    }

    fn config_schema(&self) -> Option<ConfigSchema> {
        Some(ConfigSchema {
            driver_type: "reference".into(),
            fields: vec![ConfigField {
                name: "model".into(),
                kind: "string".into(),
                required: true,
                description: "Reported model id".into(),
            }],
        })
    }

    async fn run(&self, req: Request, io: RunIo) -> Response {
        let mut history = match &req.session {
            SessionPlan::Fresh => Vec::new(),
            SessionPlan::Resume(s) | SessionPlan::Fork(s) => {
                match self
                    .sessions
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&s.resume_id)
                {
                    Some(h) => h.clone(),
                    None => {
                        return Response::failed(
                            FailureCode::ResumeRejected,
                            format!("no conversation found with session id: {}", s.resume_id),
                        );
                    }
                }
            }
        };
        let session_id = match &req.session {
            SessionPlan::Resume(s) => s.resume_id.clone(),
            _ => format!("ref-{}", uuid::Uuid::now_v7()),
        };
        let mut turn = Turn {
            io: &io,
            transcript: Vec::new(),
            text: String::new(),
            stdout: Vec::new(),
            stderr: Vec::new(),
            msg_seq: 0,
            call_seq: 0,
            structured: None,
            interrupted: false,
            chunk_delay: self.config.chunk_delay,
            skip_next_tool: false,
            details: JsonMap::new(),
        };
        let mut init = TranscriptItem::new(TranscriptKind::Init, String::new());
        init.session_id.clone_from(&session_id);
        init.model.clone_from(&self.config.model);
        turn.item(init).await;
        let mut prompt = req.prompt.clone();
        let mut usage: Option<Usage> = None;
        let mut failure = None;
        loop {
            history.push(prompt.clone());
            turn.text.clear();
            turn.interrupted = false;
            let script = match &self.config.script {
                Some(s) => s.clone(),
                None => Self::improvise(&prompt, req.output_schema.is_some()),
            };
            turn.details.clone_from(&script.approval_details);
            for step in &script.steps {
                match turn.step(step).await {
                    StepOutcome::Continue => {}
                    StepOutcome::Stop(f) => {
                        failure = Some(f);
                        break;
                    }
                }
                if turn.interrupted {
                    break;
                }
            }
            usage = Usage::sum(usage, script.usage);
            io.events
                .turn_completed(TurnReport {
                    text: turn.text.clone(),
                    usage: script.usage,
                    error: failure.as_ref().map(|f| f.message.clone()),
                })
                .await;
            if failure.is_some() {
                break;
            }
            // Continue in-run with queued input (interrupt or turn end).
            let Some(port) = &io.messages else { break };
            if self.config.continue_mode != ContinueMode::InRun {
                break;
            }
            let boundary = if turn.interrupted {
                Boundary::Interrupt
            } else {
                Boundary::TurnEnd
            };
            let claims = port.claim(boundary);
            if claims.is_empty() {
                break;
            }
            prompt = claims
                .iter()
                .map(|c| c.original.clone())
                .collect::<Vec<_>>()
                .join("\n");
            for c in claims {
                c.ack(Ack::Delivered {
                    mechanism: "reference.turn_start".into(),
                });
            }
        }
        let text = turn.text.trim_end().to_owned();
        let ok = failure.is_none();
        let mut result_item = TranscriptItem::new(TranscriptKind::Result, text.clone());
        result_item.session_id.clone_from(&session_id);
        result_item.is_error = !ok;
        turn.item(result_item).await;
        if ok {
            self.sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(session_id.clone(), history.clone());
        }
        let mut state = SessionState {
            resume_id: session_id.clone(),
            display_id: session_id.clone(),
            ..Default::default()
        };
        state.data.insert(
            crate::driver::session::PARAM_CWD.into(),
            req.cwd.display().to_string(),
        );
        let mut metadata = std::collections::BTreeMap::new();
        metadata.insert("history_len".into(), history.len().to_string());
        if self.config.report_resources {
            metadata.extend(resource_report(&req));
        }
        let terminal = json!({ "subtype": if ok { "success" } else { "error" }, "session_id": session_id });
        Response {
            text,
            summary: String::new(),
            model: req.model.clone().unwrap_or_else(|| self.config.model.clone()),
            provider: "reference".into(),
            usage,
            metadata,
            raw: crate::driver::RawStreams {
                stdout: turn.stdout,
                stderr: turn.stderr,
                terminal: Some(crate::driver::TerminalPayload {
                    event: "result".into(),
                    json: terminal,
                }),
            },
            transcript: turn.transcript,
            checkpoint: Some(Checkpoint { state, valid: ok }),
            failure,
            exit: None,
            structured: turn.structured,
        }
    }
}

/// What a run received, for [`ReferenceConfig::report_resources`].
fn resource_report(req: &Request) -> Vec<(String, String)> {
    let mcp = req
        .mcp
        .iter()
        .map(|s| format!("{}:{}", s.name, s.transport.name()))
        .collect::<Vec<_>>()
        .join(",");
    let skills = req
        .skills
        .iter()
        .map(|s| s.key.clone())
        .collect::<Vec<_>>()
        .join(",");
    vec![
        ("mcp".into(), mcp),
        ("skills".into(), skills),
        (
            "instructions".into(),
            req.instructions.clone().unwrap_or_default(),
        ),
        ("cwd".into(), req.cwd.display().to_string()),
    ]
}

/// Notice helper for scripts.
pub fn notice(kind: &str, text: &str) -> Notice {
    Notice::new(kind, text)
}

/// An unknown-kind notice, as a parser would emit for an unrecognized frame.
pub fn unknown_frame_notice(raw: &str) -> Notice {
    Notice::new(notice_kind::PROVIDER_UNKNOWN, "unrecognized provider frame").with_data("raw", raw)
}

/// An approval policy that asks for everything (the reference driver supports it all).
pub fn ask_everything() -> crate::driver::ApprovalPolicy {
    crate::driver::ApprovalPolicy {
        permission: ApprovalMode::Ask,
        plan_review: ApprovalMode::Ask,
        question: crate::driver::QuestionMode::Ask,
        ..Default::default()
    }
}

#[cfg(test)]
mod prompt_object_tests {
    use super::{ReferenceDriver, Step};

    fn reply(prompt: &str) -> String {
        let script = ReferenceDriver::improvise(prompt, false);
        script
            .steps
            .iter()
            .find_map(|s| match s {
                Step::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .expect("a text reply")
    }

    #[test]
    fn a_trailing_object_is_conversation_unless_the_prompt_asks_for_what_carries_it() {
        // A frontend tool's JSON result, handed back as the next prompt, is echoed.
        assert!(reply(r#"The result of tool call fe-1: {"confirmed":"yes"}"#).contains("confirmed"));
        // A notice's data is for the driver: taken, never echoed.
        let script = ReferenceDriver::improvise(r#"a notice {"api_key":"sk-x"}"#, false);
        assert_eq!(
            script.approval_details.get("api_key").and_then(|v| v.as_str()),
            Some("sk-x")
        );
        assert!(!reply(r#"a notice {"api_key":"sk-x"}"#).contains("sk-x"));
    }
}
