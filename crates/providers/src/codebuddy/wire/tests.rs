//! Unit tests: every line of every recorded fixture parses to a modelled frame; the host's frames serialize
//! to the exact shapes the CLI accepted in the recordings; errors are typed.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

fn fixture_dir() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures/codebuddy")
}

fn fixture_files(ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(ext))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no *{ext} fixtures");
    v
}

fn frames(file: &str) -> Vec<Frame> {
    std::fs::read_to_string(fixture_dir().join(file))
        .unwrap()
        .lines()
        .map(|l| parse_line(l).unwrap())
        .collect()
}

#[test]
fn every_fixture_line_parses_to_a_modelled_frame() {
    let mut count = 0;
    for file in fixture_files(".jsonl") {
        for (i, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let f = parse_line(line).unwrap_or_else(|e| panic!("{}:{}: {e}", file.display(), i + 1));
            let where_ = format!("{}:{}", file.display(), i + 1);
            match &f {
                Frame::Unknown(_) | Frame::SystemOther(_) => panic!("{where_}: unmodelled frame {line}"),
                Frame::StreamEvent(e) => {
                    assert!(!matches!(e.event, StreamEvent::Other { .. }), "{where_}");
                    if let StreamEvent::ContentBlockDelta { delta, .. } = &e.event {
                        assert!(!matches!(delta, Delta::Other { .. }), "{where_}");
                    }
                }
                Frame::Assistant(a) => {
                    for b in &a.message.content {
                        assert!(!matches!(b, ContentBlock::Other { .. }), "{where_}");
                    }
                }
                Frame::ControlRequest(r) => assert!(matches!(r.request, RequestKind::Known(_)), "{where_}"),
                _ => {}
            }
            // Serializing and parsing again gives the same value.
            if let Frame::StreamEvent(e) = &f {
                let back: StreamEventFrame =
                    serde_json::from_value(serde_json::to_value(e).unwrap()).unwrap();
                assert_eq!(&back, e, "{where_}");
            }
            count += 1;
        }
    }
    assert!(count > 250, "only {count} lines");
}

#[test]
fn every_recorded_host_frame_is_an_input_frame_that_round_trips() {
    let mut count = 0;
    for file in fixture_files(".meta.json") {
        let meta: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for run in meta["runs"].as_array().unwrap() {
            for e in run["timeline"].as_array().unwrap() {
                if e["dir"] != "in" {
                    continue;
                }
                let f = InputFrame::parse_line(&e["frame"].to_string())
                    .unwrap_or_else(|err| panic!("{}: {err}: {}", file.display(), e["frame"]));
                assert_eq!(
                    serde_json::to_value(&f).unwrap(),
                    e["frame"],
                    "{}",
                    file.display()
                );
                count += 1;
            }
        }
    }
    assert!(count >= 20, "{count}");
}

#[test]
fn headless_text_stream_and_result() {
    let fs = frames("headless_text.jsonl");
    let Frame::SystemInit(init) = &fs[0] else {
        panic!("{:?}", fs[0])
    };
    assert_eq!(init.uuid.as_deref(), Some(init.session_id.as_str()));
    assert_eq!(init.permission_mode.as_deref(), Some("default"));
    assert!(init.tools.iter().any(|t| t == "Bash"));
    let text: String = fs
        .iter()
        .filter_map(|f| match f {
            Frame::StreamEvent(StreamEventFrame {
                event:
                    StreamEvent::ContentBlockDelta {
                        delta: Delta::Text(t),
                        ..
                    },
                ..
            }) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let Some(Frame::Result(r)) = fs.last() else {
        panic!()
    };
    assert!(r.is_success() && fs.last().unwrap().is_terminal());
    assert_eq!(r.result.as_deref(), Some(text.as_str()));
    assert!(
        fs.iter()
            .all(|f| f.session_id().is_none_or(|s| s == init.session_id))
    );
    assert!(
        fs.iter()
            .any(|f| matches!(f, Frame::SystemStatus(s) if s.status.is_none()))
    );
    assert!(fs.iter().any(|f| matches!(f, Frame::FileHistorySnapshot(_))));
}

#[test]
fn control_allow_request_and_tool_round_trip() {
    let fs = frames("control_allow.jsonl");
    let Frame::ControlResponse(init) = &fs[0] else {
        panic!()
    };
    assert_eq!(init.response.request_id, INITIALIZE_REQUEST_ID);
    let i = init.as_initialize().unwrap();
    assert!(i.models.iter().any(|m| m.id == "default-model"));
    assert_eq!(i.current_model_id.as_deref(), Some("default-model"));
    let req = fs
        .iter()
        .find_map(|f| match f {
            Frame::ControlRequest(ControlRequest {
                request_id,
                request: RequestKind::Known(ControlRequestBody::CanUseTool(c)),
            }) => Some((request_id.clone(), c.clone())),
            _ => None,
        })
        .unwrap();
    assert!(req.0.starts_with("perm_"));
    assert_eq!(req.1.tool_name, "Bash");
    assert_eq!(req.1.input["command"], "echo hi");
    let partial: String = fs
        .iter()
        .filter_map(|f| match f {
            Frame::StreamEvent(StreamEventFrame {
                event:
                    StreamEvent::ContentBlockDelta {
                        delta: Delta::InputJson(p),
                        ..
                    },
                ..
            }) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(serde_json::from_str::<Value>(&partial).unwrap(), req.1.input);
    let tr = fs
        .iter()
        .find_map(|f| match f {
            Frame::User(u) => match &u.message.content {
                UserContent::Blocks(b) => b.first().cloned(),
                UserContent::Text(_) => None,
            },
            _ => None,
        })
        .unwrap();
    let ContentBlock::ToolResult {
        content,
        is_error,
        meta,
        tool_use_id,
    } = tr
    else {
        panic!()
    };
    assert_eq!(Some(tool_use_id), req.1.tool_use_id);
    assert!(!is_error && content.text().contains("Stdout: hi"));
    assert_eq!(meta.unwrap()["rawResponse"]["exitCode"], 0);
}

#[test]
fn thinking_blocks_and_deltas() {
    let fs = frames("headless_reasoning.jsonl");
    assert!(fs.iter().any(|f| matches!(f, Frame::Assistant(a)
        if matches!(&a.message.content[0], ContentBlock::Thinking { thinking, signature } if thinking == "Let me think." && signature.is_empty()))));
    assert!(fs.iter().any(|f| matches!(
        f,
        Frame::StreamEvent(StreamEventFrame {
            event: StreamEvent::ContentBlockDelta {
                delta: Delta::Thinking(_),
                ..
            },
            ..
        })
    )));
}

#[test]
fn results_errors_denials_structured_output_and_unknown_resume() {
    let Some(Frame::Result(r)) = frames("headless_errors.500.jsonl").pop() else {
        panic!()
    };
    assert!(!r.is_success() && r.subtype == "error_during_execution" && r.result.is_none());
    assert!(r.errors[0].starts_with("500"));
    let Some(Frame::Result(r)) = frames("control_deny_interrupt.jsonl").pop() else {
        panic!()
    };
    assert_eq!(r.permission_denials[0].tool_name, "Bash");
    let Some(Frame::Result(r)) = frames("headless_json_schema.stream.jsonl").pop() else {
        panic!()
    };
    assert_eq!(r.structured_output, Some(json!({"answer": "forty-two", "n": 42})));
    let fs = frames("headless_resume_unknown.jsonl");
    let [Frame::Error(e)] = fs.as_slice() else {
        panic!("{fs:?}")
    };
    assert_eq!(e.unknown_session(), Some("00000000-0000-4000-8000-000000000000"));
    let text = std::fs::read_to_string(fixture_dir().join("headless_json_schema.batch.json")).unwrap();
    let out = parse_json_output(&text).unwrap();
    assert_eq!(
        out.result.structured_output,
        Some(json!({"answer": "forty-two", "n": 42}))
    );
    assert!(out.items.iter().any(|i| i["type"] == "function_call"));
}

#[test]
fn interrupt_response_is_typed() {
    let fs = frames("interrupt_stream.jsonl");
    let r = fs
        .iter()
        .find_map(|f| match f {
            Frame::ControlResponse(c) if c.response.request_id == "req_interrupt_1" => c.as_interrupt(),
            _ => None,
        })
        .unwrap();
    assert!(r.interrupted);
    assert_eq!(r.reason.as_deref(), Some("SDK request"));
}

#[test]
fn host_frames_have_the_exact_shapes() {
    assert_eq!(
        InputFrame::user("hi").to_line(),
        "{\"type\":\"user\",\"session_id\":\"\",\"message\":{\"role\":\"user\",\"content\":\"hi\"},\"parent_tool_use_id\":null}\n"
    );
    assert_eq!(
        serde_json::to_value(InputFrame::initialize()).unwrap(),
        json!({"type": "control_request", "request_id": "agent-adaptor-initialize",
               "request": {"subtype": "initialize", "hasPrompt": true, "capabilities": {"askUserQuestion": true}}})
    );
    assert_eq!(
        serde_json::to_value(InputFrame::interrupt("r1")).unwrap(),
        json!({"type": "control_request", "request_id": "r1", "request": {"subtype": "interrupt"}})
    );
    let allow = PermissionResponse::allow(Some("t1".into()), json!({"command": "ls"}));
    assert_eq!(
        serde_json::to_value(InputFrame::permission("perm_1", &allow)).unwrap(),
        json!({"type": "control_response", "response": {"subtype": "success", "request_id": "perm_1",
               "response": {"allowed": true, "tool_use_id": "t1", "updatedInput": {"command": "ls"}}}})
    );
    let deny = PermissionResponse::deny(Some("t1".into()), "no", true);
    let v = serde_json::to_value(InputFrame::permission("perm_2", &deny)).unwrap();
    assert_eq!(
        v["response"]["response"],
        json!({"allowed": false, "tool_use_id": "t1", "reason": "no", "interrupt": true})
    );
    let InputFrame::ControlResponse(c) = InputFrame::parse_line(&v.to_string()).unwrap() else {
        panic!()
    };
    assert_eq!(c.as_permission(), Some(deny));
}

#[test]
fn tolerance_and_typed_errors() {
    let f = parse_line(r#"{"type":"brand_new","x":1}"#).unwrap();
    assert_eq!(f, Frame::Unknown(json!({"type": "brand_new", "x": 1})));
    assert!(
        matches!(parse_line(r#"{"type":"system","subtype":"compact","session_id":"s"}"#).unwrap(),
        Frame::SystemOther(v) if v["subtype"] == "compact")
    );
    let f = parse_line(
        r#"{"type":"result","subtype":"success","is_error":false,"session_id":"s","new_field":[1]}"#,
    )
    .unwrap();
    assert!(matches!(f, Frame::Result(r) if r.is_success() && r.session_id == "s"));
    let f = parse_line(r#"{"type":"stream_event","event":{"type":"ping"}}"#).unwrap();
    assert!(matches!(f, Frame::StreamEvent(e) if e.event == StreamEvent::Other { kind: "ping".into() }));
    let f =
        parse_line(r#"{"type":"assistant","message":{"id":"m","content":[{"type":"image","source":{}}]}}"#)
            .unwrap();
    assert!(
        matches!(f, Frame::Assistant(a) if a.message.content == [ContentBlock::Other { kind: "image".into() }])
    );
    let f = parse_line(
        r#"{"type":"control_request","request_id":"r","request":{"subtype":"elicitation_create","x":1}}"#,
    )
    .unwrap();
    assert!(matches!(
        f,
        Frame::ControlRequest(ControlRequest {
            request: RequestKind::Other(_),
            ..
        })
    ));
    assert!(matches!(parse_line("   "), Err(ParseError::Empty)));
    assert!(matches!(
        parse_line("Loading config..."),
        Err(ParseError::NotJson(_))
    ));
    assert!(matches!(parse_line("[1,2]"), Err(ParseError::NoType)));
    assert!(matches!(
        parse_line(r#"{"no_type":true}"#),
        Err(ParseError::NoType)
    ));
    let e = parse_line(r#"{"type":"result","subtype":"success"}"#).unwrap_err();
    assert!(
        matches!(&e, ParseError::Malformed { kind, .. } if kind == "result"),
        "{e}"
    );
    assert!(parse_line("{\"type\":\"error\",\"error\":\"x\"}\r\n").is_ok());
    assert!(matches!(
        InputFrame::parse_line(r#"{"type":"result"}"#),
        Err(ParseError::NoType)
    ));
    assert!(matches!(
        InputFrame::parse_line(r#"{"type":"user"}"#),
        Err(ParseError::Malformed { .. })
    ));
    // The fast route and the slow one agree, also when `type` is not the first key.
    let a = parse_line(r#"{"subtype":"status","type":"system","status":null}"#).unwrap();
    assert!(matches!(a, Frame::SystemStatus(_)));
}
