//! In-process tests of the fake: argv, env dirs, resume across runs, scenarios, validation of the output.

use regex_lite_free::matches_resume_rejection;

use super::*;
use crate::providers::cursor::wire::{Frame, ToolKind, ToolOutcome, Violation, parse_line, validate_lines};

/// The Go original's resume-rejection rule, written without a regex dependency:
/// `(?i)(session|chat).*(not found|unknown|does not exist|invalid|expired)|unable to (resume|find).*(session|chat)`.
mod regex_lite_free {
    pub fn matches_resume_rejection(text: &str) -> bool {
        let t = text.to_lowercase();
        let after = |hay: &str, a: &[&str], b: &[&str]| {
            a.iter().any(|x| {
                hay.match_indices(x)
                    .any(|(i, _)| b.iter().any(|y| hay[i + x.len()..].contains(y)))
            })
        };
        after(
            &t,
            &["session", "chat"],
            &["not found", "unknown", "does not exist", "invalid", "expired"],
        ) || after(&t, &["unable to resume", "unable to find"], &["session", "chat"])
    }
}

struct Dirs {
    _root: tempfile::TempDir,
    ws: PathBuf,
    env: Env,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let env = Env {
        home: Some(root.path().join("home")),
        cursor_home: Some(root.path().join("cursor-home")),
        config_dir: Some(root.path().join("cursor-config")),
        data_dir: Some(root.path().join("cursor-data")),
        ..Env::default()
    };
    Dirs { _root: root, ws, env }
}

fn go(d: &Dirs, extra: &[&str], stdin: &str) -> (Outcome, Vec<String>, String) {
    let mut argv: Vec<String> = ["-p", "--output-format", "stream-json", "--workspace"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    argv.push(d.ws.to_string_lossy().into_owned());
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    let mut out = Vec::new();
    let mut err = Vec::new();
    let o = run(&argv, &d.env, &mut stdin.as_bytes(), &mut out, &mut err);
    let lines = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    (o, lines, String::from_utf8(err).unwrap())
}

#[test]
fn text_then_resume_keeps_the_chat_and_unknown_id_is_rejected() {
    let d = dirs();
    let (o, lines, _) = go(&d, &[], "hello there\n");
    assert_eq!(o, Outcome::Exit(0));
    let r = validate_lines(lines.iter().map(String::as_str));
    assert!(r.is_success(), "{:?}", r.violations);
    let sid = r.session_id.clone().unwrap();
    assert!(
        r.terminal
            .unwrap()
            .result
            .unwrap()
            .contains("turn 1, 0 earlier): hello there")
    );
    assert!(
        chats_dir(d.env.data_dir.as_ref().unwrap())
            .join(format!("{sid}.json"))
            .is_file()
    );
    let (o, lines, _) = go(&d, &["--resume", &sid], "again");
    assert_eq!(o, Outcome::Exit(0));
    let r = validate_lines(lines.iter().map(String::as_str));
    assert_eq!(
        r.session_id.as_deref(),
        Some(sid.as_str()),
        "resume keeps the session id"
    );
    assert!(
        r.terminal
            .unwrap()
            .result
            .unwrap()
            .contains("turn 2, 1 earlier): again")
    );
    let (o, lines, err) = go(&d, &["--resume", "no-such-chat"], "x");
    assert_eq!(o, Outcome::Exit(1));
    assert!(lines.is_empty());
    assert!(matches_resume_rejection(&err), "{err}");
    assert!(!matches_resume_rejection("all good"));
}

#[test]
fn tools_need_force_for_the_shell_call() {
    let d = dirs();
    std::fs::write(d.ws.join("README.md"), "# Readme\n").unwrap();
    for force in [false, true] {
        let extra: &[&str] = if force { &["--force"] } else { &[] };
        let (o, lines, _) = go(&d, extra, "scenario=tools do things");
        assert_eq!(o, Outcome::Exit(0));
        let r = validate_lines(lines.iter().map(String::as_str));
        assert!(r.is_success(), "{:?}", r.violations);
        let completed: Vec<_> = lines
            .iter()
            .filter_map(|l| match parse_line(l).unwrap() {
                Frame::ToolCall(t) if t.subtype == "completed" => t.tool_call.variant(),
                _ => None,
            })
            .collect();
        let kinds: Vec<ToolKind> = completed.iter().map(|v| v.kind.clone()).collect();
        assert_eq!(kinds, [ToolKind::Read, ToolKind::Write, ToolKind::Shell]);
        assert!(
            matches!(completed[0].outcome(), Some(ToolOutcome::Success(s)) if s["content"] == "# Readme\n")
        );
        let shell = completed[2].outcome().unwrap();
        assert_eq!(shell.is_success(), force, "{shell:?}");
    }
    assert!(d.ws.join("fake-cursor-output.txt").is_file());
}

#[test]
fn mcp_uses_the_server_from_cursor_home() {
    let d = dirs();
    let home = d.env.cursor_home.clone().unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("mcp.json"),
        r#"{"mcpServers":{"agent-adaptor-tools":{"url":"http://127.0.0.1:1/mcp"}}}"#,
    )
    .unwrap();
    let (_, lines, _) = go(&d, &[], "scenario=mcp");
    let v = lines
        .iter()
        .find_map(|l| match parse_line(l).unwrap() {
            Frame::ToolCall(t) => t.tool_call.variant(),
            _ => None,
        })
        .unwrap();
    assert_eq!(v.kind, ToolKind::Mcp);
    assert_eq!(v.args["providerIdentifier"], "agent-adaptor-tools");
}

#[test]
fn failure_scenarios_break_the_rules_they_name() {
    let d = dirs();
    let mut env = d.env.clone();
    let cases: [(&str, Outcome); 7] = [
        ("error", Outcome::Exit(1)),
        ("fail", Outcome::Exit(1)),
        ("malformed", Outcome::Exit(0)),
        ("inconsistent-session", Outcome::Exit(0)),
        ("no-terminal", Outcome::Exit(0)),
        ("crash", Outcome::Crash),
        ("hang", Outcome::Hang),
    ];
    for (name, want) in cases {
        env.scenario = Some(name.to_owned());
        let dd = Dirs {
            _root: tempfile::tempdir().unwrap(),
            ws: d.ws.clone(),
            env: env.clone(),
        };
        let (o, lines, err) = go(&dd, &[], "go");
        assert_eq!(o, want, "{name}");
        let r = validate_lines(lines.iter().map(String::as_str));
        match name {
            "error" => assert!(r.is_valid() && r.terminal.unwrap().is_error == Some(true)),
            "fail" => {
                assert_eq!(r.violations, [Violation::NoTerminal]);
                assert!(err.contains("fake upstream failure"));
            }
            "malformed" => assert_eq!(r.violations.len(), 2, "{:?}", r.violations),
            "inconsistent-session" => {
                assert!(
                    matches!(r.violations[..], [Violation::SessionMismatch { .. }]),
                    "{:?}",
                    r.violations
                )
            }
            _ => assert_eq!(r.violations, [Violation::NoTerminal], "{name}"),
        }
    }
}

#[test]
fn argv_and_env_errors() {
    let d = dirs();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = vec!["--output-format".to_owned(), "stream-json".to_owned()];
    assert_eq!(
        run(&argv, &d.env, &mut &b"x"[..], &mut out, &mut err),
        Outcome::Exit(1),
        "needs -p"
    );
    let argv = vec!["-p".to_owned(), "--bogus".to_owned()];
    assert_eq!(
        run(&argv, &d.env, &mut &b"x"[..], &mut out, &mut err),
        Outcome::Exit(1)
    );
    let (o, _, e) = go(&d, &[], "  ");
    assert_eq!(o, Outcome::Exit(1));
    assert!(e.contains("no prompt"));
    let (o, lines, _) = go(
        &d,
        &[
            "--model",
            "gpt-5",
            "--mode",
            "ask",
            "--plugin-dir",
            "/tmp",
            "words",
            "as",
            "prompt",
        ],
        "",
    );
    assert_eq!(o, Outcome::Exit(0));
    let Frame::SystemInit(init) = parse_line(&lines[0]).unwrap() else {
        panic!()
    };
    assert_eq!(init.model.as_deref(), Some("gpt-5"));
    assert!(lines[1].contains("words as prompt"));
    assert_eq!(scenario_name(&Env::default(), "please scenario=task now"), "task");
    assert_eq!(scenario_name(&Env::default(), "plain"), "text");
}
