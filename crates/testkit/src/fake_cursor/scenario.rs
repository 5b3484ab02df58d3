//! The scripted behaviours. Each writes documented frames (through `providers::cursor::wire`) and says how
//! the process ends. Chosen by `FAKE_CURSOR_SCENARIO` or a `scenario=<name>` word in the prompt.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::providers::cursor::wire::{
    ContentPart, Frame, Message, MessageFrame, ResultFrame, SystemInit, ToolCall, ToolCallFrame, ToolKind,
    ToolOutcome, to_line,
};

/// Every scenario name.
pub const SCENARIOS: &[&str] = &[
    "text",
    "tools",
    "mcp",
    "task",
    "error",
    "fail",
    "malformed",
    "inconsistent-session",
    "no-terminal",
    "crash",
    "slow",
    "hang",
    "stream",
    "skills",
];

/// How the process ends after the scenario wrote its frames.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit with this code.
    Exit(i32),
    /// Die abruptly (the binary aborts: SIGABRT).
    Crash,
    /// Never exit (the binary sleeps until killed).
    Hang,
}

/// What a scenario needs to know.
pub struct Ctx<'a> {
    /// The chat id (= session_id).
    pub session_id: String,
    /// The workspace (absolute).
    pub workspace: &'a Path,
    /// The prompt.
    pub prompt: String,
    /// Turns already in the chat (0 for a new chat).
    pub previous_turns: usize,
    /// `--force` / `--yolo` given.
    pub force: bool,
    /// The model's display name.
    pub model: String,
    /// `env` when an API key was given, else `login`.
    pub api_key_source: String,
    /// The first MCP server in `CURSOR_HOME/mcp.json`, if any.
    pub mcp_server: Option<String>,
    /// The skills of the `--plugin-dir` plugins.
    pub skills: Vec<super::plugins::FoundSkill>,
    /// Pause between frames.
    pub delay: Duration,
    /// When the run started.
    pub started: Instant,
}

/// Writes frames; remembers the assistant text for the terminal result.
pub struct Out<'a> {
    w: &'a mut dyn Write,
    /// The concatenated assistant text so far.
    pub text: String,
    delay: Duration,
    sent: usize,
}

impl<'a> Out<'a> {
    /// Writes to `w`, pausing `delay` between frames.
    pub fn new(w: &'a mut dyn Write, delay: Duration) -> Out<'a> {
        Out {
            w,
            text: String::new(),
            delay,
            sent: 0,
        }
    }

    /// Writes one raw line.
    pub fn raw(&mut self, line: &str) {
        if self.sent > 0 && !self.delay.is_zero() {
            std::thread::sleep(self.delay);
        }
        self.sent += 1;
        let _ = writeln!(self.w, "{line}");
        let _ = self.w.flush();
    }

    /// Writes one frame.
    pub fn frame(&mut self, f: &Frame) {
        if let Frame::Assistant(m) = f {
            self.text.push_str(&m.message.text());
        }
        self.raw(&to_line(f));
    }
}

fn message(role: &str, text: &str, sid: &str) -> MessageFrame {
    MessageFrame {
        message: Message {
            role: Some(role.to_owned()),
            content: vec![ContentPart {
                kind: "text".to_owned(),
                text: Some(text.to_owned()),
            }],
        },
        session_id: Some(sid.to_owned()),
    }
}

fn tool(out: &mut Out<'_>, sid: &str, call_id: &str, kind: &ToolKind, args: Value, outcome: &ToolOutcome) {
    for (subtype, o) in [("started", None), ("completed", Some(outcome))] {
        out.frame(&Frame::ToolCall(ToolCallFrame {
            subtype: subtype.to_owned(),
            call_id: Some(call_id.to_owned()),
            tool_call: ToolCall::new(kind, args.clone(), o),
            session_id: Some(sid.to_owned()),
        }));
    }
}

fn result(ctx: &Ctx<'_>, text: &str, is_error: bool) -> Frame {
    let ms = ctx.started.elapsed().as_millis() as u64;
    Frame::Result(ResultFrame {
        subtype: Some(if is_error { "error" } else { "success" }.to_owned()),
        is_error: Some(is_error),
        result: Some(text.to_owned()),
        session_id: Some(ctx.session_id.clone()),
        duration_ms: Some(ms),
        duration_api_ms: Some(ms),
        request_id: Some(format!("req-fake-{}", ctx.previous_turns + 1)),
    })
}

fn opening(out: &mut Out<'_>, ctx: &Ctx<'_>) {
    out.frame(&Frame::SystemInit(SystemInit {
        session_id: Some(ctx.session_id.clone()),
        api_key_source: Some(ctx.api_key_source.clone()),
        cwd: Some(ctx.workspace.to_string_lossy().into_owned()),
        model: Some(ctx.model.clone()),
        permission_mode: Some("default".to_owned()),
    }));
    out.frame(&Frame::User(message("user", &ctx.prompt, &ctx.session_id)));
}

/// Runs `name`; returns how to end and, for a completed turn, the reply to store in the chat.
pub fn play(name: &str, ctx: &Ctx<'_>, out: &mut Out<'_>, err: &mut dyn Write) -> (Outcome, Option<String>) {
    let sid = ctx.session_id.as_str();
    let say = |out: &mut Out<'_>, text: &str| out.frame(&Frame::Assistant(message("assistant", text, sid)));
    opening(out, ctx);
    match name {
        "stream" => return super::stream::play(ctx, out),
        "tools" => tools(ctx, out),
        "skills" => {
            let listed: Vec<String> = ctx
                .skills
                .iter()
                .map(|s| format!("{}:{} ({})", s.plugin, s.name, s.description))
                .collect();
            if listed.is_empty() {
                say(out, "No skills.");
            } else {
                say(out, &format!("Skills: {}", listed.join("; ")));
            }
        }
        "mcp" => {
            let server = ctx.mcp_server.clone().unwrap_or_else(|| "fake-server".to_owned());
            say(out, "Calling the MCP tool.");
            let args = json!({"name": format!("{server}-echo"), "args": {"text": "ping"}, "toolName": "echo",
                              "providerIdentifier": server});
            let ok = ToolOutcome::Success(
                json!({"content": [{"text": {"text": "{\"echo\":\"ping\"}"}}], "isError": false}),
            );
            tool(out, sid, "call_mcp_1\nfc_mcp_1", &ToolKind::Mcp, args, &ok);
            say(out, " The server answered ping.");
        }
        "task" => {
            say(out, "Delegating to a subagent.");
            let args = json!({"description": "Plan the change", "prompt": "Make a plan for the change",
                              "subagentType": {"custom": {"name": "fake-planner"}}, "model": "fake-model"});
            let ok = ToolOutcome::Success(json!({"conversationSteps": [], "result": "PLAN: step 1, step 2"}));
            tool(out, sid, "call_task_1", &ToolKind::Task, args, &ok);
            say(out, " The subagent made a plan.");
        }
        "error" => {
            let r = result(
                ctx,
                "fake model error: upstream returned 500 (scenario=error)",
                true,
            );
            out.frame(&r);
            return (Outcome::Exit(1), None);
        }
        "fail" => {
            let _ = writeln!(err, "Error: fake upstream failure (scenario=fail)");
            return (Outcome::Exit(1), None);
        }
        "malformed" => {
            out.raw("Warning: this line is not JSON");
            out.raw(r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"te"#);
            say(out, "Recovered.");
        }
        "inconsistent-session" => {
            let other = format!("{sid}-other");
            out.frame(&Frame::Assistant(message(
                "assistant",
                "From another session.",
                &other,
            )));
        }
        "no-terminal" => {
            say(out, "This turn ends without a result frame.");
            return (Outcome::Exit(0), None);
        }
        "crash" => {
            say(out, "About to run a tool.");
            out.frame(&Frame::ToolCall(ToolCallFrame {
                subtype: "started".to_owned(),
                call_id: Some("call_crash_1".to_owned()),
                tool_call: ToolCall::new(&ToolKind::Read, json!({"path": "README.md"}), None),
                session_id: Some(sid.to_owned()),
            }));
            return (Outcome::Crash, None);
        }
        "hang" => {
            say(out, "Working...");
            return (Outcome::Hang, None);
        }
        "slow" => {
            for piece in ["This ", "answer ", "arrives ", "slowly", "."] {
                say(out, piece);
            }
        }
        _ => {
            let text = format!(
                "Hello from fake cursor-agent (turn {}, {} earlier): {}",
                ctx.previous_turns + 1,
                ctx.previous_turns,
                ctx.prompt.trim()
            );
            say(out, &text);
        }
    }
    let text = out.text.clone();
    let r = result(ctx, &text, false);
    out.frame(&r);
    (Outcome::Exit(0), Some(text))
}

/// Read, write and shell calls; the shell call is refused without `--force`.
fn tools(ctx: &Ctx<'_>, out: &mut Out<'_>) {
    let sid = ctx.session_id.as_str();
    out.frame(&Frame::Assistant(message(
        "assistant",
        "Let me look around.",
        sid,
    )));
    let readme = ctx.workspace.join("README.md");
    let read = match std::fs::read_to_string(&readme) {
        Ok(content) => ToolOutcome::Success(json!({"content": content, "isEmpty": content.is_empty(),
            "exceededLimit": false, "totalLines": content.lines().count(), "totalChars": content.chars().count()})),
        Err(e) => ToolOutcome::Error(json!({"errorMessage": format!("Could not read README.md: {e}")})),
    };
    tool(
        out,
        sid,
        "call_read_1",
        &ToolKind::Read,
        json!({"path": "README.md"}),
        &read,
    );
    let file_text = "written by fake cursor-agent\n";
    let target = ctx.workspace.join("fake-cursor-output.txt");
    let write = match std::fs::write(&target, file_text) {
        Ok(()) => ToolOutcome::Success(json!({"path": target.to_string_lossy(), "linesCreated": 1,
            "fileSize": file_text.len()})),
        Err(e) => ToolOutcome::Error(json!({"errorMessage": e.to_string()})),
    };
    let wargs =
        json!({"path": "fake-cursor-output.txt", "fileText": file_text, "toolCallId": "call_write_1"});
    tool(out, sid, "call_write_1", &ToolKind::Write, wargs, &write);
    let cwd = ctx.workspace.to_string_lossy();
    let shell = if ctx.force {
        // The fake never runs commands; it reports what `echo hello` would print.
        ToolOutcome::Success(
            json!({"command": "echo hello", "workingDirectory": cwd, "exitCode": 0,
            "signal": "", "stdout": "hello\n", "stderr": "", "executionTime": 1}),
        )
    } else {
        ToolOutcome::Error(json!({"errorMessage":
            "Command `echo hello` needs approval; rerun with --force to allow commands in print mode"}))
    };
    tool(
        out,
        sid,
        "call_shell_1",
        &ToolKind::Shell,
        json!({"command": "echo hello", "workingDirectory": cwd}),
        &shell,
    );
    let tail = if ctx.force {
        " Ran the command."
    } else {
        " The command was not allowed."
    };
    out.frame(&Frame::Assistant(message("assistant", tail, sid)));
}
