//! The fake agent's state and I/O: frames out (one per line, flushed), frames in from the reader thread,
//! its own requests to the client (`session/request_permission`, `fs/*`) waited for while a
//! `session/cancel` is noted, and the session-level methods.

use std::collections::VecDeque;
use std::io::Write;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use serde_json::{Value, json};

use super::store::{self, Session};
use super::{Env, Flavor, VERSION};

/// A JSON-RPC error object.
pub fn error(code: i64, message: &str) -> Value {
    json!({ "code": code, "message": message })
}

/// The fake agent.
pub struct Agent {
    /// Which agent it plays.
    pub flavor: Flavor,
    /// Its environment.
    pub env: Env,
    rx: Receiver<String>,
    out: Box<dyn Write>,
    /// Frames read while waiting for something else (served later).
    stash: VecDeque<Value>,
    next_id: u64,
    authenticated: bool,
    /// The current turn saw `session/cancel`.
    pub cancelled: bool,
    /// The session mode (Cursor flavour).
    pub mode: String,
}

impl Agent {
    /// An agent reading frames from `rx` and writing to `out`.
    pub fn new(flavor: Flavor, env: Env, rx: Receiver<String>, out: impl Write + 'static) -> Agent {
        Agent {
            flavor,
            env,
            rx,
            out: Box::new(out),
            stash: VecDeque::new(),
            next_id: 0,
            authenticated: false,
            cancelled: false,
            mode: "agent".into(),
        }
    }

    /// Writes one raw line.
    pub fn raw(&mut self, line: &str) {
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    fn frame(&mut self, v: &Value) {
        let line = v.to_string();
        self.raw(&line);
    }

    /// Answers request `id`.
    pub fn respond(&mut self, id: Value, answer: Result<Value, Value>) {
        let frame = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        self.frame(&frame);
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.frame(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a `session/update`.
    pub fn update(&mut self, session_id: &str, update: Value) {
        self.notify(
            "session/update",
            json!({"sessionId": session_id, "update": update}),
        );
    }

    /// The next frame (stashed first); `None` when the input closed or `timeout` passed.
    pub fn recv(&mut self, timeout: Option<Duration>) -> Option<Value> {
        if let Some(v) = self.stash.pop_front() {
            return Some(v);
        }
        loop {
            let line = match timeout {
                None => self.rx.recv().ok()?,
                Some(t) => match self.rx.recv_timeout(t) {
                    Ok(l) => l,
                    Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return None,
                },
            };
            match serde_json::from_str::<Value>(&line) {
                Ok(v) => return Some(v),
                Err(_) => {
                    let e = error(-32700, "Parse error");
                    self.respond(Value::Null, Err(e));
                }
            }
        }
    }

    fn is_cancel(v: &Value) -> bool {
        v.get("method").and_then(Value::as_str) == Some("session/cancel") && v.get("id").is_none()
    }

    /// Waits up to `d`, noting a `session/cancel`; true when the turn is cancelled.
    pub fn pause(&mut self, d: Duration) -> bool {
        let until = std::time::Instant::now() + d;
        while !self.cancelled {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            match self.rx.recv_timeout(left) {
                Ok(line) => match serde_json::from_str::<Value>(&line) {
                    Ok(v) if Self::is_cancel(&v) => self.cancelled = true,
                    Ok(v) => self.stash.push_back(v),
                    Err(_) => {}
                },
                Err(_) => break,
            }
        }
        self.cancelled
    }

    /// Sends a request to the client and waits for its answer (`Err(None)`: the input closed).
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Option<Value>> {
        self.next_id += 1;
        let id = format!("fake-{}", self.next_id);
        self.frame(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self.rx.recv().map_err(|_| None)?;
            let Ok(v) = serde_json::from_str::<Value>(&line) else {
                self.respond(Value::Null, Err(error(-32700, "Parse error")));
                continue;
            };
            if Self::is_cancel(&v) {
                self.cancelled = true;
                continue;
            }
            if v.get("id").and_then(Value::as_str) == Some(id.as_str()) && v.get("method").is_none() {
                return match (v.get("result"), v.get("error")) {
                    (Some(r), _) => Ok(r.clone()),
                    (_, Some(e)) => Err(Some(e.clone())),
                    _ => Err(Some(error(-32600, "an answer without result or error"))),
                };
            }
            self.stash.push_back(v);
        }
    }

    /// True when the fake declares `session/resume`, `fork` and `list`.
    pub fn declares_sessions(&self) -> bool {
        self.flavor == Flavor::Generic && !self.env.minimal
    }

    /// The `initialize` answer.
    pub fn initialize(&mut self) -> Value {
        let version = self.env.protocol.unwrap_or(1);
        match self.flavor {
            Flavor::Cursor => json!({
                "protocolVersion": version,
                "agentCapabilities": {
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "embeddedContext": true},
                    "mcpCapabilities": {"http": true, "sse": true}
                },
                "authMethods": [{"id": "cursor_login", "name": "Cursor Login",
                                 "description": "Authenticate with your Cursor account"}],
                "agentInfo": {"name": "cursor-agent", "title": "Cursor Agent", "version": super::super::fake_cursor::VERSION}
            }),
            Flavor::Generic => {
                let sessions = if self.env.minimal {
                    json!({})
                } else {
                    json!({"resume": {}, "fork": {}, "list": {}})
                };
                json!({
                    "protocolVersion": version,
                    "agentCapabilities": {
                        "loadSession": !self.env.minimal,
                        "promptCapabilities": {"embeddedContext": true},
                        "mcpCapabilities": {"http": true, "sse": false},
                        "sessionCapabilities": sessions,
                        "_meta": {"fake": {"scenarios": super::SCENARIOS}}
                    },
                    "authMethods": [],
                    "agentInfo": {"name": "fake-acp-agent", "title": "Fake ACP agent", "version": VERSION}
                })
            }
        }
    }

    /// `authenticate`: only the advertised method.
    pub fn authenticate(&mut self, params: &Value) -> Result<Value, Value> {
        let method = params.get("methodId").and_then(Value::as_str).unwrap_or_default();
        if self.flavor == Flavor::Cursor && method == "cursor_login" {
            self.authenticated = true;
            return Ok(json!({}));
        }
        Err(error(-32602, "unknown authentication method"))
    }

    fn check_auth(&self) -> Result<(), Value> {
        if self.flavor == Flavor::Cursor && !self.authenticated {
            return Err(error(-32000, "Authentication required"));
        }
        Ok(())
    }

    fn data_dir(&self) -> Result<std::path::PathBuf, Value> {
        self.env
            .data_dir
            .clone()
            .ok_or_else(|| error(-32603, "no data directory (set FAKE_ACP_DATA_DIR or HOME)"))
    }

    /// `session/new`.
    pub fn new_session(&mut self, params: &Value) -> Result<Value, Value> {
        self.check_auth()?;
        let cwd = params.get("cwd").and_then(Value::as_str).unwrap_or_default();
        if !std::path::Path::new(cwd).is_absolute() {
            return Err(error(-32602, "cwd must be an absolute path"));
        }
        let id = self
            .env
            .session_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let s = Session {
            session_id: id.clone(),
            cwd: cwd.to_owned(),
            turns: Vec::new(),
            mcp_servers: params.get("mcpServers").cloned().unwrap_or(json!([])),
        };
        store::save(&self.data_dir()?, &s).map_err(|e| error(-32603, &e.to_string()))?;
        Ok(match self.flavor {
            Flavor::Cursor => json!({"sessionId": id, "modes": {"currentModeId": self.mode,
                "availableModes": [{"id": "agent", "name": "Agent"}, {"id": "plan", "name": "Plan"},
                                   {"id": "ask", "name": "Ask"}]}}),
            Flavor::Generic => json!({"sessionId": id}),
        })
    }

    /// `session/load` (history replayed as updates) or `session/resume` (no replay).
    pub fn load_session(&mut self, params: &Value, replay: bool) -> Result<Value, Value> {
        self.check_auth()?;
        if self.env.minimal {
            return Err(error(-32601, "Method not found"));
        }
        let id = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(s) = store::load(&self.data_dir()?, id) else {
            return Err(error(-32002, "Resource not found: session"));
        };
        if replay {
            for t in &s.turns {
                self.update(
                    id,
                    json!({"sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": t.prompt}}),
                );
                self.update(
                    id,
                    json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": t.reply}}),
                );
            }
        }
        Ok(json!({}))
    }

    /// `session/fork`: a new session with the parent's turns.
    pub fn fork_session(&mut self, params: &Value) -> Result<Value, Value> {
        let id = params
            .get("sessionId")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let dir = self.data_dir()?;
        let Some(mut s) = store::load(&dir, id) else {
            return Err(error(-32002, "Resource not found: session"));
        };
        s.session_id = uuid::Uuid::new_v4().to_string();
        store::save(&dir, &s).map_err(|e| error(-32603, &e.to_string()))?;
        Ok(json!({"sessionId": s.session_id}))
    }

    /// `session/set_mode`.
    pub fn set_mode(&mut self, params: &Value) -> Result<Value, Value> {
        let mode = params.get("modeId").and_then(Value::as_str).unwrap_or_default();
        if self.flavor == Flavor::Cursor && !["agent", "plan", "ask"].contains(&mode) {
            return Err(error(-32602, "unknown mode"));
        }
        self.mode = mode.to_owned();
        Ok(json!({}))
    }

    /// The stored session `id`.
    pub fn session(&self, id: &str) -> Option<Session> {
        store::load(&self.data_dir().ok()?, id)
    }

    /// Stores `s`.
    pub fn save(&self, s: &Session) {
        if let Ok(dir) = self.data_dir() {
            let _ = store::save(&dir, s);
        }
    }

    /// The permission options this flavour offers.
    pub fn permission_options(&self) -> Value {
        match self.flavor {
            Flavor::Cursor => json!([
                {"optionId": "allow-once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow-always", "name": "Allow always", "kind": "allow_always"},
                {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"}
            ]),
            Flavor::Generic => json!([
                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
                {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
            ]),
        }
    }
}
