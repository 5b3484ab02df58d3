//! Thread declarations on SQLite (`thread_declarations`, migration 0002).

use sqlx::SqlitePool;

use crate::decode::at;
use crate::rules::{self, to_micros};
use crate::sql_error::{is_unique_violation, map};
use crate::{Declaration, StoreError, StoreResult};

/// One `thread_declarations` row.
#[derive(sqlx::FromRow)]
struct Row {
    tenant: String,
    agent: String,
    thread_key: String,
    defaults: String,
    forked_from: Option<String>,
    created_at: i64,
}

impl Row {
    fn into_declaration(self) -> StoreResult<Declaration> {
        let id = format!("{}/{}/{}", self.tenant, self.agent, self.thread_key);
        let row = at("thread_declarations", &id);
        Ok(Declaration {
            defaults: row.json_text("defaults", &self.defaults)?,
            created_at: row.micros("created_at", self.created_at)?,
            tenant: self.tenant,
            agent: self.agent,
            key: self.thread_key,
            forked_from: self.forked_from,
        })
    }
}

pub(super) async fn put(pool: &SqlitePool, d: &Declaration) -> StoreResult<()> {
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
    .bind(d.defaults.to_string())
    .bind(d.forked_from.as_deref())
    .bind(to_micros(d.created_at))
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
    pool: &SqlitePool,
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
    row.map(Row::into_declaration).transpose()
}

pub(super) async fn delete(pool: &SqlitePool, tenant: &str, agent: &str, key: &str) -> StoreResult<bool> {
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
