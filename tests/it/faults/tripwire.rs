//! A store that delegates everything to another and misbehaves where a test arms it: it panics while
//! recording an approval (a stand-in for a store or recorder bug inside a run's pump), or holds one
//! declaration lookup until the test lets it go (a request paused inside admission, for races), or
//! fails lease releases and run-record writes as a store under load does (`Unavailable`).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::store::*;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tokio::sync::oneshot;

/// Delegates to `inner`; `create_approval` panics while `panic_on_approval` is set, and the next
/// `get_declaration` waits while a [`Pause`] is armed.
pub struct Tripwire {
    pub inner: Arc<dyn ThreadStore>,
    pub panic_on_approval: AtomicBool,
    pub pause_declaration: Mutex<Option<Pause>>,
    /// The next this many `release_lease` calls fail (`u32::MAX`: until reset).
    pub fail_releases: AtomicU32,
    /// The next this many `update_run_state` calls fail.
    pub fail_run_updates: AtomicU32,
    /// Every `put_run` of a record still `running` fails while set.
    pub fail_running_puts: AtomicBool,
    /// The targets of the leases taken, in order.
    pub acquired: Mutex<Vec<String>>,
}

/// Consumes one armed failure of `counter`.
fn trip(counter: &AtomicU32) -> bool {
    counter
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| match n {
            0 => None,
            u32::MAX => Some(u32::MAX),
            n => Some(n - 1),
        })
        .is_ok()
}

fn unavailable(what: &str) -> StoreError {
    StoreError::Unavailable {
        detail: format!("tripwire: {what} failed"),
    }
}

/// One paused call: it reports `entered` and waits until `release` fires (or is dropped).
pub struct Pause {
    pub entered: oneshot::Sender<()>,
    pub release: oneshot::Receiver<()>,
}

impl Tripwire {
    /// A tripwire over `inner`, disarmed.
    pub fn new(inner: Arc<dyn ThreadStore>) -> Self {
        Tripwire {
            inner,
            panic_on_approval: AtomicBool::new(false),
            pause_declaration: Mutex::new(None),
            fail_releases: AtomicU32::new(0),
            fail_run_updates: AtomicU32::new(0),
            fail_running_puts: AtomicBool::new(false),
            acquired: Mutex::new(Vec::new()),
        }
    }

    /// Arms a pause of the next declaration lookup: the first receiver fires when a lookup is inside
    /// it, and the lookup goes on when the sender fires.
    pub fn pause_next_declaration(&self) -> (oneshot::Receiver<()>, oneshot::Sender<()>) {
        let (entered, entered_rx) = oneshot::channel();
        let (release_tx, release) = oneshot::channel();
        *self.pause_declaration.lock().unwrap() = Some(Pause { entered, release });
        (entered_rx, release_tx)
    }
}

#[async_trait]
impl ThreadStore for Tripwire {
    fn backend(&self) -> &'static str {
        "tripwire"
    }
    async fn resolve(&self, q: &Query) -> StoreResult<Option<Record>> {
        self.inner.resolve(q).await
    }
    async fn acquire_lease(&self, t: &str, o: &str, ttl: Duration) -> StoreResult<Lease> {
        let lease = self.inner.acquire_lease(t, o, ttl).await?;
        self.acquired.lock().unwrap().push(t.to_owned());
        Ok(lease)
    }
    async fn renew_lease(&self, l: &Lease, ttl: Duration) -> StoreResult<Lease> {
        self.inner.renew_lease(l, ttl).await
    }
    async fn release_lease(&self, l: &Lease) -> StoreResult<()> {
        if trip(&self.fail_releases) {
            return Err(unavailable("release_lease"));
        }
        self.inner.release_lease(l).await
    }
    async fn finalize(&self, r: FinalizeRequest) -> StoreResult<Record> {
        self.inner.finalize(r).await
    }
    async fn list_threads(&self, t: &str, g: &str, p: &Page) -> StoreResult<Vec<Record>> {
        self.inner.list_threads(t, g, p).await
    }
    async fn archive(&self, t: &str, g: &str, k: &str) -> StoreResult<Record> {
        self.inner.archive(t, g, k).await
    }
    async fn record_receipts(
        &self,
        t: &str,
        g: &str,
        k: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        self.inner.record_receipts(t, g, k, ids, at).await
    }
    async fn has_receipts(&self, t: &str, g: &str, k: &str, ids: &[String]) -> StoreResult<Vec<bool>> {
        self.inner.has_receipts(t, g, k, ids).await
    }
    async fn append_continuity(&self, t: &str, g: &str, k: &str, e: ContinuityEntry) -> StoreResult<()> {
        self.inner.append_continuity(t, g, k, e).await
    }
    async fn continuity(&self, t: &str, g: &str, k: &str) -> StoreResult<Vec<ContinuityEntry>> {
        self.inner.continuity(t, g, k).await
    }
    async fn append_events(&self, b: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        self.inner.append_events(b).await
    }
    async fn read_run(&self, t: &str, r: &str, a: Option<u64>, l: u32) -> StoreResult<Vec<EventRecord>> {
        self.inner.read_run(t, r, a, l).await
    }
    async fn read_thread(
        &self,
        t: &str,
        g: &str,
        k: &str,
        a: Option<u64>,
        l: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        self.inner.read_thread(t, g, k, a, l).await
    }
    async fn retention(&self, p: &RetentionPolicy) -> StoreResult<u64> {
        self.inner.retention(p).await
    }
    async fn put_run(&self, r: &RunRecord) -> StoreResult<()> {
        if r.state == RunState::Running && self.fail_running_puts.load(Ordering::SeqCst) {
            return Err(unavailable("put_run"));
        }
        self.inner.put_run(r).await
    }
    async fn update_run_state(
        &self,
        id: &str,
        s: RunState,
        r: Option<Value>,
        e: Option<Value>,
    ) -> StoreResult<RunRecord> {
        if trip(&self.fail_run_updates) {
            return Err(unavailable("update_run_state"));
        }
        self.inner.update_run_state(id, s, r, e).await
    }
    async fn get_run(&self, t: &str, id: &str) -> StoreResult<Option<RunRecord>> {
        self.inner.get_run(t, id).await
    }
    async fn list_runs(&self, t: &str, k: Option<&str>, p: &Page) -> StoreResult<Vec<RunRecord>> {
        self.inner.list_runs(t, k, p).await
    }
    async fn search_runs(&self, search: &agent_adaptor::store::RunSearch) -> StoreResult<Vec<RunRecord>> {
        self.inner.search_runs(search).await
    }
    async fn mark_interrupted(&self, o: &str) -> StoreResult<u64> {
        self.inner.mark_interrupted(o).await
    }
    async fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> StoreResult<Vec<RunRecord>> {
        self.inner.orphaned_runs(me, starting, limit).await
    }
    async fn break_lease(&self, target: &str) -> StoreResult<bool> {
        self.inner.break_lease(target).await
    }
    async fn abandon_approvals(&self, tenant: &str, run_id: &str, reason: Value) -> StoreResult<u64> {
        self.inner.abandon_approvals(tenant, run_id, reason).await
    }
    async fn create_approval(&self, a: &Approval) -> StoreResult<()> {
        if self.panic_on_approval.load(Ordering::SeqCst) {
            panic!("store bug while recording an approval");
        }
        self.inner.create_approval(a).await
    }
    async fn resolve_approval(&self, t: &str, id: &str, d: Value) -> StoreResult<Approval> {
        self.inner.resolve_approval(t, id, d).await
    }
    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        self.inner.expire_approvals(now).await
    }
    async fn list_approvals(&self, t: &str, r: &str, p: bool) -> StoreResult<Vec<Approval>> {
        self.inner.list_approvals(t, r, p).await
    }
    async fn claim_idempotency(
        &self,
        claim: &agent_adaptor::store::IdempotencyClaim,
    ) -> StoreResult<agent_adaptor::store::ClaimOutcome> {
        self.inner.claim_idempotency(claim).await
    }

    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &agent_adaptor::store::StoredAnswer,
    ) -> StoreResult<bool> {
        self.inner.complete_idempotency(tenant, key, token, answer).await
    }

    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        self.inner.release_idempotency(tenant, key, token).await
    }

    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        self.inner.put_declaration(declaration).await
    }

    async fn get_declaration(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> StoreResult<Option<Declaration>> {
        let pause = self.pause_declaration.lock().unwrap().take();
        if let Some(Pause { entered, release }) = pause {
            let _ = entered.send(());
            let _ = release.await;
        }
        self.inner.get_declaration(tenant, agent, key).await
    }

    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
        self.inner.delete_declaration(tenant, agent, key).await
    }
}
