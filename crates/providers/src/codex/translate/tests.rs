//! The translator replayed over recorded app-server transcripts (`tests/fixtures/codex/app-server`).

use super::*;
use crate::codex::wire::{RpcMessage, parse_rpc_line};
use crate::driver::{ToolCall, TranscriptKind};

/// Replays a recorded stdout: answers reveal the thread and turn ids, notifications are translated.
fn replay(stdout: &str) -> (Translator, Vec<DriverEvent>) {
    let mut tr = Translator::new();
    let mut out = Vec::new();
    for line in stdout.lines() {
        match parse_rpc_line(line).unwrap() {
            RpcMessage::Notification { notification, .. } => out.extend(tr.handle(notification)),
            m @ RpcMessage::Response { .. } => {
                let v = m.result_value().unwrap().unwrap();
                if let Some(t) = v["thread"]["id"].as_str() {
                    out.extend(tr.begin_thread(t, v["model"].as_str()));
                } else if let Some(t) = v["turn"]["id"].as_str() {
                    out.extend(tr.begin_turn(t));
                }
            }
            _ => {}
        }
    }
    (tr, out)
}

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/codex/app-server/{name}.stdout.jsonl",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    std::fs::read_to_string(path).unwrap()
}

fn texts(out: &[DriverEvent]) -> String {
    out.iter()
        .filter_map(|e| match e {
            DriverEvent::TextDelta(t) if t.phase == Phase::Content => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_text_turn_streams_once_and_reports_usage() {
    let (mut tr, out) = replay(&fixture("text_reasoning"));
    assert_eq!(texts(&out), "Hi! I am the mock model.");
    assert_eq!(tr.last_text(), Some("Hi! I am the mock model."));
    let starts = out
        .iter()
        .filter(|e| matches!(e, DriverEvent::TextDelta(t) if t.phase == Phase::Start))
        .count();
    assert_eq!(starts, 1);
    let thinking: String = out
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Thinking(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(thinking.starts_with("Thinking about a greeting."), "{thinking:?}");
    let usage = tr.usage().unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (100, 20));
    assert_eq!(tr.terminal().unwrap().status, TurnStatus::Completed);
    let report = out.iter().find_map(|e| match e {
        DriverEvent::TurnCompleted(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(report.unwrap().text, "Hi! I am the mock model.");
    let kinds: Vec<_> = tr.take_transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(
        kinds,
        [
            TranscriptKind::Init,
            TranscriptKind::Thinking,
            TranscriptKind::Assistant,
            TranscriptKind::Result
        ]
    );
    // Unknown methods become notices, except the quiet ones.
    assert!(!out.iter().any(
        |e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_UNKNOWN && n.text.contains("rateLimits"))
    ));
}

#[test]
fn a_command_is_a_shell_tool_with_output_chunks_and_a_result() {
    let (mut tr, out) = replay(&fixture("command_output"));
    let tools: Vec<&ToolCall> = out
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(tools.first().unwrap().phase, Phase::Start);
    assert_eq!(tools[0].name, "shell");
    assert!(
        tools[0].args.as_ref().unwrap()["command"]
            .as_str()
            .unwrap()
            .contains("line-1")
    );
    let chunks: String = tools
        .iter()
        .filter(|t| t.phase == Phase::Content)
        .map(|t| t.args_delta.as_str())
        .collect();
    assert!(
        "line-1\nline-2\n".ends_with(&chunks) && !chunks.is_empty(),
        "{chunks:?}"
    );
    assert_eq!(tools.last().unwrap().phase, Phase::End);
    let result = out
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolResult(r) => Some(r.result.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result["output"], "line-1\nline-2\n");
    assert_eq!(result["exit_code"], 0);
    let t = tr.take_transcript();
    let res = t.iter().find(|i| i.kind == TranscriptKind::ToolResult).unwrap();
    assert!(!res.is_error);
    assert_eq!(
        tr.usage().unwrap().input_tokens,
        200,
        "two model requests in the turn"
    );
}

#[test]
fn a_failed_turn_reports_its_error_and_retries_are_notices() {
    let (tr, out) = replay(&fixture("model_errors"));
    assert!(
        out.iter()
            .any(|e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_RETRY))
    );
    let t = tr.terminal().unwrap();
    assert_eq!(t.status, TurnStatus::Failed);
    let reports: Vec<_> = out
        .iter()
        .filter_map(|e| match e {
            DriverEvent::TurnCompleted(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(reports.len(), 2);
    assert!(reports[0].error.is_none());
    assert!(
        reports[1]
            .error
            .as_deref()
            .unwrap()
            .contains("Bad request (mock)")
    );
}

#[test]
fn foreign_threads_and_old_turns_are_fenced_and_early_frames_queued() {
    let mut tr = Translator::new();
    let delta = |thread: &str, turn: &str, text: &str| {
        ServerNotification::parse(
            "item/agentMessage/delta",
            Some(&format!(
                r#"{{"threadId":"{thread}","turnId":"{turn}","itemId":"m","delta":"{text}"}}"#
            )),
        )
        .unwrap()
    };
    assert!(
        tr.handle(delta("T", "U", "early ")).is_empty(),
        "queued before the ids"
    );
    tr.begin_thread("T", None);
    let out = tr.begin_turn("U");
    assert_eq!(texts(&out), "early ");
    assert!(tr.handle(delta("OTHER", "U", "x")).is_empty());
    assert!(tr.handle(delta("T", "OLD", "x")).is_empty());
    assert_eq!(tr.foreign_frames(), 2);
    assert_eq!(texts(&tr.handle(delta("T", "U", "late"))), "late");
    let done = ServerNotification::parse(
        "turn/completed",
        Some(r#"{"threadId":"T","turn":{"id":"U","status":"completed"}}"#),
    )
    .unwrap();
    let out = tr.handle(done.clone());
    assert!(
        out.iter()
            .any(|e| matches!(e, DriverEvent::TextDelta(t) if t.phase == Phase::End))
    );
    assert!(tr.handle(done).is_empty(), "a second terminal is ignored");
    assert!(
        tr.abort_turn("x").is_empty(),
        "nothing to abort after the terminal"
    );
}

#[test]
fn an_aborted_turn_closes_open_lifecycles() {
    let mut tr = Translator::new();
    tr.begin_thread("T", None);
    tr.begin_turn("U");
    let n = ServerNotification::parse(
        "item/agentMessage/delta",
        Some(r#"{"threadId":"T","turnId":"U","itemId":"m","delta":"par"}"#),
    )
    .unwrap();
    tr.handle(n);
    let out = tr.abort_turn("cancelled");
    assert!(matches!(&out[0], DriverEvent::TextDelta(t) if t.phase == Phase::End));
    assert!(
        matches!(out.last(), Some(DriverEvent::TurnCompleted(r)) if r.error.as_deref() == Some("cancelled"))
    );
}

#[test]
fn a_steer_while_streaming_abandons_the_response_and_says_so() {
    let (tr, out) = replay(&fixture("steer_streaming"));
    assert_eq!(tr.delivered_client_ids(), ["client-msg-1"]);
    let abandoned: Vec<_> = out
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) if n.metadata.get("source").map(String::as_str) == Some("codex.steer") => {
                Some(n)
            }
            _ => None,
        })
        .collect();
    assert_eq!(abandoned.len(), 1, "{abandoned:?}");
    let discarded = abandoned[0].data["discarded_text"].as_str().unwrap();
    assert!(!discarded.is_empty());
    // Every started text block ends exactly once, the abandoned one at the steer.
    let phase = |p: Phase| {
        out.iter()
            .filter(|e| matches!(e, DriverEvent::TextDelta(t) if t.phase == p))
            .count()
    };
    assert_eq!(phase(Phase::Start), phase(Phase::End));
    assert!(tr.last_text().unwrap().contains("STEER while streaming"));
}

#[test]
fn a_steer_during_a_tool_abandons_nothing() {
    let (tr, out) = replay(&fixture("steer_during_tool"));
    assert_eq!(tr.delivered_client_ids(), ["client-msg-2"]);
    assert!(!out.iter().any(
        |e| matches!(e, DriverEvent::Notice(n) if n.metadata.get("source").map(String::as_str) == Some("codex.steer"))
    ));
}
