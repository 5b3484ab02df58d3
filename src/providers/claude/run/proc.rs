//! One Claude Code process: spawning it through `driver::process`, writing frames, and stopping it.

use std::path::Path;
use std::time::Duration;

use crate::driver::process::{
    BASE_ENV_ALLOWLIST, Child, ExitInfo, ProcessError, ProcessRegistry, ProcessSpec, StdinError, StdinWriter,
    StdoutLines, StopPlan, spawn,
};

use super::super::argv::Transport;
use super::super::env;
use super::super::wire::InputFrame;

/// How long a CLI gets to exit by itself after a completed turn before it is stopped (it exits ≈60 ms
/// after stdin closes on an idle machine).
pub const EXIT_WAIT: Duration = Duration::from_secs(10);

/// A running CLI with its stdout taken.
pub struct Proc {
    /// The child.
    pub child: Child,
    /// Its stdout as JSON lines.
    pub stdout: StdoutLines,
    /// Its stdin (bidirectional transport only).
    pub stdin: Option<StdinWriter>,
}

fn base_or_claude(name: &str) -> bool {
    env::inherits(name)
        || BASE_ENV_ALLOWLIST
            .iter()
            .any(|allowed| match allowed.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == *allowed,
            })
}

/// What to start.
pub struct Launch<'a> {
    /// The program.
    pub program: &'a Path,
    /// Its arguments.
    pub args: Vec<String>,
    /// The working directory.
    pub cwd: &'a Path,
    /// Explicit variables.
    pub vars: std::collections::BTreeMap<String, String>,
    /// Which transport.
    pub transport: Transport,
    /// Registry label.
    pub label: String,
}

impl Proc {
    /// Spawns the CLI.
    pub async fn spawn(registry: &ProcessRegistry, launch: Launch<'_>) -> Result<Proc, ProcessError> {
        let spec = ProcessSpec::new(launch.program)
            .args(&launch.args)
            .cwd(launch.cwd)
            .inherit_env(base_or_claude)
            .envs(&launch.vars)
            .stdin_piped(launch.transport == Transport::Bidi)
            .label(launch.label);
        let mut child = spawn(registry, spec).await?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProcessError::SpawnerUnavailable("stdout was not piped".into()))?;
        let stdin = child.stdin();
        Ok(Proc { child, stdout, stdin })
    }

    /// Writes one frame (bidirectional transport).
    pub async fn send(&self, frame: &InputFrame) -> Result<(), StdinError> {
        match &self.stdin {
            Some(w) => w.send_json(frame).await,
            None => Err(StdinError::Closed),
        }
    }

    /// Stops it: in the bidirectional transport an `interrupt` request (when asked) and stdin EOF first,
    /// then SIGTERM and SIGKILL to the process group, each after `grace`; one-shot goes straight to SIGTERM.
    pub async fn stop(&self, grace: Duration, interrupt_first: bool) -> ExitInfo {
        let mut plan = StopPlan::new().interrupt_grace(grace).term_grace(grace);
        if let Some(w) = self.stdin.clone() {
            plan = plan.interrupt(async move {
                if interrupt_first {
                    let _ = w.send_json(&InputFrame::interrupt("agent-adaptor-stop")).await;
                }
                w.close().await;
            });
        }
        self.child.stop(plan).await
    }

    /// Ends it after a completed turn: stdin EOF (bidirectional) and up to [`EXIT_WAIT`] (at least `grace`)
    /// to exit on its own, then the escalating stop.
    pub async fn finish(&self, grace: Duration) -> ExitInfo {
        if let Some(w) = &self.stdin {
            w.close().await;
        }
        match tokio::time::timeout(grace.max(EXIT_WAIT), self.child.wait()).await {
            Ok(exit) => exit,
            Err(_) => self.stop(grace, false).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inheritance_keeps_claude_anthropic_and_base_variables_only() {
        for ok in [
            "PATH",
            "HOME",
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_BASE_URL",
            "CLAUDE_CODE_MAX_RETRIES",
        ] {
            assert!(base_or_claude(ok), "{ok}");
        }
        for no in [
            "CLAUDE_CONFIG_DIR",
            "OPENAI_API_KEY",
            "HTTP_PROXY",
            "CODEBUDDY_API_KEY",
        ] {
            assert!(!base_or_claude(no), "{no}");
        }
    }
}
