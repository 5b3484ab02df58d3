//! `MemoryStore`: the in-process backend. Every operation takes one `std::sync::Mutex` over plain maps,
//! so each is atomic exactly like a transaction in the SQL backends, and nothing is awaited while the lock
//! is held. Semantics are identical to SQLite and Postgres (the same conformance story runs against all
//! three); only durability differs: the data is gone when the store is dropped.

mod declarations;
mod idempotency;
mod log;
mod service;
mod threads;
mod usage;
mod webhooks;

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{
    Approval, ContinuityEntry, Declaration, EventRecord, FinalizeRequest, Lease, NewEvent, Page, Query,
    Record, RetentionPolicy, RunRecord, RunState, StoreResult, ThreadStore,
};

/// The in-memory [`ThreadStore`].
#[derive(Debug, Default)]
pub struct MemoryStore {
    inner: Mutex<Inner>,
    webhooks: std::sync::Arc<webhooks::MemoryWebhooks>,
}

/// Everything the store holds; the submodules implement the operations on it.
#[derive(Debug, Default)]
struct Inner {
    threads: threads::Threads,
    log: log::Log,
    service: service::Service,
    declarations: declarations::Declarations,
    usage: usage::Usage,
    keys: idempotency::Keys,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state, even if a previous holder panicked (every operation validates before it mutates, so a
    /// panic cannot leave a half-applied change behind).
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[async_trait]
impl ThreadStore for MemoryStore {
    fn backend(&self) -> &'static str {
        "memory"
    }

    async fn resolve(&self, query: &Query) -> StoreResult<Option<Record>> {
        Ok(self.lock().threads.resolve(query))
    }

    async fn acquire_lease(&self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease> {
        self.lock().threads.acquire_lease(target, owner, ttl)
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
        self.lock().threads.renew_lease(lease, ttl)
    }

    async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        self.lock().threads.release_lease(lease);
        Ok(())
    }

    async fn finalize(&self, request: FinalizeRequest) -> StoreResult<Record> {
        self.lock().threads.finalize(request)
    }

    async fn list_threads(&self, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>> {
        Ok(self.lock().threads.list(tenant, agent, page))
    }

    async fn archive(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
        self.lock().threads.archive(tenant, agent, key)
    }

    async fn record_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        self.lock().log.record_receipts(tenant, agent, key, ids, at)
    }

    async fn has_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
    ) -> StoreResult<Vec<bool>> {
        Ok(self.lock().log.has_receipts(tenant, agent, key, ids))
    }

    async fn append_continuity(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()> {
        self.lock().log.append_continuity(tenant, agent, key, entry)
    }

    async fn continuity(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Vec<ContinuityEntry>> {
        Ok(self.lock().log.continuity(tenant, agent, key))
    }

    async fn append_events(&self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        self.lock().log.append_events(batch)
    }

    async fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after_seq: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        Ok(self.lock().log.read_run(tenant, run_id, after_seq, limit))
    }

    async fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after_cursor: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        Ok(self
            .lock()
            .log
            .read_thread(tenant, agent, key, after_cursor, limit))
    }

    async fn retention(&self, policy: &RetentionPolicy) -> StoreResult<u64> {
        Ok(self.lock().log.retention(policy))
    }

    async fn put_run(&self, run: &RunRecord) -> StoreResult<()> {
        self.lock().service.put_run(run)
    }

    async fn update_run_state(
        &self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord> {
        self.lock().service.update_run_state(run_id, state, result, error)
    }

    async fn get_run(&self, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        Ok(self.lock().service.get_run(tenant, run_id))
    }

    async fn list_runs(
        &self,
        tenant: &str,
        thread_key: Option<&str>,
        page: &Page,
    ) -> StoreResult<Vec<RunRecord>> {
        Ok(self.lock().service.list_runs(tenant, thread_key, page))
    }

    async fn search_runs(&self, search: &crate::RunSearch) -> StoreResult<Vec<RunRecord>> {
        Ok(self.lock().service.search_runs(search))
    }

    async fn mark_interrupted(&self, owner: &str) -> StoreResult<u64> {
        Ok(self.lock().service.mark_interrupted(owner))
    }

    async fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> StoreResult<Vec<RunRecord>> {
        Ok(self.lock().service.orphaned_runs(me, starting, limit))
    }

    async fn break_lease(&self, target: &str) -> StoreResult<bool> {
        Ok(self.lock().threads.break_lease(target))
    }

    async fn abandon_approvals(&self, tenant: &str, run_id: &str, reason: Value) -> StoreResult<u64> {
        Ok(self.lock().service.abandon_approvals(tenant, run_id, &reason))
    }

    async fn create_approval(&self, approval: &Approval) -> StoreResult<()> {
        self.lock().service.create_approval(approval)
    }

    async fn resolve_approval(
        &self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval> {
        self.lock().service.resolve_approval(tenant, request_id, decision)
    }

    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        Ok(self.lock().service.expire_approvals(now))
    }

    async fn list_approvals(
        &self,
        tenant: &str,
        run_id: &str,
        only_pending: bool,
    ) -> StoreResult<Vec<Approval>> {
        Ok(self.lock().service.list_approvals(tenant, run_id, only_pending))
    }

    async fn put_usage(&self, usage: &crate::UsageRecord) -> StoreResult<()> {
        self.lock().usage.put(usage)
    }

    async fn usage(&self, query: &crate::UsageQuery) -> StoreResult<Vec<crate::UsageRow>> {
        Ok(self.lock().usage.query(query))
    }

    async fn usage_total(&self, filter: &crate::UsageFilter) -> StoreResult<crate::UsageTotals> {
        crate::rules::require("tenant", &filter.tenant)?;
        Ok(self.lock().usage.total(filter))
    }

    async fn claim_idempotency(&self, claim: &crate::IdempotencyClaim) -> StoreResult<crate::ClaimOutcome> {
        self.lock().keys.claim(claim)
    }

    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &crate::StoredAnswer,
    ) -> StoreResult<bool> {
        self.lock().keys.complete(tenant, key, token, answer)
    }

    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        Ok(self.lock().keys.release(tenant, key, token))
    }

    async fn purge_idempotency(&self, cutoff: DateTime<Utc>) -> StoreResult<u64> {
        Ok(self.lock().keys.purge(cutoff))
    }

    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        self.lock().declarations.put(declaration)
    }

    async fn get_declaration(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> StoreResult<Option<Declaration>> {
        Ok(self.lock().declarations.get(tenant, agent, key))
    }

    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
        Ok(self.lock().declarations.delete(tenant, agent, key))
    }

    fn webhooks(&self) -> Option<std::sync::Arc<dyn crate::WebhookStore>> {
        Some(self.webhooks.clone())
    }
}
