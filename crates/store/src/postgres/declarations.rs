//! Thread declarations on Postgres (`thread_declarations`, migration 0002).

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;

use crate::rules::{self, micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{Declaration, StoreError, StoreResult};

/// One `thread_declarations` row.
#[derive(sqlx::FromRow)]
struct Row {
    tenant: String,
    agent: String,
    thread_key: String,
    defaults: Value,
    forked_from: Option<String>,
    created_at: DateTime<Utc>,
}

impl From<Row> for Declaration {
    fn from(r: Row) -> Self {
        Declaration {
            tenant: r.tenant,
            agent: r.agent,
            key: r.thread_key,
            defaults: super::nul::decode(r.defaults),
            forked_from: r.forked_from,
            created_at: r.created_at,
        }
    }
}

pub(super) async fn put(pool: &PgPool, d: &Declaration) -> StoreResult<()> {
    rules::require("tenant", &d.tenant)?;
    rules::require("agent", &d.agent)?;
    rules::require("key", &d.key)?;
    sqlx::query(
        "INSERT INTO thread_declarations (tenant, agent, thread_key, defaults, forked_from, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&d.tenant)
    .bind(&d.agent)
    .bind(&d.key)
    .bind(&*super::nul::encode(&d.defaults))
    .bind(d.forked_from.as_deref())
    .bind(micros(d.created_at))
    .execute(pool)
    .await
    .map_err(|e| {
        if is_unique_violation(&e) {
            StoreError::AlreadyExists { key: d.key.clone() }
        } else {
            map(e)
        }
    })?;
    Ok(())
}

pub(super) async fn get(
    pool: &PgPool,
    tenant: &str,
    agent: &str,
    key: &str,
) -> StoreResult<Option<Declaration>> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT tenant, agent, thread_key, defaults, forked_from, created_at FROM thread_declarations \
         WHERE tenant = $1 AND agent = $2 AND thread_key = $3",
    )
    .bind(tenant)
    .bind(agent)
    .bind(key)
    .fetch_optional(pool)
    .await
    .map_err(map)?;
    Ok(row.map(Declaration::from))
}

pub(super) async fn delete(pool: &PgPool, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
    let done =
        sqlx::query("DELETE FROM thread_declarations WHERE tenant = $1 AND agent = $2 AND thread_key = $3")
            .bind(tenant)
            .bind(agent)
            .bind(key)
            .execute(pool)
            .await
            .map_err(map)?;
    Ok(done.rows_affected() > 0)
}
