//! Wire tests: every recorded fixture line decodes to the expected known variant (this file), unknown
//! input stays tolerant and our input frames round-trip to the exact JSON the CLI accepted (`tolerance.rs`).

use std::path::PathBuf;

use serde_json::json;

use super::*;

mod tolerance;

pub(super) fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/claude")
        .join(name)
}

pub(super) fn lines(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(fixture_path(name)).unwrap();
    text.lines().map(str::to_owned).collect()
}

fn frames(name: &str) -> Vec<Frame> {
    lines(&format!("{name}.jsonl"))
        .iter()
        .map(|l| parse_line(l.as_bytes()).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
        .collect()
}

/// A short label per frame, e.g. `stream/text_delta`, `assistant/tool_use`, `lifecycle/started`.
fn kind(f: &Frame) -> String {
    match f {
        Frame::System(s) => match s {
            System::Init(_) => "system/init".into(),
            System::Status(_) => "system/status".into(),
            System::ApiRetry(_) => "system/api_retry".into(),
            System::ThinkingTokens(_) => "system/thinking_tokens".into(),
            System::TaskStarted(_) => "system/task_started".into(),
            System::TaskNotification(_) => "system/task_notification".into(),
        },
        Frame::StreamEvent(e) => match &e.event {
            StreamEvent::MessageStart { .. } => "stream/message_start".into(),
            StreamEvent::ContentBlockStart { content_block, .. } => match content_block {
                ContentBlock::Text { .. } => "stream/start_text".into(),
                ContentBlock::Thinking { .. } => "stream/start_thinking".into(),
                ContentBlock::ToolUse { .. } => "stream/start_tool_use".into(),
                _ => "stream/start_other".into(),
            },
            StreamEvent::ContentBlockDelta { delta, .. } => match delta {
                Delta::Text(_) => "stream/text_delta".into(),
                Delta::InputJson(_) => "stream/input_json_delta".into(),
                Delta::Thinking(_) => "stream/thinking_delta".into(),
                Delta::Signature(_) => "stream/signature_delta".into(),
                Delta::Unknown(t) => format!("stream/unknown_delta:{t}"),
            },
            StreamEvent::ContentBlockStop { .. } => "stream/block_stop".into(),
            StreamEvent::MessageDelta { .. } => "stream/message_delta".into(),
            StreamEvent::MessageStop => "stream/message_stop".into(),
            StreamEvent::Ping => "stream/ping".into(),
            StreamEvent::Error { .. } => "stream/error".into(),
            StreamEvent::Unknown(t) => format!("stream/unknown:{t}"),
        },
        Frame::Assistant(a) => match a.message.content.first() {
            Some(ContentBlock::Text { .. }) => "assistant/text".into(),
            Some(ContentBlock::Thinking { .. }) => "assistant/thinking".into(),
            Some(ContentBlock::ToolUse { .. }) => "assistant/tool_use".into(),
            _ => "assistant/other".into(),
        },
        Frame::User(u) => match &u.message.content {
            MessageContent::Blocks(b) if matches!(b.first(), Some(ContentBlock::ToolResult { .. })) => {
                "user/tool_result".into()
            }
            _ => "user/text".into(),
        },
        Frame::Result(r) => format!("result/{}", r.subtype),
        Frame::ControlRequest(r) => match &r.request {
            CliRequest::CanUseTool(c) => format!("can_use_tool/{}", c.tool_name),
            CliRequest::Other { subtype, .. } => format!("control_request/{subtype}"),
        },
        Frame::ControlResponse(_) => "control_response".into(),
        Frame::ControlCancelRequest(_) => "control_cancel_request".into(),
        Frame::CommandLifecycle(l) => format!("lifecycle/{:?}", l.state).to_lowercase(),
        Frame::Unknown(_) => "unknown".into(),
    }
}

fn kinds(name: &str) -> Vec<String> {
    frames(name).iter().map(kind).collect()
}

/// `expected` occurs in `name`'s kinds in this order (other frames may sit in between).
fn assert_subsequence(name: &str, expected: &[&str]) {
    let got = kinds(name);
    let mut it = got.iter();
    for e in expected {
        assert!(it.any(|g| g == e), "{name}: expected {e:?} (in order) in {got:?}");
    }
}

fn result(name: &str) -> ResultFrame {
    frames(name)
        .into_iter()
        .filter_map(|f| match f {
            Frame::Result(r) => Some(r),
            _ => None,
        })
        .next_back()
        .unwrap()
}

pub(super) const SCENARIOS: &[&str] = &[
    "text_partial",
    "thinking",
    "bash_bypass",
    "json_schema",
    "resume_first",
    "resume_second",
    "fork",
    "resume_unknown",
    "error_529_retried",
    "error_529_exhausted",
    "error_401",
    "error_400",
    "stream_cut",
    "killed_mid_stream",
    "bidi_permission_allow",
    "bidi_permission_deny",
    "bidi_permission_deny_interrupt",
    "bidi_ask_user_question",
    "bidi_plan_allow",
    "bidi_plan_deny",
    "bidi_cancel_request",
    "midrun_next",
    "midrun_later",
    "midrun_now",
    "interrupt_stream",
    "interrupt_tool",
    "cancel_async_message",
];

#[test]
fn every_fixture_line_is_a_known_frame() {
    let mut total = 0;
    for name in SCENARIOS {
        for (i, f) in frames(name).iter().enumerate() {
            assert!(
                !matches!(f, Frame::Unknown(_)),
                "{name}:{}: unknown frame {f:?}",
                i + 1
            );
            total += 1;
        }
    }
    assert!(total >= 250, "only {total} lines");
}

#[test]
fn print_mode_streams() {
    assert_eq!(
        kinds("text_partial"),
        [
            "system/init",
            "system/status",
            "stream/message_start",
            "stream/start_text",
            "stream/text_delta",
            "stream/text_delta",
            "stream/text_delta",
            "stream/text_delta",
            "assistant/text",
            "stream/block_stop",
            "stream/message_delta",
            "stream/message_stop",
            "result/success",
        ]
    );
    let text: String = frames("text_partial")
        .iter()
        .filter_map(|f| match f {
            Frame::StreamEvent(StreamEventFrame {
                event:
                    StreamEvent::ContentBlockDelta {
                        delta: Delta::Text(t),
                        ..
                    },
                ..
            }) => Some(t.as_str().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(Some(text), result("text_partial").result);
    assert_subsequence(
        "thinking",
        &[
            "stream/start_thinking",
            "system/thinking_tokens",
            "stream/thinking_delta",
            "stream/signature_delta",
            "assistant/thinking",
            "stream/start_text",
            "assistant/text",
            "result/success",
        ],
    );
    assert_eq!(
        kinds("bash_bypass"),
        [
            "system/init",
            "assistant/text",
            "assistant/tool_use",
            "user/tool_result",
            "assistant/text",
            "result/success",
        ]
    );
    let r = result("json_schema");
    assert_eq!(r.structured_output, Some(json!({"name": "Ada Lovelace"})));
    assert_eq!(r.stop_reason.as_deref(), Some("tool_use"));
    let first = result("resume_first").session_id;
    assert_eq!(result("resume_second").session_id, first);
    assert_ne!(result("fork").session_id, first);
    let r = result("resume_unknown");
    assert!(r.is_error && r.subtype == "error_during_execution");
    assert!(r.errors.unwrap()[0].starts_with("No conversation found with session ID"));
}

#[test]
fn errors_and_truncation() {
    let retries: Vec<ApiRetry> = frames("error_529_retried")
        .into_iter()
        .filter_map(|f| match f {
            Frame::System(System::ApiRetry(r)) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 2);
    assert_eq!(
        (
            retries[1].attempt,
            retries[1].max_retries,
            retries[1].error_status
        ),
        (2, 3, Some(529))
    );
    assert_eq!(retries[0].error.as_deref(), Some("overloaded"));
    for (name, status) in [
        ("error_529_exhausted", 529),
        ("error_401", 401),
        ("error_400", 400),
    ] {
        let r = result(name);
        // API failures are subtype success + is_error.
        assert!(r.is_error && r.subtype == "success", "{name}");
        assert_eq!(r.api_error_status, Some(status));
        assert_eq!(r.terminal_reason.as_deref(), Some("api_error"));
    }
    let synthetic = frames("error_401").into_iter().find_map(|f| match f {
        Frame::Assistant(a) => Some(a),
        _ => None,
    });
    let a = synthetic.unwrap();
    assert_eq!(a.message.model, "<synthetic>");
    assert_eq!(a.error.as_deref(), Some("authentication_failed"));
    assert_subsequence(
        "stream_cut",
        &[
            "stream/text_delta",
            "stream/block_stop",
            "stream/message_stop",
            "assistant/text",
            "result/success",
        ],
    );
    let k = kinds("killed_mid_stream");
    assert!(!k.iter().any(|k| k.starts_with("result")));
    assert_eq!(k.last().map(String::as_str), Some("stream/text_delta"));
}

#[test]
fn bidirectional_control() {
    assert_subsequence(
        "bidi_permission_allow",
        &[
            "control_response",
            "system/init",
            "assistant/tool_use",
            "can_use_tool/Bash",
            "user/tool_result",
            "result/success",
        ],
    );
    let init = frames("bidi_permission_allow").into_iter().find_map(|f| match f {
        Frame::ControlResponse(r) => r.payload::<InitializeInfo>(),
        _ => None,
    });
    let init = init.unwrap();
    assert_eq!(init.claude_code_version.as_deref(), Some("2.1.332"));
    assert!(init.pid.is_some() && !init.models.is_empty());
    let req = frames("bidi_permission_allow").into_iter().find_map(|f| match f {
        Frame::ControlRequest(ControlRequest {
            request: CliRequest::CanUseTool(c),
            ..
        }) => Some(c),
        _ => None,
    });
    let req = req.unwrap();
    assert_eq!(req.input["command"], "touch created-by-tool.txt && ls");
    assert_eq!(req.permission_suggestions.len(), 3);
    assert!(req.tool_use_id.is_some() && req.blocked_path.is_some());
    assert_eq!(
        result("bidi_permission_deny").permission_denials[0]["tool_name"],
        "Bash"
    );
    assert_subsequence(
        "bidi_permission_deny_interrupt",
        &[
            "can_use_tool/Bash",
            "user/tool_result",
            "user/text",
            "result/error_during_execution",
            "system/init",
            "result/success",
        ],
    );
    assert_subsequence(
        "bidi_ask_user_question",
        &["can_use_tool/AskUserQuestion", "user/tool_result"],
    );
    assert_subsequence(
        "bidi_plan_allow",
        &[
            "can_use_tool/ExitPlanMode",
            "system/status",
            "user/tool_result",
            "result/success",
        ],
    );
    let mode = frames("bidi_plan_allow").into_iter().find_map(|f| match f {
        Frame::System(System::Status(s)) => s.permission_mode,
        _ => None,
    });
    assert_eq!(mode.as_deref(), Some("default"));
    assert_eq!(
        result("bidi_plan_deny").permission_denials[0]["tool_name"],
        "ExitPlanMode"
    );
    assert_subsequence(
        "bidi_cancel_request",
        &[
            "can_use_tool/Bash",
            "control_cancel_request",
            "control_response",
            "user/tool_result",
            "result/error_during_execution",
        ],
    );
}

#[test]
fn midrun_delivery_and_interrupts() {
    let u2 = "11111111-0000-4000-8000-000000000002";
    let lifecycle = |name: &str, uuid: &str| -> Vec<LifecycleState> {
        frames(name)
            .into_iter()
            .filter_map(|f| match f {
                Frame::CommandLifecycle(l) if l.command_uuid == uuid => Some(l.state),
                _ => None,
            })
            .collect()
    };
    use LifecycleState::{Cancelled, Completed, Queued, Started};
    for name in ["midrun_next", "midrun_later", "midrun_now"] {
        assert_eq!(lifecycle(name, u2), [Queued, Started, Completed], "{name}");
    }
    let r = result("midrun_next");
    assert_eq!(r.user_message_uuids.as_ref().map(Vec::len), Some(2));
    let delivered = frames("midrun_next").into_iter().any(|f| {
        matches!(f, Frame::System(System::Status(s))
            if s.user_message_uuids.as_ref().is_some_and(|u| u.iter().any(|x| x == u2)))
    });
    assert!(delivered, "system/status requesting lists the folded uuid");
    let first_now = frames("midrun_now").into_iter().find_map(|f| match f {
        Frame::Result(r) => Some(r),
        _ => None,
    });
    let first_now = first_now.unwrap();
    assert!(!first_now.is_error);
    assert_eq!(first_now.terminal_reason.as_deref(), Some("aborted_streaming"));
    let f = frames("interrupt_stream");
    let ack = f.iter().find_map(|f| match f {
        Frame::ControlResponse(r) => r.payload::<InterruptAck>(),
        _ => None,
    });
    assert_eq!(ack, Some(InterruptAck::default()));
    assert!(
        f.iter()
            .any(|f| matches!(f, Frame::Assistant(a) if a.aborted == Some(true)))
    );
    assert!(
        f.iter()
            .any(|f| matches!(f, Frame::StreamEvent(e) if e.abandoned_blocks.is_some()))
    );
    assert_eq!(
        lifecycle("interrupt_stream", "11111111-0000-4000-8000-000000000001").last(),
        Some(&Cancelled)
    );
    assert_subsequence(
        "interrupt_tool",
        &[
            "assistant/tool_use",
            "control_response",
            "user/tool_result",
            "user/text",
            "result/error_during_execution",
            "lifecycle/cancelled",
        ],
    );
    let cancel = frames("cancel_async_message").into_iter().find_map(|f| match f {
        Frame::ControlResponse(r) => r.payload::<CancelAsyncAck>().filter(|a| a.message_uuid.is_some()),
        _ => None,
    });
    assert!(cancel.unwrap().cancelled);
    assert_eq!(lifecycle("cancel_async_message", u2), [Queued, Cancelled]);
}
