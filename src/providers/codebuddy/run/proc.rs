//! One CodeBuddy process: spawning it through `driver::process`, writing frames, and stopping it.

use std::path::Path;
use std::time::Duration;

use crate::driver::process::{
    BASE_ENV_ALLOWLIST, Child, ExitInfo, ProcessError, ProcessRegistry, ProcessSpec, StdinError, StdinWriter,
    StdoutLines, StopPlan, spawn,
};

use super::super::argv::Transport;
use super::super::env;
use super::super::wire::InputFrame;

/// How long a CLI gets to exit by itself after a completed turn before it is stopped.
pub const EXIT_WAIT: Duration = Duration::from_secs(10);

/// A running CLI with its stdout taken.
pub struct Proc {
    /// The child.
    pub child: Child,
    /// Its stdout as JSON lines.
    pub stdout: StdoutLines,
    /// Its stdin (control transport only).
    pub stdin: Option<StdinWriter>,
}

fn base_or_codebuddy(name: &str) -> bool {
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
            .inherit_env(base_or_codebuddy)
            .envs(&launch.vars)
            .stdin_piped(launch.transport == Transport::Control)
            .label(launch.label);
        let mut child = spawn(registry, spec).await?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProcessError::SpawnerUnavailable("stdout was not piped".into()))?;
        let stdin = child.stdin();
        Ok(Proc { child, stdout, stdin })
    }

    /// Writes one frame (control transport).
    pub async fn send(&self, frame: &InputFrame) -> Result<(), StdinError> {
        match &self.stdin {
            Some(w) => w.send_json(frame).await,
            None => Err(StdinError::Closed),
        }
    }

    /// Stops it: in the control transport an `interrupt` request and stdin EOF first, then SIGTERM and
    /// SIGKILL to the group, each after `grace`; headless goes straight to SIGTERM.
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

    /// Ends it after a completed turn: stdin EOF (control) and up to [`EXIT_WAIT`] (at least `grace`) to
    /// exit on its own — node can be slow to exit on a loaded machine, and a forced stop after an official
    /// success would turn it into a failure — then the escalating stop.
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
    fn inheritance_keeps_codebuddy_and_base_variables_only() {
        for ok in [
            "PATH",
            "HOME",
            "LC_ALL",
            "CODEBUDDY_API_KEY",
            "CODEBUDDY_BASE_URL",
        ] {
            assert!(base_or_codebuddy(ok), "{ok}");
        }
        for no in [
            "CODEBUDDY_CONFIG_DIR",
            "OPENAI_API_KEY",
            "HTTP_PROXY",
            "ANTHROPIC_API_KEY",
        ] {
            assert!(!base_or_codebuddy(no), "{no}");
        }
    }
}
