//! The public verification helpers (spec §15, after the Go original's `adaptertest.Verify*`): each
//! checks one part of what a driver produced — its event stream, its run events, a transcript, the
//! mirror between the two, its response — and returns the violations with their clause ids (empty when
//! the input conforms). [`check_driver`](super::check_driver) runs them on its recorded invocation; a
//! third-party driver's own tests can run them on anything it recorded, e.g. with [`record`](super::record):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use agent_adaptor::driver::{Driver, Request};
//! use agent_adaptor::testkit::conformance::{
//!     RunProbe, record, verify_outcome, verify_run_events, verify_stream_capability,
//!     verify_stream_sequence, verify_transcript, verify_transcript_mirror,
//! };
//! use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // Any driver: here the reference driver stands in for a third-party one.
//! let driver: Arc<dyn Driver> = Arc::new(ReferenceDriver::new(ReferenceConfig::default()));
//! let probe = RunProbe {
//!     request: Box::new(|| Request::new("run-1", "hello", std::env::temp_dir())),
//!     message: None,
//!     timeout: Duration::from_secs(10),
//! };
//! let rec = record(driver.clone(), &probe).await;
//! let response = rec.response.as_ref().expect("the run returned in time");
//!
//! assert_eq!(verify_stream_sequence(&rec.events), vec![]);
//! assert_eq!(verify_stream_capability(&driver.descriptor(), &rec.events), vec![]);
//! assert_eq!(verify_run_events(&rec.events), vec![]);
//! assert_eq!(verify_transcript(&response.transcript), vec![]);
//! assert_eq!(verify_transcript_mirror(&rec.events, &response.transcript), vec![]);
//! assert_eq!(verify_outcome(response, driver.session_codec().as_deref()), vec![]);
//!
//! // A broken input is rejected with its clause: a transcript item the events never mirrored.
//! let mut extra = response.transcript.clone();
//! extra.push(agent_adaptor::driver::TranscriptItem::new(
//!     agent_adaptor::driver::TranscriptKind::Assistant,
//!     "never emitted",
//! ));
//! let v = verify_transcript_mirror(&rec.events, &extra);
//! assert_eq!(v[0].clause, "RUN-04");
//! # });
//! ```

use std::collections::HashSet;

use super::Violation;
use crate::driver::{
    Descriptor, DriverEvent, Phase, Response, Role, SessionCodec, TranscriptItem, TranscriptKind, notice_kind,
};

/// The clauses [`verify_stream_sequence`] checks.
pub const STREAM_SEQUENCE_CLAUSES: &[&str] = &["EVT-03", "EVT-04", "EVT-05", "EVT-06", "EVT-09", "EVT-11"];
/// The clauses [`verify_stream_capability`] checks.
pub const STREAM_CAPABILITY_CLAUSES: &[&str] = &["EVT-12"];
/// The clauses [`verify_run_events`] checks (TRN for the items the events carry).
pub const RUN_EVENT_CLAUSES: &[&str] = &["RUN-02", "TRN-01", "TRN-02", "TRN-03", "TRN-04"];
/// The clauses [`verify_transcript`] checks.
pub const TRANSCRIPT_CLAUSES: &[&str] = &["TRN-01", "TRN-02", "TRN-03", "TRN-04"];
/// The clauses [`verify_transcript_mirror`] checks.
pub const TRANSCRIPT_MIRROR_CLAUSES: &[&str] = &["RUN-04"];
/// The clauses [`verify_outcome`] checks (TRN for its transcript).
pub const OUTCOME_CLAUSES: &[&str] = &[
    "RSP-01", "RSP-03", "RSP-04", "RSP-05", "TRN-01", "TRN-02", "TRN-03", "TRN-04",
];

fn violation(clause: &'static str, detail: impl Into<String>) -> Violation {
    Violation {
        clause,
        detail: detail.into(),
    }
}

#[derive(Default)]
struct Lifecycle {
    open: HashSet<String>,
    seen: HashSet<String>,
}

impl Lifecycle {
    /// Applies a phase; returns an error description on a rule break.
    fn apply(&mut self, id: &str, phase: Phase, empty_content: bool) -> Result<(), String> {
        if id.is_empty() {
            return Err("missing id".into());
        }
        match phase {
            Phase::Start => {
                if !self.seen.insert(id.to_owned()) {
                    return Err(format!("{id} opened twice"));
                }
                self.open.insert(id.to_owned());
            }
            Phase::Content => {
                if !self.open.contains(id) {
                    return Err(format!("content for {id} while it is not open"));
                }
                if empty_content {
                    return Err(format!("empty content chunk for {id}"));
                }
            }
            Phase::End => {
                if !self.open.remove(id) {
                    return Err(format!("{id} closed while not open"));
                }
            }
        }
        Ok(())
    }
}

/// The event lifecycle rules on a driver's events in emission order: text (EVT-03, an empty content
/// chunk EVT-04), tool calls and their results (EVT-05) and thinking (EVT-06) each open once, carry
/// content only while open and close; no user-role text from a driver (EVT-09); nothing left open at
/// the end (EVT-11).
pub fn verify_stream_sequence(events: &[DriverEvent]) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut text = Lifecycle::default();
    let mut thinking = Lifecycle::default();
    let mut tools = Lifecycle::default();
    let mut known_tools: HashSet<String> = HashSet::new();
    for (i, ev) in events.iter().enumerate() {
        match ev {
            DriverEvent::TextDelta(t) => {
                if let Err(e) = text.apply(&t.message_id, t.phase, t.text.is_empty()) {
                    let clause = if t.phase == Phase::Content && t.text.is_empty() {
                        "EVT-04"
                    } else {
                        "EVT-03"
                    };
                    out.push(violation(clause, format!("event {i}: text {e}")));
                }
                if t.role != Role::Assistant {
                    out.push(violation(
                        "EVT-09",
                        format!("event {i}: drivers must not emit user-role text"),
                    ));
                }
            }
            DriverEvent::Thinking(t) => {
                if let Err(e) = thinking.apply(&t.message_id, t.phase, t.text.is_empty()) {
                    out.push(violation("EVT-06", format!("event {i}: thinking {e}")));
                }
            }
            DriverEvent::ToolCall(t) => {
                if t.phase == Phase::Start {
                    if t.id.is_empty() || t.name.is_empty() {
                        out.push(violation(
                            "EVT-05",
                            format!("event {i}: tool start needs id and name"),
                        ));
                    }
                    known_tools.insert(t.id.clone());
                }
                if let Err(e) = tools.apply(&t.id, t.phase, t.args_delta.is_empty()) {
                    out.push(violation("EVT-05", format!("event {i}: tool call {e}")));
                }
            }
            DriverEvent::ToolResult(r) if !known_tools.contains(&r.id) => {
                out.push(violation(
                    "EVT-05",
                    format!("event {i}: result for unknown tool call {}", r.id),
                ));
            }
            _ => {}
        }
    }
    let mut open: Vec<_> = text
        .open
        .iter()
        .chain(thinking.open.iter())
        .chain(tools.open.iter())
        .cloned()
        .collect();
    if !open.is_empty() {
        open.sort();
        out.push(violation("EVT-11", format!("lifecycles left open: {open:?}")));
    }
    out
}

/// Capability truthfulness of the stream (EVT-12): reasoning and tool-argument deltas only when the
/// descriptor declares them.
pub fn verify_stream_capability(descriptor: &Descriptor, events: &[DriverEvent]) -> Vec<Violation> {
    let mut out = Vec::new();
    let reasoning = events.iter().position(|e| matches!(e, DriverEvent::Thinking(_)));
    if let Some(i) = reasoning
        && !descriptor.stream.reasoning
    {
        out.push(violation(
            "EVT-12",
            format!("event {i}: reasoning emitted but not declared"),
        ));
    }
    let args = events
        .iter()
        .position(|e| matches!(e, DriverEvent::ToolCall(t) if t.phase == Phase::Content));
    if let Some(i) = args
        && !descriptor.stream.tool_call_args
    {
        out.push(violation(
            "EVT-12",
            format!("event {i}: tool argument deltas emitted but not declared"),
        ));
    }
    out
}

/// The transcript item rules (TRN-01: assistant, thinking and user items carry text; TRN-02: a tool
/// call names its tool; TRN-03: a tool result names its call; TRN-04: only assistant and thinking
/// items are deltas) for one item; `where_` locates it in the messages.
fn verify_item(item: &TranscriptItem, where_: &str) -> Option<Violation> {
    match item.kind {
        TranscriptKind::Assistant | TranscriptKind::Thinking | TranscriptKind::User
            if item.text.is_empty() =>
        {
            Some(violation(
                "TRN-01",
                format!("{where_}: {:?} item without text", item.kind),
            ))
        }
        TranscriptKind::ToolCall if item.tool_name.is_empty() => Some(violation(
            "TRN-02",
            format!("{where_}: tool_call item without a tool name"),
        )),
        TranscriptKind::ToolResult if item.tool_use_id.is_empty() => Some(violation(
            "TRN-03",
            format!("{where_}: tool_result item without a tool use id"),
        )),
        _ if item.delta && !matches!(item.kind, TranscriptKind::Assistant | TranscriptKind::Thinking) => {
            Some(violation(
                "TRN-04",
                format!("{where_}: delta flag on a {:?} item", item.kind),
            ))
        }
        _ => None,
    }
}

/// The transcript item rules (TRN-01 … TRN-04) for a whole transcript.
pub fn verify_transcript(items: &[TranscriptItem]) -> Vec<Violation> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| verify_item(item, &format!("transcript item {i}")))
        .collect()
}

/// The run-event envelope: a transcript notice carries its item (RUN-02), and every item it carries
/// follows the transcript rules (TRN-*).
pub fn verify_run_events(events: &[DriverEvent]) -> Vec<Violation> {
    let mut out = Vec::new();
    for (i, ev) in events.iter().enumerate() {
        if let DriverEvent::Notice(n) = ev
            && n.kind == notice_kind::TRANSCRIPT_ITEM
        {
            match &n.item {
                None => out.push(violation(
                    "RUN-02",
                    format!("event {i}: transcript notice without an item"),
                )),
                Some(item) => out.extend(verify_item(item, &format!("event {i}"))),
            }
        }
    }
    out
}

/// The transcript notices, in emission order, are exactly the response's transcript (RUN-04).
pub fn verify_transcript_mirror(events: &[DriverEvent], transcript: &[TranscriptItem]) -> Vec<Violation> {
    let emitted: Vec<&TranscriptItem> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) if n.kind == notice_kind::TRANSCRIPT_ITEM => n.item.as_deref(),
            _ => None,
        })
        .collect();
    let returned: Vec<&TranscriptItem> = transcript.iter().collect();
    if emitted == returned {
        return Vec::new();
    }
    vec![violation(
        "RUN-04",
        format!(
            "transcript notices ({}) do not mirror the response transcript ({})",
            emitted.len(),
            returned.len()
        ),
    )]
}

/// The response's invariants: a valid checkpoint needs a resume id and a clean outcome (RSP-01) and
/// round-trips through the driver's codec with a non-empty guard (RSP-04, when `codec` is given); the
/// text is not a raw stdout dump (RSP-03); a terminal payload has an event name and JSON (RSP-05); its
/// transcript follows the item rules (TRN-*).
pub fn verify_outcome(response: &Response, codec: Option<&dyn SessionCodec>) -> Vec<Violation> {
    let mut out = verify_transcript(&response.transcript);
    if let Some(cp) = &response.checkpoint
        && cp.valid
    {
        let clean = response.failure.is_none() && response.exit.is_none_or(|e| e.success());
        if cp.state.resume_id.is_empty() || !clean {
            out.push(violation(
                "RSP-01",
                format!(
                    "a valid checkpoint needs a resume id and a clean outcome (resume id {:?}, failure {:?}, exit {:?})",
                    cp.state.resume_id,
                    response.failure.as_ref().map(|f| &f.code),
                    response.exit
                ),
            ));
        }
        if let Some(codec) = codec {
            let rt = codec.decode(&codec.encode(&cp.state));
            if rt.as_ref() != Ok(&cp.state) || codec.guard_fingerprint(&cp.state).is_empty() {
                out.push(violation(
                    "RSP-04",
                    format!("checkpoint does not round-trip through the codec: {rt:?}"),
                ));
            }
        }
    }
    let stdout = String::from_utf8_lossy(&response.raw.stdout);
    if !response.text.is_empty() && !response.raw.stdout.is_empty() && response.text == stdout {
        out.push(violation("RSP-03", "the output text is a raw stdout dump"));
    }
    if let Some(t) = &response.raw.terminal
        && (t.event.is_empty() || t.json.is_null())
    {
        out.push(violation(
            "RSP-05",
            "terminal payload needs an event name and JSON",
        ));
    }
    out
}
