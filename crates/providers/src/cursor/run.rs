//! One invocation: a one-shot `cursor-agent -p --output-format stream-json` process (the prompt on stdin),
//! its profile directories, strict protocol checks, and the response.
//!
//! Profile isolation: the CLI never sees the host user's `~/.cursor`. `CURSOR_HOME`, `CURSOR_CONFIG_DIR`
//! and `CURSOR_DATA_DIR` point under the profile root (stable, so `--resume` finds its chats), `HOME` is
//! pinned to the root, and each run gets its own `TMPDIR`, removed afterwards. A run with skills gets its
//! own plugin (`plugin.rs`, `--plugin-dir`), removed when the run ends.

use std::collections::BTreeMap;
use std::path::Path;

use futures::StreamExt;
use serde_json::Value;

use crate::driver::process::{Line, ProcessRegistry, ProcessSpec, StopPlan, spawn};
use crate::driver::{
    Checkpoint, DecisionKind, DecisionMode, DriverEvent, ExitInfo, Failure, FailureCode, Notice, ProcessInfo,
    ProcessKind, RawStreams, Request, Response, RunIo, SessionPlan, SessionState, TerminalPayload,
    notice_kind, session::PARAM_CWD,
};

use super::config::{CursorConfig, Invocation, args};
use super::profile::{Profile, guard_violation, inherited};
use super::translate::{Translator, is_resume_rejection};
use super::wire::Violation;
use super::{DRIVER_TYPE, plugin};
use crate::skills::SkillOverlay;

/// The failure code for a fork request: `cursor-agent --resume` appends to the parent chat, so a fork
/// cannot be honoured. Not `ResumeRejected`, which would make the core retry with a fresh, unrelated chat.
pub const FORK_UNSUPPORTED: &str = "fork_unsupported";

/// Runs one invocation.
pub async fn run(config: &CursorConfig, registry: &ProcessRegistry, req: Request, io: RunIo) -> Response {
    let profile = Profile::new(config, &req.identity.profile);
    let resume = match &req.session {
        SessionPlan::Fresh => None,
        SessionPlan::Resume(s) => {
            if let Some(why) = guard_violation(s, &req, &profile) {
                return Response::failed(FailureCode::ResumeRejected, why);
            }
            Some(s.resume_id.clone())
        }
        SessionPlan::Fork(_) => {
            return Response::failed(
                FailureCode::Other(FORK_UNSUPPORTED.into()),
                "cursor-agent cannot fork a chat: --resume appends to the parent chat",
            );
        }
    };
    let tmp = profile.root.join("tmp").join(sanitize(&req.run_id));
    for d in [&profile.home, &profile.config, &profile.data, &tmp] {
        if let Err(e) = std::fs::create_dir_all(d) {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot create the cursor profile directory {}: {e}", d.display()),
            );
        }
    }
    if config.hook_relay.is_some() {
        io.events
            .notice(
                Notice::new(
                    notice_kind::LIFECYCLE,
                    "cursor hooks are not wired in this driver; supplemental input is delivered by turn-end resume",
                )
                .with_meta("code", "cursor_hook_unavailable"),
            )
            .await;
    }
    let plugin = match plugin::project(&req.run_id, &req.skills) {
        Ok(p) => p,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot lay out the run's skills as a plugin: {e}"),
            );
        }
    };
    let dirs = RunDirs {
        profile: &profile,
        tmp: &tmp,
        plugin: plugin.as_ref().map(SkillOverlay::root),
    };
    let response = invoke(config, registry, &req, &io, &dirs, resume.as_deref()).await;
    let _ = std::fs::remove_dir_all(&tmp);
    drop(plugin);
    response
}

fn sanitize(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "run".into() } else { s }
}

/// The directories one invocation uses.
#[derive(Clone, Copy)]
struct RunDirs<'a> {
    profile: &'a Profile,
    /// The run's `TMPDIR`.
    tmp: &'a Path,
    /// The run's plugin (`--plugin-dir`), if it has skills.
    plugin: Option<&'a Path>,
}

async fn invoke(
    config: &CursorConfig,
    registry: &ProcessRegistry,
    req: &Request,
    io: &RunIo,
    dirs: &RunDirs<'_>,
    resume: Option<&str>,
) -> Response {
    let RunDirs { profile, tmp, plugin } = *dirs;
    let force = req.policy.approvals.effective_mode(DecisionKind::Permission) == DecisionMode::AutoApprove;
    let inv = Invocation {
        workspace: &req.cwd,
        plugin_dir: plugin,
        resume,
        model: req.model.as_deref(),
        force,
    };
    let program = config.program();
    let spec = ProcessSpec::new(&program)
        .args(args(config, &inv))
        .cwd(&req.cwd)
        .inherit_env(inherited)
        .envs(profile.vars(config, &req.env, tmp))
        .stdin_piped(true)
        .label(format!("cursor-agent {}", req.run_id));
    let mut child = match spawn(registry, spec).await {
        Ok(c) => c,
        Err(e) => {
            return Response::failed(FailureCode::AgentError, format!("cannot start cursor-agent: {e}"));
        }
    };
    let mut info = ProcessInfo {
        kind: ProcessKind::Spawn,
        text: program.display().to_string(),
        bytes: None,
        metadata: Default::default(),
        data: Default::default(),
    };
    info.metadata.insert("pid".into(), child.pid().to_string());
    io.events.emit(DriverEvent::ProcessInfo(info)).await;
    let Some(mut stdout) = child.take_stdout() else {
        child.stop(StopPlan::new()).await;
        return Response::failed(FailureCode::AgentError, "cursor-agent stdout was not piped");
    };
    let prompt = match config
        .common
        .instructions
        .as_deref()
        .filter(|i| !i.trim().is_empty())
    {
        Some(i) => format!("{i}\n\n{}", req.prompt),
        None => req.prompt.clone(),
    };
    if let Some(stdin) = child.stdin() {
        // The prompt as plain text; frames are single lines, so a multi-line prompt is written line by line.
        for piece in prompt.split('\n') {
            if stdin.send_line(piece).await.is_err() {
                break;
            }
        }
        stdin.close().await;
    }
    let mut tr = Translator::new();
    let mut terminal: Option<Value> = None;
    let mut cancelled = false;
    loop {
        let line = tokio::select! {
            _ = io.cancel.cancelled() => { cancelled = true; break; }
            line = stdout.next() => line,
        };
        let raw = match line {
            None | Some(Err(_)) => break,
            Some(Ok(Line::TooLong { len, .. })) => format!("<line of {len} bytes>"),
            Some(Ok(l)) => {
                let raw = l
                    .raw()
                    .map(|r| String::from_utf8_lossy(r).into_owned())
                    .unwrap_or_default();
                if let Line::Json { value, .. } = &l
                    && value.get("type").and_then(Value::as_str) == Some("result")
                    && terminal.is_none()
                {
                    terminal = Some(value.clone());
                }
                raw
            }
        };
        for ev in tr.line(&raw) {
            io.events.emit(ev).await;
        }
    }
    let grace = config.common.grace();
    let exit = if cancelled {
        child.stop(StopPlan::new().term_grace(grace)).await
    } else {
        // The CLI closed stdout; give it time to exit by itself before stopping it.
        match tokio::time::timeout(grace.max(std::time::Duration::from_secs(5)), child.wait()).await {
            Ok(e) => e,
            Err(_) => child.stop(StopPlan::new().term_grace(grace)).await,
        }
    };
    let (outcome, tail) = tr.finish();
    for ev in tail {
        io.events.emit(ev).await;
    }
    let stderr = child.stderr().take_full().bytes;
    let stderr_text = String::from_utf8_lossy(&stderr).trim().to_owned();
    let exit = ExitInfo {
        code: exit.code,
        signal: exit.signal,
    };
    let report = &outcome.report;
    let failure = if cancelled {
        Some(Failure::new(FailureCode::Cancelled, "cancelled"))
    } else {
        classify(report, exit, &stderr_text, resume).or_else(|| resumed_elsewhere(report, resume))
    };
    let success = failure.is_none() && exit.success() && report.is_success();
    let session_id = report
        .terminal
        .as_ref()
        .and_then(|t| t.session_id.clone())
        .or_else(|| report.session_id.clone());
    let checkpoint = session_id.as_ref().map(|sid| {
        let mut state = SessionState {
            resume_id: sid.clone(),
            display_id: sid.clone(),
            ..Default::default()
        };
        state
            .data
            .insert(PARAM_CWD.into(), req.cwd.to_string_lossy().into_owned());
        for (key, dir) in profile.guards() {
            state.data.insert(key.into(), dir.to_string_lossy().into_owned());
        }
        Checkpoint {
            state,
            valid: success,
        }
    });
    let text = if outcome.text.is_empty() {
        report
            .terminal
            .as_ref()
            .and_then(|t| t.result.clone())
            .unwrap_or_default()
    } else {
        outcome.text.clone()
    };
    let mut metadata = BTreeMap::new();
    if let Some(sid) = &session_id {
        metadata.insert("chat_id".into(), sid.clone());
    }
    Response {
        text,
        summary: String::new(),
        model: outcome
            .model
            .clone()
            .or_else(|| req.model.clone())
            .or_else(|| config.model.clone())
            .unwrap_or_default(),
        provider: DRIVER_TYPE.into(),
        usage: None,
        metadata,
        raw: RawStreams {
            stdout: stdout.take_raw().bytes.to_vec(),
            stderr: stderr.to_vec(),
            terminal: terminal.map(|json| TerminalPayload {
                event: "result".into(),
                json,
            }),
        },
        transcript: outcome.transcript,
        checkpoint,
        failure,
        exit: Some(exit),
        structured: None,
    }
}

/// The failure, if any, in order of precedence: a rejected resume (non-zero exit with the rejection
/// message), a broken protocol on an otherwise clean exit (or any session/terminal-field violation), an
/// error terminal, an abnormal exit.
fn classify(
    report: &super::wire::Report,
    exit: ExitInfo,
    stderr: &str,
    resume: Option<&str>,
) -> Option<Failure> {
    if !exit.success() && resume.is_some() && is_resume_rejection(stderr) {
        return Some(Failure::new(FailureCode::ResumeRejected, stderr.to_owned()));
    }
    // Without a terminal on a failed exit, the documented failure form (exit code + stderr) applies.
    let protocol: Vec<&Violation> = report
        .violations
        .iter()
        .filter(|v| !matches!(v, Violation::NoTerminal) || exit.success())
        .collect();
    if let Some(first) = protocol.first() {
        let mut f = Failure::new(
            FailureCode::Protocol,
            format!("cursor-agent broke its protocol: {first}"),
        );
        f.details.insert(
            "violations".into(),
            protocol.iter().map(|v| v.to_string()).collect::<Vec<_>>().into(),
        );
        return Some(f);
    }
    if let Some(t) = &report.terminal
        && !t.is_success()
    {
        let msg = t
            .result
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "cursor-agent reported an error".into());
        return Some(Failure::new(FailureCode::AgentError, msg));
    }
    if !exit.success() {
        let status = match (exit.code, exit.signal) {
            (_, Some(sig)) => format!("killed by signal {sig}"),
            (Some(code), _) => format!("exit code {code}"),
            _ => "an unknown exit status".into(),
        };
        let msg = if stderr.is_empty() {
            format!("cursor-agent ended with {status}")
        } else {
            format!("cursor-agent ended with {status}: {stderr}")
        };
        return Some(Failure::new(FailureCode::AgentError, msg));
    }
    None
}

/// A resumed run must continue the chat it was asked to resume.
fn resumed_elsewhere(report: &super::wire::Report, resume: Option<&str>) -> Option<Failure> {
    let asked = resume?;
    let got = report.terminal.as_ref().and_then(|t| t.session_id.as_deref())?;
    (got != asked).then(|| {
        Failure::new(
            FailureCode::Protocol,
            format!("cursor-agent was asked to resume chat {asked} but reported chat {got}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_dirs_sit_under_the_root_and_win_over_configured_env() {
        let mut c = CursorConfig {
            profile_dir: Some("/p".into()),
            ..Default::default()
        };
        c.common.env.insert("CURSOR_DATA_DIR".into(), "/elsewhere".into());
        c.common.env.insert("CURSOR_API_KEY".into(), "k".into());
        let p = Profile::new(&c, "ignored");
        let v = p.vars(&c, &BTreeMap::new(), Path::new("/p/tmp/r1"));
        assert_eq!(v["CURSOR_DATA_DIR"], "/p/data");
        assert_eq!(v["CURSOR_HOME"], "/p/home");
        assert_eq!(v["HOME"], "/p");
        assert_eq!(v["TMPDIR"], "/p/tmp/r1");
        assert_eq!(v["CURSOR_API_KEY"], "k");
        let d = Profile::new(&CursorConfig::default(), "a/b");
        assert!(d.root.ends_with(".agent-adaptor/cursor/ab"));
        assert!(inherited("CURSOR_API_KEY") && inherited("PATH") && !inherited("CURSOR_HOME"));
        assert!(!inherited("OPENAI_API_KEY"));
    }

    #[test]
    fn failures_are_classified_in_order() {
        let exit1 = ExitInfo {
            code: Some(1),
            signal: None,
        };
        let ok = ExitInfo {
            code: Some(0),
            signal: None,
        };
        let no_terminal = crate::cursor::wire::validate_lines(std::iter::empty());
        let f = classify(&no_terminal, exit1, "Error: chat x not found", Some("x")).unwrap();
        assert_eq!(f.code, FailureCode::ResumeRejected);
        let f = classify(&no_terminal, exit1, "Error: boom", None).unwrap();
        assert_eq!(f.code, FailureCode::AgentError);
        assert!(f.message.contains("boom"));
        let f = classify(&no_terminal, ok, "", None).unwrap();
        assert_eq!(f.code, FailureCode::Protocol);
        assert!(
            classify(&no_terminal, ok, "", None)
                .unwrap()
                .details
                .contains_key("violations")
        );
        assert_eq!(sanitize("a/b c"), "a_b_c");
        let lines = [
            r#"{"type":"system","subtype":"init","session_id":"other"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"other"}"#,
        ];
        let report = crate::cursor::wire::validate_lines(lines);
        assert_eq!(classify(&report, ok, "", Some("asked")), None);
        let f = resumed_elsewhere(&report, Some("asked")).unwrap();
        assert_eq!(f.code, FailureCode::Protocol);
        assert!(resumed_elsewhere(&report, Some("other")).is_none());
        assert!(resumed_elsewhere(&report, None).is_none());
    }
}
