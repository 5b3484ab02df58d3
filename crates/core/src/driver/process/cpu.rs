//! CPU accounting of child processes per execution: [`CpuMeter`].
//!
//! A meter is in scope (a tokio task-local, [`CpuMeter::scope`]) while an execution runs; every child
//! spawned in that scope is attached to it, and a persistent child leased from a
//! [`ProcessPool`](super::ProcessPool) is attached to the meter of the run that leased it. A child's CPU
//! time (user + system, its own and that of the descendants it waited for) is charged to the meter it is
//! attached to:
//!
//! - when it exits, from its rusage, read while it is a zombie and before it is reaped (`waitid` with
//!   `WNOWAIT`, which leaves the reaping to the supervisor);
//! - while it lives, from `/proc/<pid>/stat` whenever the meter is read ([`CpuMeter::total`]) or the
//!   child changes hands (a pool lease ends, another run leases it): only the time since the last
//!   charge, so a process kept across runs charges each run for its own share and idle time for none.
//!
//! Where neither source exists (no pidfd, not Linux) a child charges nothing; the meter then reports
//! what it could measure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

tokio::task_local! {
    static METER: CpuMeter;
}

/// The CPU time the child processes of one execution used. Cheap to clone; clones share the total.
#[derive(Debug, Clone, Default)]
pub struct CpuMeter {
    inner: Arc<MeterInner>,
}

#[derive(Debug, Default)]
struct MeterInner {
    micros: AtomicU64,
    children: Mutex<Vec<Weak<ChildCpu>>>,
}

impl CpuMeter {
    /// A meter at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `fut` with this meter in scope: children spawned (or leased from a pool) inside it are
    /// charged to it.
    pub async fn scope<F: Future>(self, fut: F) -> F::Output {
        METER.scope(self, fut).await
    }

    /// The meter in scope, if any.
    pub fn current() -> Option<CpuMeter> {
        METER.try_with(Clone::clone).ok()
    }

    /// The CPU time charged so far, after charging what live attached children used since their last
    /// charge.
    pub fn total(&self) -> Duration {
        let children: Vec<Arc<ChildCpu>> = {
            let mut list = self.inner.children.lock().unwrap_or_else(PoisonError::into_inner);
            list.retain(|w| w.strong_count() > 0);
            list.iter().filter_map(Weak::upgrade).collect()
        };
        for child in children {
            child.sample();
        }
        Duration::from_micros(self.inner.micros.load(Ordering::Relaxed))
    }

    fn add(&self, d: Duration) {
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.inner.micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn same(&self, other: &CpuMeter) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

/// One child's CPU account: what was charged already and the meter it is attached to.
#[derive(Debug)]
pub(crate) struct ChildCpu {
    pid: u32,
    state: Mutex<ChildState>,
}

#[derive(Debug, Default)]
struct ChildState {
    charged: Duration,
    meter: Option<CpuMeter>,
    exited: bool,
}

impl ChildCpu {
    /// The account of a child just spawned (nothing used yet), attached to the meter in scope.
    pub(crate) fn spawned(pid: u32) -> Arc<ChildCpu> {
        let cpu = Arc::new(ChildCpu {
            pid,
            state: Mutex::new(ChildState::default()),
        });
        if let Some(meter) = CpuMeter::current() {
            cpu.link(&meter);
            cpu.lock().meter = Some(meter);
        }
        cpu
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ChildState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn link(self: &Arc<Self>, meter: &CpuMeter) {
        meter
            .inner
            .children
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Arc::downgrade(self));
    }

    /// Hands the child to the meter in scope (a pool lease): what it used so far goes to its previous
    /// meter, if any; the time since (idle time included) is not charged to anyone.
    pub(crate) fn attach_current(self: &Arc<Self>) {
        let now = super::sys::process_cpu(self.pid);
        let next = CpuMeter::current();
        let mut st = self.lock();
        if st.exited {
            return;
        }
        if let Some(now) = now {
            if let Some(old) = &st.meter {
                old.add(now.saturating_sub(st.charged));
            }
            st.charged = now;
        }
        if let Some(next) = &next
            && !st.meter.as_ref().is_some_and(|m| m.same(next))
        {
            self.link(next);
        }
        st.meter = next;
    }

    /// Charges what the live child used since its last charge, and detaches it (a pool lease ended).
    pub(crate) fn detach(&self) {
        self.sample();
        self.lock().meter = None;
    }

    /// Charges what the live child used since its last charge to its meter.
    fn sample(&self) {
        let Some(now) = super::sys::process_cpu(self.pid) else {
            return;
        };
        let mut st = self.lock();
        // Read before the lock: after an exit the pid may name another process, so drop the reading.
        if st.exited {
            return;
        }
        if let Some(m) = &st.meter {
            m.add(now.saturating_sub(st.charged));
        }
        st.charged = st.charged.max(now);
    }

    /// The child exited with `total` CPU time (its rusage, when known): the rest is charged and the
    /// account closed. Called by the supervisor before it reaps the child.
    pub(crate) fn exited(&self, total: Option<Duration>) {
        let mut st = self.lock();
        st.exited = true;
        if let (Some(total), Some(m)) = (total, &st.meter) {
            m.add(total.saturating_sub(st.charged));
        }
        st.meter = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_meter_is_in_scope_only_inside_its_future() {
        assert!(CpuMeter::current().is_none());
        let meter = CpuMeter::new();
        let inside = meter.clone().scope(async { CpuMeter::current().is_some() }).await;
        assert!(inside);
        assert_eq!(meter.total(), Duration::ZERO);
    }

    #[tokio::test]
    async fn an_exit_charges_the_rest_once_and_a_reattached_child_charges_its_new_meter() {
        let first = CpuMeter::new();
        let cpu = first.clone().scope(async { ChildCpu::spawned(u32::MAX) }).await;
        cpu.exited(Some(Duration::from_millis(30)));
        cpu.exited(Some(Duration::from_millis(30)));
        assert_eq!(first.total(), Duration::from_millis(30));

        let second = CpuMeter::new();
        let cpu = ChildCpu::spawned(u32::MAX);
        // pid u32::MAX has no /proc entry: the lease moves the account without a reading.
        second.clone().scope(async { cpu.attach_current() }).await;
        cpu.exited(Some(Duration::from_millis(5)));
        assert_eq!(second.total(), Duration::from_millis(5));
    }
}
