//! A scripted fake ACP agent (JSON-RPC 2.0 over stdio, one frame per line) for the ACP client driver's
//! tests: the binary `fake-acp-agent` (`src/bin/fake-acp-agent.rs`) serves [`Flavor::Generic`], and
//! `fake-cursor-agent acp` serves [`Flavor::Cursor`], the shape Cursor documents for `agent acp`
//! (`cursor_login` authentication before `session/new`, `session/load` to resume, permission options
//! `allow-once` / `allow-always` / `reject-once`, modes `agent` / `plan` / `ask`).
//!
//! Sessions are stored on disk ([`store`]), so `session/load`, `session/resume` and `session/fork` work
//! across processes. What a prompt does comes from `FAKE_ACP_SCENARIO` or a `scenario=<name>` word in
//! the prompt ([`SCENARIOS`], `scenario.rs`): text, reasoning, a tool call behind a permission, a plan,
//! `fs/*` round trips, an unknown update and notification, malformed frames, a crash mid-turn, a turn
//! that never ends and ignores `session/cancel`, and more.

mod agent;
mod scenario;
pub mod store;

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

pub use agent::Agent;
pub use scenario::{Outcome, SCENARIOS};

/// The fake's version (`agentInfo.version`).
pub const VERSION: &str = "0.0.0-fake";

/// Which agent the fake plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A full-featured ACP agent: `loadSession`, `session/resume`, `session/fork`, `session/list`.
    Generic,
    /// Cursor's `agent acp`, as documented.
    Cursor,
}

/// What the fake reads from its environment.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// Where sessions are stored.
    pub data_dir: Option<PathBuf>,
    /// `FAKE_ACP_SCENARIO`.
    pub scenario: Option<String>,
    /// `FAKE_ACP_DELAY_MS`: pause between streamed chunks (default 0; 300 for `slow`).
    pub delay_ms: Option<u64>,
    /// `FAKE_ACP_SESSION_ID`: the id of the next new session (random otherwise).
    pub session_id: Option<String>,
    /// `FAKE_ACP_CAPS=minimal`: declare no session method beyond `session/new`.
    pub minimal: bool,
    /// `FAKE_ACP_PROTOCOL`: the protocol version answered (default 1).
    pub protocol: Option<u64>,
    /// `FAKE_ACP_REJECT_ENDS_TURN=1`: a rejected permission ends the turn `cancelled`.
    pub reject_ends_turn: bool,
}

impl Env {
    /// Reads the process environment; the data dir defaults to `$HOME/.fake-acp` (`$CURSOR_DATA_DIR/acp`
    /// for Cursor).
    pub fn from_process(flavor: Flavor) -> Env {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let data_dir = var("FAKE_ACP_DATA_DIR")
            .map(PathBuf::from)
            .or_else(|| match flavor {
                Flavor::Cursor => var("CURSOR_DATA_DIR")
                    .map(|d| PathBuf::from(d).join("acp"))
                    .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cursor/acp"))),
                Flavor::Generic => var("HOME").map(|h| PathBuf::from(h).join(".fake-acp")),
            });
        Env {
            data_dir,
            scenario: var("FAKE_ACP_SCENARIO"),
            delay_ms: var("FAKE_ACP_DELAY_MS").and_then(|s| s.parse().ok()),
            session_id: var("FAKE_ACP_SESSION_ID"),
            minimal: var("FAKE_ACP_CAPS").as_deref() == Some("minimal"),
            protocol: var("FAKE_ACP_PROTOCOL").and_then(|s| s.parse().ok()),
            reject_ends_turn: var("FAKE_ACP_REJECT_ENDS_TURN").as_deref() == Some("1"),
        }
    }
}

/// Reads `input` on a thread of its own (so a turn can watch for `session/cancel` while it works) and
/// serves until the input closes. Returns how the process must end.
pub fn serve<R, W>(flavor: Flavor, env: Env, input: R, out: W) -> Outcome
where
    R: BufRead + Send + 'static,
    W: Write + 'static,
{
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in input.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut agent = Agent::new(flavor, env, rx, out);
    loop {
        let Some(msg) = agent.recv(None) else {
            return Outcome::Exit(0);
        };
        let Some(method) = msg.get("method").and_then(Value::as_str).map(str::to_owned) else {
            continue; // a response to nothing, or a notification's echo
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = msg.get("id").cloned() else {
            continue; // notifications outside a turn (a late session/cancel) change nothing
        };
        let answer = match method.as_str() {
            "initialize" => Ok(agent.initialize()),
            "authenticate" => agent.authenticate(&params),
            "session/new" => agent.new_session(&params),
            "session/load" => agent.load_session(&params, true),
            "session/resume" if agent.declares_sessions() => agent.load_session(&params, false),
            "session/fork" if agent.declares_sessions() => agent.fork_session(&params),
            "session/set_mode" => agent.set_mode(&params),
            "session/set_model" => Ok(json!({})),
            "session/prompt" => match scenario::prompt(&mut agent, &params) {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(e),
                Err(end) => return end,
            },
            _ => Err(agent::error(-32601, "Method not found")),
        };
        agent.respond(id, answer);
    }
}

/// How long [`Agent::pause`] waits between streamed chunks of the `slow` scenario.
pub const SLOW_DELAY: Duration = Duration::from_millis(300);

#[cfg(test)]
mod tests;
