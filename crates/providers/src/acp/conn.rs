//! One ACP agent process seen from the client side: spawned through `driver::process`, JSON-RPC frames
//! written one per line on its stdin (ids numbered from 0), and its stdout read in wire order as
//! classified messages ([`agent_adaptor_core::acp::rpc::classify_value`]). Lines that are no JSON-RPC message are
//! returned as [`Msg::Noise`], never fatal.

use std::time::Duration;

use futures::StreamExt;
use serde::Serialize;
use serde_json::{Value, json};

use crate::driver::process::{
    Child, ExitInfo, Line, ProcessError, ProcessRegistry, ProcessSpec, StdinError, StdinWriter, StdoutLines,
    StopPlan, spawn,
};
use agent_adaptor_core::acp::rpc::{Incoming, RpcError, classify_value};

/// How long an agent gets to exit by itself after its stdin closes.
pub const EXIT_WAIT: Duration = Duration::from_secs(5);

/// One stdout item.
#[derive(Debug)]
pub enum Msg {
    /// A JSON-RPC message.
    Rpc(Incoming),
    /// A line that is no JSON-RPC message (noise, a truncated frame), with why.
    Noise(String),
    /// stdout ended.
    Eof,
}

/// A running ACP agent.
pub struct Conn {
    /// The child.
    pub child: Child,
    /// Its stdout.
    pub stdout: StdoutLines,
    stdin: StdinWriter,
    next_id: u64,
}

impl Conn {
    /// Spawns `spec` (stdin is piped here).
    pub async fn spawn(registry: &ProcessRegistry, spec: ProcessSpec) -> Result<Conn, ProcessError> {
        let mut child = spawn(registry, spec.stdin_piped(true)).await?;
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
            next_id: 0,
        })
    }

    /// Sends a request; returns its id.
    pub async fn request(&mut self, method: &str, params: impl Serialize) -> Result<u64, StdinError> {
        let id = self.next_id;
        self.next_id += 1;
        let frame = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": to_value(params) });
        self.stdin.send_json(&frame).await?;
        Ok(id)
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: impl Serialize) -> Result<(), StdinError> {
        let frame = json!({ "jsonrpc": "2.0", "method": method, "params": to_value(params) });
        self.stdin.send_json(&frame).await
    }

    /// Answers the agent's request `id`.
    pub async fn respond(&self, id: Value, outcome: Result<Value, RpcError>) -> Result<(), StdinError> {
        let frame = match outcome {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
        };
        self.stdin.send_json(&frame).await
    }

    /// The next stdout item.
    pub async fn next(&mut self) -> Msg {
        loop {
            match self.stdout.next().await {
                None | Some(Err(_)) => return Msg::Eof,
                Some(Ok(Line::Json { value, .. })) => return Msg::Rpc(classify_value(value)),
                Some(Ok(Line::Invalid { raw, error })) => {
                    let text = String::from_utf8_lossy(&raw);
                    if text.trim().is_empty() {
                        continue;
                    }
                    return Msg::Noise(format!("{error}: {}", text.chars().take(200).collect::<String>()));
                }
                Some(Ok(Line::TooLong { len, .. })) => {
                    return Msg::Noise(format!("a {len}-byte line exceeded the limit"));
                }
            }
        }
    }

    /// Stops it: stdin EOF, then SIGTERM and SIGKILL to the group, each after `grace`.
    pub async fn stop(&self, grace: Duration) -> ExitInfo {
        let w = self.stdin.clone();
        let plan = StopPlan::new()
            .interrupt_grace(grace)
            .term_grace(grace)
            .interrupt(async move { w.close().await });
        self.child.stop(plan).await
    }

    /// Ends it after a clean run: stdin EOF and up to [`EXIT_WAIT`] to exit on its own, then the stop
    /// ladder.
    pub async fn finish(&self, grace: Duration) -> ExitInfo {
        self.stdin.close().await;
        match tokio::time::timeout(EXIT_WAIT.max(grace), self.child.wait()).await {
            Ok(exit) => exit,
            Err(_) => self.stop(grace).await,
        }
    }
}

fn to_value(params: impl Serialize) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}
