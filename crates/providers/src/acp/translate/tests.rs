//! The translator on update sequences shaped like the real adapters' (claude-agent-acp, codex-acp):
//! chunked text and thoughts, a tool call announced then completed or failed, updates of unknown kinds,
//! and the lifecycle and transcript rules the conformance kit checks.

use serde_json::{Value, json};

use super::*;
use agent_adaptor_core::acp::wire::parse_update;
use agent_adaptor_testkit::conformance::{
    verify_run_events, verify_stream_sequence, verify_transcript_mirror,
};

fn feed(tr: &mut Translator, updates: &[Value]) -> Vec<DriverEvent> {
    updates
        .iter()
        .flat_map(|u| tr.update(parse_update(u), u))
        .collect()
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

#[test]
fn text_thoughts_and_a_tool_call_make_whole_lifecycles_and_a_mirrored_transcript() {
    let mut tr = Translator::new();
    let mut events = feed(
        &mut tr,
        &[
            chunk("agent_thought_chunk", "Let me "),
            chunk("agent_thought_chunk", "think."),
            chunk("agent_message_chunk", "I will "),
            chunk("agent_message_chunk", "run it."),
            json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "`touch x`", "kind": "execute",
                   "status": "pending", "rawInput": {"command": "touch x"},
                   "_meta": {"claudeCode": {"toolName": "Bash"}}}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "in_progress"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed",
                   "content": [{"type": "content", "content": {"type": "text", "text": "done"}}]}),
            chunk("agent_message_chunk", "Finished."),
        ],
    );
    events.extend(tr.end_turn(
        Some(StopReason::EndTurn),
        Some(&TurnUsage {
            total_tokens: 3,
            input_tokens: 2,
            output_tokens: 1,
            cached_read_tokens: None,
        }),
        None,
    ));
    assert_eq!(verify_stream_sequence(&events), vec![]);
    assert_eq!(verify_run_events(&events), vec![]);
    let start = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolCall(t) if t.phase == Phase::Start => Some(t.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(start.name, "Bash", "the vendor tool name wins over the title");
    assert_eq!(start.args.unwrap()["command"], "touch x");
    let result = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolResult(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(result.result["text"], "done");
    assert_eq!(result.result["is_error"], false);
    let report = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::TurnCompleted(r) => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(report.text, "I will run it.Finished.");
    assert_eq!(report.usage.unwrap().input_tokens, 2);
    assert_eq!(tr.text(), "I will run it.Finished.");
    let transcript = tr.into_transcript();
    assert_eq!(verify_transcript_mirror(&events, &transcript), vec![]);
    let kinds: Vec<_> = transcript.iter().map(|i| i.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            TranscriptKind::Thinking,
            TranscriptKind::Assistant,
            TranscriptKind::ToolCall,
            TranscriptKind::ToolResult,
            TranscriptKind::Assistant,
            TranscriptKind::Result,
        ]
    );
    assert_eq!(transcript[5].subtype, "end_turn");
}

#[test]
fn unknown_and_invalid_updates_are_notices_and_never_break_the_stream() {
    let mut tr = Translator::new();
    let events = feed(
        &mut tr,
        &[
            json!({"sessionUpdate": "compaction_update", "status": "started"}),
            json!({"sessionUpdate": "agent_message_chunk"}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "AA==", "mimeType": "image/png"}}),
            json!({"sessionUpdate": "plan", "entries": [{"content": "step", "priority": "high", "status": "pending"}]}),
            json!({"sessionUpdate": "usage_update", "used": 5, "size": 10, "cost": {"amount": 0.25, "currency": "USD"}}),
            json!({"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "init"}]}),
            json!({"sessionUpdate": "current_mode_update", "currentModeId": "plan"}),
        ],
    );
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) => Some(n.kind.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            notice_kind::PROVIDER_UNKNOWN,
            notice_kind::PROVIDER_INVALID,
            notice_kind::PROVIDER_UNKNOWN,
            NOTICE_PLAN,
            NOTICE_USAGE,
            NOTICE_COMMANDS,
            NOTICE_MODE,
        ]
    );
    assert_eq!(tr.cost_milli(), Some(250));
    assert_eq!(events.len(), kinds.len(), "nothing but notices");
}

#[test]
fn a_failed_tool_an_unannounced_update_and_a_crash_close_cleanly() {
    let mut tr = Translator::new();
    let mut events = feed(
        &mut tr,
        &[
            json!({"sessionUpdate": "tool_call", "toolCallId": "a", "title": "Read", "kind": "read", "status": "pending"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "a", "status": "failed", "rawOutput": "denied"}),
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "b", "status": "completed", "title": "Edit"}),
            json!({"sessionUpdate": "tool_call", "toolCallId": "c", "title": "", "kind": "fetch", "status": "in_progress"}),
            chunk("agent_message_chunk", "partial"),
        ],
    );
    let failed = events
        .iter()
        .find_map(|e| match e {
            DriverEvent::ToolResult(r) if r.id == "a" => Some(r.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(failed.result["is_error"], true);
    assert_eq!(failed.result["text"], "denied");
    let names: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall(t) if t.phase == Phase::Start => Some(t.name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["Read", "Edit", "fetch"]);
    events.extend(tr.close_all());
    assert_eq!(verify_stream_sequence(&events), vec![]);
    let transcript = tr.into_transcript();
    assert_eq!(verify_transcript_mirror(&events, &transcript), vec![]);
}
