//! Runs and pending approvals on Postgres.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;

use super::nul;
use super::rows::{self, ApprovalRow, RunRow};
use crate::rules::{self, micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{Approval, ApprovalState, Page, RunRecord, RunState, StoreError, StoreResult};

pub(super) async fn put_run(pool: &PgPool, run: &RunRecord) -> StoreResult<()> {
    rules::require("run id", &run.run_id)?;
    rules::require("tenant", &run.tenant)?;
    sqlx::query(concat!(
        "INSERT INTO runs (",
        run_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    ))
    .bind(&run.run_id)
    .bind(&run.tenant)
    .bind(&run.agent)
    .bind(run.thread_key.as_deref())
    .bind(run.state.as_str())
    .bind(&run.owner)
    .bind(nul::encode_opt(run.result.as_ref()).as_deref())
    .bind(nul::encode_opt(run.error.as_ref()).as_deref())
    .bind(micros(run.created_at))
    .bind(micros(rules::now()))
    .execute(pool)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::AlreadyExists {
                key: run.run_id.clone(),
            }
        } else {
            map(e)
        }
    })?;
    Ok(())
}

pub(super) async fn update_run_state(
    pool: &PgPool,
    run_id: &str,
    state: RunState,
    result: Option<Value>,
    error: Option<Value>,
) -> StoreResult<RunRecord> {
    let row: Option<RunRow> = sqlx::query_as(concat!(
        "UPDATE runs SET state = $2, result = $3, error = $4, updated_at = $5 \
         WHERE run_id = $1 AND state NOT IN ('succeeded', 'failed', 'cancelled', 'interrupted') RETURNING ",
        run_columns!()
    ))
    .bind(run_id)
    .bind(state.as_str())
    .bind(nul::encode_opt(result.as_ref()).as_deref())
    .bind(nul::encode_opt(error.as_ref()).as_deref())
    .bind(micros(rules::now()))
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    if let Some(row) = row {
        return row.into_record();
    }
    let current: Option<String> = sqlx::query_scalar("SELECT state FROM runs WHERE run_id = $1")
        .bind(run_id)
        .fetch_optional(pool)
        .await
        .map_err(map)?;
    let current = current.ok_or(StoreError::NotFound)?;
    let current = crate::decode::at("runs", &run_id).text_enum("state", &current, RunState::parse)?;
    rules::check_transition(run_id, current, state)?;
    Err(StoreError::conflict(format!(
        "run {run_id:?} changed concurrently"
    )))
}

pub(super) async fn get_run(pool: &PgPool, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
    let row: Option<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs WHERE run_id = $1 AND tenant = $2"
    ))
    .bind(run_id)
    .bind(tenant)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    row.map(RunRow::into_record).transpose()
}

pub(super) async fn list_runs(
    pool: &PgPool,
    tenant: &str,
    thread_key: Option<&str>,
    page: &Page,
) -> StoreResult<Vec<RunRecord>> {
    let rows: Vec<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs WHERE tenant = $1 AND ($2 IS NULL OR thread_key = $2) AND ($3 IS NULL OR run_id > $3) \
         ORDER BY run_id LIMIT $4"
    ))
    .bind(tenant)
    .bind(thread_key)
    .bind(page.after.as_deref())
    .bind(rules::limit(page.limit))
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, RunRow::into_record)
}

pub(super) async fn search_runs(pool: &PgPool, q: &crate::RunSearch) -> StoreResult<Vec<RunRecord>> {
    let before = q.before.as_ref();
    let rows: Vec<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs WHERE ($1::text IS NULL OR tenant = $1) AND ($2::text IS NULL OR agent = $2) \
         AND ($3::text IS NULL OR thread_key = $3) AND ($4::text IS NULL OR state = $4) \
         AND ($5::timestamptz IS NULL OR (created_at, run_id) < ($5, $6::text COLLATE \"C\")) \
         AND ($8::timestamptz IS NULL OR created_at >= $8) AND ($9::timestamptz IS NULL OR created_at < $9) \
         ORDER BY created_at DESC, run_id DESC LIMIT $7"
    ))
    .bind(q.tenant.as_deref())
    .bind(q.agent.as_deref())
    .bind(q.thread_key.as_deref())
    .bind(q.state.map(RunState::as_str))
    .bind(before.map(|p| p.created_at))
    .bind(before.map(|p| p.run_id.as_str()))
    .bind(rules::limit(q.limit))
    .bind(q.since)
    .bind(q.until)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, RunRow::into_record)
}

pub(super) async fn mark_interrupted(pool: &PgPool, owner: &str) -> StoreResult<u64> {
    let done = sqlx::query(
        "UPDATE runs SET state = 'interrupted', updated_at = $2 \
         WHERE owner = $1 AND state IN ('queued', 'running', 'parked')",
    )
    .bind(owner)
    .bind(micros(rules::now()))
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected())
}

/// Replicas share the database: an owner is dead when its replica lease is missing or expired by the
/// database clock (and `me` is, when `starting`: a stable replica id restarting).
pub(super) async fn orphaned_runs(
    pool: &PgPool,
    me: &str,
    starting: bool,
    limit: u32,
) -> StoreResult<Vec<RunRecord>> {
    let rows: Vec<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs r WHERE r.state IN ('queued', 'running', 'parked') \
         AND (($2 AND r.owner = $1) OR (r.owner <> $1 AND NOT EXISTS ( \
             SELECT 1 FROM leases l WHERE l.target = $3 || r.owner AND l.expires_at > clock_timestamp()))) \
         ORDER BY r.run_id LIMIT $4"
    ))
    .bind(me)
    .bind(starting)
    .bind(crate::REPLICA_LEASE_PREFIX)
    .bind(rules::limit(limit))
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, RunRow::into_record)
}

pub(super) async fn abandon_approvals(
    pool: &PgPool,
    tenant: &str,
    run_id: &str,
    reason: &Value,
) -> StoreResult<u64> {
    let done = sqlx::query(
        "UPDATE approvals SET state = 'expired', decision = $3 \
         WHERE tenant = $1 AND run_id = $2 AND state = 'pending'",
    )
    .bind(tenant)
    .bind(run_id)
    .bind(&*nul::encode(reason))
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected())
}

pub(super) async fn create_approval(pool: &PgPool, approval: &Approval) -> StoreResult<()> {
    rules::require("tenant", &approval.tenant)?;
    rules::require("request id", &approval.request_id)?;
    if approval.state != ApprovalState::Pending || approval.decision.is_some() {
        return Err(StoreError::invalid(
            "a new approval must be pending, without a decision",
        ));
    }
    sqlx::query(concat!(
        "INSERT INTO approvals (",
        approval_columns!(),
        ") VALUES ($1, $2, $3, $4, $5, 'pending', NULL, $6, $7)"
    ))
    .bind(&approval.tenant)
    .bind(&approval.request_id)
    .bind(&approval.run_id)
    .bind(&approval.kind)
    .bind(&*nul::encode(&approval.payload))
    .bind(micros(approval.created_at))
    .bind(micros(approval.deadline))
    .execute(pool)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::AlreadyExists {
                key: approval.request_id.clone(),
            }
        } else {
            map(e)
        }
    })?;
    Ok(())
}

/// The compare-and-set: one conditional `UPDATE`. Concurrent resolvers queue on the row lock and
/// re-check `state = 'pending'` after the winner commits, so exactly one succeeds.
pub(super) async fn resolve_approval(
    pool: &PgPool,
    tenant: &str,
    request_id: &str,
    decision: Value,
) -> StoreResult<Approval> {
    let now = rules::now();
    let row: Option<ApprovalRow> = sqlx::query_as(concat!(
        "UPDATE approvals SET state = 'resolved', decision = $3 \
         WHERE tenant = $1 AND request_id = $2 AND state = 'pending' AND deadline > $4 RETURNING ",
        approval_columns!()
    ))
    .bind(tenant)
    .bind(request_id)
    .bind(&*nul::encode(&decision))
    .bind(now)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    if let Some(row) = row {
        return row.into_approval();
    }
    // Not resolvable: record an expiry we discovered, then report what the row says.
    sqlx::query(
        "UPDATE approvals SET state = 'expired' \
         WHERE tenant = $1 AND request_id = $2 AND state = 'pending' AND deadline <= $3",
    )
    .bind(tenant)
    .bind(request_id)
    .bind(now)
    .execute(pool)
    .await
    .map_err(map)?;
    let state: Option<String> =
        sqlx::query_scalar("SELECT state FROM approvals WHERE tenant = $1 AND request_id = $2")
            .bind(tenant)
            .bind(request_id)
            .fetch_optional(pool)
            .await
            .map_err(map)?;
    let state = state.ok_or(StoreError::NotFound)?;
    let id = request_id.to_owned();
    match crate::decode::at("approvals", &id).text_enum("state", &state, ApprovalState::parse)? {
        ApprovalState::Resolved => Err(StoreError::AlreadyResolved { request_id: id }),
        ApprovalState::Expired => Err(StoreError::Expired { request_id: id }),
        ApprovalState::Pending => Err(StoreError::conflict(format!(
            "approval {id:?} changed concurrently"
        ))),
    }
}

pub(super) async fn expire_approvals(pool: &PgPool, now: DateTime<Utc>) -> StoreResult<u64> {
    let done =
        sqlx::query("UPDATE approvals SET state = 'expired' WHERE state = 'pending' AND deadline <= $1")
            .bind(micros(now))
            .execute(pool)
            .await
            .map_err(map)?;
    Ok(done.rows_affected())
}

pub(super) async fn list_approvals(
    pool: &PgPool,
    tenant: &str,
    run_id: &str,
    only_pending: bool,
) -> StoreResult<Vec<Approval>> {
    let rows: Vec<ApprovalRow> = sqlx::query_as(concat!(
        "SELECT ",
        approval_columns!(),
        " FROM approvals WHERE tenant = $1 AND run_id = $2 AND (NOT $3 OR state = 'pending') \
         ORDER BY created_at, request_id"
    ))
    .bind(tenant)
    .bind(run_id)
    .bind(only_pending)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, ApprovalRow::into_approval)
}
