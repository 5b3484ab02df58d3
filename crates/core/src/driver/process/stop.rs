//! How a child is stopped ([`StopPlan`]) and how it ended ([`ExitInfo`], [`Escalation`]).
//!
//! The ladder: the driver's protocol interrupt (if any) → wait `interrupt_grace` → SIGTERM to the
//! whole process GROUP → wait `term_grace` → SIGKILL to the group → reap. Every rung is skipped
//! as soon as the leader exits; whatever rung it exited on is recorded.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;

/// Default wait after the protocol interrupt before SIGTERM.
pub const DEFAULT_INTERRUPT_GRACE: Duration = Duration::from_secs(3);
/// Default wait after SIGTERM before SIGKILL.
pub const DEFAULT_TERM_GRACE: Duration = Duration::from_secs(2);

/// The stop ladder for one child. Build with [`StopPlan::new`] and the chained setters.
pub struct StopPlan {
    pub(crate) interrupt: Option<BoxFuture<'static, ()>>,
    pub(crate) interrupt_grace: Duration,
    pub(crate) term_grace: Duration,
}

impl StopPlan {
    /// No protocol interrupt; default graces.
    pub fn new() -> Self {
        Self {
            interrupt: None,
            interrupt_grace: DEFAULT_INTERRUPT_GRACE,
            term_grace: DEFAULT_TERM_GRACE,
        }
    }

    /// The driver's polite first step, e.g. writing the CLI's interrupt frame or closing stdin:
    ///
    /// ```no_run
    /// # use agent_adaptor::driver::process::{Child, StopPlan};
    /// # async fn stop(child: &Child) {
    /// let stdin = child.stdin().expect("piped");
    /// let exit = child.stop(StopPlan::new().interrupt(async move { stdin.close().await })).await;
    /// # }
    /// ```
    ///
    /// It runs on the supervisor task, concurrently with watching for the exit; if it has not
    /// finished when `interrupt_grace` runs out it is dropped and SIGTERM follows.
    pub fn interrupt(mut self, step: impl Future<Output = ()> + Send + 'static) -> Self {
        self.interrupt = Some(Box::pin(step));
        self
    }

    /// How long the child gets to exit after the interrupt (ignored without one).
    pub fn interrupt_grace(mut self, grace: Duration) -> Self {
        self.interrupt_grace = grace;
        self
    }

    /// How long the group gets to exit after SIGTERM before SIGKILL.
    pub fn term_grace(mut self, grace: Duration) -> Self {
        self.term_grace = grace;
        self
    }
}

impl Default for StopPlan {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for StopPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StopPlan")
            .field("interrupt", &self.interrupt.is_some())
            .field("interrupt_grace", &self.interrupt_grace)
            .field("term_grace", &self.term_grace)
            .finish()
    }
}

/// Which step of the stop ladder was the last one taken before the child exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Escalation {
    /// Nothing: the child exited on its own.
    None,
    /// It exited after the driver's protocol interrupt; it never saw a signal.
    Interrupt,
    /// It exited after SIGTERM to its group.
    Terminate,
    /// It needed SIGKILL.
    Kill,
    /// Its [`Child`](super::Child) handle was dropped without a stop: SIGKILL to the group.
    Dropped,
    /// The supervisor itself was torn down (runtime shutdown) before it could reap: the group was
    /// sent SIGKILL and reaping was left to tokio. Exit code and signal are unknown.
    Abandoned,
}

/// How a child ended. Available once it has been reaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it, when it was killed.
    pub signal: Option<i32>,
    /// The last stop step taken before it exited.
    pub escalation_used: Escalation,
    /// From spawn to reaped.
    pub duration: Duration,
    /// From the stop request to reaped, when it was stopped.
    pub stop_duration: Option<Duration>,
}

impl ExitInfo {
    /// Exited by itself with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }

    pub(crate) fn abandoned() -> Self {
        Self {
            code: None,
            signal: None,
            escalation_used: Escalation::Abandoned,
            duration: Duration::ZERO,
            stop_duration: None,
        }
    }
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.code, self.signal) {
            (Some(code), _) => write!(f, "exit code {code}")?,
            (None, Some(sig)) => write!(f, "killed by signal {sig}")?,
            (None, None) => f.write_str("unknown exit status")?,
        }
        if self.escalation_used != Escalation::None {
            write!(f, " (stop step: {:?})", self.escalation_used)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_status_and_step() {
        let info = ExitInfo {
            code: None,
            signal: Some(9),
            escalation_used: Escalation::Kill,
            duration: Duration::from_millis(5),
            stop_duration: Some(Duration::from_millis(4)),
        };
        assert_eq!(info.to_string(), "killed by signal 9 (stop step: Kill)");
        assert!(!info.success());
        let plan = StopPlan::new()
            .interrupt(async {})
            .term_grace(Duration::from_millis(1));
        assert!(format!("{plan:?}").contains("interrupt: true"));
    }
}
