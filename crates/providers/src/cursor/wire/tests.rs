//! Unit tests: the documented frames parse, every recorded fake-CLI fixture validates as its scenario says,
//! and each protocol rule is reported as its own typed violation.

use std::path::Path;

use serde_json::json;

use super::*;

const S: &str = "3d1f2a7e-0000-4000-8000-000000000001";

fn line(v: serde_json::Value) -> String {
    v.to_string()
}

fn good_stream() -> Vec<String> {
    vec![
        line(
            json!({"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":S,"model":"Claude 4 Sonnet","permissionMode":"default"}),
        ),
        line(
            json!({"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"session_id":S}),
        ),
        line(
            json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Reading."}]},"session_id":S}),
        ),
        line(
            json!({"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a.txt"}}},"session_id":S}),
        ),
        line(
            json!({"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a.txt"},"result":{"success":{"content":"x","isEmpty":false,"exceededLimit":false,"totalLines":1,"totalChars":1}}}},"session_id":S}),
        ),
        line(
            json!({"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":" Done."}]},"session_id":S}),
        ),
        line(
            json!({"type":"result","subtype":"success","duration_ms":10,"duration_api_ms":10,"is_error":false,"result":"Reading. Done.","session_id":S,"request_id":"r1"}),
        ),
    ]
}

#[test]
fn documented_stream_parses_and_validates() {
    let lines = good_stream();
    let frames: Vec<Frame> = lines.iter().map(|l| parse_line(l).unwrap()).collect();
    let Frame::SystemInit(init) = &frames[0] else {
        panic!()
    };
    assert_eq!(init.api_key_source.as_deref(), Some("login"));
    let Frame::ToolCall(t) = &frames[4] else { panic!() };
    let var = t.tool_call.variant().unwrap();
    assert_eq!(var.kind, ToolKind::Read);
    assert_eq!(var.args_as::<ReadArgs>().unwrap().path, "a.txt");
    assert!(var.outcome().unwrap().is_success());
    let text: String = frames
        .iter()
        .filter_map(|f| match f {
            Frame::Assistant(m) => Some(m.message.text()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Reading. Done.");
    let r = validate(&frames);
    assert!(r.is_success(), "{:?}", r.violations);
    assert_eq!(r.session_id.as_deref(), Some(S));
    assert_eq!(r.frames, 7);
    // to_value and to_line round-trip through parse_line; to_line writes the documented order.
    for f in &frames {
        assert_eq!(&parse_line(&to_value(f).to_string()).unwrap(), f);
        assert_eq!(&parse_line(&to_line(f)).unwrap(), f);
    }
    assert_eq!(
        to_line(&frames[6]),
        format!(
            r#"{{"type":"result","subtype":"success","duration_ms":10,"duration_api_ms":10,"is_error":false,"result":"Reading. Done.","session_id":"{S}","request_id":"r1"}}"#
        )
    );
    assert_eq!(
        to_line(&frames[0]),
        format!(
            r#"{{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/w","session_id":"{S}","model":"Claude 4 Sonnet","permissionMode":"default"}}"#
        )
    );
}

#[test]
fn each_rule_has_its_violation() {
    let mut l = good_stream();
    l[2] = l[2].replace(S, "other-session");
    l[3] = line(
        json!({"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{}},"shellToolCall":{"args":{}}},"session_id":S}),
    );
    l[4] = line(
        json!({"type":"tool_call","subtype":"completed","tool_call":{"readToolCall":{"args":{},"result":{"ok":1}}},"session_id":S}),
    );
    l[5] = line(json!({"type":"assistant","message":{"role":"assistant","content":[]}}));
    l[6] = line(json!({"type":"result","subtype":"success","session_id":S}));
    l.push(line(
        json!({"type":"assistant","message":{"content":[]},"session_id":S}),
    ));
    l.push("not json".to_owned());
    let r = validate_lines(l.iter().map(String::as_str));
    let v = &r.violations;
    assert!(
        v.contains(&Violation::SessionMismatch {
            line: 3,
            expected: S.into(),
            found: "other-session".into()
        }),
        "{v:?}"
    );
    assert!(v.contains(&Violation::ToolCallVariants {
        line: 4,
        keys: vec!["readToolCall".into(), "shellToolCall".into()]
    }));
    assert!(v.contains(&Violation::ToolCallMissingId { line: 5 }));
    assert!(v.contains(&Violation::ToolResultEnvelope { line: 5 }));
    assert!(v.contains(&Violation::MissingSessionId {
        line: 6,
        kind: "assistant".into()
    }));
    assert!(v.contains(&Violation::TerminalMissingField {
        line: 7,
        field: "is_error"
    }));
    assert!(v.contains(&Violation::TerminalMissingField {
        line: 7,
        field: "result"
    }));
    assert!(v.contains(&Violation::AfterTerminal {
        line: 8,
        kind: "assistant".into()
    }));
    assert!(matches!(v.last(), Some(Violation::Unparseable { line: 9, .. })));
    let r = validate_lines(good_stream()[..6].iter().map(String::as_str));
    assert_eq!(r.violations, [Violation::NoTerminal]);
}

#[test]
fn tolerant_of_unknown_frames_fields_and_variants() {
    let f = parse_line(r#"{"type":"thinking","subtype":"delta","text":"hm","session_id":"s"}"#).unwrap();
    assert!(matches!(&f, Frame::Unknown(v) if v["text"] == "hm"));
    let f = parse_line(
        r#"{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s","new":1}"#,
    )
    .unwrap();
    assert!(matches!(f, Frame::Result(r) if r.is_success()));
    let f = parse_line(r#"{"type":"tool_call","subtype":"started","call_id":"c","tool_call":{"fancyNewToolCall":{"args":{"a":1}}},"session_id":"s"}"#).unwrap();
    let Frame::ToolCall(t) = f else { panic!() };
    assert_eq!(
        t.tool_call.variant().unwrap().kind,
        ToolKind::Other("fancyNewToolCall".into())
    );
    let r = validate_lines([r#"{"type":"thinking","text":"no session"}"#, &good_stream()[6]]);
    assert!(r.is_valid(), "{:?}", r.violations);
    assert!(matches!(parse_line(""), Err(ParseError::Empty)));
    assert!(matches!(parse_line("oops"), Err(ParseError::NotJson(_))));
    assert!(matches!(parse_line("{}"), Err(ParseError::NoType)));
    assert!(matches!(
        parse_line(r#"{"type":"user","message":5}"#),
        Err(ParseError::Malformed { .. })
    ));
}

#[test]
fn mcp_and_task_variants_from_the_go_fixture_shape() {
    let mcp = r#"{"type":"tool_call","subtype":"started","call_id":"call_MCP\nfc_MCP","tool_call":{"mcpToolCall":{"args":{"name":"agent-adaptor-tools-alignment_probe","args":{},"toolName":"alignment_probe","providerIdentifier":"agent-adaptor-tools"}}},"session_id":"S"}"#;
    let Frame::ToolCall(t) = parse_line(mcp).unwrap() else {
        panic!()
    };
    let a: McpArgs = t.tool_call.variant().unwrap().args_as().unwrap();
    assert_eq!(a.provider_identifier.as_deref(), Some("agent-adaptor-tools"));
    assert_eq!(t.call_id.as_deref(), Some("call_MCP\nfc_MCP"));
    let task = r#"{"type":"tool_call","subtype":"started","call_id":"call_TASK","tool_call":{"taskToolCall":{"args":{"description":"d","prompt":"p","subagentType":{"custom":{"name":"alignment-planner"}},"model":"gpt-5.2"}}},"session_id":"S"}"#;
    let Frame::ToolCall(t) = parse_line(task).unwrap() else {
        panic!()
    };
    let a: TaskArgs = t.tool_call.variant().unwrap().args_as().unwrap();
    assert_eq!(a.subagent_type.unwrap()["custom"]["name"], "alignment-planner");
}

/// What each recorded fake-CLI fixture must validate as (see `tests/it/cursor_fake.rs`).
#[test]
fn recorded_fixtures_validate_as_their_scenario_says() {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("tests/fixtures/cursor");
    let read = |name: &str| std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).unwrap();
    let report = |name: &str| validate_lines(read(name).lines().collect::<Vec<_>>());
    for ok in [
        "text",
        "tools",
        "tools_no_force",
        "mcp",
        "task",
        "resume_first",
        "resume_second",
        "slow",
    ] {
        let r = report(ok);
        assert!(r.is_success(), "{ok}: {:?}", r.violations);
    }
    let r = report("error");
    assert!(r.is_valid() && !r.is_success(), "{:?}", r.violations);
    assert_eq!(r.terminal.unwrap().is_error, Some(true));
    assert!(matches!(
        report("malformed").violations[0],
        Violation::Unparseable { .. }
    ));
    assert!(
        report("inconsistent_session")
            .violations
            .iter()
            .any(|v| matches!(v, Violation::SessionMismatch { .. }))
    );
    assert_eq!(report("no_terminal").violations, [Violation::NoTerminal]);
    assert!(report("crash").violations.contains(&Violation::NoTerminal));
    assert!(report("fail").violations.contains(&Violation::NoTerminal));
}
