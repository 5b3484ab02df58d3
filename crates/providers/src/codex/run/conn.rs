//! One `codex app-server` process: spawning it through `driver::process`, writing JSON-RPC frames,
//! reading messages in wire order, and stopping it.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use crate::driver::process::{
    Child, ExitInfo, Line, Pooled, ProcessError, ProcessRegistry, ProcessSpec, StdinError, StdinWriter,
    StdoutLines, StopPlan, spawn,
};

use super::super::wire::client::ClientRequest;
use super::super::wire::{RequestId, RpcMessage, parse_rpc_line};

/// How long app-server gets to exit by itself after stdin closes (it takes ~60 ms when idle).
pub const EXIT_WAIT: Duration = Duration::from_secs(5);

/// One stdout item.
#[derive(Debug)]
pub enum Incoming {
    /// A JSON-RPC message and its JSON value.
    Msg(RpcMessage, Value),
    /// A line that is not a JSON-RPC message (noise, a malformed frame), with why.
    Invalid(String),
    /// stdout ended.
    Eof,
}

/// A running app-server.
pub struct Conn {
    /// The child.
    pub child: Child,
    /// Its stdout.
    pub stdout: StdoutLines,
    stdin: StdinWriter,
    next_id: i64,
    /// `initialize` was answered (a kept process skips the handshake).
    pub initialized: bool,
    /// The thread this process has loaded and the model it runs, once `thread/*` answered.
    pub thread: Option<(String, Option<String>)>,
}

impl Pooled for Conn {
    fn child(&self) -> &Child {
        &self.child
    }

    /// stdin EOF first: an idle app-server exits by itself in ~60 ms.
    fn stop_plan(&self, grace: Duration) -> StopPlan {
        let w = self.stdin.clone();
        StopPlan::new()
            .interrupt_grace(grace)
            .term_grace(grace)
            .interrupt(async move { w.close().await })
    }
}

/// What to start.
pub struct Launch<'a> {
    /// The program.
    pub program: &'a Path,
    /// Its arguments.
    pub args: Vec<String>,
    /// Working directory.
    pub cwd: &'a Path,
    /// Explicit variables.
    pub vars: std::collections::BTreeMap<String, String>,
    /// Registry label.
    pub label: String,
}

impl Conn {
    /// Spawns app-server.
    pub async fn spawn(registry: &ProcessRegistry, launch: Launch<'_>) -> Result<Conn, ProcessError> {
        let spec = ProcessSpec::new(launch.program)
            .args(&launch.args)
            .cwd(launch.cwd)
            .inherit_base_env()
            .envs(&launch.vars)
            .stdin_piped(true)
            .label(launch.label);
        let mut child = spawn(registry, spec).await?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProcessError::SpawnerUnavailable("stdout was not piped".into()))?;
        let stdin = child
            .stdin()
            .ok_or_else(|| ProcessError::SpawnerUnavailable("stdin was not piped".into()))?;
        Ok(Conn {
            child,
            stdout,
            stdin,
            next_id: 1,
            initialized: false,
            thread: None,
        })
    }

    /// Sends a request; returns its id.
    pub async fn send(&mut self, req: &ClientRequest) -> Result<RequestId, StdinError> {
        let id = RequestId::Int(self.next_id);
        self.next_id += 1;
        self.stdin.send_line(req.to_line(&id)).await?;
        Ok(id)
    }

    /// Writes a raw line (a notification or an answer to a server request).
    pub async fn send_line(&self, line: String) -> Result<(), StdinError> {
        self.stdin.send_line(line).await
    }

    /// The next stdout item.
    pub async fn next(&mut self) -> Incoming {
        loop {
            match self.stdout.next().await {
                None | Some(Err(_)) => return Incoming::Eof,
                Some(Ok(Line::Json { value, raw })) => {
                    let text = String::from_utf8_lossy(&raw);
                    return match parse_rpc_line(&text) {
                        Ok(m) => Incoming::Msg(m, value),
                        Err(e) => Incoming::Invalid(e.to_string()),
                    };
                }
                Some(Ok(Line::Invalid { raw, error })) => {
                    let text = String::from_utf8_lossy(&raw);
                    if text.trim().is_empty() {
                        continue;
                    }
                    return Incoming::Invalid(format!(
                        "{error}: {}",
                        text.chars().take(120).collect::<String>()
                    ));
                }
                Some(Ok(Line::TooLong { len, .. })) => {
                    return Incoming::Invalid(format!("a {len}-byte line exceeded the limit"));
                }
            }
        }
    }

    /// Stops it: stdin EOF, then SIGTERM and SIGKILL to the group, each after `grace`.
    pub async fn stop(&self, grace: Duration) -> ExitInfo {
        self.child.stop(self.stop_plan(grace)).await
    }

    /// Ends it after the run: stdin EOF and up to [`EXIT_WAIT`] to exit on its own, then the stop ladder.
    pub async fn finish(&self, grace: Duration) -> ExitInfo {
        self.stdin.close().await;
        match tokio::time::timeout(EXIT_WAIT.max(grace), self.child.wait()).await {
            Ok(exit) => exit,
            Err(_) => self.stop(grace).await,
        }
    }
}
