//! One live CodeBuddy process under test: writes frames to its stdin, reads stdout line by line with
//! timestamps, and keeps a timeline of both directions for the fixture's `.meta.json`.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;

/// One timeline entry: a frame written, a line read, or a note from the harness.
pub type Entry = Value;

/// What a finished run leaves behind.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Every stdout line, verbatim.
    pub lines: Vec<String>,
    /// `{"t":ms,"dir":"in","frame":…}`, `{"t":ms,"dir":"out","line":i,"kind":…}`, `{"t":ms,"dir":"note",…}`.
    pub timeline: Vec<Entry>,
    /// The exit code, `None` when killed by a signal.
    pub exit_code: Option<i32>,
    /// Set when the harness had to kill the process (it did not exit after stdin closed).
    pub killed: bool,
    /// The last 4 KiB of stderr.
    pub stderr_tail: String,
}

/// A running process.
pub struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::UnboundedReceiver<Value>,
    start: Instant,
    shared: Arc<Mutex<(Vec<String>, Vec<Entry>)>>,
    stderr: tokio::task::JoinHandle<String>,
}

/// The `type[/subtype]` (or `stream_event/<event.type>`, `control_request/<subtype>`) of a frame.
pub fn kind(v: &Value) -> String {
    let t = v.get("type").and_then(Value::as_str).unwrap_or("?");
    let sub = match t {
        "stream_event" => v.pointer("/event/type"),
        "control_request" => v.pointer("/request/subtype"),
        "control_response" => v.pointer("/response/subtype"),
        _ => v.get("subtype"),
    };
    match sub.and_then(Value::as_str) {
        Some(s) => format!("{t}/{s}"),
        None => t.to_owned(),
    }
}

impl Session {
    /// Spawns `cmd` (stdio piped) and starts reading.
    pub fn spawn(mut cmd: Command) -> Session {
        let mut child = cmd.spawn().expect("spawn codebuddy");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout piped");
        let mut stderr = child.stderr.take().expect("stderr piped");
        let start = Instant::now();
        let shared = Arc::new(Mutex::new((Vec::new(), Vec::new())));
        let (tx, rx) = mpsc::unbounded_channel();
        let sh = shared.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let t = start.elapsed().as_millis() as u64;
                let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                {
                    let mut g = sh.lock().unwrap();
                    let i = g.0.len();
                    g.0.push(line);
                    g.1.push(json!({"t": t, "dir": "out", "line": i, "kind": kind(&v)}));
                }
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stderr = tokio::spawn(async move {
            let mut buf = Vec::new();
            let _ = stderr.read_to_end(&mut buf).await;
            let s = String::from_utf8_lossy(&buf).into_owned();
            let cut = s.len().saturating_sub(4096);
            s[s.floor_char_boundary(cut)..].to_owned()
        });
        Session {
            child,
            stdin,
            rx,
            start,
            shared,
            stderr,
        }
    }

    /// Milliseconds since spawn.
    pub fn ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Adds a note to the timeline.
    pub fn note(&self, text: &str) {
        let t = self.ms();
        self.shared
            .lock()
            .unwrap()
            .1
            .push(json!({"t": t, "dir": "note", "text": text}));
    }

    /// Writes one frame and a newline.
    pub async fn send(&mut self, frame: Value) {
        let t = self.ms();
        self.shared
            .lock()
            .unwrap()
            .1
            .push(json!({"t": t, "dir": "in", "frame": frame}));
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = frame.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.expect("write frame");
        stdin.flush().await.expect("flush");
    }

    /// The next stdout frame, or `None` on timeout / EOF (non-JSON lines come through as `Null`).
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        tokio::time::timeout(timeout, self.rx.recv()).await.ok().flatten()
    }

    /// Reads until a frame matches `pred`; `None` (and a timeline note) on timeout or EOF.
    pub async fn wait_for(
        &mut self,
        what: &str,
        timeout: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await {
                Some(v) if pred(&v) => return Some(v),
                Some(_) => {}
                None => {
                    self.note(&format!("no {what} within {} ms", timeout.as_millis()));
                    return None;
                }
            }
        }
    }

    /// Waits for a frame whose [`kind`] is `k`.
    pub async fn wait_kind(&mut self, k: &str, timeout: Duration) -> Option<Value> {
        self.wait_for(k, timeout, |v| kind(v) == k).await
    }

    /// Closes stdin, waits up to `grace` for the exit, kills if needed, and returns the run.
    pub async fn finish(mut self, grace: Duration) -> Run {
        self.stdin = None;
        self.note("stdin closed");
        let status: Option<ExitStatus>;
        let mut killed = false;
        match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(s) => status = s.ok(),
            Err(_) => {
                self.note(&format!(
                    "no exit within {} ms of stdin close; killing",
                    grace.as_millis()
                ));
                killed = true;
                let _ = self.child.start_kill();
                status = self.child.wait().await.ok();
            }
        }
        // Drain what the reader still has.
        while self.rx.recv().await.is_some() {}
        let exit_code = status.and_then(|s| s.code());
        let t = self.ms();
        let stderr_tail = self.stderr.await.unwrap_or_default();
        let (lines, mut timeline) = std::mem::take(&mut *self.shared.lock().unwrap());
        timeline.push(json!({"t": t, "dir": "exit", "code": exit_code, "killed": killed}));
        Run {
            lines,
            timeline,
            exit_code,
            killed,
            stderr_tail,
        }
    }
}

/// The `initialize` control request the Go original sends first.
pub fn initialize() -> Value {
    json!({"type": "control_request", "request_id": "agent-adaptor-initialize",
           "request": {"subtype": "initialize", "hasPrompt": true, "capabilities": {"askUserQuestion": true}}})
}

/// A user frame in the control transport's shape.
pub fn user(text: &str) -> Value {
    json!({"type": "user", "session_id": "", "message": {"role": "user", "content": text},
           "parent_tool_use_id": null})
}

/// An `interrupt` control request.
pub fn interrupt(id: &str) -> Value {
    json!({"type": "control_request", "request_id": id, "request": {"subtype": "interrupt"}})
}

/// CodeBuddy's allow answer to a `can_use_tool` request (input echoed, plus `extra` fields merged in).
pub fn allow(req: &Value, extra: Value) -> Value {
    let mut input = req.pointer("/request/input").cloned().unwrap_or(json!({}));
    if let (Some(o), Some(e)) = (input.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            o.insert(k.clone(), v.clone());
        }
    }
    json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": req["request_id"], "response": {"allowed": true,
        "tool_use_id": req.pointer("/request/tool_use_id"), "updatedInput": input}}})
}

/// CodeBuddy's deny answer to a `can_use_tool` request.
pub fn deny(req: &Value, reason: &str, interrupt: bool) -> Value {
    json!({"type": "control_response", "response": {"subtype": "success",
        "request_id": req["request_id"], "response": {"allowed": false,
        "tool_use_id": req.pointer("/request/tool_use_id"), "reason": reason, "interrupt": interrupt}}})
}
