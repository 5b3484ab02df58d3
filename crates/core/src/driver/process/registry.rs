//! [`ProcessRegistry`]: every live child of an Agent or of the server, for metrics, listing and
//! the shutdown backstop.
//!
//! A child is registered by `spawn` before it is handed out and unregistered by its owner task
//! once it is reaped (or when that task is torn down), so `live_count()` counts processes that
//! still need reaping. The registry only holds WEAK control handles: it never keeps a child
//! alive, and dropping a [`Child`](super::Child) still stops it.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use tokio::sync::{mpsc, watch};

use super::stop::{Escalation, ExitInfo, StopPlan};
use super::supervise::Control;

/// After SIGKILL, how long `shutdown_all` waits for the reaping to be reported.
const KILL_REAP_GRACE: Duration = Duration::from_secs(2);

/// Process-wide unique id of one spawned child (never reused, unlike pids).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProcessId(u64);

impl ProcessId {
    pub(crate) fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ProcessId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl fmt::Display for ProcessId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "proc-{}", self.0)
    }
}

/// One live child, as listed by [`ProcessRegistry::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    /// Our id for it.
    pub id: ProcessId,
    /// Its pid.
    pub pid: u32,
    /// Its process group id (equal to `pid`: every child leads its own group).
    pub pgid: i32,
    /// The spec's label.
    pub label: String,
    /// When it was spawned.
    pub started_at: SystemTime,
}

/// What [`ProcessRegistry::shutdown_all`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShutdownReport {
    /// Children that were live when shutdown began.
    pub targeted: usize,
    /// Of those, how many exited after SIGTERM (or earlier).
    pub terminated: usize,
    /// Of those, how many needed SIGKILL (or were dropped, and so killed, meanwhile).
    pub killed: usize,
    /// Children still not reaped when shutdown gave up (should be 0).
    pub unreaped: usize,
}

struct Entry {
    info: ProcessInfo,
    control: mpsc::WeakUnboundedSender<Control>,
    exit: watch::Receiver<Option<ExitInfo>>,
}

#[derive(Default)]
struct Inner {
    live: Mutex<HashMap<ProcessId, Entry>>,
    closed: AtomicBool,
}

/// Cloneable registry of live children; see the module docs.
#[derive(Clone, Default)]
pub struct ProcessRegistry {
    inner: Arc<Inner>,
}

impl fmt::Debug for ProcessRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessRegistry")
            .field("live", &self.live_count())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl ProcessRegistry {
    /// An empty, open registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ProcessId, Entry>> {
        // Nothing panics while holding the lock; recover the data if something ever did.
        self.inner.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many children are spawned and not yet reaped.
    pub fn live_count(&self) -> usize {
        self.lock().len()
    }

    /// The live children, oldest first.
    pub fn list(&self) -> Vec<ProcessInfo> {
        let mut out: Vec<_> = self.lock().values().map(|e| e.info.clone()).collect();
        out.sort_by_key(|i| i.id);
        out
    }

    /// True once [`shutdown_all`](Self::shutdown_all) began: `spawn` refuses new children.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    /// Registers a child; `false` (and nothing registered) when shutdown already began.
    #[must_use]
    pub(crate) fn insert(
        &self,
        info: ProcessInfo,
        control: mpsc::WeakUnboundedSender<Control>,
        exit: watch::Receiver<Option<ExitInfo>>,
    ) -> bool {
        let mut live = self.lock();
        // Checked under the lock `shutdown_all` closes under, so no child can slip past it.
        if self.is_closed() {
            return false;
        }
        live.insert(info.id, Entry { info, control, exit });
        true
    }

    pub(crate) fn remove(&self, id: ProcessId) {
        self.lock().remove(&id);
    }

    /// Refuses new spawns, then stops every live child: SIGTERM to each group, up to `term_grace`
    /// for them to exit, SIGKILL to the rest, and waits until every one is reaped (bounded by a
    /// short extra grace). Children whose drivers are already stopping them keep their own ladder.
    pub async fn shutdown_all(&self, term_grace: Duration) -> ShutdownReport {
        let targets: Vec<_> = {
            let live = self.lock();
            self.inner.closed.store(true, Ordering::Release);
            live.values()
                .map(|e| (e.control.clone(), e.exit.clone()))
                .collect()
        };
        let mut report = ShutdownReport {
            targeted: targets.len(),
            ..ShutdownReport::default()
        };
        let waits = targets.into_iter().map(|(control, mut exit)| async move {
            if let Some(tx) = control.upgrade() {
                let _ = tx.send(Control::Stop(StopPlan::new().term_grace(term_grace)));
            }
            let waited =
                tokio::time::timeout(term_grace + KILL_REAP_GRACE, exit.wait_for(Option::is_some)).await;
            match waited {
                Ok(Ok(info)) => info.as_ref().map(|i| i.escalation_used),
                Ok(Err(_closed)) => Some(Escalation::Abandoned),
                Err(_elapsed) => None,
            }
        });
        for outcome in futures::future::join_all(waits).await {
            match outcome {
                Some(Escalation::Kill | Escalation::Dropped | Escalation::Abandoned) => report.killed += 1,
                Some(_) => report.terminated += 1,
                None => report.unreaped += 1,
            }
        }
        report
    }
}
