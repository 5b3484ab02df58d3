//! Tolerance of `parse_line` to unknown and broken input, and the input-frame round trip.

use serde_json::{Value, json};

use super::super::*;
use super::{SCENARIOS, fixture_path, lines};

#[test]
fn unknown_and_broken_lines_are_tolerated() {
    let f = parse_line(br#"{"type":"brand_new_frame","x":1}"#).unwrap();
    assert_eq!(f, Frame::Unknown(json!({"type": "brand_new_frame", "x": 1})));
    let f = parse_line(br#"{"type":"system","subtype":"compact_boundary","extra":true}"#).unwrap();
    assert!(matches!(f, Frame::Unknown(_)));
    assert!(matches!(parse_line(b"[1,2]").unwrap(), Frame::Unknown(_)));
    assert!(matches!(
        parse_line(br#"{"no_type":1}"#).unwrap(),
        Frame::Unknown(_)
    ));
    assert!(matches!(parse_line(br#"{"type":3}"#).unwrap(), Frame::Unknown(_)));
    // Unknown fields everywhere are ignored, including in nested events and deltas.
    let f = parse_line(br#"{"type":"stream_event","new":1,"event":{"type":"content_block_delta","index":2,"delta":{"type":"citations_delta","citation":{}}}}"#).unwrap();
    let Frame::StreamEvent(e) = f else { panic!("{f:?}") };
    assert_eq!(
        e.event,
        StreamEvent::ContentBlockDelta {
            index: 2,
            delta: Delta::Unknown("citations_delta".into())
        }
    );
    let f = parse_line(br#"{"type":"stream_event","event":{"type":"future_event"}}"#).unwrap();
    assert!(matches!(
        f,
        Frame::StreamEvent(StreamEventFrame {
            event: StreamEvent::Unknown(_),
            ..
        })
    ));
    // result with "type" last, like the CLI writes it.
    let f = parse_line(
        br#"{"subtype":"success","is_error":false,"result":"ok","session_id":"s","type":"result"}"#,
    )
    .unwrap();
    assert!(matches!(f, Frame::Result(r) if r.result.as_deref() == Some("ok")));
    let f = parse_line(br#"{"type":"control_request","request_id":"r1","request":{"subtype":"hook_callback","callback_id":"c"}}"#).unwrap();
    assert!(
        matches!(f, Frame::ControlRequest(ControlRequest { request: CliRequest::Other { ref subtype, .. }, .. }) if subtype == "hook_callback")
    );
    let f = parse_line(br#"{"type":"command_lifecycle","command_uuid":"u","state":"paused"}"#).unwrap();
    assert!(matches!(
        f,
        Frame::CommandLifecycle(CommandLifecycle {
            state: LifecycleState::Other,
            ..
        })
    ));
    // Escaped type strings still work through the slow probe.
    let f = parse_line(br#"{"type":"resul\u0074","subtype":"success","session_id":"s"}"#).unwrap();
    assert!(matches!(f, Frame::Result(_)));

    assert!(matches!(parse_line(b"  \n"), Err(WireError::Empty)));
    assert!(matches!(
        parse_line(b"Error: something on stdout"),
        Err(WireError::NotJson { .. })
    ));
    assert!(matches!(
        parse_line(br#"{"type":"assistant","message":{"id":"m","con"#),
        Err(WireError::NotJson { .. })
    ));
    let e = parse_line(br#"{"type":"result","subtype":7}"#).unwrap_err();
    assert!(
        matches!(e, WireError::Shape { ref frame, .. } if frame == "result"),
        "{e}"
    );
}

#[test]
fn input_frames_round_trip_against_what_the_cli_accepted() {
    let mut n = 0;
    for name in SCENARIOS {
        let path = fixture_path(&format!("{name}.stdin.jsonl"));
        if !path.exists() {
            continue;
        }
        for l in lines(&format!("{name}.stdin.jsonl")) {
            let original: Value = serde_json::from_str(&l).unwrap();
            let frame: InputFrame = serde_json::from_str(&l).unwrap_or_else(|e| panic!("{name}: {e}: {l}"));
            let back: Value = serde_json::from_str(&frame.to_line()).unwrap();
            assert_eq!(back, original, "{name}");
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} stdin lines");
}

#[test]
fn input_constructors_produce_the_documented_json() {
    let v = |f: InputFrame| serde_json::from_str::<Value>(&f.to_line()).unwrap();
    assert_eq!(
        v(InputFrame::user("say hi")),
        json!({"type":"user","message":{"role":"user","content":"say hi"},"parent_tool_use_id":null,"session_id":""})
    );
    assert_eq!(
        v(InputFrame::user_with("x", "u-1", Some(Priority::Later)))["priority"],
        "later"
    );
    assert_eq!(
        v(InputFrame::initialize("req_1")),
        json!({"type":"control_request","request_id":"req_1","request":{"subtype":"initialize"}})
    );
    assert_eq!(
        v(InputFrame::interrupt("r2"))["request"],
        json!({"subtype":"interrupt"})
    );
    assert_eq!(
        v(InputFrame::allow("abc", json!({"command":"ls"}))),
        json!({"type":"control_response","response":{"subtype":"success","request_id":"abc","response":{"behavior":"allow","updatedInput":{"command":"ls"}}}})
    );
    assert_eq!(
        v(InputFrame::deny("abc", "no", true))["response"]["response"],
        json!({"behavior":"deny","message":"no","interrupt":true})
    );
    assert_eq!(
        v(InputFrame::request(
            "r3",
            SdkRequest::CancelAsyncMessage {
                message_uuid: "u".into()
            }
        ))["request"],
        json!({"subtype":"cancel_async_message","message_uuid":"u"})
    );
    assert_eq!(
        v(InputFrame::error_response("abc", "unsupported"))["response"],
        json!({"subtype":"error","request_id":"abc","error":"unsupported"})
    );
    assert!(InputFrame::user("a").to_line().ends_with("}\n"));
}

#[test]
fn byte_scan_finds_top_level_keys_only() {
    // `type` nested first, the real one at top level last (as in `result` lines).
    let line = br#"{"usage":{"type":"nested","x":[{"type":"deeper"}]},"s":"a \"type\":\"fake\"","subtype":"success","session_id":"s","type":"result"}"#;
    let (ty, sub) = super::super::scan_top_level(line).unwrap();
    assert_eq!(ty.as_deref(), Some("result"));
    assert_eq!(sub.as_deref(), Some("success"));
    assert!(matches!(parse_line(line).unwrap(), Frame::Result(r) if r.subtype == "success"));
    assert!(
        super::super::scan_top_level(br#"{"a":[1,2}"#).is_none() || parse_line(br#"{"a":[1,2}"#).is_err()
    );
    assert!(matches!(
        parse_line(br#"{"a":[1,2}"#),
        Err(WireError::NotJson { .. })
    ));
}
