//! Receipts, continuity history and the run event log on SQLite.

use chrono::{DateTime, Utc};
use sqlx::{QueryBuilder, Sqlite, SqliteConnection, SqlitePool};

use super::rows::{self, ContinuityRow, EventRow};
use crate::rules::{self, micros, to_micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{
    ContinuityEntry, EventRecord, NewEvent, RECEIPT_CAP, RECEIPT_MAX_AGE, RetentionPolicy, StoreError,
    StoreResult,
};

/// Rows per multi-row `INSERT` (9 parameters each, far below SQLite's 32766-parameter limit).
pub(super) const EVENT_CHUNK: usize = 500;

pub(super) async fn record_receipts(
    tx: &mut SqliteConnection,
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
    let mut added = 0;
    for id in ids {
        let inserted = sqlx::query(
            "INSERT INTO receipts (tenant, thread_key, message_id, at, agent) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT DO NOTHING",
        )
        .bind(tenant)
        .bind(key)
        .bind(id)
        .bind(to_micros(at))
        .bind(agent)
        .execute(&mut *tx)
        .await
        .map_err(map)?;
        added += inserted.rows_affected() as usize;
    }
    sqlx::query("DELETE FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 AND at < $3")
        .bind(tenant)
        .bind(key)
        .bind(to_micros(at - rules::age(RECEIPT_MAX_AGE)))
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
    Ok(added)
}

pub(super) async fn has_receipts(
    pool: &SqlitePool,
    tenant: &str,
    agent: &str,
    key: &str,
    ids: &[String],
) -> StoreResult<Vec<bool>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let wanted = serde_json::to_string(ids).map_err(|e| StoreError::invalid(e.to_string()))?;
    let found: Vec<String> = sqlx::query_scalar(
        "SELECT message_id FROM receipts WHERE tenant = $1 AND agent = $4 AND thread_key = $2 \
         AND message_id IN (SELECT value FROM json_each($3))",
    )
    .bind(tenant)
    .bind(key)
    .bind(wanted)
    .bind(agent)
    .fetch_all(pool)
    .await
    .map_err(map)?;
    let found: std::collections::HashSet<String> = found.into_iter().collect();
    Ok(ids.iter().map(|id| found.contains(id)).collect())
}

pub(super) async fn append_continuity(
    tx: &mut SqliteConnection,
    tenant: &str,
    agent: &str,
    key: &str,
    entry: ContinuityEntry,
) -> StoreResult<()> {
    rules::require("tenant", tenant)?;
    rules::no_nul("agent", agent)?;
    rules::require("thread key", key)?;
    sqlx::query(
        "INSERT INTO continuity (tenant, thread_key, kind, body, at, agent) VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(tenant)
    .bind(key)
    .bind(entry.kind.as_str())
    .bind(&entry.text)
    .bind(to_micros(entry.at))
    .bind(agent)
    .execute(&mut *tx)
    .await
    .map_err(map)?;
    let history = load_continuity(&mut *tx, tenant, agent, key).await?;
    let entries = history
        .iter()
        .map(ContinuityRow::to_entry)
        .collect::<StoreResult<Vec<_>>>()?;
    let mut kept = rules::select_continuity(&entries).into_iter().peekable();
    for (index, row) in history.iter().enumerate() {
        match kept.next_if(|(k, _)| *k == index) {
            Some((_, text)) if text == row.body => {}
            Some((_, text)) => {
                sqlx::query("UPDATE continuity SET body = $2 WHERE seq = $1")
                    .bind(row.seq)
                    .bind(text)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
            }
            None => {
                sqlx::query("DELETE FROM continuity WHERE seq = $1")
                    .bind(row.seq)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
            }
        }
    }
    Ok(())
}

pub(super) async fn continuity(
    pool: &SqlitePool,
    tenant: &str,
    agent: &str,
    key: &str,
) -> StoreResult<Vec<ContinuityEntry>> {
    let mut conn = pool.acquire().await.map_err(map)?;
    let history = load_continuity(&mut conn, tenant, agent, key).await?;
    let entries = history
        .iter()
        .map(ContinuityRow::to_entry)
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(rules::select_continuity(&entries)
        .into_iter()
        .map(|(index, text)| ContinuityEntry {
            text,
            ..entries[index].clone()
        })
        .collect())
}

async fn load_continuity(
    conn: &mut SqliteConnection,
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

/// Inserts the batch with multi-row `INSERT`s (inside the caller's transaction when it spans more than
/// one chunk; a single statement is atomic on its own); returns cursors in batch order. SQLite inserts a
/// multi-row `VALUES` in row order and, with the write lock held throughout, gives each row the next
/// `AUTOINCREMENT` key, so a chunk's cursors are the `n` keys ending at its last insert rowid: one reply
/// from the connection's worker per chunk instead of one per row.
pub(super) async fn append_events(tx: &mut SqliteConnection, batch: &[NewEvent]) -> StoreResult<Vec<u64>> {
    let mut cursors = Vec::with_capacity(batch.len());
    for chunk in batch.chunks(EVENT_CHUNK) {
        let mut rows = Vec::with_capacity(chunk.len());
        for event in chunk {
            rules::require("tenant", &event.tenant)?;
            rules::no_nul("agent", &event.agent)?;
            rules::require("run id", &event.run_id)?;
            let seq = rules::to_i64(event.seq, "seq")?;
            let json = serde_json::to_string(&event.event).map_err(|e| StoreError::invalid(e.to_string()))?;
            rows.push((event, seq, json));
        }
        let mut insert: QueryBuilder<Sqlite> = QueryBuilder::new(
            "INSERT INTO events (tenant, agent, thread_key, run_id, seq, kind, event, at) ",
        );
        insert.push_values(rows, |mut values, (event, seq, json)| {
            values
                .push_bind(event.tenant.clone())
                .push_bind(event.agent.clone())
                .push_bind(event.thread_key.clone())
                .push_bind(event.run_id.clone())
                .push_bind(seq)
                .push_bind(event.kind.clone())
                .push_bind(json)
                .push_bind(to_micros(event.at));
        });
        let done = insert
            .build()
            .execute(&mut *tx)
            .await
            .map_err(|e| duplicate_or(e, chunk))?;
        let inserted = chunk.len() as u64;
        let last = crate::decode::at("events", &done.last_insert_rowid())
            .unsigned("cursor", done.last_insert_rowid())?;
        if done.rows_affected() != inserted || last < inserted {
            return Err(StoreError::corrupt(
                "events",
                last,
                format_args!("an insert of {inserted} rows reported {}", done.rows_affected()),
            ));
        }
        cursors.extend(last + 1 - inserted..=last);
    }
    Ok(cursors)
}

/// A unique violation in the event log is a duplicate `(tenant, run_id, seq)`.
fn duplicate_or(err: sqlx::Error, chunk: &[NewEvent]) -> StoreError {
    if is_unique_violation(&err) {
        let run = chunk.first().map(|e| e.run_id.as_str()).unwrap_or_default();
        return StoreError::conflict(format!(
            "duplicate event seq in the batch for run {run:?} (or an earlier one)"
        ));
    }
    map(err)
}

pub(super) async fn read_run(
    pool: &SqlitePool,
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
    pool: &SqlitePool,
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

pub(super) async fn retention(tx: &mut SqliteConnection, policy: &RetentionPolicy) -> StoreResult<u64> {
    let mut deleted = 0;
    if let Some(max_age) = policy.max_age {
        let cutoff = rules::now() - rules::age(max_age);
        deleted += sqlx::query("DELETE FROM events WHERE at < $1")
            .bind(to_micros(cutoff))
            .execute(&mut *tx)
            .await
            .map_err(map)?
            .rows_affected();
    }
    if let Some(cap) = policy.max_events_per_tenant {
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        deleted += sqlx::query(
            "DELETE FROM events WHERE cursor IN (SELECT cursor FROM \
             (SELECT cursor, ROW_NUMBER() OVER (PARTITION BY tenant ORDER BY cursor DESC) AS rn FROM events) \
             WHERE rn > $1)",
        )
        .bind(cap)
        .execute(&mut *tx)
        .await
        .map_err(map)?
        .rows_affected();
    }
    Ok(deleted)
}
