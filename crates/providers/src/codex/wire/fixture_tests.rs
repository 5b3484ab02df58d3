//! Parser tests over every recorded line in `tests/fixtures/codex/` (real Codex 0.171.0 output),
//! with specific variant assertions per scenario, and round-trips of every recorded client frame
//! (the exact JSON that worked against the real CLI) through the typed constructors.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::client::{self, ClientRequest};
use super::client_parse::{ClientFrame, parse_client_line};
use super::exec::{ExecEvent, ExecItem, ExecItemStatus, parse_exec_line};
use super::items::{ItemStatus, ThreadItem, TurnStatus};
use super::notify::ServerNotification as N;
use super::results::{
    InitializeResponse, ModelListResponse, ThreadResponse, TurnStartResponse, TurnSteerResponse,
};
use super::rpc::{RpcMessage, parse_rpc_line};
use super::server_request::{
    CommandExecutionApprovalResponse, FileChangeApprovalResponse, McpElicitationResponse,
    PermissionsApprovalResponse, ServerRequest, UserInputResponse,
};

fn dir(kind: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("tests/fixtures/codex")
        .join(kind)
}

/// `name` → file text for every `*.<suffix>` in the fixture dir.
fn files(kind: &str, suffix: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir(kind)).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        if let Some(stem) = name.strip_suffix(suffix) {
            out.insert(stem.to_owned(), std::fs::read_to_string(&p).unwrap());
        }
    }
    out
}

fn exec(name: &str) -> Vec<ExecEvent> {
    let text = std::fs::read_to_string(dir("exec").join(format!("{name}.stdout.jsonl"))).unwrap();
    text.lines().map(|l| parse_exec_line(l).unwrap()).collect()
}

fn rpc(name: &str) -> Vec<RpcMessage> {
    let text = std::fs::read_to_string(dir("app-server").join(format!("{name}.stdout.jsonl"))).unwrap();
    text.lines()
        .map(|l| parse_rpc_line(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
        .collect()
}

fn notifications(msgs: &[RpcMessage]) -> Vec<&N> {
    msgs.iter()
        .filter_map(|m| match m {
            RpcMessage::Notification { notification, .. } => Some(notification),
            _ => None,
        })
        .collect()
}

fn completed_items(msgs: &[RpcMessage]) -> Vec<&ThreadItem> {
    notifications(msgs)
        .into_iter()
        .filter_map(|n| match n {
            N::ItemCompleted(i) => Some(&i.item),
            _ => None,
        })
        .collect()
}

fn server_requests(msgs: &[RpcMessage]) -> Vec<&ServerRequest> {
    msgs.iter()
        .filter_map(|m| match m {
            RpcMessage::Request { request, .. } => Some(request),
            _ => None,
        })
        .collect()
}

fn turn_statuses(msgs: &[RpcMessage]) -> Vec<TurnStatus> {
    notifications(msgs)
        .into_iter()
        .filter_map(|n| match n {
            N::TurnCompleted(t) => Some(t.turn.status),
            _ => None,
        })
        .collect()
}

#[test]
fn every_exec_line_parses_to_a_known_variant() {
    let all = files("exec", ".stdout.jsonl");
    assert!(all.len() >= 10, "fixtures present: {:?}", all.keys());
    for (name, text) in &all {
        for line in text.lines() {
            let ev = parse_exec_line(line).unwrap_or_else(|e| panic!("{name}: {e}"));
            let item = match &ev {
                ExecEvent::Unknown(v) => panic!("{name}: unknown event {v}"),
                ExecEvent::ItemStarted(i) | ExecEvent::ItemUpdated(i) | ExecEvent::ItemCompleted(i) => {
                    Some(i)
                }
                _ => None,
            };
            assert!(
                !matches!(item, Some(ExecItem::Unknown(_))),
                "{name}: unknown item in {line}"
            );
        }
    }
}

#[test]
fn exec_scenarios_have_the_expected_variants() {
    let text = exec("text");
    assert!(matches!(&text[0], ExecEvent::ThreadStarted { thread_id } if !thread_id.is_empty()));
    assert_eq!(text[1], ExecEvent::TurnStarted);
    assert!(
        matches!(&text[2], ExecEvent::ItemCompleted(ExecItem::Reasoning(r)) if r.text == "Thinking about a greeting.")
    );
    assert!(
        matches!(&text[3], ExecEvent::ItemCompleted(ExecItem::AgentMessage(m)) if m.text == "Hi! I am the mock model.")
    );
    assert!(
        matches!(&text[4], ExecEvent::TurnCompleted { usage } if usage.input_tokens == 100 && usage.output_tokens == 20)
    );

    let cmd = exec("command");
    assert!(cmd.iter().any(|e| matches!(e, ExecEvent::ItemStarted(ExecItem::CommandExecution(c)) if c.status == ExecItemStatus::InProgress && c.exit_code.is_none())));
    assert!(cmd.iter().any(|e| matches!(e, ExecEvent::ItemCompleted(ExecItem::CommandExecution(c)) if c.exit_code == Some(0) && c.aggregated_output == "hi-from-tool\n")));

    let patch = exec("apply_patch");
    assert!(patch.iter().any(|e| matches!(e, ExecEvent::ItemCompleted(ExecItem::FileChange(f)) if f.changes[0].kind == "add" && f.status == ExecItemStatus::Completed)));

    let ws = exec("web_search");
    assert!(ws.iter().any(|e| matches!(e, ExecEvent::ItemCompleted(ExecItem::WebSearch(w)) if w.query == "rust serde tolerant enums")));

    let first = exec("resume_first");
    let resumed = exec("resume");
    assert_eq!(first[0], resumed[0], "resume keeps the thread id");

    for name in ["model_error_400", "model_error_429", "dropped_stream"] {
        let ev = exec(name);
        assert!(ev.iter().any(|e| matches!(e, ExecEvent::Error { .. })), "{name}");
        assert!(matches!(ev.last(), Some(ExecEvent::TurnFailed { .. })), "{name}");
    }
    assert!(
        matches!(exec("dropped_stream")[2], ExecEvent::Error { ref message } if message.starts_with("Reconnecting... 1/1"))
    );
    assert!(
        exec("unknown_resume").is_empty(),
        "unknown resume id: nothing on stdout, error on stderr"
    );
    let json: Value = match exec("output_schema").get(2) {
        Some(ExecEvent::ItemCompleted(ExecItem::AgentMessage(m))) => serde_json::from_str(&m.text).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(json["born"], 1815);
}

/// Methods the typed parser deliberately leaves as `Unknown`.
const UNTYPED: &[&str] = &[
    "account/rateLimits/updated",
    "remoteControl/status/changed",
    "thread/settings/updated",
    "thread/readState/changed",
    "thread/goal/cleared",
    "mcpServer/startupStatus/updated",
];

#[test]
fn every_app_server_line_parses_and_items_are_typed() {
    let all = files("app-server", ".stdout.jsonl");
    assert!(all.len() >= 20, "fixtures present: {:?}", all.keys());
    for (name, text) in &all {
        for line in text.lines() {
            let msg = parse_rpc_line(line).unwrap_or_else(|e| panic!("{name}: {e}"));
            match &msg {
                RpcMessage::Unknown(v) => panic!("{name}: unclassified {v}"),
                RpcMessage::Notification {
                    notification: N::Unknown { method, .. },
                    ..
                } => {
                    assert!(
                        UNTYPED.contains(&method.as_str()),
                        "{name}: untyped notification {method}"
                    );
                }
                RpcMessage::Notification {
                    notification: N::ItemStarted(i) | N::ItemCompleted(i),
                    emitted_at_ms,
                } => {
                    assert!(
                        !matches!(i.item, ThreadItem::Unknown(_)),
                        "{name}: untyped item {line}"
                    );
                    assert!(emitted_at_ms.is_some());
                }
                RpcMessage::Request {
                    request: ServerRequest::Unknown { method, .. },
                    ..
                } => {
                    panic!("{name}: untyped server request {method}")
                }
                _ => {}
            }
        }
    }
}

#[test]
fn app_server_responses_decode_into_typed_results() {
    let msgs = rpc("text_reasoning");
    let resp = |i: usize| {
        msgs.iter()
            .find(|m| matches!(m, RpcMessage::Response { id, .. } if *id == super::RequestId::Int(i as i64)))
            .unwrap()
    };
    let init: InitializeResponse = resp(1).decode().unwrap().unwrap();
    assert!(init.user_agent.starts_with("agent-adaptor-lab/0.171.0"));
    let thread: ThreadResponse = resp(2).decode().unwrap().unwrap();
    assert_eq!(thread.model_provider.as_deref(), Some("mock"));
    assert_eq!(thread.model.as_deref(), Some("gpt-5.5"));
    let turn: TurnStartResponse = resp(3).decode().unwrap().unwrap();
    assert_eq!(turn.turn.status, TurnStatus::InProgress);

    let list = rpc("model_list");
    let models: ModelListResponse = list
        .iter()
        .find_map(|m| m.decode::<ModelListResponse>().and_then(Result::ok))
        .unwrap();
    assert!(models.data.iter().any(|m| m.model == "gpt-5.5"));

    let steer = rpc("steer_streaming");
    let ok: TurnSteerResponse = steer
        .iter()
        .find_map(|m| m.decode::<TurnSteerResponse>().and_then(Result::ok))
        .unwrap();
    assert!(!ok.turn_id.is_empty());
}

#[test]
fn app_server_scenarios_have_the_expected_variants() {
    let text = rpc("text_reasoning");
    let n = notifications(&text);
    assert!(
        n.iter()
            .any(|n| matches!(n, N::ReasoningSummaryTextDelta(d) if d.summary_index == Some(0)))
    );
    assert!(
        n.iter()
            .any(|n| matches!(n, N::ReasoningTextDelta(d) if d.content_index == Some(0)))
    );
    assert!(
        n.iter()
            .any(|n| matches!(n, N::ThreadTokenUsageUpdated(u) if u.token_usage.total.total_tokens == 120))
    );
    assert!(completed_items(&text).iter().any(|i| matches!(i, ThreadItem::Reasoning(r) if r.summary == ["Thinking about a greeting."] && r.content == ["raw chain of thought"])));
    assert_eq!(turn_statuses(&text), [TurnStatus::Completed]);

    let cmd = rpc("command_output");
    assert!(
        notifications(&cmd)
            .iter()
            .any(|n| matches!(n, N::CommandExecutionOutputDelta(d) if d.delta.contains("line-")))
    );
    assert!(completed_items(&cmd).iter().any(|i| matches!(i, ThreadItem::CommandExecution(c) if c.exit_code == Some(0) && c.status == ItemStatus::Completed)));

    let accept = rpc("approval_command_accept");
    assert!(
        matches!(server_requests(&accept)[..], [ServerRequest::CommandExecutionApproval(p)] if p.proposed_execpolicy_amendment.as_deref() == Some(&["touch".to_owned(), "approved-marker.txt".to_owned()][..]))
    );
    assert!(
        notifications(&accept)
            .iter()
            .any(|n| matches!(n, N::ServerRequestResolved(r) if r.request_id == super::RequestId::Int(0)))
    );
    let decline = rpc("approval_command_decline");
    assert!(
        completed_items(&decline)
            .iter()
            .any(|i| matches!(i, ThreadItem::CommandExecution(c) if c.status == ItemStatus::Declined))
    );
    let fc = rpc("approval_file_change_decline");
    assert!(matches!(
        server_requests(&fc)[..],
        [ServerRequest::FileChangeApproval(_)]
    ));
    assert!(
        completed_items(&fc)
            .iter()
            .any(|i| matches!(i, ThreadItem::FileChange(f) if f.status == ItemStatus::Declined))
    );
    let elicit = rpc("mcp_elicitation_accept");
    assert!(
        matches!(&server_requests(&elicit)[..], [ServerRequest::McpElicitation(p)] if p.server_name == "probe" && p.tool_approval() == Some("add") && p.meta["tool_params"]["b"] == 3)
    );
    let withdrawn = rpc("interrupt_while_approval_pending");
    assert_eq!(
        turn_statuses(&withdrawn),
        [TurnStatus::Interrupted, TurnStatus::Completed]
    );
    assert!(
        notifications(&withdrawn)
            .iter()
            .any(|n| matches!(n, N::ServerRequestResolved(r) if r.request_id == super::RequestId::Int(0)))
    );
    let perms = rpc("approval_permissions");
    assert!(
        matches!(server_requests(&perms)[..], [ServerRequest::PermissionsApproval(p)] if p.permissions["network"]["enabled"] == true)
    );
    let ui = rpc("request_user_input");
    assert!(
        matches!(server_requests(&ui)[..], [ServerRequest::ToolRequestUserInput(p)] if p.questions.len() == 2 && p.questions[0].is_other && p.is_blocking)
    );

    let steer = rpc("steer_streaming");
    assert!(
        completed_items(&steer).iter().any(
            |i| matches!(i, ThreadItem::UserMessage(u) if u.client_id.as_deref() == Some("client-msg-1"))
        )
    );
    let errs = rpc("steer_errors");
    let messages: Vec<&str> = errs
        .iter()
        .filter_map(|m| match m {
            RpcMessage::Error { error, .. } if error.code == -32600 => Some(error.message.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        messages.contains(&"no active turn to steer") && messages.contains(&"no active turn to interrupt"),
        "{messages:?}"
    );
    assert!(messages.iter().any(|m| m.starts_with("expected active turn id")));
    assert_eq!(
        turn_statuses(&errs),
        [TurnStatus::Completed, TurnStatus::Interrupted]
    );
    assert_eq!(
        turn_statuses(&rpc("interrupt_then_start")),
        [TurnStatus::Interrupted, TurnStatus::Completed]
    );

    let model_errors = rpc("model_errors");
    let retries: Vec<bool> = notifications(&model_errors)
        .iter()
        .filter_map(|n| match n {
            N::Error(e) => Some(e.will_retry),
            _ => None,
        })
        .collect();
    assert!(retries.contains(&true) && retries.contains(&false), "{retries:?}");
    assert_eq!(
        turn_statuses(&model_errors),
        [TurnStatus::Completed, TurnStatus::Failed]
    );

    let fork = rpc("fork");
    let forked: Vec<ThreadResponse> = fork
        .iter()
        .filter_map(|m| m.decode::<ThreadResponse>().and_then(Result::ok))
        .collect();
    assert!(forked.iter().any(|t| t.thread.forked_from_id.is_some()));
    assert!(
        notifications(&rpc("text_reasoning"))
            .iter()
            .any(|n| matches!(n, N::ConfigWarning(_)))
    );
}

#[test]
fn recorded_client_frames_round_trip_through_the_constructors() {
    let all = files("app-server", ".stdin.jsonl");
    let mut checked = 0;
    for (name, text) in &all {
        // Which server request each answered id belongs to, from the same scenario's stdout.
        let mut methods_by_id = BTreeMap::new();
        for m in rpc(name) {
            if let RpcMessage::Request { id, request } = m {
                methods_by_id.insert(id, request.method().to_owned());
            }
        }
        for line in text.lines() {
            let again = match parse_client_line(line).unwrap() {
                ClientFrame::Request { id, request } => {
                    assert!(
                        !matches!(request, ClientRequest::Other { .. }),
                        "{name}: untyped {line}"
                    );
                    request.to_line(&id)
                }
                ClientFrame::Notification { method, .. } => {
                    assert_eq!(method, "initialized");
                    client::initialized()
                }
                ClientFrame::Response { id, result } => {
                    let method = methods_by_id.get(&id).map(String::as_str).unwrap_or_default();
                    match method {
                        "item/commandExecution/requestApproval" => client::response(
                            &id,
                            &serde_json::from_value::<CommandExecutionApprovalResponse>(result).unwrap(),
                        ),
                        "item/fileChange/requestApproval" => client::response(
                            &id,
                            &serde_json::from_value::<FileChangeApprovalResponse>(result).unwrap(),
                        ),
                        "item/permissions/requestApproval" => client::response(
                            &id,
                            &serde_json::from_value::<PermissionsApprovalResponse>(result).unwrap(),
                        ),
                        "mcpServer/elicitation/request" => client::response(
                            &id,
                            &serde_json::from_value::<McpElicitationResponse>(result).unwrap(),
                        ),
                        "item/tool/requestUserInput" => client::response(
                            &id,
                            &serde_json::from_value::<UserInputResponse>(result).unwrap(),
                        ),
                        other => panic!("{name}: answer to unknown request {other:?}"),
                    }
                }
                ClientFrame::Error { id, error } => client::error_response(&id, error.code, &error.message),
            };
            assert_eq!(again, line, "{name}: re-encoded frame differs");
            checked += 1;
        }
    }
    assert!(checked >= 80, "checked {checked} frames");
}
