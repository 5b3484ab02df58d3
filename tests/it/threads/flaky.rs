//! A store wrapper that fails chosen operations on demand (thread resolution, lease renewal and release,
//! finalize, event appends), counts lease acquisitions and can hold event appends (a slow store).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use agent_adaptor::store::*;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// Delegates to `inner`, failing renewals and finalizes when told to.
pub struct Flaky {
    pub inner: Arc<dyn ThreadStore>,
    pub fail_renew: AtomicBool,
    pub fail_finalize: AtomicU32,
    /// Event appends fail (`Unavailable`) while set.
    pub fail_appends: AtomicBool,
    /// Event appends wait while a writer holds this lock (`gate.write().await` stalls the store).
    pub gate: tokio::sync::RwLock<()>,
    /// Lease acquisitions seen.
    pub acquires: AtomicU32,
    /// Lease releases fail (`Unavailable`) while set.
    pub fail_release: AtomicBool,
    /// A run's event reads fail (`Unavailable`) while set.
    pub fail_reads: AtomicBool,
    /// Thread resolutions (`resolve`: checkpoints, thread lookups) fail (`Unavailable`) while set.
    pub fail_resolve: AtomicBool,
}

impl Flaky {
    pub fn new(inner: Arc<dyn ThreadStore>) -> Arc<Flaky> {
        Arc::new(Flaky {
            inner,
            fail_renew: AtomicBool::new(false),
            fail_finalize: AtomicU32::new(0),
            fail_appends: AtomicBool::new(false),
            gate: tokio::sync::RwLock::new(()),
            acquires: AtomicU32::new(0),
            fail_release: AtomicBool::new(false),
            fail_reads: AtomicBool::new(false),
            fail_resolve: AtomicBool::new(false),
        })
    }
}

fn down() -> StoreError {
    StoreError::Unavailable {
        detail: "injected outage".into(),
    }
}

#[async_trait]
impl ThreadStore for Flaky {
    fn backend(&self) -> &'static str {
        "flaky"
    }
    async fn resolve(&self, q: &Query) -> StoreResult<Option<Record>> {
        if self.fail_resolve.load(Ordering::SeqCst) {
            return Err(down());
        }
        self.inner.resolve(q).await
    }
    async fn acquire_lease(&self, t: &str, o: &str, ttl: Duration) -> StoreResult<Lease> {
        self.acquires.fetch_add(1, Ordering::SeqCst);
        self.inner.acquire_lease(t, o, ttl).await
    }
    async fn renew_lease(&self, l: &Lease, ttl: Duration) -> StoreResult<Lease> {
        if self.fail_renew.load(Ordering::SeqCst) {
            return Err(StoreError::LeaseLost {
                target: l.target.clone(),
            });
        }
        self.inner.renew_lease(l, ttl).await
    }
    async fn release_lease(&self, l: &Lease) -> StoreResult<()> {
        if self.fail_release.load(Ordering::SeqCst) {
            return Err(down());
        }
        self.inner.release_lease(l).await
    }
    async fn finalize(&self, r: FinalizeRequest) -> StoreResult<Record> {
        if self.fail_finalize.load(Ordering::SeqCst) > 0 {
            self.fail_finalize.fetch_sub(1, Ordering::SeqCst);
            return Err(down());
        }
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
        let _open = self.gate.read().await;
        if self.fail_appends.load(Ordering::SeqCst) {
            return Err(down());
        }
        self.inner.append_events(b).await
    }
    async fn read_run(&self, t: &str, r: &str, a: Option<u64>, l: u32) -> StoreResult<Vec<EventRecord>> {
        if self.fail_reads.load(Ordering::SeqCst) {
            return Err(down());
        }
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
        self.inner.put_run(r).await
    }
    async fn update_run_state(
        &self,
        id: &str,
        s: RunState,
        r: Option<Value>,
        e: Option<Value>,
    ) -> StoreResult<RunRecord> {
        self.inner.update_run_state(id, s, r, e).await
    }
    async fn get_run(&self, t: &str, id: &str) -> StoreResult<Option<RunRecord>> {
        self.inner.get_run(t, id).await
    }
    async fn list_runs(&self, t: &str, k: Option<&str>, p: &Page) -> StoreResult<Vec<RunRecord>> {
        self.inner.list_runs(t, k, p).await
    }
    async fn mark_interrupted(&self, o: &str) -> StoreResult<u64> {
        self.inner.mark_interrupted(o).await
    }
    async fn create_approval(&self, a: &Approval) -> StoreResult<()> {
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
    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        self.inner.put_declaration(declaration).await
    }

    async fn get_declaration(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> StoreResult<Option<Declaration>> {
        self.inner.get_declaration(tenant, agent, key).await
    }

    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
        self.inner.delete_declaration(tenant, agent, key).await
    }
}
