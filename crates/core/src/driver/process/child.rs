//! [`Child`]: the driver's handle to one running CLI process.
//!
//! The handle never waits on the process itself: its owner task does (see `supervise.rs`), so
//! `wait` and `stop` take `&self`, can be called from several places, and are cancel-safe — a
//! dropped `stop()` future does not interrupt the ladder once it started. Dropping the handle
//! without stopping kills the whole group and still reaps it.

use tokio::process::ChildStdout;
use tokio::sync::{mpsc, watch};

use super::lines::JsonLines;
use super::registry::ProcessId;
use super::stderr::StderrCapture;
use super::stdin::StdinWriter;
use super::stop::{ExitInfo, StopPlan};
use super::supervise::Control;

/// A child's stdout, framed as JSON lines.
pub type StdoutLines = JsonLines<ChildStdout>;

/// A running (or finished) child; see the module docs.
#[derive(Debug)]
pub struct Child {
    pub(crate) id: ProcessId,
    pub(crate) pid: u32,
    pub(crate) pgid: i32,
    pub(crate) label: String,
    pub(crate) control: mpsc::UnboundedSender<Control>,
    pub(crate) exit: watch::Receiver<Option<ExitInfo>>,
    pub(crate) stdin: Option<StdinWriter>,
    pub(crate) stdout: Option<StdoutLines>,
    pub(crate) stderr: StderrCapture,
    pub(crate) cpu: std::sync::Arc<super::cpu::ChildCpu>,
}

impl Child {
    /// Our unique id for this child (also its registry key).
    pub fn id(&self) -> ProcessId {
        self.id
    }

    /// The operating-system pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Its process group id (the child leads its own group, so this equals the pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// The spec's label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A handle to its stdin, when the spec piped it. Handles are cheap clones of one writer.
    pub fn stdin(&self) -> Option<StdinWriter> {
        self.stdin.clone()
    }

    /// Takes its stdout as a stream of lines (once; later calls return `None`). Keep polling it:
    /// a child whose stdout pipe is full blocks.
    pub fn take_stdout(&mut self) -> Option<StdoutLines> {
        self.stdout.take()
    }

    /// Its stderr: tail, complete bytes, and whether EOF was reached.
    pub fn stderr(&self) -> &StderrCapture {
        &self.stderr
    }

    /// How it ended, if it has been reaped already.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// Waits until it has exited by itself (or been stopped elsewhere) and been reaped. Any
    /// processes left in its group are killed when the leader exits, and stderr is drained, before
    /// this returns.
    pub async fn wait(&self) -> ExitInfo {
        let mut rx = self.exit.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(info) => info.clone().unwrap_or_else(ExitInfo::abandoned),
            Err(_) => ExitInfo::abandoned(),
        }
    }

    /// Stops it with `plan` (see [`StopPlan`]) and waits until it is reaped. If it already exited,
    /// returns how; if a stop is already under way, waits for that one.
    pub async fn stop(&self, plan: StopPlan) -> ExitInfo {
        if let Some(info) = self.exit_info() {
            return info;
        }
        // A send error means the owner task is finishing; `wait` then returns its result.
        let _ = self.control.send(Control::Stop(plan));
        self.wait().await
    }
}
