//! Metered usage on SQLite (`run_usage`, migration 0003).

use sqlx::SqlitePool;

use crate::StoreResult;
use crate::decode::at;
use crate::rules::{self, to_micros};
use crate::sql_error::map;
use crate::usage::{UsageFilter, UsageKey, UsageQuery, UsageRecord, UsageRow, UsageTotals, check};

fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) async fn put(pool: &SqlitePool, r: &UsageRecord) -> StoreResult<()> {
    check(r)?;
    sqlx::query(
        "INSERT INTO run_usage (run_id, tenant, agent, thread_key, model, state, input_tokens, output_tokens, \
         cached_input_tokens, cost_micros, wall_ms, cpu_ms, started_at, ended_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) \
         ON CONFLICT (run_id) DO UPDATE SET tenant = excluded.tenant, agent = excluded.agent, \
         thread_key = excluded.thread_key, model = excluded.model, state = excluded.state, \
         input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, \
         cached_input_tokens = excluded.cached_input_tokens, cost_micros = excluded.cost_micros, \
         wall_ms = excluded.wall_ms, cpu_ms = excluded.cpu_ms, started_at = excluded.started_at, \
         ended_at = excluded.ended_at",
    )
    .bind(&r.run_id)
    .bind(&r.tenant)
    .bind(&r.agent)
    .bind(r.thread_key.as_deref())
    .bind(&r.model)
    .bind(&r.state)
    .bind(signed(r.input_tokens))
    .bind(signed(r.output_tokens))
    .bind(signed(r.cached_input_tokens))
    .bind(r.cost_micros)
    .bind(signed(r.wall_ms))
    .bind(signed(r.cpu_ms))
    .bind(to_micros(r.started_at))
    .bind(to_micros(r.ended_at))
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(())
}

/// One aggregate row.
#[derive(sqlx::FromRow)]
struct Row {
    tenant: String,
    agent: String,
    thread_key: String,
    runs: i64,
    input_tokens: i64,
    output_tokens: i64,
    cached_input_tokens: i64,
    cost_micros: i64,
    wall_ms: i64,
    cpu_ms: i64,
    first_at: i64,
    last_at: i64,
}

impl Row {
    fn totals(&self, id: &str) -> StoreResult<UsageTotals> {
        let row = at("run_usage", &id);
        Ok(UsageTotals {
            runs: row.unsigned("runs", self.runs)?,
            input_tokens: row.unsigned("input_tokens", self.input_tokens)?,
            output_tokens: row.unsigned("output_tokens", self.output_tokens)?,
            cached_input_tokens: row.unsigned("cached_input_tokens", self.cached_input_tokens)?,
            cost_micros: self.cost_micros,
            wall_ms: row.unsigned("wall_ms", self.wall_ms)?,
            cpu_ms: row.unsigned("cpu_ms", self.cpu_ms)?,
        })
    }

    fn into_row(self) -> StoreResult<UsageRow> {
        let id = format!("{}/{}/{}", self.tenant, self.agent, self.thread_key);
        let totals = self.totals(&id)?;
        let row = at("run_usage", &id);
        Ok(UsageRow {
            totals,
            first_at: row.micros("ended_at", self.first_at)?,
            last_at: row.micros("ended_at", self.last_at)?,
            key: UsageKey {
                tenant: self.tenant,
                agent: self.agent,
                thread_key: self.thread_key,
            },
        })
    }
}

/// The aggregate columns of a query (a macro, so queries stay `&'static str`).
macro_rules! sums {
    () => {
        "COUNT(*) AS runs, COALESCE(SUM(input_tokens), 0) AS input_tokens, \
     COALESCE(SUM(output_tokens), 0) AS output_tokens, COALESCE(SUM(cached_input_tokens), 0) AS cached_input_tokens, \
     COALESCE(SUM(cost_micros), 0) AS cost_micros, COALESCE(SUM(wall_ms), 0) AS wall_ms, \
     COALESCE(SUM(cpu_ms), 0) AS cpu_ms, COALESCE(MIN(ended_at), 0) AS first_at, COALESCE(MAX(ended_at), 0) AS last_at"
    };
}

pub(super) async fn query(pool: &SqlitePool, q: &UsageQuery) -> StoreResult<Vec<UsageRow>> {
    let sql = concat!(
        "SELECT tenant, agent, COALESCE(thread_key, '') AS thread_key, ",
        sums!(),
        " FROM run_usage \
         WHERE ($1 IS NULL OR tenant = $1) AND ($2 IS NULL OR agent = $2) AND ($3 IS NULL OR thread_key = $3) \
         AND ($4 IS NULL OR ended_at >= $4) AND ($5 IS NULL OR ended_at < $5) \
         GROUP BY tenant, agent, COALESCE(thread_key, '') \
         HAVING ($6 IS NULL OR (tenant, agent, COALESCE(thread_key, '')) > ($6, $7, $8)) \
         ORDER BY 1, 2, 3 LIMIT $9"
    );
    let after = q.after.as_ref();
    let rows: Vec<Row> = sqlx::query_as(sql)
        .bind(q.tenant.as_deref())
        .bind(q.agent.as_deref())
        .bind(q.thread_key.as_deref())
        .bind(q.from.map(to_micros))
        .bind(q.to.map(to_micros))
        .bind(after.map(|k| k.tenant.as_str()))
        .bind(after.map(|k| k.agent.as_str()))
        .bind(after.map(|k| k.thread_key.as_str()))
        .bind(rules::limit(q.limit))
        .fetch_all(pool)
        .await
        .map_err(map)?;
    rows.into_iter().map(Row::into_row).collect()
}

pub(super) async fn total(pool: &SqlitePool, f: &UsageFilter) -> StoreResult<UsageTotals> {
    rules::require("tenant", &f.tenant)?;
    let sql = concat!(
        "SELECT $1 AS tenant, '' AS agent, '' AS thread_key, ",
        sums!(),
        " FROM run_usage \
         WHERE tenant = $1 AND ($2 IS NULL OR agent = $2) AND ($3 IS NULL OR thread_key = $3) \
         AND ($4 IS NULL OR ended_at >= $4)"
    );
    let row: Row = sqlx::query_as(sql)
        .bind(&f.tenant)
        .bind(f.agent.as_deref())
        .bind(f.thread_key.as_deref())
        .bind(f.since.map(to_micros))
        .fetch_one(pool)
        .await
        .map_err(map)?;
    row.totals(&f.tenant)
}
