//! `SqliteStore`: the embedded default. One database file in WAL mode, created if missing, with a busy
//! timeout and foreign keys on; migrations (`migrations/sqlite`) run at open.
//!
//! Writes go through a single-connection writer pool and every write transaction starts with
//! `BEGIN IMMEDIATE`, so writers queue in-process instead of failing with `SQLITE_BUSY`, and another
//! process on the same file waits up to the busy timeout. The exception is an event batch that fits one
//! multi-row `INSERT`: that statement runs in autocommit mode, atomic on its own and taking the write lock
//! at its start just as `BEGIN IMMEDIATE` does (the service's run writers append one per commit, so this
//! saves two of three round trips to the connection's worker). Reads use a separate pool of read-only
//! connections, which WAL lets run alongside the writer. `sqlite::memory:` uses one connection for both
//! (each in-memory connection would otherwise be its own database).
//!
//! `synchronous = NORMAL`: in WAL mode a committed transaction survives a process crash (`kill -9`); only
//! an operating-system crash or power loss can lose the last commits.

mod declarations;
mod idempotency;
mod log;
mod rows;
mod service;
mod threads;
mod usage;
mod webhooks;

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, Transaction};

use super::sql_error::{self, map};
use super::{
    Approval, ContinuityEntry, Declaration, EventRecord, FinalizeRequest, Lease, NewEvent, Page, Query,
    Record, RetentionPolicy, RunRecord, RunState, StoreError, StoreResult, ThreadStore,
};

/// The migrations compiled into this build.
static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/sqlite");

/// How long a writer waits for another process's write lock before giving up (as `Unavailable`).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Reader connections for a file database.
const READERS: u32 = 4;

/// The SQLite [`ThreadStore`].
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if missing) the database a `sqlite:` URL names and migrates it.
    ///
    /// Fails with [`StoreError::SchemaVersion`] if a newer build migrated the file further.
    pub async fn open(url: &str) -> StoreResult<Self> {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::invalid(format!("bad SQLite URL: {e}")))?
            .create_if_missing(true)
            .busy_timeout(BUSY_TIMEOUT)
            .foreign_keys(true)
            .synchronous(SqliteSynchronous::Normal);
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let store = if in_memory {
            let pool = pool(1).connect_with(options).await.map_err(map)?;
            SqliteStore {
                writer: pool.clone(),
                reader: pool,
            }
        } else {
            let options = options.journal_mode(SqliteJournalMode::Wal);
            let writer = pool(1).connect_with(options.clone()).await.map_err(map)?;
            migrate(&writer).await?;
            let reader = pool(READERS)
                .connect_with(options.read_only(true))
                .await
                .map_err(map)?;
            return Ok(SqliteStore { writer, reader });
        };
        migrate(&store.writer).await?;
        Ok(store)
    }

    /// Closes both pools, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    /// Begins a write transaction that holds SQLite's write lock from the start.
    async fn write(&self) -> StoreResult<Transaction<'static, Sqlite>> {
        self.writer.begin_with("BEGIN IMMEDIATE").await.map_err(map)
    }
}

/// A pool that keeps its connections (an in-memory database lives only as long as its connection).
fn pool(size: u32) -> SqlitePoolOptions {
    SqlitePoolOptions::new()
        .max_connections(size)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .acquire_timeout(Duration::from_secs(30))
}

/// Applies the migrations, refusing a database migrated past what this build knows.
async fn migrate(pool: &SqlitePool) -> StoreResult<()> {
    let Err(err) = MIGRATOR.run(pool).await else {
        return Ok(());
    };
    let found: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations")
        .fetch_one(pool)
        .await
        .ok()
        .flatten();
    Err(sql_error::map_migrate(err, found, &MIGRATOR))
}

#[async_trait]
impl ThreadStore for SqliteStore {
    fn backend(&self) -> &'static str {
        "sqlite"
    }

    async fn resolve(&self, query: &Query) -> StoreResult<Option<Record>> {
        threads::resolve(&self.reader, query).await
    }

    async fn acquire_lease(&self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease> {
        threads::acquire_lease(&self.writer, target, owner, ttl).await
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
        threads::renew_lease(&self.writer, lease, ttl).await
    }

    async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        threads::release_lease(&self.writer, lease).await
    }

    async fn finalize(&self, request: FinalizeRequest) -> StoreResult<Record> {
        super::rules::check_finalize(&request)?;
        let mut tx = self.write().await?;
        let saved = threads::finalize(&mut tx, request).await?;
        tx.commit().await.map_err(map)?;
        Ok(saved)
    }

    async fn list_threads(&self, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>> {
        threads::list(&self.reader, tenant, agent, page).await
    }

    async fn archive(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
        threads::archive(&self.writer, tenant, agent, key).await
    }

    async fn record_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let mut tx = self.write().await?;
        let added = log::record_receipts(&mut tx, tenant, agent, key, ids, at).await?;
        tx.commit().await.map_err(map)?;
        Ok(added)
    }

    async fn has_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
    ) -> StoreResult<Vec<bool>> {
        log::has_receipts(&self.reader, tenant, agent, key, ids).await
    }

    async fn append_continuity(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()> {
        let mut tx = self.write().await?;
        log::append_continuity(&mut tx, tenant, agent, key, entry).await?;
        tx.commit().await.map_err(map)
    }

    async fn continuity(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Vec<ContinuityEntry>> {
        log::continuity(&self.reader, tenant, agent, key).await
    }

    async fn append_events(&self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        if batch.len() <= log::EVENT_CHUNK {
            // One multi-row `INSERT` in autocommit mode is atomic on its own: one round trip to the
            // connection's worker instead of three (`BEGIN IMMEDIATE`, the insert, `COMMIT`), and no
            // transaction left open if the caller goes away mid-statement.
            let mut conn = self.writer.acquire().await.map_err(map)?;
            return log::append_events(&mut conn, &batch).await;
        }
        let mut tx = self.write().await?;
        let cursors = log::append_events(&mut tx, &batch).await?;
        tx.commit().await.map_err(map)?;
        Ok(cursors)
    }

    async fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after_seq: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        log::read_run(&self.reader, tenant, run_id, after_seq, limit).await
    }

    async fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after_cursor: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        log::read_thread(&self.reader, tenant, agent, key, after_cursor, limit).await
    }

    async fn retention(&self, policy: &RetentionPolicy) -> StoreResult<u64> {
        let mut tx = self.write().await?;
        let deleted = log::retention(&mut tx, policy).await?;
        tx.commit().await.map_err(map)?;
        Ok(deleted)
    }

    async fn put_run(&self, run: &RunRecord) -> StoreResult<()> {
        service::put_run(&self.writer, run).await
    }

    async fn update_run_state(
        &self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord> {
        service::update_run_state(&self.writer, run_id, state, result, error).await
    }

    async fn get_run(&self, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        service::get_run(&self.reader, tenant, run_id).await
    }

    async fn list_runs(
        &self,
        tenant: &str,
        thread_key: Option<&str>,
        page: &Page,
    ) -> StoreResult<Vec<RunRecord>> {
        service::list_runs(&self.reader, tenant, thread_key, page).await
    }

    async fn search_runs(&self, search: &crate::RunSearch) -> StoreResult<Vec<RunRecord>> {
        service::search_runs(&self.reader, search).await
    }

    async fn mark_interrupted(&self, owner: &str) -> StoreResult<u64> {
        service::mark_interrupted(&self.writer, owner).await
    }

    async fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> StoreResult<Vec<RunRecord>> {
        service::orphaned_runs(&self.reader, me, starting, limit).await
    }

    async fn break_lease(&self, target: &str) -> StoreResult<bool> {
        threads::break_lease(&self.writer, target).await
    }

    async fn abandon_approvals(&self, tenant: &str, run_id: &str, reason: Value) -> StoreResult<u64> {
        service::abandon_approvals(&self.writer, tenant, run_id, &reason).await
    }

    async fn create_approval(&self, approval: &Approval) -> StoreResult<()> {
        service::create_approval(&self.writer, approval).await
    }

    async fn resolve_approval(
        &self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval> {
        let mut tx = self.write().await?;
        let resolved = service::resolve_approval(&mut tx, tenant, request_id, decision).await;
        // An expiry discovered while resolving is recorded even though the call fails.
        if matches!(resolved, Ok(_) | Err(StoreError::Expired { .. })) {
            tx.commit().await.map_err(map)?;
        }
        resolved
    }

    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        service::expire_approvals(&self.writer, now).await
    }

    async fn list_approvals(
        &self,
        tenant: &str,
        run_id: &str,
        only_pending: bool,
    ) -> StoreResult<Vec<Approval>> {
        service::list_approvals(&self.reader, tenant, run_id, only_pending).await
    }

    async fn put_usage(&self, usage: &crate::UsageRecord) -> StoreResult<()> {
        usage::put(&self.writer, usage).await
    }

    async fn usage(&self, query: &crate::UsageQuery) -> StoreResult<Vec<crate::UsageRow>> {
        usage::query(&self.reader, query).await
    }

    async fn usage_total(&self, filter: &crate::UsageFilter) -> StoreResult<crate::UsageTotals> {
        usage::total(&self.reader, filter).await
    }

    async fn claim_idempotency(&self, claim: &crate::IdempotencyClaim) -> StoreResult<crate::ClaimOutcome> {
        idempotency::claim(&self.writer, claim).await
    }

    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &crate::StoredAnswer,
    ) -> StoreResult<bool> {
        idempotency::complete(&self.writer, tenant, key, token, answer).await
    }

    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        idempotency::release(&self.writer, tenant, key, token).await
    }

    async fn purge_idempotency(&self, cutoff: chrono::DateTime<chrono::Utc>) -> StoreResult<u64> {
        idempotency::purge(&self.writer, cutoff).await
    }

    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        declarations::put(&self.writer, declaration).await
    }

    async fn get_declaration(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> StoreResult<Option<Declaration>> {
        declarations::get(&self.reader, tenant, agent, key).await
    }

    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
        declarations::delete(&self.writer, tenant, agent, key).await
    }

    fn webhooks(&self) -> Option<std::sync::Arc<dyn crate::WebhookStore>> {
        Some(std::sync::Arc::new(self.clone()))
    }
}
