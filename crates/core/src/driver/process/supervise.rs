//! The owner task: the ONLY code that waits on a child. One per child, spawned by `spawn`.
//!
//! It watches for the leader's exit and for control messages, runs the stop ladder, kills
//! whatever is left of the process group once the leader is gone, reaps, lets stderr drain,
//! unregisters the child and finally publishes its [`ExitInfo`].
//!
//! Ordering that matters (Linux): exit is detected through a pidfd, which becomes readable when
//! the leader becomes a zombie but BEFORE it is reaped. While the zombie exists its pid and pgid
//! cannot be reused, so every signal we send to the group reaches only our processes. Only then is
//! the leader reaped. Without pidfd (old kernels, other Unixes) we reap first and signal the group
//! after; the pgid could then in principle have been recycled, which needs a full wrap of the pid
//! space between two consecutive syscalls.

use std::io;
use std::os::fd::OwnedFd;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use super::cpu::ChildCpu;
use super::registry::{ProcessId, ProcessRegistry};
use super::stderr::StderrCapture;
use super::stop::{Escalation, ExitInfo, StopPlan};
use super::sys::{Signal, signal_group, zombie_cpu};
use super::tree::Stragglers;

/// After reaping, how long stderr may take to reach EOF before the reader is abandoned (only a
/// process that left our group could still hold the pipe open).
const STDERR_DRAIN_GRACE: Duration = Duration::from_millis(500);

/// Messages from `Child` handles and the registry.
pub(crate) enum Control {
    Stop(StopPlan),
}

/// Everything the owner task owns.
pub(crate) struct Supervisor {
    pub(crate) child: tokio::process::Child,
    pub(crate) id: ProcessId,
    pub(crate) pid: u32,
    pub(crate) pgid: i32,
    pub(crate) label: String,
    pub(crate) exit_fd: Option<AsyncFd<OwnedFd>>,
    pub(crate) control: mpsc::UnboundedReceiver<Control>,
    pub(crate) registry: ProcessRegistry,
    pub(crate) stderr: StderrCapture,
    pub(crate) stderr_task: Option<JoinHandle<()>>,
    pub(crate) exit_tx: watch::Sender<Option<ExitInfo>>,
    pub(crate) started: Instant,
    /// Its CPU account, closed with its rusage just before it is reaped.
    pub(crate) cpu: std::sync::Arc<ChildCpu>,
}

/// The leader has exited: either already reaped (fallback path) or still a zombie (pidfd path).
enum Exited {
    Reaped(io::Result<ExitStatus>),
    Zombie,
}

/// Kills the group if the owner task is torn down early, and always unregisters.
struct Cleanup {
    registry: ProcessRegistry,
    id: ProcessId,
    pgid: i32,
    armed: bool,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if self.armed {
            let _ = signal_group(self.pgid, Signal::Kill);
        }
        self.registry.remove(self.id);
    }
}

async fn exited(exit_fd: Option<&AsyncFd<OwnedFd>>, child: &mut tokio::process::Child) -> Exited {
    if let Some(fd) = exit_fd {
        match fd.readable().await {
            Ok(_guard) => return Exited::Zombie,
            Err(e) => warn!(error = %e, "Polling the pidfd failed; waiting on the child instead."),
        }
    }
    Exited::Reaped(child.wait().await)
}

fn signal(pgid: i32, sig: Signal, label: &str) {
    match signal_group(pgid, sig) {
        Ok(_) => debug!(label, pgid, ?sig, "Signalled process group."),
        Err(e) => warn!(label, pgid, ?sig, error = %e, "Signalling the process group failed."),
    }
}

impl Supervisor {
    /// Runs until the child is reaped; see the module docs.
    pub(crate) async fn run(mut self) {
        let mut cleanup = Cleanup {
            registry: self.registry.clone(),
            id: self.id,
            pgid: self.pgid,
            armed: true,
        };
        let mut escalation = Escalation::None;
        let mut stop_started = None;
        // Descendants outside the group, found while the leader lives (see `tree`).
        let mut stragglers = Stragglers::default();
        let exit = tokio::select! {
            // An exit that already happened wins over a stop request that arrived with it.
            biased;
            e = exited(self.exit_fd.as_ref(), &mut self.child) => e,
            msg = self.control.recv() => {
                stop_started = Some(Instant::now());
                stragglers.snapshot(self.pid, self.pgid);
                match msg {
                    Some(Control::Stop(plan)) => self.escalate(plan, &mut escalation, &mut stragglers).await,
                    None => {
                        escalation = Escalation::Dropped;
                        signal(self.pgid, Signal::Kill, &self.label);
                        exited(self.exit_fd.as_ref(), &mut self.child).await
                    }
                }
            }
        };
        // The leader is gone: nothing of its group may outlive it (background grandchildren, …), nor,
        // when it was stopped, what it had started outside its group.
        let _ = signal_group(self.pgid, Signal::Kill);
        stragglers.kill(&self.label);
        let status = match exit {
            Exited::Reaped(status) => {
                self.cpu.exited(None);
                status
            }
            Exited::Zombie => {
                // Still a zombie: its rusage can be read without reaping it.
                self.cpu.exited(zombie_cpu(self.pid));
                self.child.wait().await
            }
        };
        cleanup.armed = false;
        if let Some(mut task) = self.stderr_task.take()
            && tokio::time::timeout(STDERR_DRAIN_GRACE, &mut task).await.is_err()
        {
            task.abort();
            self.stderr.mark_finished();
        }
        let info = self.exit_info(status, escalation, stop_started);
        debug!(label = %self.label, pid = self.pid, code = ?info.code, signal = ?info.signal,
            escalation = ?info.escalation_used, "Child reaped.");
        drop(cleanup);
        self.exit_tx.send_replace(Some(info));
    }

    /// The stop ladder; returns as soon as the leader exits.
    async fn escalate(
        &mut self,
        plan: StopPlan,
        escalation: &mut Escalation,
        stragglers: &mut Stragglers,
    ) -> Exited {
        if let Some(mut step) = plan.interrupt {
            *escalation = Escalation::Interrupt;
            debug!(label = %self.label, pid = self.pid, "Sending the protocol interrupt.");
            let deadline = tokio::time::sleep(plan.interrupt_grace);
            tokio::pin!(deadline);
            let mut step_done = false;
            loop {
                tokio::select! {
                    e = exited(self.exit_fd.as_ref(), &mut self.child) => return e,
                    () = &mut step, if !step_done => step_done = true,
                    () = &mut deadline => break,
                }
            }
        }
        *escalation = Escalation::Terminate;
        stragglers.snapshot(self.pid, self.pgid);
        signal(self.pgid, Signal::Term, &self.label);
        tokio::select! {
            e = exited(self.exit_fd.as_ref(), &mut self.child) => return e,
            () = tokio::time::sleep(plan.term_grace) => {}
        }
        *escalation = Escalation::Kill;
        stragglers.snapshot(self.pid, self.pgid);
        signal(self.pgid, Signal::Kill, &self.label);
        exited(self.exit_fd.as_ref(), &mut self.child).await
    }

    fn exit_info(
        &self,
        status: io::Result<ExitStatus>,
        escalation: Escalation,
        stop: Option<Instant>,
    ) -> ExitInfo {
        use std::os::unix::process::ExitStatusExt;
        let (code, signal) = match status {
            Ok(s) => (s.code(), s.signal()),
            Err(e) => {
                warn!(label = %self.label, pid = self.pid, error = %e, "Waiting on the child failed.");
                (None, None)
            }
        };
        ExitInfo {
            code,
            signal,
            escalation_used: escalation,
            duration: self.started.elapsed(),
            stop_duration: stop.map(|t| t.elapsed()),
        }
    }
}
