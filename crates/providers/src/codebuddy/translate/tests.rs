//! Translator tests on the recorded CodeBuddy fixtures: lifecycles balance, deltas are not duplicated by the
//! complete frames, transcript notices mirror the transcript, and failures are classified.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::*;
use crate::codebuddy::wire::parse_line;
use crate::driver::{FailureCode, Phase, ToolCall, notice_kind};

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/codebuddy")
        .join(name)
}

/// Runs every line of a fixture through a fresh translator.
fn translate(name: &str) -> (Translator, Vec<DriverEvent>) {
    let mut t = Translator::new();
    let mut events = Vec::new();
    for line in std::fs::read_to_string(fixture(name)).unwrap().lines() {
        match parse_line(line) {
            Ok(f) => events.extend(t.frame(&f)),
            Err(e) => events.push(t.invalid(line, &e.to_string())),
        }
    }
    (t, events)
}

/// Every start has one end, content only while open, no empty content chunk.
fn assert_lifecycles(events: &[DriverEvent]) {
    let mut open = HashSet::new();
    let mut seen = HashSet::new();
    for e in events {
        let (id, phase, empty) = match e {
            DriverEvent::TextDelta(t) => (format!("t:{}", t.message_id), t.phase, t.text.is_empty()),
            DriverEvent::Thinking(t) => (format!("r:{}", t.message_id), t.phase, t.text.is_empty()),
            DriverEvent::ToolCall(t) => (format!("c:{}", t.id), t.phase, t.args_delta.is_empty()),
            _ => continue,
        };
        match phase {
            Phase::Start => {
                assert!(seen.insert(id.clone()), "{id} opened twice");
                open.insert(id);
            }
            Phase::Content => assert!(open.contains(&id) && !empty, "bad content for {id}"),
            Phase::End => assert!(open.remove(&id), "{id} closed while not open"),
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
}

fn text_of(events: &[DriverEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TextDelta(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn mirrored(t: &mut Translator, events: &[DriverEvent]) -> Vec<TranscriptItem> {
    let notices: Vec<TranscriptItem> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) if n.kind == notice_kind::TRANSCRIPT_ITEM => n.item.as_deref().cloned(),
            _ => None,
        })
        .collect();
    let transcript = t.take_transcript();
    assert_eq!(notices, transcript, "notices mirror the transcript");
    transcript
}

fn kinds(items: &[TranscriptItem]) -> Vec<TranscriptKind> {
    items.iter().map(|i| i.kind.clone()).collect()
}

fn turns(events: &[DriverEvent]) -> Vec<&TurnReport> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TurnCompleted(r) => Some(r),
            _ => None,
        })
        .collect()
}

#[test]
fn every_fixture_translates_with_balanced_lifecycles_and_a_mirrored_transcript() {
    let dir = fixture("");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "jsonl") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (mut t, events) = translate(&name);
        assert_lifecycles(&events);
        mirrored(&mut t, &events);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_INVALID)),
            "{name}: every recorded line is a frame"
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} fixtures");
}

#[test]
fn streamed_text_is_rendered_once() {
    let (mut t, events) = translate("headless_text.jsonl");
    assert_eq!(text_of(&events), "Reply n=1 to say hi");
    let items = mirrored(&mut t, &events);
    assert_eq!(
        kinds(&items),
        [
            TranscriptKind::Init,
            TranscriptKind::Assistant,
            TranscriptKind::Result
        ]
    );
    assert_eq!(items[0].model, "default-model");
    let turns = turns(&events);
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].text, "Reply n=1 to say hi");
    assert_eq!(turns[0].error, None);
    let u = t.usage().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (10, 5));
    assert_eq!(t.session_id(), Some(items[0].session_id.as_str()));
    assert!(t.last_result().unwrap().is_success());
}

#[test]
fn reasoning_streams_as_thinking() {
    let (mut t, events) = translate("headless_reasoning.jsonl");
    let thinking: String = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Thinking(r) => Some(r.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "Let me think.");
    assert_eq!(text_of(&events), "Thought done.");
    let items = mirrored(&mut t, &events);
    assert!(kinds(&items).contains(&TranscriptKind::Thinking));
}

#[test]
fn tool_calls_carry_streamed_arguments_and_their_result() {
    let (mut t, events) = translate("control_allow.jsonl");
    let calls: Vec<&ToolCall> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls[0].phase, Phase::Start);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_mock_0001_0", "Bash")
    );
    let args: String = calls.iter().map(|c| c.args_delta.as_str()).collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap()["command"],
        "echo hi"
    );
    let end = calls.iter().find(|c| c.phase == Phase::End).unwrap();
    assert_eq!(end.args.as_ref().unwrap()["command"], "echo hi");
    let result = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.id, "call_mock_0001_0");
    assert!(result.result["text"].as_str().unwrap().contains("Stdout: hi"));
    assert_eq!(result.result["is_error"], false);
    let items = mirrored(&mut t, &events);
    let call = items.iter().find(|i| i.kind == TranscriptKind::ToolCall).unwrap();
    assert_eq!(call.tool_name, "Bash");
    assert_eq!(call.input.as_ref().unwrap()["command"], "echo hi");
    assert_eq!(turns(&events).len(), 1);
}

#[test]
fn model_errors_are_classified_and_their_text_is_shown() {
    for (file, code) in [
        ("headless_errors.429.jsonl", FailureCode::RateLimited),
        ("headless_errors.500.jsonl", FailureCode::ProviderServer),
        ("headless_errors.400.jsonl", FailureCode::AgentError),
        ("headless_errors.401.jsonl", FailureCode::AgentError),
    ] {
        let (t, events) = translate(file);
        let r = t.last_result().unwrap();
        let f = result_failure(r).unwrap();
        assert_eq!(f.code, code, "{file}: {}", f.message);
        let status = &file["headless_errors.".len()..][..3];
        assert!(
            text_of(&events).starts_with(status),
            "{file}: {}",
            text_of(&events)
        );
        assert_eq!(turns(&events)[0].error.as_deref(), Some(f.message.as_str()));
    }
}

#[test]
fn a_denial_that_interrupts_is_a_decision_rejection() {
    let (t, _) = translate("control_deny_interrupt.jsonl");
    let f = result_failure(t.last_result().unwrap()).unwrap();
    assert_eq!(f.code, FailureCode::DecisionRejected);
    assert_eq!(f.details["subtype"], "error_during_execution");
}

#[test]
fn an_interrupted_stream_keeps_one_lifecycle_and_an_empty_answer() {
    let (_, events) = translate("interrupt_stream.jsonl");
    let answers: Vec<&str> = turns(&events).iter().map(|r| r.text.as_str()).collect();
    assert_eq!(answers, ["", "Reply n=2 to zzafter the interrupt"]);
    let text = text_of(&events);
    assert_eq!(
        text.matches("This is a deliberately").count(),
        1,
        "the partial text is not repeated: {text}"
    );
    assert!(text.contains("Interrupted by user"));
}

#[test]
fn unknown_frames_and_bad_lines_become_notices() {
    let mut t = Translator::new();
    let ev = t.frame(&parse_line(r#"{"type":"brand_new","x":1}"#).unwrap());
    assert!(matches!(&ev[0], DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_UNKNOWN));
    let ev = t.invalid("not json", "expected value");
    assert!(matches!(ev, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_INVALID));
    let (mut t, events) = translate("headless_resume_unknown.jsonl");
    let items = mirrored(&mut t, &events);
    assert_eq!(items[0].kind, TranscriptKind::Error);
    assert!(items[0].text.starts_with(wire::UNKNOWN_SESSION_PREFIX));
}

#[test]
fn classification_reads_status_prefixes_and_network_words() {
    assert_eq!(classify("503 overloaded (a/b)"), FailureCode::ProviderServer);
    assert_eq!(classify("aborted"), FailureCode::Network);
    assert_eq!(classify("fetch failed: ECONNREFUSED"), FailureCode::Network);
    assert_eq!(classify("something odd"), FailureCode::AgentError);
}
