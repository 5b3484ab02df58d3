//! One-shot probes: run a CLI for a short answer (`--version`), collect its stdout under a deadline,
//! and stop and reap it whatever happened. Used by the drivers' environment inspection.

use std::time::Duration;

use futures::StreamExt;

use super::{ProcessRegistry, ProcessSpec, StdoutLines, StopPlan, spawn};

/// Runs `spec` and returns its stdout once it exits successfully within `timeout`; `what` names the
/// command in the error (`"claude --version"`). The child is stopped and reaped on every path.
pub async fn probe_stdout(
    registry: &ProcessRegistry,
    spec: ProcessSpec,
    timeout: Duration,
    what: &str,
) -> Result<String, String> {
    let mut child = spawn(registry, spec).await.map_err(|e| e.to_string())?;
    let Some(mut out) = child.take_stdout() else {
        child.stop(StopPlan::new()).await;
        return Err(format!("{what}: no stdout"));
    };
    let text = tokio::time::timeout(timeout, read_text(&mut out)).await;
    let exit = child.stop(StopPlan::new()).await;
    let text = text.map_err(|_| format!("{what} timed out"))?;
    if exit.success() {
        Ok(text)
    } else {
        Err(format!("{what} failed ({exit}): {}", text.trim()))
    }
}

/// Everything a child writes to stdout until it closes it, line by line (lossy UTF-8, each line ended by
/// `\n`); a read error ends the text where it happened.
pub async fn read_text(out: &mut StdoutLines) -> String {
    let mut text = String::new();
    while let Some(Ok(line)) = out.next().await {
        if let Some(raw) = line.raw() {
            text.push_str(&String::from_utf8_lossy(raw));
            text.push('\n');
        }
    }
    text
}
