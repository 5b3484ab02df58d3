//! Thread records and leases on SQLite.

use std::time::Duration;

use sqlx::{SqliteConnection, SqlitePool};

use super::rows::{self, ThreadRow};
use crate::rules::{self, micros, to_micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{FinalizeRequest, Lease, Lookup, Page, Query, Record, StoreError, StoreResult, ThreadStatus};

pub(super) async fn resolve(pool: &SqlitePool, query: &Query) -> StoreResult<Option<Record>> {
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
    pool: &SqlitePool,
    target: &str,
    owner: &str,
    ttl: Duration,
) -> StoreResult<Lease> {
    rules::require("lease target", target)?;
    rules::require("lease owner", owner)?;
    let now = rules::now();
    let expires_at = now + rules::ttl(ttl)?;
    let token: Option<i64> = sqlx::query_scalar(
        "INSERT INTO leases (target, owner, token, expires_at) VALUES ($1, $2, 1, $3) \
         ON CONFLICT (target) DO UPDATE SET owner = excluded.owner, token = leases.token + 1, \
             expires_at = excluded.expires_at \
         WHERE leases.owner = excluded.owner OR leases.expires_at <= $4 \
         RETURNING token",
    )
    .bind(target)
    .bind(owner)
    .bind(to_micros(expires_at))
    .bind(to_micros(now))
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    let token = token.ok_or_else(|| StoreError::Busy {
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

pub(super) async fn renew_lease(pool: &SqlitePool, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
    let now = rules::now();
    let expires_at = now + rules::ttl(ttl)?;
    let renewed = sqlx::query(
        "UPDATE leases SET expires_at = $4 \
         WHERE target = $1 AND owner = $2 AND token = $3 AND expires_at > $5",
    )
    .bind(&lease.target)
    .bind(&lease.owner)
    .bind(rules::to_i64(lease.token, "lease token")?)
    .bind(to_micros(expires_at))
    .bind(to_micros(now))
    .execute(pool)
    .await
    .map_err(map)?;
    if renewed.rows_affected() == 0 {
        return Err(StoreError::LeaseLost {
            target: lease.target.clone(),
        });
    }
    Ok(Lease {
        expires_at,
        ..lease.clone()
    })
}

pub(super) async fn break_lease(pool: &SqlitePool, target: &str) -> StoreResult<bool> {
    let done = sqlx::query("UPDATE leases SET expires_at = $2 WHERE target = $1 AND expires_at > $2")
        .bind(target)
        .bind(to_micros(rules::now()))
        .execute(pool)
        .await
        .map_err(map)?;
    Ok(done.rows_affected() > 0)
}

pub(super) async fn release_lease(pool: &SqlitePool, lease: &Lease) -> StoreResult<()> {
    let Ok(token) = i64::try_from(lease.token) else {
        return Ok(());
    };
    sqlx::query(
        "UPDATE leases SET expires_at = MIN(expires_at, $4) WHERE target = $1 AND owner = $2 AND token = $3",
    )
    .bind(&lease.target)
    .bind(&lease.owner)
    .bind(token)
    .bind(to_micros(rules::now()))
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(())
}

/// The body of `finalize`, inside a `BEGIN IMMEDIATE` transaction the caller commits.
pub(super) async fn finalize(tx: &mut SqliteConnection, req: FinalizeRequest) -> StoreResult<Record> {
    let now = rules::now();
    for lease in &req.held_leases {
        let current: Option<(String, i64, i64)> =
            sqlx::query_as("SELECT owner, token, expires_at FROM leases WHERE target = $1")
                .bind(&lease.target)
                .fetch_optional(&mut *tx)
                .await
                .map_err(map)?;
        let held = current.is_some_and(|(owner, token, expires_at)| {
            owner == lease.owner && i64::try_from(lease.token) == Ok(token) && expires_at > to_micros(now)
        });
        if !held {
            return Err(StoreError::LeaseLost {
                target: lease.target.clone(),
            });
        }
    }
    let active: Option<String> = sqlx::query_scalar(
        "SELECT id FROM threads WHERE tenant = $1 AND agent = $3 AND thread_key = $2 AND status = 'active'",
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
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::invalid(format!("session state does not serialize: {e}")))?;
    let created_at: Option<i64> = sqlx::query_scalar(
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
    .bind(to_micros(record.created_at))
    .bind(to_micros(now))
    .bind(&record.host_agent)
    .fetch_optional(&mut *tx)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::conflict(format!("key {:?} already has an active record", record.key))
        } else {
            map(e)
        }
    })?;
    let Some(created_at) = created_at else {
        return Err(StoreError::conflict(format!(
            "record id {:?} belongs to another tenant, agent or key",
            record.id
        )));
    };
    let created_at = crate::decode::at("threads", &record.id).micros("created_at", created_at)?;
    Ok(Record {
        status: ThreadStatus::Active,
        created_at,
        updated_at: now,
        ..record
    })
}

pub(super) async fn list(
    pool: &SqlitePool,
    tenant: &str,
    agent: &str,
    page: &Page,
) -> StoreResult<Vec<Record>> {
    let rows: Vec<ThreadRow> = sqlx::query_as(concat!(
        "SELECT ",
        thread_columns!(),
        " FROM threads WHERE tenant = $1 AND agent = $4 AND status = 'active' AND ($2 IS NULL OR thread_key > $2) \
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

pub(super) async fn archive(pool: &SqlitePool, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
    let row: Option<ThreadRow> = sqlx::query_as(concat!(
        "UPDATE threads SET status = 'archived', updated_at = $3 \
         WHERE tenant = $1 AND agent = $4 AND thread_key = $2 AND status = 'active' RETURNING ",
        thread_columns!()
    ))
    .bind(tenant)
    .bind(key)
    .bind(to_micros(rules::now()))
    .bind(agent)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    row.ok_or(StoreError::NotFound)?.into_record()
}

/// Archives record `id` of `tenant` if it is active.
async fn archive_id(
    tx: &mut SqliteConnection,
    tenant: &str,
    id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> StoreResult<()> {
    sqlx::query("UPDATE threads SET status = 'archived', updated_at = $3 WHERE id = $1 AND tenant = $2 AND status = 'active'")
        .bind(id)
        .bind(tenant)
        .bind(to_micros(micros(now)))
        .execute(&mut *tx)
        .await
        .map_err(map)?;
    Ok(())
}
