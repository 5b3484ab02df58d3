//! What a `session/prompt` does, by scenario (`FAKE_ACP_SCENARIO`, else a `scenario=<name>` word in the
//! prompt, else `text`):
//!
//! | scenario | updates and requests | stopReason |
//! |---|---|---|
//! | `text` | "Hello from fake-acp (turn N, M earlier): <prompt>" in three chunks, a `usage_update` | `end_turn` + usage |
//! | `think` | two thought chunks, then the text | `end_turn` |
//! | `tools` | a `tool_call` (`touch fake-acp-marker.txt`), `session/request_permission`; allowed: the file is created and the call completes; rejected: it fails (and with `FAKE_ACP_REJECT_ENDS_TURN=1` the turn ends, as codex-acp's `cancel` option does); cancelled: the turn ends | `end_turn` / `cancelled` |
//! | `plan` | a `plan` of two entries, then text | `end_turn` |
//! | `fs` | `fs/write_text_file` and `fs/read_text_file` in the cwd, a read of `/etc/hostname`; the text reports what the client answered | `end_turn` |
//! | `unknown` | an update of an unknown kind, an unknown notification, an unknown request, then text | `end_turn` |
//! | `malformed` | a non-JSON line, a truncated frame, a frame that is no JSON-RPC, an `agent_message_chunk` without content, then "Recovered." | `end_turn` |
//! | `crash` | a chunk and a tool call in progress, then the process aborts | — |
//! | `hang` | a chunk, then nothing: `session/cancel` is ignored and the process never exits | — |
//! | `slow` | five chunks 300 ms apart, honouring `session/cancel` | `end_turn` / `cancelled` |
//! | `refuse` | a chunk | `refusal` |
//! | `other-session` | an update for another session id, then text | `end_turn` |

use serde_json::{Value, json};

use super::agent::{Agent, error};
use super::store::Turn;

/// Every scenario name.
pub const SCENARIOS: &[&str] = &[
    "text",
    "think",
    "tools",
    "plan",
    "fs",
    "unknown",
    "malformed",
    "crash",
    "hang",
    "slow",
    "refuse",
    "other-session",
];

/// How the process ends when a scenario does not return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exit with this code.
    Exit(i32),
    /// Die abruptly (the binary aborts: SIGABRT).
    Crash,
    /// Never exit (the binary sleeps until killed).
    Hang,
}

fn text_of(params: &Value) -> String {
    params
        .get("prompt")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}})
}

/// Runs a prompt. `Err(outcome)`: the process must end now (crash, hang); `Ok(answer)`: answer it.
pub fn prompt(agent: &mut Agent, params: &Value) -> Result<Result<Value, Value>, Outcome> {
    let sid = params
        .get("sessionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(mut session) = agent.session(&sid) else {
        return Ok(Err(error(-32002, "Resource not found: session")));
    };
    let prompt = text_of(params);
    let name = agent.env.scenario.clone().unwrap_or_else(|| {
        prompt
            .split_whitespace()
            .find_map(|w| w.strip_prefix("scenario="))
            .unwrap_or("text")
            .to_owned()
    });
    agent.cancelled = false;
    let earlier = session.turns.len();
    let mut reply = String::new();
    let say = |agent: &mut Agent, reply: &mut String, t: &str| {
        agent.update(&sid, chunk("agent_message_chunk", t));
        reply.push_str(t);
    };
    let mut stop = "end_turn";
    match name.as_str() {
        "think" => {
            agent.update(&sid, chunk("agent_thought_chunk", "Let me "));
            agent.update(&sid, chunk("agent_thought_chunk", "think."));
            say(agent, &mut reply, "Thought it through.");
        }
        "tools" => stop = tools(agent, &sid, &session.cwd, &mut reply),
        "plan" => {
            agent.update(
                &sid,
                json!({"sessionUpdate": "plan", "entries": [
                {"content": "Read the code", "priority": "high", "status": "completed"},
                {"content": "Write the fix", "priority": "medium", "status": "pending"}]}),
            );
            say(agent, &mut reply, "Here is my plan.");
        }
        "fs" => fs(agent, &sid, &session.cwd, &mut reply),
        "unknown" => {
            agent.update(
                &sid,
                json!({"sessionUpdate": "future_update", "detail": {"x": 1}}),
            );
            agent.notify("_fake/ping", json!({"n": 1}));
            let asked = agent.request("_fake/ask", json!({"sessionId": sid}));
            let said = match asked {
                Ok(_) => "the client answered".to_owned(),
                Err(Some(e)) => format!("the client refused ({})", e["code"]),
                Err(None) => return Err(Outcome::Exit(0)),
            };
            say(agent, &mut reply, &format!("Unknown things sent; {said}."));
        }
        "malformed" => {
            agent.raw("this line is not JSON");
            agent.raw(r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"#);
            agent.raw(r#"{"jsonrpc":"1.0","method":"session/update"}"#);
            agent.raw(r#"[1,2,3]"#);
            agent.update(&sid, json!({"sessionUpdate": "agent_message_chunk"}));
            say(agent, &mut reply, "Recovered.");
        }
        "crash" => {
            agent.update(&sid, chunk("agent_message_chunk", "About to run a tool."));
            agent.update(
                &sid,
                json!({"sessionUpdate": "tool_call", "toolCallId": "call-crash",
                "title": "Read README.md", "kind": "read", "status": "in_progress"}),
            );
            return Err(Outcome::Crash);
        }
        "hang" => {
            agent.update(&sid, chunk("agent_message_chunk", "Working..."));
            return Err(Outcome::Hang);
        }
        "slow" => {
            let delay = agent
                .env
                .delay_ms
                .map_or(super::SLOW_DELAY, std::time::Duration::from_millis);
            for (i, piece) in ["This ", "answer ", "arrives ", "slowly", "."].iter().enumerate() {
                if i > 0 && agent.pause(delay) {
                    stop = "cancelled";
                    break;
                }
                say(agent, &mut reply, piece);
            }
        }
        "refuse" => {
            say(agent, &mut reply, "I cannot help with that.");
            stop = "refusal";
        }
        "other-session" => {
            agent.update("another-session", chunk("agent_message_chunk", "not yours"));
            say(agent, &mut reply, "Only this one is mine.");
        }
        _ => {
            let text = format!(
                "Hello from fake-acp (turn {}, {earlier} earlier): {}",
                earlier + 1,
                prompt.trim()
            );
            let mut parts = text.splitn(3, ' ');
            let (a, b, c) = (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
            );
            for piece in [format!("{a} "), format!("{b} "), c.to_owned()] {
                if !piece.is_empty() {
                    say(agent, &mut reply, &piece);
                }
            }
            agent.update(
                &sid,
                json!({"sessionUpdate": "usage_update", "used": 100 + earlier * 10,
                "size": 200000, "cost": {"amount": 0.002, "currency": "USD"}}),
            );
        }
    }
    if agent.cancelled && stop == "end_turn" {
        stop = "cancelled";
    }
    if stop == "end_turn" {
        session.turns.push(Turn {
            prompt,
            reply: reply.clone(),
        });
        agent.save(&session);
    }
    let words = |s: &str| s.split_whitespace().count() as u64;
    Ok(Ok(json!({
        "stopReason": stop,
        "usage": {"totalTokens": words(&text_of(params)) + words(&reply),
                  "inputTokens": words(&text_of(params)), "outputTokens": words(&reply)}
    })))
}

fn tools(agent: &mut Agent, sid: &str, cwd: &str, reply: &mut String) -> &'static str {
    let say = |agent: &mut Agent, reply: &mut String, t: &str| {
        agent.update(sid, chunk("agent_message_chunk", t));
        reply.push_str(t);
    };
    say(agent, reply, "I will create a file.");
    let call = json!({"toolCallId": "call-1", "title": "touch fake-acp-marker.txt", "kind": "execute",
        "status": "pending", "rawInput": {"command": "touch fake-acp-marker.txt"}});
    let mut announce = call.clone();
    announce["sessionUpdate"] = json!("tool_call");
    agent.update(sid, announce);
    let answer = agent.request(
        "session/request_permission",
        json!({"sessionId": sid, "toolCall": call, "options": agent.permission_options()}),
    );
    let outcome = match answer {
        Ok(v) => v.get("outcome").cloned().unwrap_or(Value::Null),
        Err(_) => Value::Null,
    };
    let chosen = outcome
        .get("optionId")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let selected = outcome.get("outcome").and_then(Value::as_str) == Some("selected");
    let allowed = selected && (chosen.starts_with("allow") || chosen == "always");
    if !selected || agent.cancelled {
        agent.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "failed", "rawOutput": "cancelled"}),
        );
        return "cancelled";
    }
    if allowed {
        let marker = std::path::Path::new(cwd).join("fake-acp-marker.txt");
        let _ = std::fs::write(&marker, "");
        agent.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "in_progress"}),
        );
        agent.update(sid, json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "completed", "rawOutput": {"exit_code": 0},
            "content": [{"type": "content", "content": {"type": "text", "text": format!("created {}", marker.display())}}]}));
        say(agent, reply, format!(" Ran it ({chosen}).").as_str());
    } else {
        agent.update(
            sid,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": "failed", "rawOutput": "rejected by the user"}),
        );
        if agent.env.reject_ends_turn {
            return "cancelled"; // as codex-acp does with its `cancel` option
        }
        say(agent, reply, format!(" It was not allowed ({chosen}).").as_str());
    }
    "end_turn"
}

fn fs(agent: &mut Agent, sid: &str, cwd: &str, reply: &mut String) {
    let note = std::path::Path::new(cwd).join("fs-note.txt");
    let note = note.to_string_lossy().into_owned();
    let w = agent.request(
        "fs/write_text_file",
        json!({"sessionId": sid, "path": note, "content": "note from fake-acp\n"}),
    );
    let r = agent.request("fs/read_text_file", json!({"sessionId": sid, "path": note}));
    let outside = agent.request(
        "fs/read_text_file",
        json!({"sessionId": sid, "path": "/etc/hostname"}),
    );
    let show = |r: &Result<Value, Option<Value>>| match r {
        Ok(v) => v
            .get("content")
            .and_then(Value::as_str)
            .map_or_else(|| "ok".to_owned(), |c| format!("{:?}", c)),
        Err(Some(e)) => format!("error {}", e["code"]),
        Err(None) => "closed".to_owned(),
    };
    let text = format!(
        "write: {}; read: {}; outside: {}",
        show(&w),
        show(&r),
        show(&outside)
    );
    agent.update(sid, chunk("agent_message_chunk", &text));
    reply.push_str(&text);
}
