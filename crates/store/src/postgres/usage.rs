//! Metered usage on Postgres (`run_usage`, migration 0003).

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::StoreResult;
use crate::decode::at;
use crate::rules::{self, micros};
use crate::sql_error::map;
use crate::usage::{UsageFilter, UsageKey, UsageQuery, UsageRecord, UsageRow, UsageTotals, check};

fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) async fn put(pool: &PgPool, r: &UsageRecord) -> StoreResult<()> {
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
    .bind(micros(r.started_at))
    .bind(micros(r.ended_at))
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
    first_at: Option<DateTime<Utc>>,
    last_at: Option<DateTime<Utc>>,
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
        let epoch = DateTime::<Utc>::UNIX_EPOCH;
        Ok(UsageRow {
            totals,
            first_at: self.first_at.unwrap_or(epoch),
            last_at: self.last_at.unwrap_or(epoch),
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
        "COUNT(*)::BIGINT AS runs, COALESCE(SUM(input_tokens), 0)::BIGINT AS input_tokens, \
     COALESCE(SUM(output_tokens), 0)::BIGINT AS output_tokens, \
     COALESCE(SUM(cached_input_tokens), 0)::BIGINT AS cached_input_tokens, \
     COALESCE(SUM(cost_micros), 0)::BIGINT AS cost_micros, COALESCE(SUM(wall_ms), 0)::BIGINT AS wall_ms, \
     COALESCE(SUM(cpu_ms), 0)::BIGINT AS cpu_ms, MIN(ended_at) AS first_at, MAX(ended_at) AS last_at"
    };
}

pub(super) async fn query(pool: &PgPool, q: &UsageQuery) -> StoreResult<Vec<UsageRow>> {
    let sql = concat!(
        "SELECT tenant, agent, COALESCE(thread_key, '') AS thread_key, ",
        sums!(),
        " FROM run_usage \
         WHERE ($1::TEXT IS NULL OR tenant = $1) AND ($2::TEXT IS NULL OR agent = $2) \
         AND ($3::TEXT IS NULL OR thread_key = $3) \
         AND ($4::TIMESTAMPTZ IS NULL OR ended_at >= $4) AND ($5::TIMESTAMPTZ IS NULL OR ended_at < $5) \
         GROUP BY tenant, agent, COALESCE(thread_key, '') \
         HAVING ($6::TEXT IS NULL OR (tenant, agent, COALESCE(thread_key, '')) > ($6::TEXT, $7::TEXT, $8::TEXT)) \
         ORDER BY 1, 2, 3 LIMIT $9"
    );
    let after = q.after.as_ref();
    let rows: Vec<Row> = sqlx::query_as(sql)
        .bind(q.tenant.as_deref())
        .bind(q.agent.as_deref())
        .bind(q.thread_key.as_deref())
        .bind(q.from.map(micros))
        .bind(q.to.map(micros))
        .bind(after.map(|k| k.tenant.as_str()))
        .bind(after.map(|k| k.agent.as_str()))
        .bind(after.map(|k| k.thread_key.as_str()))
        .bind(rules::limit(q.limit))
        .fetch_all(pool)
        .await
        .map_err(map)?;
    rows.into_iter().map(Row::into_row).collect()
}

pub(super) async fn total(pool: &PgPool, f: &UsageFilter) -> StoreResult<UsageTotals> {
    rules::require("tenant", &f.tenant)?;
    let sql = concat!(
        "SELECT $1::TEXT AS tenant, ''::TEXT AS agent, ''::TEXT AS thread_key, ",
        sums!(),
        " FROM run_usage \
         WHERE tenant = $1 AND ($2::TEXT IS NULL OR agent = $2) AND ($3::TEXT IS NULL OR thread_key = $3) \
         AND ($4::TIMESTAMPTZ IS NULL OR ended_at >= $4)"
    );
    let row: Row = sqlx::query_as(sql)
        .bind(&f.tenant)
        .bind(f.agent.as_deref())
        .bind(f.thread_key.as_deref())
        .bind(f.since.map(micros))
        .fetch_one(pool)
        .await
        .map_err(map)?;
    row.totals(&f.tenant)
}
