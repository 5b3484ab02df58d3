//! Translator tests on the fake CLI's recorded fixtures (`tests/fixtures/cursor/`): text, tools, MCP,
//! subagents, and every rule-breaking scenario.

use std::collections::HashSet;
use std::path::Path;

use super::*;

fn translate(name: &str) -> (Outcome, Vec<DriverEvent>) {
    let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/cursor")
        .join(name);
    let mut t = Translator::new();
    let mut events = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        if !line.trim().is_empty() {
            events.extend(t.line(line));
        }
    }
    let (outcome, tail) = t.finish();
    events.extend(tail);
    assert_balanced(&events);
    let notices: Vec<TranscriptItem> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Notice(n) if n.kind == notice_kind::TRANSCRIPT_ITEM => n.item.as_deref().cloned(),
            _ => None,
        })
        .collect();
    assert_eq!(
        notices, outcome.transcript,
        "{name}: notices mirror the transcript"
    );
    (outcome, events)
}

fn assert_balanced(events: &[DriverEvent]) {
    let mut open = HashSet::new();
    for e in events {
        let (id, phase) = match e {
            DriverEvent::TextDelta(t) => (format!("t:{}", t.message_id), t.phase),
            DriverEvent::ToolCall(t) => (format!("c:{}", t.id), t.phase),
            DriverEvent::ToolResult(r) => {
                assert!(!r.id.is_empty());
                continue;
            }
            _ => continue,
        };
        match phase {
            Phase::Start => assert!(open.insert(id.clone()), "{id} opened twice"),
            Phase::Content => assert!(open.contains(&id), "{id} content while closed"),
            Phase::End => assert!(open.remove(&id), "{id} closed while not open"),
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
}

fn tool_calls(events: &[DriverEvent]) -> Vec<&ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn text_is_one_lifecycle_per_assistant_message() {
    let (o, events) = translate("text.jsonl");
    assert!(o.report.is_success(), "{:?}", o.report.violations);
    assert!(o.text.starts_with("Hello from fake cursor-agent"));
    assert_eq!(o.model.as_deref(), Some("Auto"));
    let kinds: Vec<_> = o.transcript.iter().map(|i| i.kind.clone()).collect();
    assert_eq!(
        kinds,
        [
            TranscriptKind::Init,
            TranscriptKind::User,
            TranscriptKind::Assistant,
            TranscriptKind::Result
        ]
    );
    let turn = events.iter().find_map(|e| match e {
        DriverEvent::TurnCompleted(t) => Some(t),
        _ => None,
    });
    assert_eq!(turn.unwrap().text, o.text);
}

#[test]
fn tools_open_at_started_and_close_with_their_result() {
    let (o, events) = translate("tools.jsonl");
    assert!(o.report.is_success());
    let calls = tool_calls(&events);
    let names: Vec<&str> = calls
        .iter()
        .filter(|c| c.phase == Phase::Start)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["read", "write", "shell"]);
    let shell_end = calls
        .iter()
        .find(|c| c.id == "call_shell_1" && c.phase == Phase::End)
        .unwrap();
    assert_eq!(shell_end.result.as_ref().unwrap()["status"], "success");
    assert_eq!(shell_end.args.as_ref().unwrap()["command"], "echo hello");
    let result = o
        .transcript
        .iter()
        .find(|i| i.kind == TranscriptKind::ToolResult && i.tool_use_id == "call_shell_1")
        .unwrap();
    assert_eq!(result.text, "hello\n");
    assert_eq!(o.text, "Let me look around. Ran the command.");

    let (o, _) = translate("tools_no_force.jsonl");
    let refused = o
        .transcript
        .iter()
        .find(|i| i.kind == TranscriptKind::ToolResult && i.tool_use_id == "call_shell_1")
        .unwrap();
    assert!(
        refused.is_error && refused.text.contains("--force"),
        "{}",
        refused.text
    );
}

#[test]
fn mcp_tools_are_named_by_their_full_name_and_tasks_are_subagents() {
    let (_, events) = translate("mcp.jsonl");
    let start = tool_calls(&events)
        .into_iter()
        .find(|c| c.phase == Phase::Start)
        .unwrap();
    assert!(start.name.ends_with("-echo"), "{}", start.name);
    assert!(start.id.contains('\n'), "call ids may contain a newline");

    let (_, events) = translate("task.jsonl");
    let subs: Vec<&SubagentUpdate> = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::SubagentUpdate(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(subs.len(), 2);
    assert_eq!(
        (subs[0].kind, subs[1].kind),
        (SubagentKind::Started, SubagentKind::Finished)
    );
    assert_eq!(subs[0].member, "fake-planner");
    assert!(subs[1].summary.contains("PLAN"));
}

#[test]
fn rule_breaking_streams_are_reported() {
    let (o, events) = translate("malformed.jsonl");
    assert!(matches!(
        o.report.violations[0],
        wire::Violation::Unparseable { .. }
    ));
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, DriverEvent::Notice(n) if n.kind == notice_kind::PROVIDER_INVALID))
            .count(),
        2
    );
    let (o, _) = translate("inconsistent_session.jsonl");
    assert!(
        o.report
            .violations
            .iter()
            .any(|v| matches!(v, wire::Violation::SessionMismatch { .. }))
    );
    let (o, _) = translate("no_terminal.jsonl");
    assert_eq!(o.report.violations, [wire::Violation::NoTerminal]);
    let (o, events) = translate("crash.jsonl");
    assert!(o.report.terminal.is_none());
    let ends = tool_calls(&events)
        .into_iter()
        .filter(|c| c.phase == Phase::End)
        .count();
    assert_eq!(ends, 1, "the crashed call is closed");
    let (o, _) = translate("error.jsonl");
    assert!(o.report.is_valid() && !o.report.is_success());
}

#[test]
fn resume_rejections_follow_the_go_rule() {
    for yes in [
        "Error: chat 123 not found",
        "Session abc has expired",
        "unable to resume the chat",
        "CHAT DOES NOT EXIST",
    ] {
        assert!(is_resume_rejection(yes), "{yes}");
    }
    for no in [
        "Error: fake upstream failure",
        "not found: chat",
        "network unreachable",
    ] {
        assert!(!is_resume_rejection(no), "{no}");
    }
}
