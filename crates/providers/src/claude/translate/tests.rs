//! The translator on recorded streams of the real CLI (`tests/fixtures/claude/*.jsonl`).

use super::*;
use crate::driver::{FailureCode, Phase};

fn fixture(name: &str) -> Vec<Frame> {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/claude")
        .join(format!("{name}.jsonl"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| wire::parse_line(l.as_bytes()).unwrap())
        .collect()
}

fn run(name: &str) -> (Translator, Vec<DriverEvent>) {
    let mut tr = Translator::new();
    let events = fixture(name).iter().flat_map(|f| tr.frame(f)).collect();
    (tr, events)
}

fn deltas(events: &[DriverEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TextDelta(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

fn turns(events: &[DriverEvent]) -> Vec<&TurnReport> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TurnCompleted(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[test]
fn streamed_text_is_rendered_once_and_the_result_is_the_final_text() {
    let (mut tr, events) = run("text_partial");
    assert_eq!(deltas(&events), "Hi! I am the mock model, streaming in pieces.");
    let phases: Vec<Phase> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TextDelta(t) => Some(t.phase),
            _ => None,
        })
        .collect();
    assert_eq!(phases.first(), Some(&Phase::Start));
    assert_eq!(phases.last(), Some(&Phase::End));
    assert_eq!(phases.iter().filter(|p| **p == Phase::Start).count(), 1);
    let t = turns(&events);
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].text, "Hi! I am the mock model, streaming in pieces.");
    assert_eq!(
        t[0].usage.map(|u| (u.input_tokens, u.output_tokens)),
        Some((100, 20))
    );
    assert_eq!(tr.usage().map(|u| u.output_tokens), Some(20), "no double count");
    let kinds: Vec<TranscriptKind> = tr.take_transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(
        kinds,
        [
            TranscriptKind::Init,
            TranscriptKind::Assistant,
            TranscriptKind::Result
        ]
    );
    assert!(tr.session_id().is_some());
}

#[test]
fn thinking_streams_as_reasoning_and_thinking_token_frames_are_silent() {
    let (_, events) = run("thinking");
    let thinking: String = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Thinking(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user wants me to think. Let me consider it.");
    assert_eq!(deltas(&events), "Thought about it: 42.");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_UNKNOWN))
    );
}

#[test]
fn a_tool_round_trip_has_a_call_with_args_and_a_result() {
    let (mut tr, events) = run("bidi_permission_allow");
    let end = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolCall(c) if c.phase == Phase::End => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(end.id, "toolu_mock_0001_1");
    assert_eq!(
        end.args.as_ref().unwrap()["command"],
        "touch created-by-tool.txt && ls"
    );
    let result = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolResult(r) => Some(r),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.id, "toolu_mock_0001_1");
    assert_eq!(result.result["is_error"], false);
    assert_eq!(turns(&events)[0].text, "Tool said: created-by-tool.txt");
    let items = tr.take_transcript();
    let call = items.iter().find(|i| i.kind == TranscriptKind::ToolCall).unwrap();
    assert_eq!(call.tool_name, "Bash");
    let res = items
        .iter()
        .find(|i| i.kind == TranscriptKind::ToolResult)
        .unwrap();
    assert_eq!(res.tool_name, "Bash");
}

#[test]
fn api_retries_are_notices_and_the_turn_still_succeeds() {
    let (_, events) = run("error_529_retried");
    let retries: Vec<&Notice> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_RETRY => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0].metadata["status"], "529");
    assert_eq!(turns(&events)[0].text, "finally");
    assert!(turns(&events)[0].error.is_none());
}

#[test]
fn an_exhausted_api_error_fails_with_its_status_class_and_no_final_text() {
    let frames = fixture("error_529_exhausted");
    let Some(Frame::Result(r)) = frames.iter().rev().find(|f| matches!(f, Frame::Result(_))) else {
        panic!("no result")
    };
    assert!(r.is_error);
    assert_eq!(final_text(r), "");
    let f = result_failure(r).unwrap();
    assert_eq!(f.code, FailureCode::ProviderServer, "{}", f.message);
    let frames = fixture("error_401");
    let Some(Frame::Result(r)) = frames.iter().rev().find(|f| matches!(f, Frame::Result(_))) else {
        panic!("no result")
    };
    assert_eq!(result_failure(r).unwrap().details["api_error_status"], 401);
}

#[test]
fn an_unknown_session_is_a_resume_rejection() {
    let frames = fixture("resume_unknown");
    let Some(Frame::Result(r)) = frames.iter().find(|f| matches!(f, Frame::Result(_))) else {
        panic!("no result")
    };
    assert_eq!(result_failure(r).unwrap().code, FailureCode::ResumeRejected);
    assert!(classify::is_resume_rejection(
        "Error: No conversation found with session ID: abc"
    ));
    assert!(!classify::is_resume_rejection("something else"));
}

#[test]
fn an_interrupted_turn_closes_its_blocks_and_the_next_turn_is_clean() {
    let (_, events) = run("interrupt_stream");
    let t = turns(&events);
    assert_eq!(t.len(), 2);
    assert!(t[0].error.is_some() && t[0].text.is_empty());
    assert_eq!(t[1].text, "ECHO n=2: AFTER INTERRUPT");
    let starts = events
        .iter()
        .filter(|e| matches!(e, DriverEvent::TextDelta(t) if t.phase == Phase::Start))
        .count();
    let ends = events
        .iter()
        .filter(|e| matches!(e, DriverEvent::TextDelta(t) if t.phase == Phase::End))
        .count();
    assert_eq!(starts, ends, "every text lifecycle is closed");
}

#[test]
fn unknown_frames_become_notices() {
    let mut tr = Translator::new();
    let frame = wire::parse_line(br#"{"type":"brand_new","x":1}"#).unwrap();
    let out = tr.frame(&frame);
    assert!(matches!(&out[..], [DriverEvent::Notice(n)] if n.kind == notice_kind::PROVIDER_UNKNOWN));
    let frame = wire::parse_line(br#"{"type":"system","subtype":"future_thing"}"#).unwrap();
    assert_eq!(tr.frame(&frame).len(), 1);
}

#[test]
fn tasks_are_subagent_updates() {
    let mut tr = Translator::new();
    let f = wire::parse_line(
        br#"{"type":"system","subtype":"task_started","task_id":"t1","tool_use_id":"toolu_1","description":"Long command","task_type":"local_bash"}"#,
    )
    .unwrap();
    let out = tr.frame(&f);
    assert!(
        matches!(&out[..], [DriverEvent::SubagentUpdate(s)] if s.task == "t1" && s.kind == SubagentKind::Started)
    );
    let f = wire::parse_line(
        br#"{"type":"system","subtype":"task_notification","task_id":"t1","status":"completed","summary":"done"}"#,
    )
    .unwrap();
    let out = tr.frame(&f);
    assert!(
        matches!(&out[..], [DriverEvent::SubagentUpdate(s)] if s.kind == SubagentKind::Finished && s.summary == "done")
    );
}

#[test]
fn usage_is_deduplicated_per_message_when_no_result_came() {
    let frames = fixture("text_partial");
    let mut tr = Translator::new();
    for f in frames.iter().filter(|f| !matches!(f, Frame::Result(_))) {
        tr.frame(f);
    }
    let out = tr.abort_turn("cut");
    let u = tr.usage().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (100, 20));
    assert!(matches!(out.last(), Some(DriverEvent::TurnCompleted(t)) if t.error.as_deref() == Some("cut")));
}

#[test]
fn the_turn_usage_so_far_is_streamed_in_usage_notices_before_the_turn_ends() {
    let (_, events) = run("text_partial");
    let so_far: Vec<(usize, u64, u64)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            DriverEvent::Notice(n) => {
                Usage::from_progress_notice(n).map(|u| (i, u.input_tokens, u.output_tokens))
            }
            _ => None,
        })
        .collect();
    assert!(!so_far.is_empty(), "usage notices: {events:?}");
    let turn_end = events
        .iter()
        .position(|e| matches!(e, DriverEvent::TurnCompleted(_)))
        .unwrap();
    assert!(so_far.iter().all(|(i, ..)| *i < turn_end), "{so_far:?}");
    // Growing, each one a change, the last the turn's (deduplicated) usage.
    assert!(
        so_far
            .windows(2)
            .all(|w| (w[0].1, w[0].2) != (w[1].1, w[1].2) && w[0].2 <= w[1].2),
        "{so_far:?}"
    );
    assert_eq!(so_far.last().map(|s| (s.1, s.2)), Some((100, 20)));
}
