//! One stream-json CLI process: spawning it through `driver::process`, writing frames, and stopping it
//! (an `interrupt` request and stdin EOF first when it has a control channel, then the escalating stop).

use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::driver::process::{
    BASE_ENV_ALLOWLIST, Child, ExitInfo, ProcessError, ProcessRegistry, ProcessSpec, StdinError, StdinWriter,
    StdoutLines, StopPlan, spawn,
};

/// How long a CLI gets to exit by itself after a completed turn before it is stopped (Claude exits
/// ≈60 ms after stdin closes on an idle machine; node can be much slower on a loaded one, and a forced
/// stop after an official success would turn it into a failure).
pub const EXIT_WAIT: Duration = Duration::from_secs(10);

/// A provider's input frame type: what [`Proc::send`] writes, and the `interrupt` request a stop sends
/// first when asked to.
pub trait InputFrame: Serialize + Send + Sync + 'static {
    /// An `interrupt` control request with this id.
    fn interrupt(request_id: &str) -> Self;
}

/// True when `name` is in the base environment allowlist (entries ending in `*` are prefixes).
pub fn in_base_allowlist(name: &str) -> bool {
    BASE_ENV_ALLOWLIST
        .iter()
        .any(|allowed| match allowed.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *allowed,
        })
}

/// A running CLI with its stdout taken; `F` is the provider's input frame type.
pub struct Proc<F> {
    /// The child.
    pub child: Child,
    /// Its stdout as JSON lines.
    pub stdout: StdoutLines,
    /// Its stdin (control channel only).
    pub stdin: Option<StdinWriter>,
    frame: PhantomData<fn(F)>,
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
    pub vars: BTreeMap<String, String>,
    /// Which inherited variables pass (the provider's own ones or the base allowlist).
    pub inherit: fn(&str) -> bool,
    /// Whether stdin is a control channel (piped) or closed.
    pub stdin: bool,
    /// Registry label.
    pub label: String,
}

impl<F: InputFrame> Proc<F> {
    /// Spawns the CLI.
    pub async fn spawn(registry: &ProcessRegistry, launch: Launch<'_>) -> Result<Proc<F>, ProcessError> {
        let spec = ProcessSpec::new(launch.program)
            .args(&launch.args)
            .cwd(launch.cwd)
            .inherit_env(launch.inherit)
            .envs(&launch.vars)
            .stdin_piped(launch.stdin)
            .label(launch.label);
        let mut child = spawn(registry, spec).await?;
        let stdout = child
            .take_stdout()
            .ok_or_else(|| ProcessError::SpawnerUnavailable("stdout was not piped".into()))?;
        let stdin = child.stdin();
        Ok(Proc {
            child,
            stdout,
            stdin,
            frame: PhantomData,
        })
    }

    /// Writes one frame (control channel).
    pub async fn send(&self, frame: &F) -> Result<(), StdinError> {
        match &self.stdin {
            Some(w) => w.send_json(frame).await,
            None => Err(StdinError::Closed),
        }
    }

    /// Stops it: with a control channel an `interrupt` request (when asked) and stdin EOF first, then
    /// SIGTERM and SIGKILL to the process group, each after `grace`; without one straight to SIGTERM.
    pub async fn stop(&self, grace: Duration, interrupt_first: bool) -> ExitInfo {
        self.child.stop(self.stop_plan(grace, interrupt_first)).await
    }

    /// The plan [`stop`](Self::stop) follows (also how a process pool stops a kept CLI, with
    /// `interrupt_first` false: an idle CLI exits by itself shortly after stdin EOF).
    pub fn stop_plan(&self, grace: Duration, interrupt_first: bool) -> StopPlan {
        let mut plan = StopPlan::new().interrupt_grace(grace).term_grace(grace);
        if let Some(w) = self.stdin.clone() {
            plan = plan.interrupt(async move {
                if interrupt_first {
                    let _ = w.send_json(&F::interrupt("agent-adaptor-stop")).await;
                }
                w.close().await;
            });
        }
        plan
    }

    /// Ends it after a completed turn: stdin EOF (control channel) and up to [`EXIT_WAIT`] (at least
    /// `grace`) to exit on its own, then the escalating stop.
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
