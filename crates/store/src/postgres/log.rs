//! Receipts, continuity history and the run event log on Postgres.
//!
//! Event batches go in as one `INSERT … SELECT FROM UNNEST(arrays) WITH ORDINALITY ORDER BY ordinality`
//! per chunk: one round trip and one plan for thousands of rows (no per-row parameters, so no parameter
//! limit), with cursors drawn from the identity sequence in batch order. Appenders of the same thread first take a transaction-scoped advisory lock on
//! the thread, so a later transaction draws its cursors only after the earlier one committed: a reader
//! tailing the thread by cursor can never see a later cursor before an earlier one becomes visible.

use std::collections::{BTreeSet, HashSet};

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use sqlx::{PgConnection, PgPool};

use super::rows::{self, EventRow};
use crate::decode::at as at_row;
use crate::rules::{self, micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{
    ContinuityEntry, ContinuityKind, EventRecord, NewEvent, RECEIPT_CAP, RECEIPT_MAX_AGE, RetentionPolicy,
    StoreError, StoreResult,
};

/// Rows per `INSERT` statement (one statement, one round trip, for batches up to this size).
const EVENT_CHUNK: usize = 10_000;
/// The advisory-lock class for event-log appenders of one thread.
const EVENTS_LOCK: i32 = 0x4141_0001;
/// The advisory-lock class for continuity writers of one thread.
const CONTINUITY_LOCK: i32 = 0x4141_0002;

/// The 32-bit advisory-lock key of a thread (a collision only serializes two unrelated threads).
fn thread_lock_key(tenant: &str, key: &str) -> i32 {
    let mut hash = Sha256::new();
    hash.update((tenant.len() as u64).to_le_bytes());
    hash.update(tenant.as_bytes());
    hash.update(key.as_bytes());
    let digest = hash.finalize();
    i32::from_le_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// Takes the transaction-scoped advisory locks `(class, key)` in ascending key order (no deadlocks).
async fn lock_threads(tx: &mut PgConnection, class: i32, keys: BTreeSet<i32>) -> StoreResult<()> {
    for key in keys {
        sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind(class)
            .bind(key)
            .execute(&mut *tx)
            .await
            .map_err(map)?;
    }
    Ok(())
}

pub(super) async fn record_receipts(
    tx: &mut PgConnection,
    tenant: &str,
    agent: &str,
    key: &str,
    ids: &[String],
    at: DateTime<Utc>,
) -> StoreResult<usize> {
    rules::require("tenant", tenant)?;
    rules::no_nul("agent", agent)?;
    rules::require("thread key", key)?;
    let at = micros(at);
    let added = sqlx::query(
        "INSERT INTO receipts (tenant, agent, thread_key, message_id, at) \
         SELECT $1, $5, $2, id, $4 FROM UNNEST($3::text[]) WITH ORDINALITY AS u(id, n) ORDER BY n \
         ON CONFLICT DO NOTHING",
    )
    .bind(tenant)
    .bind(key)
    .bind(ids)
    .bind(at)
    .bind(agent)
    .execute(&mut *tx)
    .await
    .map_err(map)?
    .rows_affected();
    sqlx::query("DELETE FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 AND at < $3")
        .bind(tenant)
        .bind(key)
        .bind(at - rules::age(RECEIPT_MAX_AGE))
        .bind(agent)
        .execute(&mut *tx)
        .await
        .map_err(map)?;
    sqlx::query(
        "DELETE FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 AND seq <= \
         (SELECT seq FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 \
          ORDER BY seq DESC LIMIT 1 OFFSET $3)",
    )
    .bind(tenant)
    .bind(key)
    .bind(RECEIPT_CAP as i64)
    .bind(agent)
    .execute(&mut *tx)
    .await
    .map_err(map)?;
    Ok(added as usize)
}

pub(super) async fn has_receipts(
    pool: &PgPool,
    tenant: &str,
    agent: &str,
    key: &str,
    ids: &[String],
) -> StoreResult<Vec<bool>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let found: Vec<String> = sqlx::query_scalar(
        "SELECT message_id FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 \
         AND message_id = ANY($3)",
    )
    .bind(tenant)
    .bind(key)
    .bind(ids)
    .bind(agent)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    let found: HashSet<String> = found.into_iter().collect();
    Ok(ids.iter().map(|id| found.contains(id)).collect())
}

/// One stored continuity row: `(seq, kind, body, at)`.
type ContinuityRow = (i64, String, String, DateTime<Utc>);

fn to_entry(row: &ContinuityRow) -> StoreResult<ContinuityEntry> {
    let kind = at_row("continuity", &row.0).text_enum("kind", &row.1, ContinuityKind::parse)?;
    Ok(ContinuityEntry {
        kind,
        text: row.2.clone(),
        at: row.3,
    })
}

async fn load_continuity(
    conn: &mut PgConnection,
    tenant: &str,
    agent: &str,
    key: &str,
) -> StoreResult<Vec<ContinuityRow>> {
    sqlx::query_as(
        "SELECT seq, kind, body, at FROM continuity WHERE tenant = $1 AND agent = $3 AND thread_key = $2 \
         ORDER BY seq",
    )
    .bind(tenant)
    .bind(key)
    .bind(agent)
    .fetch_all(conn)
    .await
    .map_err(map)
}

pub(super) async fn append_continuity(
    tx: &mut PgConnection,
    tenant: &str,
    agent: &str,
    key: &str,
    entry: ContinuityEntry,
) -> StoreResult<()> {
    rules::require("tenant", tenant)?;
    rules::no_nul("agent", agent)?;
    rules::require("thread key", key)?;
    lock_threads(
        tx,
        CONTINUITY_LOCK,
        BTreeSet::from([thread_lock_key(tenant, key)]),
    )
    .await?;
    sqlx::query(
        "INSERT INTO continuity (tenant, thread_key, kind, body, at, agent) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(tenant)
    .bind(key)
    .bind(entry.kind.as_str())
    .bind(&entry.text)
    .bind(micros(entry.at))
    .bind(agent)
    .execute(&mut *tx)
    .await
    .map_err(map)?;
    let history = load_continuity(tx, tenant, agent, key).await?;
    let entries = history.iter().map(to_entry).collect::<StoreResult<Vec<_>>>()?;
    let mut kept = rules::select_continuity(&entries).into_iter().peekable();
    let mut doomed = Vec::new();
    for (index, row) in history.iter().enumerate() {
        match kept.next_if(|(k, _)| *k == index) {
            Some((_, text)) if text == row.2 => {}
            Some((_, text)) => {
                sqlx::query("UPDATE continuity SET body = $2 WHERE seq = $1")
                    .bind(row.0)
                    .bind(text)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
            }
            None => doomed.push(row.0),
        }
    }
    if !doomed.is_empty() {
        sqlx::query("DELETE FROM continuity WHERE seq = ANY($1)")
            .bind(&doomed)
            .execute(&mut *tx)
            .await
            .map_err(map)?;
    }
    Ok(())
}

pub(super) async fn continuity(
    pool: &PgPool,
    tenant: &str,
    agent: &str,
    key: &str,
) -> StoreResult<Vec<ContinuityEntry>> {
    let mut conn = pool.acquire().await.map_err(map)?;
    let history = load_continuity(&mut conn, tenant, agent, key).await?;
    let entries = history.iter().map(to_entry).collect::<StoreResult<Vec<_>>>()?;
    Ok(rules::select_continuity(&entries)
        .into_iter()
        .map(|(index, text)| ContinuityEntry {
            text,
            ..entries[index].clone()
        })
        .collect())
}

/// Appends a batch. Up to [`EVENT_CHUNK`] events go in as one autocommitted statement (atomic on its
/// own, no `BEGIN`/`COMMIT` round trips); larger batches run several statements in one transaction.
pub(super) async fn append_events(pool: &PgPool, batch: &[NewEvent]) -> StoreResult<Vec<u64>> {
    let mut locks = BTreeSet::new();
    for event in batch {
        rules::require("tenant", &event.tenant)?;
        rules::no_nul("agent", &event.agent)?;
        rules::require("run id", &event.run_id)?;
        rules::to_i64(event.seq, "seq")?;
        if let Some(key) = &event.thread_key {
            locks.insert(thread_lock_key(&event.tenant, key));
        }
    }
    let locks: Vec<i32> = locks.into_iter().collect();
    if batch.len() <= EVENT_CHUNK {
        return insert_events(pool, batch, &locks).await;
    }
    let mut tx = pool.begin().await.map_err(map)?;
    let mut cursors = Vec::with_capacity(batch.len());
    for chunk in batch.chunks(EVENT_CHUNK) {
        cursors.extend(insert_events(&mut *tx, chunk, &locks).await?);
    }
    tx.commit().await.map_err(map)?;
    Ok(cursors)
}

/// One `INSERT … SELECT FROM UNNEST(…)` of `chunk`. The advisory locks of the batch's threads are taken
/// (ascending, so appenders cannot deadlock) by an uncorrelated sub-select in `WHERE`, which Postgres
/// evaluates once, before the first row is produced and so before the first cursor is drawn.
async fn insert_events<'c, E>(executor: E, chunk: &[NewEvent], locks: &[i32]) -> StoreResult<Vec<u64>>
where
    E: sqlx::Executor<'c, Database = sqlx::Postgres>,
{
    let mut tenant = Vec::with_capacity(chunk.len());
    let mut agent = Vec::with_capacity(chunk.len());
    let mut thread_key = Vec::with_capacity(chunk.len());
    let mut run_id = Vec::with_capacity(chunk.len());
    let mut seq = Vec::with_capacity(chunk.len());
    let mut kind = Vec::with_capacity(chunk.len());
    let mut event = Vec::with_capacity(chunk.len());
    let mut at = Vec::with_capacity(chunk.len());
    for e in chunk {
        tenant.push(e.tenant.as_str());
        agent.push(e.agent.as_str());
        thread_key.push(e.thread_key.as_deref());
        run_id.push(e.run_id.as_str());
        seq.push(rules::to_i64(e.seq, "seq")?);
        kind.push(e.kind.as_str());
        event.push(super::nul::encode(&e.event).to_string());
        at.push(micros(e.at));
    }
    let mut cursors: Vec<i64> = sqlx::query_scalar(
        "INSERT INTO events (tenant, thread_key, run_id, seq, kind, event, at, agent) \
         SELECT u.tenant, u.thread_key, u.run_id, u.seq, u.kind, u.event::json, u.at, u.agent FROM UNNEST(\
             $1::text[], $2::text[], $3::text[], $4::int8[], $5::text[], $6::text[], $7::timestamptz[], \
             $10::text[]) \
         WITH ORDINALITY AS u(tenant, thread_key, run_id, seq, kind, event, at, agent, n) \
         WHERE (SELECT count(pg_advisory_xact_lock($9, k)) FROM UNNEST($8::int4[]) AS k) >= 0 \
         ORDER BY u.n \
         RETURNING cursor",
    )
    .bind(tenant)
    .bind(thread_key)
    .bind(run_id)
    .bind(seq)
    .bind(kind)
    .bind(event)
    .bind(at)
    .bind(locks)
    .bind(EVENTS_LOCK)
    .bind(agent)
    .fetch_all(executor)
    .await
    .map_err(|err| {
        if is_unique_violation(&err) {
            let run = chunk.first().map(|e| e.run_id.as_str()).unwrap_or_default();
            StoreError::conflict(format!(
                "duplicate event seq in the batch for run {run:?} (or an earlier one)"
            ))
        } else {
            map(err)
        }
    })?;
    cursors.sort_unstable();
    cursors
        .into_iter()
        .map(|c| at_row("events", &c).unsigned("cursor", c))
        .collect()
}

pub(super) async fn read_run(
    pool: &PgPool,
    tenant: &str,
    run_id: &str,
    after_seq: Option<u64>,
    limit: u32,
) -> StoreResult<Vec<EventRecord>> {
    let after = after_seq
        .map(|s| i64::try_from(s).unwrap_or(i64::MAX))
        .unwrap_or(-1);
    let rows: Vec<EventRow> = sqlx::query_as(concat!(
        "SELECT ",
        event_columns!(),
        " FROM events WHERE tenant = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4"
    ))
    .bind(tenant)
    .bind(run_id)
    .bind(after)
    .bind(rules::limit(limit))
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, EventRow::into_record)
}

pub(super) async fn read_thread(
    pool: &PgPool,
    tenant: &str,
    agent: &str,
    key: &str,
    after_cursor: Option<u64>,
    limit: u32,
) -> StoreResult<Vec<EventRecord>> {
    let after = after_cursor
        .map(|c| i64::try_from(c).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let rows: Vec<EventRow> = sqlx::query_as(concat!(
        "SELECT ",
        event_columns!(),
        " FROM events WHERE tenant = $1 AND agent = $5 AND thread_key = $2 AND cursor > $3 \
         ORDER BY cursor LIMIT $4"
    ))
    .bind(tenant)
    .bind(key)
    .bind(after)
    .bind(rules::limit(limit))
    .bind(agent)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    rows::collect(rows, EventRow::into_record)
}

pub(super) async fn retention(tx: &mut PgConnection, policy: &RetentionPolicy) -> StoreResult<u64> {
    let mut deleted = 0;
    if let Some(max_age) = policy.max_age {
        deleted += sqlx::query("DELETE FROM events WHERE at < $1")
            .bind(rules::now() - rules::age(max_age))
            .execute(&mut *tx)
            .await
            .map_err(map)?
            .rows_affected();
    }
    if let Some(cap) = policy.max_events_per_tenant {
        deleted += sqlx::query(
            "DELETE FROM events e USING (SELECT tenant, run_id, seq FROM \
                 (SELECT tenant, run_id, seq, ROW_NUMBER() OVER (PARTITION BY tenant ORDER BY cursor DESC) AS rn \
                  FROM events) ranked WHERE rn > $1) doomed \
             WHERE e.tenant = doomed.tenant AND e.run_id = doomed.run_id AND e.seq = doomed.seq",
        )
        .bind(i64::try_from(cap).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await
        .map_err(map)?
        .rows_affected();
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_keys_separate_tenant_from_key() {
        assert_ne!(thread_lock_key("ab", "c"), thread_lock_key("a", "bc"));
        assert_eq!(thread_lock_key("t", "k"), thread_lock_key("t", "k"));
    }
}
