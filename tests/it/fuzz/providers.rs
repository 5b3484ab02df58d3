//! Fuzz targets for every provider's wire parser, fed mutated sessions recorded from the real CLIs (the
//! fake's for Cursor): each line is parsed, each frame that parses goes through the driver's translator
//! (and, for approval requests, its decision mapping and answer) the way the driver would, and the
//! session ends with the translator's turn abort. No line may panic; a refused line is a typed error
//! with a message.

use agent_adaptor::driver::decisions::DecisionOutcome;
use agent_adaptor::providers::{claude, codebuddy, codex, cursor};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

use super::{Session, fixture_files, fixtures, fuzz, parsed, sessions, vocabulary};

/// The answers a driver gives a decision: every branch of an `answer` function.
fn outcomes() -> [DecisionOutcome; 4] {
    [
        DecisionOutcome::Approved,
        DecisionOutcome::Answered {
            answer: "yes".into(),
            choice: Some("a".into()),
        },
        DecisionOutcome::Denied {
            reason: "no".into(),
            interrupt: false,
        },
        DecisionOutcome::Denied {
            reason: "stop".into(),
            interrupt: true,
        },
    ]
}

/// A refused line carries a message.
fn typed(error: &dyn std::fmt::Display) -> Result<(), TestCaseError> {
    prop_assert!(!error.to_string().is_empty());
    Ok(())
}

#[test]
fn fuzz_claude_stream_json_lines_and_translation() {
    let files = fixture_files(&fixtures("claude"), ".jsonl", &[".stdin.jsonl"]);
    let vocab = vocabulary(&parsed(&files));
    fuzz("claude", sessions(&vocab), |s: Session| {
        let mut t = claude::translate::Translator::new();
        for line in s.lines(&files) {
            match claude::wire::parse_line(&line) {
                Ok(frame) => {
                    if let claude::wire::Frame::ControlRequest(req) = &frame
                        && let claude::wire::CliRequest::CanUseTool(c) = &req.request
                    {
                        let _ = claude::decision::request(c);
                        for o in outcomes() {
                            let _ = claude::decision::answer(c, &o);
                        }
                    }
                    let _ = t.frame(&frame);
                }
                Err(e) => {
                    typed(&e)?;
                    let _ = t.invalid(&String::from_utf8_lossy(&line), &e.to_string());
                }
            }
        }
        if let Some(r) = t.last_result() {
            let _ = claude::translate::final_text(r);
        }
        let _ = (t.usage(), t.take_transcript());
        let _ = t.abort_turn("fuzz");
        Ok(())
    });
}

#[test]
fn fuzz_codebuddy_lines_control_frames_and_translation() {
    let files = fixture_files(&fixtures("codebuddy"), ".jsonl", &[]);
    let vocab = vocabulary(&parsed(&files));
    fuzz("codebuddy", sessions(&vocab), |s: Session| {
        let mut t = codebuddy::translate::Translator::new();
        for line in s.lines(&files) {
            let line = String::from_utf8_lossy(&line);
            match codebuddy::wire::parse_line(&line) {
                Ok(frame) => {
                    if let codebuddy::wire::Frame::ControlRequest(req) = &frame
                        && let codebuddy::wire::RequestKind::Known(
                            codebuddy::wire::ControlRequestBody::CanUseTool(c),
                        ) = &req.request
                    {
                        let _ = codebuddy::decision::request(c);
                        for o in outcomes() {
                            let _ = codebuddy::decision::answer(c, &o);
                        }
                    }
                    let _ = t.frame(&frame);
                }
                Err(e) => {
                    typed(&e)?;
                    let _ = t.invalid(&line, &e.to_string());
                }
            }
            if let Err(e) = codebuddy::wire::InputFrame::parse_line(&line) {
                typed(&e)?;
            }
            if let Err(e) = codebuddy::wire::parse_json_output(&line) {
                typed(&e)?;
            }
        }
        if let Some(r) = t.last_result() {
            let _ = codebuddy::translate::final_text(r, t.turn_text());
        }
        let _ = (t.usage(), t.take_transcript());
        let _ = t.abort_turn("fuzz");
        Ok(())
    });
}

#[test]
fn fuzz_codex_app_server_rpc_lines_requests_and_translation() {
    let files = fixture_files(&fixtures("codex/app-server"), ".stdout.jsonl", &[]);
    let vocab = vocabulary(&parsed(&files));
    fuzz("codex app-server", sessions(&vocab), |s: Session| {
        let mut t = codex::translate::Translator::new();
        let _ = t.begin_thread("thread-fuzz", Some("model"));
        let _ = t.begin_turn("turn-fuzz");
        for line in s.lines(&files) {
            let line = String::from_utf8_lossy(&line);
            match codex::wire::parse_rpc_line(&line) {
                Ok(codex::wire::RpcMessage::Notification { notification, .. }) => {
                    let _ = t.scope(&notification);
                    let _ = t.handle(notification);
                }
                Ok(codex::wire::RpcMessage::Request { id, request }) => {
                    let _ = codex::decision::ask(&request);
                    let _ = codex::decision::abort_interrupts(&request);
                    let _ = codex::decision::refusal(&id, &request);
                    for o in outcomes() {
                        let _ = codex::decision::answer(&id, &request, &o);
                    }
                }
                Ok(msg @ codex::wire::RpcMessage::Response { .. }) => {
                    let _ = msg.decode::<codex::wire::results::ThreadResponse>();
                    let _ = msg.decode::<codex::wire::results::TurnStartResponse>();
                    let _ = msg.result_value();
                }
                Ok(_) => {}
                Err(e) => typed(&e)?,
            }
            if let Err(e) = codex::wire::client_parse::parse_client_line(&line) {
                typed(&e)?;
            }
        }
        let _ = (
            t.usage(),
            t.terminal().cloned(),
            t.last_error().map(ToOwned::to_owned),
        );
        let _ = t.take_transcript();
        let _ = t.abort_turn("fuzz");
        Ok(())
    });
}

#[test]
fn fuzz_codex_exec_json_lines_and_translation() {
    let files = fixture_files(&fixtures("codex/exec"), ".stdout.jsonl", &[]);
    let vocab = vocabulary(&parsed(&files));
    fuzz("codex exec", sessions(&vocab), |s: Session| {
        let mut t = codex::translate::exec::ExecTranslator::new("model");
        for line in s.lines(&files) {
            match codex::wire::parse_exec_line(&String::from_utf8_lossy(&line)) {
                Ok(ev) => {
                    let _ = t.handle(ev);
                }
                Err(e) => typed(&e)?,
            }
        }
        let _ = (
            t.usage(),
            t.terminal().cloned(),
            t.last_error().map(ToOwned::to_owned),
        );
        let _ = t.take_transcript();
        let _ = t.abort_turn("fuzz");
        Ok(())
    });
}

#[test]
fn fuzz_cursor_stream_json_lines_and_translation() {
    let files = fixture_files(&fixtures("cursor"), ".jsonl", &[]);
    let vocab = vocabulary(&parsed(&files));
    fuzz("cursor", sessions(&vocab), |s: Session| {
        let mut t = cursor::translate::Translator::new();
        for line in s.lines(&files) {
            let line = String::from_utf8_lossy(&line);
            if let Err(e) = cursor::wire::parse_line(&line) {
                typed(&e)?;
            }
            let _ = t.line(&line);
        }
        let _ = t.finish();
        Ok(())
    });
}
