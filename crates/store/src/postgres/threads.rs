//! Thread records and leases on Postgres. Lease expiry is judged by the database clock
//! (`clock_timestamp()`), so replicas with skewed clocks still agree on who holds a lease.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use super::rows::{self, ThreadRow};
use crate::rules;
use crate::sql_error::{is_unique_violation, map};
use crate::{FinalizeRequest, Lease, Lookup, Page, Query, Record, StoreError, StoreResult, ThreadStatus};

pub(super) async fn resolve(pool: &PgPool, query: &Query) -> StoreResult<Option<Record>> {
    let row: Option<ThreadRow> = match &query.by {
        Lookup::Id(id) => {
            sqlx::query_as(concat!(
                "SELECT ",
                thread_columns!(),
                " FROM threads WHERE id = $1 AND tenant = $2"
            ))
            .bind(id)
            .bind(&query.tenant)
            .fetch_optional(pool)
            .await
        }
        Lookup::Key { agent, key } => {
            sqlx::query_as(concat!(
                "SELECT ",
                thread_columns!(),
                " FROM threads WHERE tenant = $1 AND agent = $3 AND thread_key = $2 AND status = 'active'"
            ))
            .bind(&query.tenant)
            .bind(key)
            .bind(agent)
            .fetch_optional(pool)
            .await
        }
    }
    .map_err(map)?;
    let Some(record) = row.map(ThreadRow::into_record).transpose()? else {
        return Ok(None);
    };
    Ok((record.status == ThreadStatus::Active || query.include_archived).then_some(record))
}

pub(super) async fn acquire_lease(
    pool: &PgPool,
    target: &str,
    owner: &str,
    ttl: Duration,
) -> StoreResult<Lease> {
    rules::require("lease target", target)?;
    rules::require("lease owner", owner)?;
    let row: Option<(i64, DateTime<Utc>)> = sqlx::query_as(
        "INSERT INTO leases (target, owner, token, expires_at) \
         VALUES ($1, $2, 1, clock_timestamp() + $3::float8 * interval '1 microsecond') \
         ON CONFLICT (target) DO UPDATE SET owner = excluded.owner, token = leases.token + 1, \
             expires_at = excluded.expires_at \
         WHERE leases.owner = excluded.owner OR leases.expires_at <= clock_timestamp() \
         RETURNING token, expires_at",
    )
    .bind(target)
    .bind(owner)
    .bind(rules::ttl_micros(ttl)? as f64)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    let (token, expires_at) = row.ok_or_else(|| StoreError::Busy {
        target: target.to_owned(),
    })?;
    let token = crate::decode::at("leases", &target).unsigned("token", token)?;
    Ok(Lease {
        target: target.to_owned(),
        owner: owner.to_owned(),
        token,
        expires_at,
    })
}

pub(super) async fn renew_lease(pool: &PgPool, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
    let expires_at: Option<DateTime<Utc>> = sqlx::query_scalar(
        "UPDATE leases SET expires_at = clock_timestamp() + $4::float8 * interval '1 microsecond' \
         WHERE target = $1 AND owner = $2 AND token = $3 AND expires_at > clock_timestamp() \
         RETURNING expires_at",
    )
    .bind(&lease.target)
    .bind(&lease.owner)
    .bind(rules::to_i64(lease.token, "lease token")?)
    .bind(rules::ttl_micros(ttl)? as f64)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    let expires_at = expires_at.ok_or_else(|| StoreError::LeaseLost {
        target: lease.target.clone(),
    })?;
    Ok(Lease {
        expires_at,
        ..lease.clone()
    })
}

pub(super) async fn break_lease(pool: &PgPool, target: &str) -> StoreResult<bool> {
    let done = sqlx::query(
        "UPDATE leases SET expires_at = clock_timestamp() WHERE target = $1 AND expires_at > clock_timestamp()",
    )
    .bind(target)
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected() > 0)
}

pub(super) async fn release_lease(pool: &PgPool, lease: &Lease) -> StoreResult<()> {
    let Ok(token) = i64::try_from(lease.token) else {
        return Ok(());
    };
    sqlx::query(
        "UPDATE leases SET expires_at = LEAST(expires_at, clock_timestamp()) \
         WHERE target = $1 AND owner = $2 AND token = $3",
    )
    .bind(&lease.target)
    .bind(&lease.owner)
    .bind(token)
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(())
}

/// The body of `finalize`, inside a transaction the caller commits. The held leases' rows are locked
/// (in target order, so two finalizers cannot deadlock) before they are checked, so no takeover can
/// commit between the check and this transaction's commit.
pub(super) async fn finalize(tx: &mut PgConnection, req: FinalizeRequest) -> StoreResult<Record> {
    let now = rules::now();
    let targets: Vec<String> = req.held_leases.iter().map(|l| l.target.clone()).collect();
    let current: Vec<(String, String, i64, bool)> = sqlx::query_as(
        "SELECT target, owner, token, expires_at > clock_timestamp() FROM leases \
         WHERE target = ANY($1) ORDER BY target FOR UPDATE",
    )
    .bind(&targets)
    .fetch_all(&mut *tx)
    .await
    .map_err(map)?;
    for lease in &req.held_leases {
        let held = current.iter().any(|(target, owner, token, live)| {
            *target == lease.target
                && *owner == lease.owner
                && i64::try_from(lease.token) == Ok(*token)
                && *live
        });
        if !held {
            return Err(StoreError::LeaseLost {
                target: lease.target.clone(),
            });
        }
    }
    let active: Option<String> = sqlx::query_scalar(
        "SELECT id FROM threads WHERE tenant = $1 AND agent = $3 AND thread_key = $2 AND status = 'active' FOR UPDATE",
    )
    .bind(&req.record.tenant)
    .bind(&req.record.key)
    .bind(&req.record.host_agent)
    .fetch_optional(&mut *tx)
    .await
    .map_err(map)?;
    let other = rules::plan_key(&req, active.as_deref())?;
    let record = req.record;
    if req.archive_old
        && let Some(previous) = &req.previous_id
    {
        archive_id(tx, &record.tenant, previous, now).await?;
    }
    if let Some(other) = other {
        archive_id(tx, &record.tenant, &other, now).await?;
    }
    let state = record
        .state
        .as_ref()
        .map(serde_json::to_value)
        .transpose()
        .map_err(|e| StoreError::invalid(format!("session state does not serialize: {e}")))?
        .map(|v| super::nul::encode(&v).into_owned());
    let created_at: Option<DateTime<Utc>> = sqlx::query_scalar(
        "INSERT INTO threads (id, tenant, thread_key, status, driver_type, agent_id, agent_tenant, agent_profile, \
             agent_name, fingerprint, compatibility_fingerprint, codec, state, created_at, updated_at, agent) \
         VALUES ($1, $2, $3, 'active', $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) \
         ON CONFLICT (id) DO UPDATE SET status = 'active', driver_type = excluded.driver_type, \
             agent_id = excluded.agent_id, agent_tenant = excluded.agent_tenant, \
             agent_profile = excluded.agent_profile, agent_name = excluded.agent_name, \
             fingerprint = excluded.fingerprint, compatibility_fingerprint = excluded.compatibility_fingerprint, \
             codec = excluded.codec, state = excluded.state, updated_at = excluded.updated_at \
         WHERE threads.tenant = excluded.tenant AND threads.agent = excluded.agent \
             AND threads.thread_key = excluded.thread_key \
         RETURNING created_at",
    )
    .bind(&record.id)
    .bind(&record.tenant)
    .bind(&record.key)
    .bind(&record.driver_type)
    .bind(&record.agent.id)
    .bind(&record.agent.tenant)
    .bind(&record.agent.profile)
    .bind(&record.agent.name)
    .bind(&record.fingerprint)
    .bind(&record.compatibility_fingerprint)
    .bind(&record.codec)
    .bind(state)
    .bind(rules::micros(record.created_at))
    .bind(now)
    .bind(&record.host_agent)
    .fetch_optional(&mut *tx)
    .await
    .map_err(|e| match (is_unique_violation(&e), req.require_key_absent) {
        // Another finalizer committed an active record for the key after our check.
        (true, true) => StoreError::AlreadyExists { key: record.key.clone() },
        (true, false) => StoreError::conflict(format!("key {:?} already has an active record", record.key)),
        _ => map(e),
    })?;
    let Some(created_at) = created_at else {
        return Err(StoreError::conflict(format!(
            "record id {:?} belongs to another tenant, agent or key",
            record.id
        )));
    };
    Ok(Record {
        status: ThreadStatus::Active,
        created_at,
        updated_at: now,
        ..record
    })
}

pub(super) async fn list(pool: &PgPool, tenant: &str, agent: &str, page: &Page) -> StoreResult<Vec<Record>> {
    let rows: Vec<ThreadRow> = sqlx::query_as(concat!(
        "SELECT ",
        thread_columns!(),
        " FROM threads WHERE tenant = $1 AND agent = $4 AND status = 'active' AND ($2::text IS NULL OR thread_key > $2) \
         ORDER BY thread_key LIMIT $3"
    ))
    .bind(tenant)
    .bind(page.after.as_deref())
    .bind(rules::limit(page.limit))
    .bind(agent)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, ThreadRow::into_record)
}

pub(super) async fn archive(pool: &PgPool, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
    let row: Option<ThreadRow> = sqlx::query_as(concat!(
        "UPDATE threads SET status = 'archived', updated_at = $3 \
         WHERE tenant = $1 AND agent = $4 AND thread_key = $2 AND status = 'active' RETURNING ",
        thread_columns!()
    ))
    .bind(tenant)
    .bind(key)
    .bind(rules::now())
    .bind(agent)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    row.ok_or(StoreError::NotFound)?.into_record()
}

/// Archives record `id` of `tenant` if it is active.
async fn archive_id(tx: &mut PgConnection, tenant: &str, id: &str, now: DateTime<Utc>) -> StoreResult<()> {
    sqlx::query(
        "UPDATE threads SET status = 'archived', updated_at = $3 WHERE id = $1 AND tenant = $2 AND status = 'active'",
    )
    .bind(id)
    .bind(tenant)
    .bind(now)
    .execute(&mut *tx)
    .await
    .map_err(map)?;
    Ok(())
}
