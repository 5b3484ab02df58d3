//! Contract seams of one execution (issue 21): a send's cancellation withdraws unclaimed input,
//! `TurnEnd.message_ids` in admission order, the driver's resolved message capability at launch,
//! MinVersion trimming at run time, zero timeouts meaning "unset", `compose_results` aggregating as
//! core continuation does, `cap_message_turns` touching only the turn budget, `limit.approaching`
//! through the real turn loop, one consumer behind every `events()` handle, and a bounded close.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_adaptor::driver::{
    Ack, ApprovalMode, ApprovalPolicy, Boundary, Checkpoint, ContinueMode, Descriptor, Driver,
    EnvironmentReport, InspectError, InvalidConfig, JsonSessionCodec, MessageCaps, MessageFailure,
    MessagePolicy, Policy, Request, Response, RunIo, SandboxLevel, SessionCodec, SessionPlan, SessionState,
    Timing, TurnReport, Usage, notice_kind,
};
use agent_adaptor::runtime::{
    Agent, CallOptions, DecodeError, Event, MessageOptions, MessageState, Payload, RunResult, SchemaOptions,
    compose_results,
};
use agent_adaptor::testkit::reference::{
    ReferenceConfig, ReferenceDriver, Script, Step, reference_descriptor,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::collect;

const PROMPT: &str = "one two three four five six seven eight nine ten";

fn turn_ends(events: &[Event]) -> Vec<Vec<String>> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TurnEnd(t) => Some(t.message_ids.clone()),
            _ => None,
        })
        .collect()
}

fn lifecycle_code<'a>(events: &'a [Event], field: &str, code: &str) -> Vec<&'a Event> {
    events
        .iter()
        .filter(|e| match &e.payload {
            Payload::Notice(n) => {
                n.metadata.get(field).map(String::as_str) == Some(code)
                    || n.data.get(field).and_then(|v| v.as_str()) == Some(code)
            }
            _ => false,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// A send's cancellation withdraws admitted-but-unclaimed input (§6.1).

#[tokio::test]
async fn a_cancelled_send_withdraws_its_unclaimed_input() {
    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![
        Step::Sleep(Duration::from_millis(300)),
        Step::text("done"),
    ])));
    let stream = agent.send("go", ());
    let token = CancellationToken::new();
    let id = stream
        .send_cancellable("withdraw me", MessageOptions::new().id("w-1"), token.clone())
        .await
        .expect("admitted");
    tokio::time::sleep(Duration::from_millis(60)).await;
    token.cancel();
    let events = collect(&stream).await;
    let r = stream.result().await.expect("run");
    let m = r.messages().into_iter().find(|m| m.id == id).expect("outcome");
    assert_eq!(
        (m.state, m.reason),
        (MessageState::Failed, Some(MessageFailure::Cancelled)),
        "the send's cancellation withdrew the unclaimed input"
    );
    assert_eq!(m.text, "withdraw me");
    assert!(!r.text.contains("withdraw me"), "never delivered: {}", r.text);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::MessageUpdate(u)
        if u.id == "w-1" && u.state == MessageState::Failed && u.text == "withdraw me"))
    );
}

#[tokio::test]
async fn a_claimed_input_is_settled_by_the_driver_not_the_send() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    }));
    let stream = agent.send(PROMPT, ());
    let token = CancellationToken::new();
    stream
        .send_cancellable("keep me", MessageOptions::new().id("k-1"), token.clone())
        .await
        .expect("admitted");
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::MessageUpdate(u) if u.id == "k-1" && u.state == MessageState::Delivered)
        {
            token.cancel();
        }
    }
    let r = stream.result().await.expect("run");
    assert_eq!(r.messages()[0].state, MessageState::Delivered);
}

// ---------------------------------------------------------------------------------------------
// TurnEnd.message_ids in admission order, whatever order the driver acknowledges in.

struct ReverseAcker;

#[async_trait::async_trait]
impl Driver for ReverseAcker {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::InRun);
        d.driver_type = "reverse-acker".into();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, io: RunIo) -> Response {
        let Some(mut port) = io.messages.clone() else {
            return Response::default();
        };
        let wait = async {
            while port.pending().soon < 3 {
                port.changed().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), wait).await;
        let claims = port.claim(Boundary::InTurn);
        for c in claims.into_iter().rev() {
            c.ack(Ack::Delivered {
                mechanism: "test".into(),
            });
        }
        io.events
            .turn_completed(TurnReport {
                text: "ok".into(),
                usage: None,
                error: None,
            })
            .await;
        Response {
            text: "ok".into(),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn turn_end_lists_message_ids_in_admission_order() {
    let agent = Agent::new(ReverseAcker);
    let stream = agent.send("go", ());
    for id in ["a", "b", "c"] {
        stream.send(id, MessageOptions::new().id(id)).await.unwrap();
    }
    let events = collect(&stream).await;
    assert_eq!(
        turn_ends(&events),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    let r = stream.result().await.unwrap();
    let ids: Vec<String> = r.messages().into_iter().map(|m| m.id).collect();
    assert_eq!(ids, ["a", "b", "c"]);
}

// ---------------------------------------------------------------------------------------------
// The driver's resolved message capability is consulted at launch; MinVersion trims at run time.

/// The reference driver with a narrowed resolution, an optional MinVersion and a version probe.
#[derive(Clone)]
struct Capped {
    inner: ReferenceDriver,
    /// `resolve_messages` answer (`None`: the descriptor's).
    resolved: Option<MessageCaps>,
    /// The declared MinVersion.
    min_version: Option<String>,
    /// What the environment probe reports (`None`: the probe fails).
    version: Option<String>,
    probes: Arc<AtomicU32>,
}

impl Capped {
    fn new() -> Capped {
        Capped {
            inner: ReferenceDriver::new(ReferenceConfig {
                chunk_delay: Duration::from_millis(20),
                ..Default::default()
            }),
            resolved: None,
            min_version: None,
            version: None,
            probes: Default::default(),
        }
    }
}

#[async_trait::async_trait]
impl Driver for Capped {
    fn descriptor(&self) -> Descriptor {
        let mut d = self.inner.descriptor();
        d.messages.min_version.clone_from(&self.min_version);
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.inner.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.inner.session_fingerprint()
    }
    fn resolve_messages(&self, _request: &Request) -> MessageCaps {
        self.resolved
            .clone()
            .unwrap_or_else(|| self.descriptor().messages)
    }
    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        self.probes.fetch_add(1, Ordering::SeqCst);
        match &self.version {
            Some(v) => Ok(EnvironmentReport::from_checks(
                "reference",
                Some(v.clone()),
                vec![],
                self.descriptor().messages,
            )),
            None => Err(InspectError::Unavailable { what: "environment" }),
        }
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.inner.run(req, io).await
    }
}

/// Sends a Soon message once the first content delta streamed; returns the events.
async fn soon_mid_run(stream: &agent_adaptor::runtime::Stream, id: &str) -> Vec<Event> {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if delta && !sent {
            sent = true;
            stream
                .send("also this", MessageOptions::new().id(id))
                .await
                .expect("admitted");
        }
    }
    all
}

#[tokio::test]
async fn the_resolved_message_capability_governs_delivery() {
    let mut d = Capped::new();
    d.resolved = Some(MessageCaps {
        boundaries: vec![],
        interrupt: false,
        continue_mode: ContinueMode::Resume,
        ..d.inner.descriptor().messages
    });
    let agent = Agent::new(d);
    let stream = agent.send(PROMPT, ());
    // Admitted before launch against the static descriptor (it declares interrupts) ...
    let early = stream
        .send(
            "stop and do this",
            MessageOptions::new().id("int").when(Timing::Interrupt),
        )
        .await;
    let events = soon_mid_run(&stream, "soon").await;
    let r = stream.result().await.expect("run");
    let soon = r.messages().into_iter().find(|m| m.id == "soon").expect("soon");
    assert_eq!(
        (soon.state, soon.boundary.as_str(), soon.mechanism.as_str()),
        (MessageState::Delivered, "turn_end", "resume"),
        "the resolved capability has no in-run boundary: delivery falls back to core resume"
    );
    match early {
        // ... so the resolved transport fails it later, keeping its text.
        Ok(_) => {
            let m = r.messages().into_iter().find(|m| m.id == "int").expect("int");
            assert_eq!(
                m.state,
                MessageState::Failed,
                "an interrupt the resolved transport lacks"
            );
            assert_eq!(m.text, "stop and do this");
        }
        Err(e) => assert_eq!(e.text, "stop and do this"),
    }
    assert!(
        !events
            .iter()
            .any(|e| matches!(&e.payload, Payload::MessageUpdate(u)
            if u.id == "int" && u.state == MessageState::Delivered)),
        "never delivered"
    );
}

#[tokio::test]
async fn below_min_version_in_run_delivery_is_trimmed_with_one_notice_per_execution() {
    let mut d = Capped::new();
    d.min_version = Some("2.0.0".into());
    d.version = Some("1.4.9".into());
    let probes = d.probes.clone();
    let agent = Agent::new(d);
    for run in 0..2 {
        let stream = agent.send(PROMPT, ());
        let events = soon_mid_run(&stream, "m").await;
        let r = stream.result().await.expect("run");
        assert_eq!(
            lifecycle_code(&events, "code", "messages_below_min_version").len(),
            1,
            "run {run}: one execution notice"
        );
        let m = &r.messages()[0];
        assert_eq!(
            (m.state, m.mechanism.as_str()),
            (MessageState::Delivered, "resume"),
            "run {run}: checkpoint-resume fallback instead of in-run delivery"
        );
    }
    assert_eq!(
        probes.load(Ordering::SeqCst),
        1,
        "the version is probed once per Agent"
    );
}

#[tokio::test]
async fn an_unknown_version_keeps_declared_support_with_a_warning() {
    let mut d = Capped::new();
    d.min_version = Some("2.0.0".into());
    d.version = None;
    let agent = Agent::new(d);
    let stream = agent.send(PROMPT, ());
    let events = soon_mid_run(&stream, "m").await;
    let r = stream.result().await.expect("run");
    assert_eq!(lifecycle_code(&events, "warning", "cli_version_unknown").len(), 1);
    assert_eq!(r.messages()[0].boundary, "in_turn", "declared support kept");
}

// ---------------------------------------------------------------------------------------------
// Zero timeouts mean "unset".

#[tokio::test]
async fn a_zero_execution_timeout_means_unset() {
    let brief = || {
        ReferenceDriver::scripted(Script::new(vec![
            Step::Sleep(Duration::from_millis(40)),
            Step::text("done"),
        ]))
    };
    let agent = Agent::new(brief());
    let r = agent
        .send("hi", CallOptions::new().timeout(Duration::ZERO))
        .result()
        .await;
    assert!(r.is_ok(), "timeout(0) failed at once: {:?}", r.err());
    let agent = Agent::builder(brief()).timeout(Duration::ZERO).build();
    assert!(agent.send("hi", ()).result().await.is_ok(), "an Agent-level zero");
    // A call's zero clears an Agent-level deadline (the nearer scope replaces it with "none").
    let agent = Agent::builder(ReferenceDriver::scripted(Script::new(vec![
        Step::Sleep(Duration::from_millis(150)),
        Step::text("done"),
    ])))
    .timeout(Duration::from_millis(50))
    .build();
    assert!(
        agent.send("hi", ()).result().await.is_err(),
        "positive values bound (control)"
    );
    assert!(
        agent
            .send("hi", CallOptions::new().timeout(Duration::ZERO))
            .result()
            .await
            .is_ok(),
        "the call's zero clears the Agent's deadline"
    );
}

#[tokio::test]
async fn a_zero_approval_timeout_means_the_default() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let policy = Policy {
        approvals: ApprovalPolicy {
            permission: ApprovalMode::Ask,
            ..Default::default()
        }
        .with_timeout(Duration::ZERO),
        ..Default::default()
    };
    let stream = agent.send("needs permission", CallOptions::new().policy(policy));
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if let Payload::ApprovalRequest(req) = &e.payload {
            tokio::time::sleep(Duration::from_millis(100)).await;
            req.approve().expect("still open after 100 ms");
        }
    }
    let r = stream.result().await.expect("approved, not timed out");
    assert!(r.text.contains("[permission approved]"), "{}", r.text);
}

// ---------------------------------------------------------------------------------------------
// compose_results aggregates exactly as core continuation.

/// Two invocations with known responses: a fresh one, then a core-driven resume.
struct Parts {
    calls: AtomicU32,
}

#[async_trait::async_trait]
impl Driver for Parts {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::Resume);
        d.driver_type = "parts".into();
        d.messages.boundaries.clear();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }
    fn session_fingerprint(&self) -> Option<String> {
        Some("parts".into())
    }
    async fn run(&self, req: Request, _io: RunIo) -> Response {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if n == 0 {
            // Let the host's follow-up arrive before this invocation ends.
            tokio::time::sleep(Duration::from_millis(80)).await;
        }
        let (text, meta, usage): (&str, &[(&str, &str)], u64) = match req.session {
            SessionPlan::Fresh => ("first", &[("a", "1"), ("b", "2")], 1),
            _ => ("second", &[("b", "3")], 10),
        };
        Response {
            text: text.into(),
            summary: format!("summary {n}"),
            model: "m".into(),
            usage: Some(Usage {
                input_tokens: usage,
                output_tokens: usage,
                ..Default::default()
            }),
            metadata: meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            checkpoint: Some(Checkpoint {
                state: SessionState {
                    resume_id: "s".into(),
                    ..Default::default()
                },
                valid: true,
            }),
            ..Default::default()
        }
    }
}

fn part(text: &str, meta: &[(&str, &str)], usage: u64, summary: &str) -> RunResult {
    let mut r = RunResult::default();
    r.turns = 1;
    r.text = text.into();
    r.summary = summary.into();
    r.model = "m".into();
    r.usage = Some(Usage {
        input_tokens: usage,
        output_tokens: usage,
        ..Default::default()
    });
    r.metadata = meta.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    r
}

#[tokio::test]
async fn compose_results_aggregates_like_core_continuation() {
    let agent = Agent::new(Parts {
        calls: AtomicU32::new(0),
    });
    let stream = agent.send("go", ());
    stream
        .send("more", MessageOptions::new().id("f").when(Timing::AfterTurn))
        .await
        .unwrap();
    let core = stream.result().await.expect("run");
    assert_eq!(core.turns, 2, "one continuation");
    let composed = compose_results(
        &core.run_id,
        &[
            &part("first", &[("a", "1"), ("b", "2")], 1, "summary 0"),
            &part("second", &[("b", "3")], 10, "summary 1"),
        ],
    );
    let expect: BTreeMap<String, String> = [("a", "1"), ("b", "3")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(core.metadata, expect, "core continuation merges metadata by key");
    assert_eq!(
        composed.metadata, core.metadata,
        "compose_results merges metadata the same way"
    );
    assert_eq!(
        (
            composed.text.as_str(),
            composed.summary.as_str(),
            composed.turns,
            composed.usage
        ),
        (core.text.as_str(), core.summary.as_str(), core.turns, core.usage)
    );
}

#[tokio::test]
async fn compose_results_keeps_a_structured_output_error() {
    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![Step::Structured(
        serde_json::json!({ "ok": "not a bool" }),
    )])));
    let schema = br#"{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}"#;
    let opts = CallOptions::new().schema_json(
        schema,
        SchemaOptions {
            return_invalid: true,
            ..Default::default()
        },
    );
    let r = agent
        .send("go", opts)
        .result()
        .await
        .expect("kept by return_invalid");
    assert!(matches!(
        r.decode::<serde_json::Value>(),
        Err(DecodeError::Invalid(_))
    ));
    let composed = compose_results("c", &[&r]);
    assert!(
        matches!(
            composed.decode::<serde_json::Value>(),
            Err(DecodeError::Invalid(_))
        ),
        "the composite still knows its output was invalid: {:?}",
        composed.decode::<serde_json::Value>()
    );
}

// ---------------------------------------------------------------------------------------------
// cap_message_turns lowers only the turn budget of the inherited policy.

/// The reference driver recording each request's policy.
#[derive(Clone)]
struct PolicySpy {
    inner: ReferenceDriver,
    seen: Arc<Mutex<Vec<Policy>>>,
}

#[async_trait::async_trait]
impl Driver for PolicySpy {
    fn descriptor(&self) -> Descriptor {
        self.inner.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.seen.lock().unwrap().push(req.policy.clone());
        self.inner.run(req, io).await
    }
}

#[tokio::test]
async fn cap_message_turns_lowers_only_the_inherited_turn_budget() {
    let spy = PolicySpy {
        inner: ReferenceDriver::new(ReferenceConfig::default()),
        seen: Default::default(),
    };
    let inherited = Policy {
        sandbox: SandboxLevel::ReadOnly,
        messages: MessagePolicy {
            max_turns: 10,
            max_pending: 7,
            ..Default::default()
        },
        ..Default::default()
    };
    let agent = Agent::builder(spy.clone()).policy(inherited).build();
    agent
        .send("hi", CallOptions::new().cap_message_turns(3))
        .result()
        .await
        .unwrap();
    agent
        .send("hi", CallOptions::new().cap_message_turns(50))
        .result()
        .await
        .unwrap();
    let seen = spy.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0].sandbox,
        SandboxLevel::ReadOnly,
        "the inherited policy is kept"
    );
    assert_eq!(seen[0].messages.max_pending, 7, "every other message field too");
    assert_eq!(seen[0].messages.max_turns, 3, "the budget is lowered");
    assert_eq!(seen[1].messages.max_turns, 10, "never raised");
}

// ---------------------------------------------------------------------------------------------
// limit.approaching through the real turn loop.

/// Waits for `want` AfterTurn messages, then runs one provider turn per claimed message: at each
/// turn end it claims, keeps the first and requeues the rest. Records the framed text of each batch's
/// last message.
struct OnePerTurn {
    want: usize,
    claimed: Arc<Mutex<Vec<String>>>,
}

#[async_trait::async_trait]
impl Driver for OnePerTurn {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::InRun);
        d.driver_type = "one-per-turn".into();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, io: RunIo) -> Response {
        let Some(mut port) = io.messages.clone() else {
            return Response::default();
        };
        let wait = async {
            while port.pending().after_turn < self.want {
                port.changed().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), wait).await;
        let mut turn = 0;
        loop {
            turn += 1;
            io.events
                .turn_completed(TurnReport {
                    text: format!("turn {turn}"),
                    usage: None,
                    error: None,
                })
                .await;
            let batch = port.claim(Boundary::TurnEnd);
            // The wrap-up guidance accompanies the batch's last message.
            let Some(last) = batch.last() else { break };
            self.claimed.lock().unwrap().push(last.text.clone());
            let mut claims = batch.into_iter();
            let Some(first) = claims.next() else { break };
            first.ack(Ack::Delivered {
                mechanism: "turn_start".into(),
            });
            for rest in claims {
                rest.ack(Ack::Requeue {
                    possible_duplicate: false,
                });
            }
        }
        Response {
            text: format!("turn {turn}"),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn limit_approaching_fires_after_min_of_ceil_80_percent_and_m_minus_1_turns() {
    for (m, expected) in [(2usize, 1usize), (3, 2), (5, 4), (10, 8), (20, 16)] {
        let claimed = Arc::new(Mutex::new(Vec::new()));
        let extra = 3;
        let agent = Agent::new(OnePerTurn {
            want: m + extra,
            claimed: claimed.clone(),
        });
        let policy = Policy {
            messages: MessagePolicy {
                max_turns: m as i64,
                ..Default::default()
            },
            ..Default::default()
        };
        let stream = agent.send("go", CallOptions::new().policy(policy));
        for i in 0..m + extra {
            stream
                .send(
                    format!("input {i}"),
                    MessageOptions::new().when(Timing::AfterTurn),
                )
                .await
                .unwrap();
        }
        let events = collect(&stream).await;
        let mut turns_before = None;
        let mut turn_ends = 0;
        for e in &events {
            match &e.payload {
                Payload::TurnEnd(_) => turn_ends += 1,
                Payload::Notice(n) if n.kind == notice_kind::LIMIT_APPROACHING => {
                    assert!(turns_before.is_none(), "M={m}: one notice only");
                    turns_before = Some(turn_ends);
                }
                _ => {}
            }
        }
        assert_eq!(
            turns_before,
            Some(expected),
            "M={m}: notice after {expected} completed turns"
        );
        let r = stream
            .result()
            .await
            .expect("the single-agent result still succeeds");
        assert_eq!(r.turns as usize, m, "M={m}: no turn beyond the limit");
        let failed = r.undelivered();
        assert_eq!(failed.len(), extra + 1, "M={m}: the rest fail at the limit");
        assert!(
            failed
                .iter()
                .all(|o| o.reason == Some(MessageFailure::LimitExceeded))
        );
        let claimed = claimed.lock().unwrap().clone();
        for (i, text) in claimed.iter().enumerate() {
            let wrap = text.contains("turn limit for this task is near");
            assert_eq!(
                wrap,
                i + 1 >= expected,
                "M={m}: claim {i}: wrap-up guidance {wrap}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// events() twice: one consumer, not a split that strands a reader.

#[tokio::test]
async fn events_called_twice_is_one_consumer() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(5),
        ..Default::default()
    }));
    let stream = agent.send(PROMPT, ());
    let mut a = stream.events();
    let mut b = stream.events();
    let first = a.next().await.expect("RunStarted");
    let drain = |mut e: agent_adaptor::runtime::Events| async move {
        let mut seqs = Vec::new();
        while let Some(ev) = e.next().await {
            seqs.push(ev.meta.sequence);
        }
        seqs
    };
    let second = b.next().await.expect("the next event");
    assert_eq!(second.meta.sequence, first.meta.sequence + 1, "the same cursor");
    let (x, y) = tokio::time::timeout(Duration::from_secs(10), async {
        tokio::join!(tokio::spawn(drain(a)), tokio::spawn(drain(b)))
    })
    .await
    .expect("no reader is stranded");
    let mut all: Vec<u64> = x.unwrap().into_iter().chain(y.unwrap()).collect();
    all.sort_unstable();
    let n = all.len() as u64;
    let expect: Vec<u64> = (first.meta.sequence + 2..first.meta.sequence + 2 + n).collect();
    assert_eq!(all, expect, "every event once, none lost, none duplicated");
}

// ---------------------------------------------------------------------------------------------
// Agent::close is bounded by its deadline as a whole.

/// Ignores cancellation for a long time, and takes long to stop its processes.
struct Stubborn;

#[async_trait::async_trait]
impl Driver for Stubborn {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::None);
        d.driver_type = "stubborn".into();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, _io: RunIo) -> Response {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Response::default()
    }
    async fn close_processes(&self) -> Result<(), String> {
        tokio::time::sleep(Duration::from_secs(3)).await;
        Ok(())
    }
}

#[tokio::test]
async fn close_is_bounded_by_its_deadline_as_a_whole() {
    let agent = Agent::new(Stubborn);
    let _running = agent.send("go", ());
    tokio::time::sleep(Duration::from_millis(20)).await;
    let started = Instant::now();
    let closed = agent.close(Duration::from_millis(300)).await;
    let took = started.elapsed();
    assert!(closed.is_err(), "incomplete cleanup is reported");
    assert!(
        took < Duration::from_millis(450),
        "close took {took:?} for a 300 ms deadline"
    );
}

// ---------------------------------------------------------------------------------------------
// Every built-in driver hands the core its CommonConfig (directory and timeout, honoured by the core).

#[test]
fn every_built_in_driver_exposes_its_common_config() {
    use agent_adaptor::driver::CommonConfig;
    use agent_adaptor::providers::{claude, codebuddy, codex, cursor};
    let common = CommonConfig {
        directory: Some("/srv/work".into()),
        timeout: Some(Duration::from_secs(7)),
        ..Default::default()
    };
    let drivers: Vec<(&str, Box<dyn Driver>)> = vec![
        (
            "claude",
            Box::new(claude::ClaudeDriver::new(claude::Config {
                common: common.clone(),
                ..Default::default()
            })),
        ),
        (
            "codex",
            Box::new(codex::CodexDriver::new(codex::CodexConfig {
                common: common.clone(),
                ..Default::default()
            })),
        ),
        (
            "codebuddy",
            Box::new(codebuddy::CodeBuddyDriver::new(codebuddy::CodeBuddyConfig {
                common: common.clone(),
                ..Default::default()
            })),
        ),
        (
            "cursor",
            Box::new(cursor::CursorDriver::new(cursor::CursorConfig {
                common: common.clone(),
                ..Default::default()
            })),
        ),
    ];
    for (name, d) in drivers {
        assert_eq!(d.common_config(), Some(&common), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Agent::close releases the Agent's profile claims, even of executions that did not drain.

/// A "claude"-family driver (profile support) that ignores cancellation.
struct StubbornClaude;

#[async_trait::async_trait]
impl Driver for StubbornClaude {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::None);
        d.driver_type = "claude".into();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, _io: RunIo) -> Response {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Response::default()
    }
}

#[tokio::test]
async fn close_releases_the_agents_profile_claims() {
    use agent_adaptor::profile::{Resources, Selection};
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("profile");
    let first = Agent::builder(StubbornClaude)
        .profile(Selection::dedicated(&profile))
        .profile_resources(Resources {
            instructions: Some("one".into()),
            ..Default::default()
        })
        .build();
    let _stuck = first.send("go", ());
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        first.close(Duration::from_millis(200)).await.is_err(),
        "the run did not drain"
    );
    let second = Agent::builder(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some({
            let mut d = reference_descriptor(ContinueMode::InRun);
            d.driver_type = "claude".into();
            d
        }),
        ..Default::default()
    }))
    .profile(Selection::dedicated(&profile))
    .profile_resources(Resources {
        instructions: Some("two".into()),
        ..Default::default()
    })
    .build();
    let r = second.send("hi", ()).result().await;
    assert!(
        !matches!(&r, Err(e) if e.code() == "profile_in_use"),
        "the closed Agent still claims the profile: {r:?}"
    );
}
