//! `PostgresStore`: the backend for several replicas sharing one database. A `PgPool`, migrations
//! (`migrations/postgres`) at open, row leases with fencing tokens judged by the database clock, and an
//! event log whose appenders of one thread are serialized by a transaction-scoped advisory lock.
//!
//! [`PostgresOptions::schema`] confines the store to one schema (created if missing) through the
//! connection's `search_path`: tests use it to get a fresh, disposable store per run; deployments can use
//! it to share a database with other applications.

mod declarations;
mod idempotency;
mod log;
mod nul;
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
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

use super::sql_error::{self, map};
use super::{
    Approval, ContinuityEntry, Declaration, EventRecord, FinalizeRequest, Lease, NewEvent, Page, Query,
    Record, RetentionPolicy, RunRecord, RunState, StoreError, StoreResult, ThreadStore,
};

/// How long a lease release is retried while the database is unavailable.
const RELEASE_RETRY: Duration = Duration::from_secs(10);

/// The migrations compiled into this build.
static MIGRATOR: Migrator = sqlx::migrate!("../../migrations/postgres");

/// How to connect.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// The most connections the pool opens.
    pub max_connections: u32,
    /// How long an operation waits for a connection before failing with `Unavailable`.
    pub acquire_timeout: Duration,
    /// Keep every table in this schema (letters, digits and `_` only); created if missing.
    pub schema: Option<String>,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        PostgresOptions {
            max_connections: 16,
            acquire_timeout: Duration::from_secs(10),
            schema: None,
        }
    }
}

/// The Postgres [`ThreadStore`].
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects with default options and migrates.
    pub async fn open(url: &str) -> StoreResult<Self> {
        Self::connect(url, PostgresOptions::default()).await
    }

    /// Connects, creates the schema if one is named, and migrates.
    ///
    /// Fails with [`StoreError::SchemaVersion`] if a newer build migrated the database further, and with
    /// [`StoreError::Unavailable`] if the server cannot be reached.
    pub async fn connect(url: &str, options: PostgresOptions) -> StoreResult<Self> {
        let mut connect = PgConnectOptions::from_str(url)
            .map_err(|e| StoreError::invalid(format!("bad Postgres URL: {e}")))?;
        if let Some(schema) = &options.schema {
            if schema.is_empty() || !schema.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(StoreError::invalid("schema names are letters, digits and '_'"));
            }
            let mut conn = PgConnection::connect_with(&connect).await.map_err(map)?;
            let create = format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"");
            sqlx::query(AssertSqlSafe(create))
                .execute(&mut conn)
                .await
                .map_err(map)?;
            conn.close().await.map_err(map)?;
            connect = connect.options([("search_path", schema.as_str())]);
        }
        migrate(&connect).await?;
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(1))
            .acquire_timeout(options.acquire_timeout)
            // Broken connections are found on use (as `Unavailable`) and dropped when released (sqlx
            // pings on release); skipping the ping before every acquire saves a round trip per call.
            .test_before_acquire(false)
            .connect_with(connect)
            .await
            .map_err(map)?;
        Ok(PostgresStore { pool })
    }

    /// Closes the pool, waiting for connections in use to be returned.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Applies the migrations on a dedicated connection (closed afterwards, so the migrator's session-level
/// advisory lock can never linger in a pool), refusing a database migrated past what this build knows.
async fn migrate(connect: &PgConnectOptions) -> StoreResult<()> {
    let mut conn = PgConnection::connect_with(connect).await.map_err(map)?;
    let result = MIGRATOR.run(&mut conn).await;
    let outcome = match result {
        Ok(()) => Ok(()),
        Err(err) => {
            let found: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations")
                .fetch_one(&mut conn)
                .await
                .ok()
                .flatten();
            Err(sql_error::map_migrate(err, found, &MIGRATOR))
        }
    };
    // Closing ends the session and with it any advisory lock a failed migration left behind.
    let _ = conn.close().await;
    outcome
}

#[async_trait]
impl ThreadStore for PostgresStore {
    fn backend(&self) -> &'static str {
        "postgres"
    }

    async fn resolve(&self, query: &Query) -> StoreResult<Option<Record>> {
        threads::resolve(&self.pool, query).await
    }

    async fn acquire_lease(&self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease> {
        threads::acquire_lease(&self.pool, target, owner, ttl).await
    }

    async fn renew_lease(&self, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
        threads::renew_lease(&self.pool, lease, ttl).await
    }

    async fn release_lease(&self, lease: &Lease) -> StoreResult<()> {
        // Idempotent (it only shortens the holder's own lease), so it is retried while the database is
        // unavailable (a restart): a run ending during one would otherwise leave its thread leased until
        // the TTL, and every run on the thread fail `thread_busy` meanwhile (the chaos suite found it).
        let deadline = std::time::Instant::now() + RELEASE_RETRY;
        let mut pause = Duration::from_millis(50);
        loop {
            match threads::release_lease(&self.pool, lease).await {
                Err(e) if e.is_retryable() && std::time::Instant::now() < deadline => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(1));
                }
                other => return other,
            }
        }
    }

    async fn finalize(&self, request: FinalizeRequest) -> StoreResult<Record> {
        super::rules::check_finalize(&request)?;
        let mut tx = self.pool.begin().await.map_err(map)?;
        let saved = threads::finalize(&mut tx, request).await?;
        tx.commit().await.map_err(map)?;
        Ok(saved)
    }

    async fn list_threads(&self, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>> {
        threads::list(&self.pool, tenant, agent, page).await
    }

    async fn archive(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
        threads::archive(&self.pool, tenant, agent, key).await
    }

    async fn record_receipts(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        let mut tx = self.pool.begin().await.map_err(map)?;
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
        log::has_receipts(&self.pool, tenant, agent, key, ids).await
    }

    async fn append_continuity(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await.map_err(map)?;
        log::append_continuity(&mut tx, tenant, agent, key, entry).await?;
        tx.commit().await.map_err(map)
    }

    async fn continuity(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<Vec<ContinuityEntry>> {
        log::continuity(&self.pool, tenant, agent, key).await
    }

    async fn append_events(&self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        log::append_events(&self.pool, &batch).await
    }

    async fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after_seq: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        log::read_run(&self.pool, tenant, run_id, after_seq, limit).await
    }

    async fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after_cursor: Option<u64>,
        limit: u32,
    ) -> StoreResult<Vec<EventRecord>> {
        log::read_thread(&self.pool, tenant, agent, key, after_cursor, limit).await
    }

    async fn retention(&self, policy: &RetentionPolicy) -> StoreResult<u64> {
        let mut tx = self.pool.begin().await.map_err(map)?;
        let deleted = log::retention(&mut tx, policy).await?;
        tx.commit().await.map_err(map)?;
        Ok(deleted)
    }

    async fn put_run(&self, run: &RunRecord) -> StoreResult<()> {
        service::put_run(&self.pool, run).await
    }

    async fn update_run_state(
        &self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord> {
        service::update_run_state(&self.pool, run_id, state, result, error).await
    }

    async fn get_run(&self, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
        service::get_run(&self.pool, tenant, run_id).await
    }

    async fn list_runs(
        &self,
        tenant: &str,
        thread_key: Option<&str>,
        page: &Page,
    ) -> StoreResult<Vec<RunRecord>> {
        service::list_runs(&self.pool, tenant, thread_key, page).await
    }

    async fn search_runs(&self, search: &crate::RunSearch) -> StoreResult<Vec<RunRecord>> {
        service::search_runs(&self.pool, search).await
    }

    async fn mark_interrupted(&self, owner: &str) -> StoreResult<u64> {
        service::mark_interrupted(&self.pool, owner).await
    }

    async fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> StoreResult<Vec<RunRecord>> {
        service::orphaned_runs(&self.pool, me, starting, limit).await
    }

    async fn break_lease(&self, target: &str) -> StoreResult<bool> {
        threads::break_lease(&self.pool, target).await
    }

    async fn abandon_approvals(&self, tenant: &str, run_id: &str, reason: Value) -> StoreResult<u64> {
        service::abandon_approvals(&self.pool, tenant, run_id, &reason).await
    }

    async fn create_approval(&self, approval: &Approval) -> StoreResult<()> {
        service::create_approval(&self.pool, approval).await
    }

    async fn resolve_approval(
        &self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval> {
        service::resolve_approval(&self.pool, tenant, request_id, decision).await
    }

    async fn expire_approvals(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        service::expire_approvals(&self.pool, now).await
    }

    async fn list_approvals(
        &self,
        tenant: &str,
        run_id: &str,
        only_pending: bool,
    ) -> StoreResult<Vec<Approval>> {
        service::list_approvals(&self.pool, tenant, run_id, only_pending).await
    }

    async fn put_usage(&self, usage: &crate::UsageRecord) -> StoreResult<()> {
        usage::put(&self.pool, usage).await
    }

    async fn usage(&self, query: &crate::UsageQuery) -> StoreResult<Vec<crate::UsageRow>> {
        usage::query(&self.pool, query).await
    }

    async fn usage_total(&self, filter: &crate::UsageFilter) -> StoreResult<crate::UsageTotals> {
        usage::total(&self.pool, filter).await
    }

    async fn claim_idempotency(&self, claim: &crate::IdempotencyClaim) -> StoreResult<crate::ClaimOutcome> {
        idempotency::claim(&self.pool, claim).await
    }

    async fn complete_idempotency(
        &self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &crate::StoredAnswer,
    ) -> StoreResult<bool> {
        idempotency::complete(&self.pool, tenant, key, token, answer).await
    }

    async fn release_idempotency(&self, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
        idempotency::release(&self.pool, tenant, key, token).await
    }

    async fn purge_idempotency(&self, cutoff: chrono::DateTime<chrono::Utc>) -> StoreResult<u64> {
        idempotency::purge(&self.pool, cutoff).await
    }

    async fn put_declaration(&self, declaration: &Declaration) -> StoreResult<()> {
        declarations::put(&self.pool, declaration).await
    }

    async fn get_declaration(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
    ) -> StoreResult<Option<Declaration>> {
        declarations::get(&self.pool, tenant, agent, key).await
    }

    async fn delete_declaration(&self, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
        declarations::delete(&self.pool, tenant, agent, key).await
    }

    fn webhooks(&self) -> Option<std::sync::Arc<dyn crate::WebhookStore>> {
        Some(std::sync::Arc::new(self.clone()))
    }
}
