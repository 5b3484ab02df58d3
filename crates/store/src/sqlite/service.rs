//! Runs and pending approvals on SQLite.

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::{SqliteConnection, SqlitePool};

use super::rows::{self, ApprovalRow, RunRow};
use crate::rules::{self, to_micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{Approval, ApprovalState, Page, RunRecord, RunState, StoreError, StoreResult};

/// JSON as the text SQLite stores.
fn json(value: Option<&Value>) -> Option<String> {
    value.map(Value::to_string)
}

pub(super) async fn put_run(pool: &SqlitePool, run: &RunRecord) -> StoreResult<()> {
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
    .bind(json(run.result.as_ref()))
    .bind(json(run.error.as_ref()))
    .bind(to_micros(run.created_at))
    .bind(to_micros(rules::now()))
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
    pool: &SqlitePool,
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
    .bind(json(result.as_ref()))
    .bind(json(error.as_ref()))
    .bind(to_micros(rules::now()))
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

pub(super) async fn get_run(pool: &SqlitePool, tenant: &str, run_id: &str) -> StoreResult<Option<RunRecord>> {
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
    pool: &SqlitePool,
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

pub(super) async fn search_runs(pool: &SqlitePool, q: &crate::RunSearch) -> StoreResult<Vec<RunRecord>> {
    let before = q.before.as_ref();
    let rows: Vec<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs WHERE ($1 IS NULL OR tenant = $1) AND ($2 IS NULL OR agent = $2) \
         AND ($3 IS NULL OR thread_key = $3) AND ($4 IS NULL OR state = $4) \
         AND ($5 IS NULL OR (created_at, run_id) < ($5, $6)) \
         AND ($8 IS NULL OR created_at >= $8) AND ($9 IS NULL OR created_at < $9) \
         ORDER BY created_at DESC, run_id DESC LIMIT $7"
    ))
    .bind(q.tenant.as_deref())
    .bind(q.agent.as_deref())
    .bind(q.thread_key.as_deref())
    .bind(q.state.map(RunState::as_str))
    .bind(before.map(|p| to_micros(p.created_at)))
    .bind(before.map(|p| p.run_id.as_str()))
    .bind(rules::limit(q.limit))
    .bind(q.since.map(to_micros))
    .bind(q.until.map(to_micros))
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, RunRow::into_record)
}

pub(super) async fn mark_interrupted(pool: &SqlitePool, owner: &str) -> StoreResult<u64> {
    let done = sqlx::query(
        "UPDATE runs SET state = 'interrupted', updated_at = $2 \
         WHERE owner = $1 AND state IN ('queued', 'running', 'parked')",
    )
    .bind(owner)
    .bind(to_micros(rules::now()))
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected())
}

/// SQLite is single-node: every unfinished run not owned by `me` is a dead process's (and `me`'s own
/// when `starting`).
pub(super) async fn orphaned_runs(
    pool: &SqlitePool,
    me: &str,
    starting: bool,
    limit: u32,
) -> StoreResult<Vec<RunRecord>> {
    let rows: Vec<RunRow> = sqlx::query_as(concat!(
        "SELECT ",
        run_columns!(),
        " FROM runs WHERE state IN ('queued', 'running', 'parked') AND ($2 OR owner <> $1) \
         ORDER BY run_id LIMIT $3"
    ))
    .bind(me)
    .bind(starting)
    .bind(rules::limit(limit))
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, RunRow::into_record)
}

pub(super) async fn abandon_approvals(
    pool: &SqlitePool,
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
    .bind(reason.to_string())
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected())
}

pub(super) async fn create_approval(pool: &SqlitePool, approval: &Approval) -> StoreResult<()> {
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
    .bind(approval.payload.to_string())
    .bind(to_micros(approval.created_at))
    .bind(to_micros(approval.deadline))
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

/// The compare-and-set, inside a write transaction; the caller commits on success and on `Expired` (so
/// the expiry it discovered is recorded).
pub(super) async fn resolve_approval(
    tx: &mut SqliteConnection,
    tenant: &str,
    request_id: &str,
    decision: Value,
) -> StoreResult<Approval> {
    let now = to_micros(rules::now());
    let row: Option<ApprovalRow> = sqlx::query_as(concat!(
        "UPDATE approvals SET state = 'resolved', decision = $3 \
         WHERE tenant = $1 AND request_id = $2 AND state = 'pending' AND deadline > $4 RETURNING ",
        approval_columns!()
    ))
    .bind(tenant)
    .bind(request_id)
    .bind(decision.to_string())
    .bind(now)
    .fetch_optional(&mut *tx)
    .await
    .map_err(map)?;
    if let Some(row) = row {
        return row.into_approval();
    }
    let current: Option<(String, i64)> =
        sqlx::query_as("SELECT state, deadline FROM approvals WHERE tenant = $1 AND request_id = $2")
            .bind(tenant)
            .bind(request_id)
            .fetch_optional(&mut *tx)
            .await
            .map_err(map)?;
    let (state, _) = current.ok_or(StoreError::NotFound)?;
    let id = request_id.to_owned();
    match crate::decode::at("approvals", &id).text_enum("state", &state, ApprovalState::parse)? {
        ApprovalState::Resolved => Err(StoreError::AlreadyResolved { request_id: id }),
        ApprovalState::Expired => Err(StoreError::Expired { request_id: id }),
        ApprovalState::Pending => {
            sqlx::query("UPDATE approvals SET state = 'expired' WHERE tenant = $1 AND request_id = $2")
                .bind(tenant)
                .bind(request_id)
                .execute(&mut *tx)
                .await
                .map_err(map)?;
            Err(StoreError::Expired { request_id: id })
        }
    }
}

pub(super) async fn expire_approvals(pool: &SqlitePool, now: DateTime<Utc>) -> StoreResult<u64> {
    let done =
        sqlx::query("UPDATE approvals SET state = 'expired' WHERE state = 'pending' AND deadline <= $1")
            .bind(to_micros(now))
            .execute(pool)
            .await
            .map_err(map)?;
    Ok(done.rows_affected())
}

pub(super) async fn list_approvals(
    pool: &SqlitePool,
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
