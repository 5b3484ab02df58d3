//! Thread stores: checkpoints, leases, receipts, continuity history, the run event log, runs and pending
//! approvals, behind one object-safe trait, [`ThreadStore`], with three backends chosen by URL ([`open`]):
//!
//! | URL | backend | use |
//! |---|---|---|
//! | `memory:` | [`memory::MemoryStore`] | tests, single-process hosts; gone on exit |
//! | `sqlite://path` (`sqlite::memory:`) | [`sqlite::SqliteStore`] | the embedded default: one file, WAL |
//! | `postgres://…` / `postgresql://…` | [`postgres::PostgresStore`] | several replicas on one database |
//!
//! All three pass the same conformance story, `testkit::store::check_store`, clause for clause.
//! This module owns storage only: it imports nothing from `runtime`, `driver` or `server`, and no sqlx
//! type appears in the trait or its data types.
//!
//! # Model
//!
//! * **Thread records.** A [`Record`] maps a host thread key (opaque, stored verbatim) to the driver's
//!   resume state. Everything is tenant-scoped: a query never sees another tenant's rows. A thread is
//!   named by `(tenant, agent, key)` ([`Record::host_agent`]): two agents of a tenant using the same key
//!   have two threads, with their own receipts, continuity, leases and event history. At most one record
//!   per `(tenant, agent, key)` is [`ThreadStatus::Active`]; superseded records stay, archived, for audit.
//! * **Leases** guard one writer per target (`acquire_lease` / `renew_lease` / `release_lease`). A lease
//!   carries a **fencing token** that is strictly increasing per target — across owners, re-acquisitions by
//!   the same owner, releases and restarts — because the lease row is never deleted, only expired.
//! * **Finalize** is the only way a run's outcome becomes durable, and it is one transaction: every held
//!   lease is re-checked (same owner, same token, unexpired) *inside* that transaction, then the
//!   `require_key_absent` compare-and-set (forks), then save / archive / rebind. A writer whose lease
//!   expired or was taken over gets [`StoreError::LeaseLost`] and nothing is written, so a stale owner can
//!   never overwrite a newer one's checkpoint, however late it wakes up. On Postgres the lease rows are
//!   locked `FOR UPDATE` during the check, so a takeover cannot slip between check and commit.
//! * **Receipts** remember delivered message ids per thread, so a redelivered message is recognised.
//! * **Continuity** keeps the bounded recovery context a fresh session is primed with: earlier guidance plus
//!   the last three assistant turns within 8 KiB.
//! * **The run event log** is append-only. The caller numbers events per run (`seq`); the store gives
//!   every event a `cursor` that is never reused and, within a thread, increases in *commit order*, so a
//!   reader that tails a thread with `read_thread(after_cursor)` sees no gap and no duplicate even while
//!   several runs append (Postgres serializes appenders of one thread with a transaction-scoped advisory
//!   lock; SQLite has a single writer). A batch is all-or-nothing. Producers that emit one event at a
//!   time append through an [`EventWriter`], which group-commits whatever queued up meanwhile.
//! * **Runs** and **approvals** are what the HTTP service needs to survive a replica crash: runs of a dead
//!   replica are marked interrupted; an approval is resolved exactly once by compare-and-set.
//! * **Usage** is one metered record per finished run ([`UsageRecord`]: tokens, estimated cost, CLI wall
//!   and CPU time), aggregated per tenant, agent and thread over a time range, and summed for budgets.
//!   It is accounting data: retention does not delete it.
//! * **Run listing** ([`search_runs`](ThreadStore::search_runs)) filters runs by tenant, agent, thread
//!   and state, newest first, with a keyset position instead of an offset ([`RunSearch`]).
//! * **Idempotency keys** ([`idempotency`]) remember, per tenant, which request claimed a key and the
//!   answer it completed with, so the service replays a repeated request instead of running it twice.
//! * **Webhooks** ([`webhooks`]) are per-tenant subscriptions and the durable outbox of their deliveries,
//!   behind a trait of their own, [`WebhookStore`] ([`ThreadStore::webhooks`]).
//! * **Declarations** are threads a host declared before their first run (run defaults, a fork's parent),
//!   so a restart does not forget them; the defaults are opaque JSON to the store.
//!
//! # Clocks
//!
//! Lease expiry uses the database's clock on Postgres (replicas may disagree about the time; the
//! database is the one referee) and the process clock elsewhere. Timestamps are stored with microsecond
//! precision everywhere, so a value reads back exactly as written.
//!
//! # Retention
//!
//! Storage is bounded by rules, not by operators remembering to clean up:
//! * receipts: at most [`RECEIPT_CAP`] per thread and none older than [`RECEIPT_MAX_AGE`] relative to the
//!   newest write, pruned on every write;
//! * continuity: whatever [`continuity`](ThreadStore::continuity) could no longer return is deleted on
//!   every append;
//! * the event log: [`retention`](ThreadStore::retention) deletes by age and by a per-tenant cap, oldest
//!   first, and reports how many rows went. The service runs it periodically.
//! * Lease rows are kept (one per target) so fencing tokens never go backwards.
//!
//! # Errors and schema
//!
//! Backends map driver failures to [`StoreError`]: connection and I/O failures are
//! [`StoreError::Unavailable`] (retryable), undecodable rows are [`StoreError::Corrupt`] naming the table
//! and row. Migrations (`migrations/sqlite`, `migrations/postgres`) are append-only and run at open; a
//! database that a newer build migrated further is refused with [`StoreError::SchemaVersion`].
//!
//! # Features
//!
//! `sqlite` and `postgres` (both default) build the SQL backends; without them this crate is the trait,
//! its types and the memory backend, and compiles no sqlx (the `agent-adaptor-core` dependency is built
//! that way). [`open`] refuses a URL whose backend was not built.

#[cfg(feature = "sql")]
#[macro_use]
mod columns;
#[cfg_attr(not(feature = "sql"), allow(dead_code))]
mod decode;
mod error;
pub mod idempotency;
pub mod memory;
#[cfg(feature = "postgres")]
pub mod postgres;
mod rules;
pub mod search;
#[cfg(feature = "sql")]
mod sql_error;
#[cfg(feature = "sqlite")]
pub mod sqlite;
mod types;
pub mod usage;
pub mod webhooks;
#[cfg(feature = "sql")]
pub(crate) mod webhooks_sql;
mod writer;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

pub use error::StoreError;
pub use idempotency::{ClaimOutcome, IdempotencyClaim, StoredAnswer};
pub use rules::{CONTINUITY_BUDGET, CONTINUITY_TURNS, MAX_PAGE, RECEIPT_CAP, RECEIPT_MAX_AGE, micros, now};
pub use search::{RunPosition, RunSearch};
pub use types::{
    AgentIdentity, Approval, ApprovalState, ContinuityEntry, ContinuityKind, Declaration, EventRecord,
    FinalizeRequest, Lease, Lookup, NewEvent, Page, Query, Record, RetentionPolicy, RunRecord, RunState,
    SessionState, ThreadStatus,
};
pub use usage::{UsageFilter, UsageKey, UsageQuery, UsageRecord, UsageRow, UsageTotals};
pub use webhooks::WebhookStore;
pub use writer::EventWriter;

/// Shorthand for results of store operations.
pub type StoreResult<T> = Result<T, StoreError>;

/// Durable state for threads, runs and approvals. Object-safe: share it as `Arc<dyn ThreadStore>`.
///
/// Every method is one atomic operation. Tenant-scoped methods never read or change another tenant's rows.
#[async_trait]
pub trait ThreadStore: Send + Sync + 'static {
    /// The backend's name: `"memory"`, `"sqlite"` or `"postgres"`.
    fn backend(&self) -> &'static str;

    // ---- thread records and leases -------------------------------------------------------------------

    /// Looks up one record. A key resolves to its active record only; an id also finds an archived
    /// record when `include_archived` is set. Missing is `Ok(None)`.
    async fn resolve(&self, query: &Query) -> StoreResult<Option<Record>>;

    /// Takes the lease on `target` for `owner` until `ttl` from now, with a new, higher fencing token.
    /// Succeeds when the target is free, expired, or already held by `owner`; otherwise
    /// [`StoreError::Busy`].
    async fn acquire_lease(&self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease>;

    /// Extends a lease to `ttl` from now, keeping its token. [`StoreError::LeaseLost`] unless the lease is
    /// current (same owner and token) and unexpired.
    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> StoreResult<Lease>;

    /// Gives a lease up. Idempotent: a stale, expired or already released lease is ignored.
    async fn release_lease(&self, lease: &Lease) -> StoreResult<()>;

    /// Persists a run's outcome in one transaction (see the module docs). Returns the record as saved.
    ///
    /// Errors: [`StoreError::LeaseLost`] if any held lease is not current (nothing written);
    /// [`StoreError::AlreadyExists`] if `require_key_absent` and the key has an active record;
    /// [`StoreError::Conflict`] if another record is active for the key and `rebind_active` is off, or
    /// the record id exists under another tenant or key.
    async fn finalize(&self, request: FinalizeRequest) -> StoreResult<Record>;

    /// The active records of the tenant's agent `agent` ordered by key, after `page.after` (a key).
    async fn list_threads(&self, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>>;

    /// Archives the active record for the agent's key and returns it; [`StoreError::NotFound`] if there
    /// is none.
    async fn archive(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record>;

    // ---- delivered-message receipts ------------------------------------------------------------------

    /// Records that the messages `ids` were delivered on the thread at `at`; returns how many were new.
    /// Prunes the thread's receipts to [`RECEIPT_CAP`] and [`RECEIPT_MAX_AGE`] before `at`.
    async fn record_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize>;

    /// For each id, whether a receipt is stored (same order as `ids`).
    async fn has_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
    ) -> StoreResult<Vec<bool>>;

    /// Whether a receipt for `id` is stored.
    async fn has_receipt(&self, tenant: &str, agent: &str, key: &str, id: &str) -> StoreResult<bool> {
        let found = self.has_receipts(tenant, agent, key, &[id.to_owned()]).await?;
        Ok(found.first().copied().unwrap_or(false))
    }

    // ---- continuity history --------------------------------------------------------------------------

    /// Appends to the thread's recovery history and prunes what can no longer be returned.
    async fn append_continuity(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()>;

    /// The recovery context, oldest first: earlier guidance plus the last [`CONTINUITY_TURNS`] assistant
    /// turns, at most [`CONTINUITY_BUDGET`] bytes of text (newest kept, oldest trimmed).
    async fn continuity(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Vec<ContinuityEntry>>;

    // ---- run event log -------------------------------------------------------------------------------

    /// Appends a batch in one transaction and returns the cursors given to it, in batch order. A
    /// duplicate `(tenant, run_id, seq)` — stored already or repeated in the batch — is
    /// [`StoreError::Conflict`] and nothing of the batch is written. After [`StoreError::Unavailable`] the
    /// batch may or may not have committed (the acknowledgement can be lost with the connection); retrying
    /// the same batch is safe: it is written once, or answered with `Conflict` if it already was.
    async fn append_events(&self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>>;

    /// A run's events with `seq > after_seq` (all when `None`), by `seq`, at most `limit`.
    async fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after_seq: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>>;

    /// A thread's events (those appended with its agent and key) with `cursor > after_cursor` (all when
    /// `None`), by cursor, at most `limit`.
    async fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after_cursor: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>>;

    /// Deletes events older than `max_age`, then the oldest beyond `max_events_per_tenant` in each tenant;
    /// returns how many rows it deleted.
    async fn retention(&self, policy: &RetentionPolicy) -> StoreResult<u64>;

    // ---- runs ----------------------------------------------------------------------------------------

    /// Creates a run record; [`StoreError::AlreadyExists`] if the run id is taken.
    async fn put_run(&self, run: &RunRecord) -> StoreResult<()>;

    /// Moves a run to `state`, replacing its result and error. [`StoreError::NotFound`] for an unknown
    /// run; [`StoreError::Conflict`] if the run already reached a terminal state.
    async fn update_run_state(
        &self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord>;

    /// One run of the tenant.
    async fn get_run(&self, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>>;

    /// The tenant's runs ordered by run id (UUIDv7 ids make that creation order), optionally of one
    /// thread, after `page.after` (a run id).
    async fn list_runs(
        &self,
        tenant: &str,
        thread_key: Option<&str>,
        page: &Page,
    ) -> StoreResult<Vec<RunRecord>>;

    /// The runs `search` selects, newest first (by `created_at`, then run id, both descending), strictly
    /// before `search.before`, at most `search.limit`.
    async fn search_runs(&self, search: &RunSearch) -> StoreResult<Vec<RunRecord>> {
        let _ = search;
        Err(StoreError::unsupported(self.backend(), "list runs"))
    }

    /// Marks every queued, running or parked run of `owner` as interrupted (the replica crashed);
    /// returns how many changed.
    async fn mark_interrupted(&self, owner: &str) -> StoreResult<u64>;

    /// Crash recovery: the unfinished (queued, running or parked) runs whose owner is dead, by run id,
    /// at most `limit`. `me` is the asking replica's owner id; `starting` says it has just started, so
    /// unfinished runs under its own id are a previous life's (a stable replica id restarting).
    ///
    /// Who is dead is the backend's rule: on the single-node stores (memory, SQLite) every owner but
    /// `me`; on Postgres an owner whose replica lease ([`replica_lease_target`]) is missing or expired
    /// by the database clock. The caller ends each run (`update_run_state` is the compare-and-set that
    /// makes exactly one recoverer win).
    async fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> StoreResult<Vec<RunRecord>> {
        let _ = (me, starting, limit);
        Err(StoreError::unsupported(self.backend(), "support crash recovery"))
    }

    /// Crash recovery: frees the lease on `target` whatever its owner (that owner is dead), at once.
    /// The row stays, so the next fencing token is still higher. True when an unexpired lease was
    /// broken.
    async fn break_lease(&self, target: &str) -> StoreResult<bool> {
        let _ = target;
        Err(StoreError::unsupported(self.backend(), "support crash recovery"))
    }

    /// Crash recovery: ends the run's pending approvals as [`ApprovalState::Expired`] with `reason` as
    /// their decision (so a reader sees why), whatever their deadline; returns how many.
    async fn abandon_approvals(&self, tenant: &str, run_id: &str, reason: Value) -> StoreResult<u64> {
        let _ = (tenant, run_id, reason);
        Err(StoreError::unsupported(self.backend(), "support crash recovery"))
    }

    // ---- pending approvals ---------------------------------------------------------------------------

    /// Stores a new pending approval; [`StoreError::AlreadyExists`] if the request id is taken.
    async fn create_approval(&self, approval: &Approval) -> StoreResult<()>;

    /// Resolves a pending approval exactly once (compare-and-set) and returns it. A second resolution is
    /// [`StoreError::AlreadyResolved`], one past the deadline [`StoreError::Expired`], an unknown id
    /// [`StoreError::NotFound`].
    async fn resolve_approval(
        &self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval>;

    /// Marks pending approvals whose deadline is at or before `now` as expired; returns how many.
    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64>;

    /// The approvals of a run, oldest first; only pending ones if `only_pending`.
    async fn list_approvals(
        &self,
        tenant: &str,
        run_id: &str,
        only_pending: bool,
    ) -> StoreResult<Vec<Approval>>;

    // ---- metered usage -------------------------------------------------------------------------------

    /// Records a finished run's usage; a second record of the run replaces the first.
    async fn put_usage(&self, usage: &UsageRecord) -> StoreResult<()> {
        let _ = usage;
        Err(StoreError::unsupported(self.backend(), "meter usage"))
    }

    /// Usage aggregated per (tenant, agent, thread) over the query's range, ordered by that key, after
    /// `query.after`, at most `query.limit` rows.
    async fn usage(&self, query: &UsageQuery) -> StoreResult<Vec<UsageRow>> {
        let _ = query;
        Err(StoreError::unsupported(self.backend(), "meter usage"))
    }

    /// The sums of the runs a budget counts.
    async fn usage_total(&self, filter: &UsageFilter) -> StoreResult<UsageTotals> {
        let _ = filter;
        Err(StoreError::unsupported(self.backend(), "meter usage"))
    }

    // ---- idempotency keys ----------------------------------------------------------------------------

    /// Claims `(claim.tenant, claim.key)` for one request, atomically: of concurrent claimers exactly one
    /// gets [`ClaimOutcome::Claimed`]. A key whose claim lapsed or whose completed answer outlived its keep
    /// time is claimed afresh (whatever request it held). Otherwise a different `request_hash` is
    /// [`ClaimOutcome::Mismatch`], a live claim [`ClaimOutcome::InProgress`], and a completed key
    /// [`ClaimOutcome::Completed`] with its answer.
    async fn claim_idempotency(&self, claim: &IdempotencyClaim) -> StoreResult<ClaimOutcome> {
        let _ = claim;
        Err(StoreError::unsupported(self.backend(), "keep idempotency keys"))
    }

    /// Completes a claimed key with the answer to replay; false (nothing written) unless the claim with
    /// `token` still holds the key.
    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<bool> {
        let _ = (tenant, key, token, answer);
        Err(StoreError::unsupported(self.backend(), "keep idempotency keys"))
    }

    /// Releases a claimed key (its answer is not to be replayed); false unless the claim with `token`
    /// still held it.
    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        let _ = (tenant, key, token);
        Err(StoreError::unsupported(self.backend(), "keep idempotency keys"))
    }

    /// Deletes every key created at or before `cutoff`, completed or not; returns how many.
    async fn purge_idempotency(&self, cutoff: DateTime<Utc>) -> StoreResult<u64> {
        let _ = cutoff;
        Err(StoreError::unsupported(self.backend(), "keep idempotency keys"))
    }

    // ---- thread declarations -------------------------------------------------------------------------

    /// Stores a declaration; [`StoreError::AlreadyExists`] if its `(tenant, agent, key)` is taken.
    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()>;

    /// The declaration of `(tenant, agent, key)`.
    async fn get_declaration(&self, tenant: &str, agent: &str, key: &str)
    -> StoreResult<Option<Declaration>>;

    /// Deletes a declaration; true when there was one.
    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool>;

    // ---- webhooks ------------------------------------------------------------------------------------

    /// The store's webhook subscriptions and delivery outbox, when it keeps them (every built-in
    /// backend does; a wrapping store may not).
    fn webhooks(&self) -> Option<Arc<dyn WebhookStore>> {
        None
    }
}

/// The lease target of a replica's heartbeat: a replica holds it while it lives (renewing it), so on a
/// shared store the runs of an owner whose replica lease lapsed are a dead replica's
/// ([`ThreadStore::orphaned_runs`]).
pub fn replica_lease_target(owner: &str) -> String {
    format!("{REPLICA_LEASE_PREFIX}{owner}")
}

/// The prefix of [`replica_lease_target`] (thread leases use `thread:`, [`thread_lease_target`]).
pub const REPLICA_LEASE_PREFIX: &str = "replica:";

/// The lease target of thread `(tenant, agent, key)`: `thread:` and the three names as a JSON array, so
/// no name's characters can make two threads share a target.
pub fn thread_lease_target(tenant: &str, agent: &str, key: &str) -> String {
    let names = serde_json::to_string(&[tenant, agent, key]).unwrap_or_default();
    format!("thread:{names}")
}

/// A fresh private in-memory store (the default of an Agent without a configured store).
pub fn in_memory() -> Arc<dyn ThreadStore> {
    Arc::new(memory::MemoryStore::new())
}

/// Opens the store a URL names, running migrations for the SQL backends.
///
/// `memory:` · `sqlite://path/to/file.db` (created if missing) · `sqlite::memory:` ·
/// `postgres://user@host/db` or `postgresql://…`. Anything else is [`StoreError::Invalid`].
pub async fn open(url: &str) -> StoreResult<Arc<dyn ThreadStore>> {
    let scheme = url.split_once(':').map(|(scheme, _)| scheme).unwrap_or("");
    match scheme {
        "memory" => Ok(Arc::new(memory::MemoryStore::new())),
        #[cfg(feature = "sqlite")]
        "sqlite" => Ok(Arc::new(sqlite::SqliteStore::open(url).await?)),
        #[cfg(feature = "postgres")]
        "postgres" | "postgresql" => Ok(Arc::new(postgres::PostgresStore::open(url).await?)),
        #[cfg(not(feature = "sqlite"))]
        "sqlite" => Err(StoreError::invalid(
            "this build has no SQLite store (feature `sqlite` of agent-adaptor-store)",
        )),
        #[cfg(not(feature = "postgres"))]
        "postgres" | "postgresql" => Err(StoreError::invalid(
            "this build has no Postgres store (feature `postgres` of agent-adaptor-store)",
        )),
        _ => Err(StoreError::invalid(format!(
            "unsupported store URL scheme {scheme:?} (expected memory:, sqlite: or postgres:)"
        ))),
    }
}

#[cfg(all(test, feature = "sqlite", feature = "postgres"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn open_selects_the_backend_by_scheme() {
        assert_eq!(open("memory:").await.unwrap().backend(), "memory");
        assert_eq!(open("sqlite::memory:").await.unwrap().backend(), "sqlite");
        let err = open("mysql://root@localhost/x").await.err().unwrap();
        assert!(matches!(err, StoreError::Invalid { .. }), "{err}");
        assert!(!err.to_string().contains("root@"), "never echo the URL: {err}");
    }

    #[test]
    fn thread_lease_targets_cannot_collide_through_separators() {
        assert_ne!(
            thread_lease_target("a:b", "c", "d"),
            thread_lease_target("a", "b:c", "d")
        );
        assert_ne!(
            thread_lease_target("t", "ref", "x"),
            thread_lease_target("t", "ref2", "x")
        );
        assert_eq!(thread_lease_target("t", "a", "k"), r#"thread:["t","a","k"]"#);
    }

    #[tokio::test]
    async fn an_unreachable_postgres_is_unavailable_not_a_panic() {
        // Port 1 on loopback: nothing listens there.
        let err = open("postgres://postgres:secret@127.0.0.1:1/x")
            .await
            .err()
            .unwrap();
        assert!(err.is_retryable(), "{err:?}");
        assert!(
            !err.to_string().contains("secret"),
            "never echo credentials: {err}"
        );
        let err = open("sqlite:///nonexistent-dir/sub/store.db")
            .await
            .err()
            .unwrap();
        assert!(
            matches!(err, StoreError::Unavailable { .. } | StoreError::Backend { .. }),
            "{err:?}"
        );
    }
}
