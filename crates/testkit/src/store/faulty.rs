//! `Faulty`: a store wrapper with one deliberate bug, the negative control for the store story. Each
//! [`Fault`] breaks one guarantee; `check_store` must panic on every one of them, naming the clause that
//! caught it ([`Fault::caught_by`]).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

use agent_adaptor_store::{
    Approval, ContinuityEntry, Declaration, EventRecord, FinalizeRequest, Lease, NewEvent, Page, Query,
    Record, RetentionPolicy, RunRecord, RunState, StoreError, StoreResult, ThreadStore,
};

/// The bug to inject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Renewal and finalize never check the fencing token (a stale owner keeps writing).
    IgnoreLeaseTokens,
    /// Finalize ignores `require_key_absent` (two forks can both take a key).
    NoForkCompareAndSet,
    /// A second resolution of an approval also "succeeds".
    DoubleResolve,
    /// Event batches are written one event at a time, so a failing batch leaves a prefix behind.
    SplitBatches,
    /// A second declaration of a taken thread key "succeeds" (create is no longer a compare-and-set).
    DuplicateDeclarations,
    /// A claim of an idempotency key in progress also "wins" (the claim is no longer atomic).
    DoubleClaim,
}

impl Fault {
    /// Every fault.
    pub const ALL: [Fault; 6] = [
        Fault::IgnoreLeaseTokens,
        Fault::NoForkCompareAndSet,
        Fault::DoubleResolve,
        Fault::SplitBatches,
        Fault::DuplicateDeclarations,
        Fault::DoubleClaim,
    ];

    /// The clause that must catch this fault first.
    pub fn caught_by(self) -> &'static str {
        match self {
            Fault::IgnoreLeaseTokens => "STORE-02",
            Fault::NoForkCompareAndSet => "STORE-07",
            Fault::DoubleResolve => "STORE-16",
            Fault::SplitBatches => "STORE-14",
            Fault::DuplicateDeclarations => "STORE-19",
            Fault::DoubleClaim => "STORE-24",
        }
    }
}

/// A correct store with one [`Fault`].
pub struct Faulty {
    inner: Arc<dyn ThreadStore>,
    fault: Fault,
}

impl Faulty {
    /// Wraps `inner`, breaking it as `fault` says.
    pub fn new(inner: Arc<dyn ThreadStore>, fault: Fault) -> Self {
        Faulty { inner, fault }
    }
}

#[async_trait]
impl ThreadStore for Faulty {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }

    async fn resolve(&self, query: &Query) -> StoreResult<Option<Record>> {
        self.inner.resolve(query).await
    }

    async fn acquire_lease(&self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease> {
        self.inner.acquire_lease(target, owner, ttl).await
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
        if self.fault == Fault::IgnoreLeaseTokens {
            return Ok(Lease {
                expires_at: agent_adaptor_store::now() + ttl,
                ..lease.clone()
            });
        }
        self.inner.renew_lease(lease, ttl).await
    }

    async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        self.inner.release_lease(lease).await
    }

    async fn finalize(&self, mut request: FinalizeRequest) -> StoreResult<Record> {
        match self.fault {
            Fault::IgnoreLeaseTokens => request.held_leases.clear(),
            Fault::NoForkCompareAndSet => request.require_key_absent = false,
            _ => {}
        }
        self.inner.finalize(request).await
    }

    async fn list_threads(&self, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>> {
        self.inner.list_threads(tenant, agent, page).await
    }

    async fn archive(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
        self.inner.archive(tenant, agent, key).await
    }

    async fn record_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        self.inner.record_receipts(tenant, agent, key, ids, at).await
    }

    async fn has_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
    ) -> StoreResult<Vec<bool>> {
        self.inner.has_receipts(tenant, agent, key, ids).await
    }

    async fn append_continuity(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()> {
        self.inner.append_continuity(tenant, agent, key, entry).await
    }

    async fn continuity(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Vec<ContinuityEntry>> {
        self.inner.continuity(tenant, agent, key).await
    }

    async fn append_events(&self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        if self.fault != Fault::SplitBatches {
            return self.inner.append_events(batch).await;
        }
        let mut cursors = Vec::new();
        for event in batch {
            cursors.extend(self.inner.append_events(vec![event]).await?);
        }
        Ok(cursors)
    }

    async fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after_seq: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        self.inner.read_run(tenant, run_id, after_seq, limit).await
    }

    async fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after_cursor: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        self.inner
            .read_thread(tenant, agent, key, after_cursor, limit)
            .await
    }

    async fn retention(&self, policy: &RetentionPolicy) -> StoreResult<u64> {
        self.inner.retention(policy).await
    }

    async fn put_run(&self, run: &RunRecord) -> StoreResult<()> {
        self.inner.put_run(run).await
    }

    async fn update_run_state(
        &self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord> {
        self.inner.update_run_state(run_id, state, result, error).await
    }

    async fn get_run(&self, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        self.inner.get_run(tenant, run_id).await
    }

    async fn list_runs(
        &self,
        tenant: &str,
        thread_key: Option<&str>,
        page: &Page,
    ) -> StoreResult<Vec<RunRecord>> {
        self.inner.list_runs(tenant, thread_key, page).await
    }

    async fn search_runs(&self, search: &agent_adaptor_store::RunSearch) -> StoreResult<Vec<RunRecord>> {
        self.inner.search_runs(search).await
    }

    async fn mark_interrupted(&self, owner: &str) -> StoreResult<u64> {
        self.inner.mark_interrupted(owner).await
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

    async fn create_approval(&self, approval: &Approval) -> StoreResult<()> {
        self.inner.create_approval(approval).await
    }

    async fn resolve_approval(
        &self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval> {
        match self
            .inner
            .resolve_approval(tenant, request_id, decision.clone())
            .await
        {
            Err(StoreError::AlreadyResolved { .. }) if self.fault == Fault::DoubleResolve => {
                Ok(fake(tenant, request_id, decision))
            }
            other => other,
        }
    }

    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        self.inner.expire_approvals(now).await
    }

    async fn list_approvals(
        &self,
        tenant: &str,
        run_id: &str,
        only_pending: bool,
    ) -> StoreResult<Vec<Approval>> {
        self.inner.list_approvals(tenant, run_id, only_pending).await
    }
    async fn put_usage(&self, usage: &agent_adaptor_store::UsageRecord) -> StoreResult<()> {
        self.inner.put_usage(usage).await
    }

    async fn usage(
        &self,
        query: &agent_adaptor_store::UsageQuery,
    ) -> StoreResult<Vec<agent_adaptor_store::UsageRow>> {
        self.inner.usage(query).await
    }

    async fn usage_total(
        &self,
        filter: &agent_adaptor_store::UsageFilter,
    ) -> StoreResult<agent_adaptor_store::UsageTotals> {
        self.inner.usage_total(filter).await
    }

    async fn claim_idempotency(
        &self,
        claim: &agent_adaptor_store::IdempotencyClaim,
    ) -> StoreResult<agent_adaptor_store::ClaimOutcome> {
        let outcome = self.inner.claim_idempotency(claim).await?;
        if self.fault == Fault::DoubleClaim && outcome == agent_adaptor_store::ClaimOutcome::InProgress {
            return Ok(agent_adaptor_store::ClaimOutcome::Claimed);
        }
        Ok(outcome)
    }

    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &agent_adaptor_store::StoredAnswer,
    ) -> StoreResult<bool> {
        self.inner.complete_idempotency(tenant, key, token, answer).await
    }

    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        self.inner.release_idempotency(tenant, key, token).await
    }

    async fn purge_idempotency(&self, cutoff: DateTime<Utc>) -> StoreResult<u64> {
        self.inner.purge_idempotency(cutoff).await
    }

    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        match self.inner.put_declaration(declaration).await {
            Err(StoreError::AlreadyExists { .. }) if self.fault == Fault::DuplicateDeclarations => Ok(()),
            other => other,
        }
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

    fn webhooks(&self) -> Option<Arc<dyn agent_adaptor_store::WebhookStore>> {
        self.inner.webhooks()
    }
}

/// A made-up "resolved" approval for the double-resolve fault.
fn fake(tenant: &str, request_id: &str, decision: Value) -> Approval {
    let now = agent_adaptor_store::now();
    Approval {
        tenant: tenant.to_owned(),
        run_id: String::new(),
        request_id: request_id.to_owned(),
        kind: String::new(),
        payload: Value::Null,
        state: agent_adaptor_store::ApprovalState::Resolved,
        decision: Some(decision),
        created_at: now,
        deadline: now,
    }
}
