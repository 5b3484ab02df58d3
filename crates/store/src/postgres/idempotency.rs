//! Idempotency keys on Postgres (`idempotency_keys`, migration 0004). The claim is one
//! `INSERT … ON CONFLICT DO UPDATE … WHERE`: a concurrent claimer waits for the row and then sees it
//! live, so of concurrent claimers exactly one takes a free or dead key.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::StoreResult;
use crate::idempotency::{
    ClaimOutcome, IdempotencyClaim, KeyRow, StoredAnswer, check_answer, check_claim, keep_cutoff,
    lapse_cutoff,
};
use crate::rules::micros;
use crate::sql_error::map;

/// Attempts before a claim that keeps losing the key's row (released by a refused request, or purged)
/// between its upsert and its read stops trying: the key is busy, so it answers "in progress" (409 with
/// `Retry-After`), never a store error.
const ATTEMPTS: usize = 4;

pub(super) async fn claim(pool: &PgPool, c: &IdempotencyClaim) -> StoreResult<ClaimOutcome> {
    check_claim(c)?;
    for _ in 0..ATTEMPTS {
        let won: Option<String> = sqlx::query_scalar(
            "INSERT INTO idempotency_keys (tenant, idem_key, request_hash, token, state, created_at) \
             VALUES ($1, $2, $3, $4, 'claimed', $5) \
             ON CONFLICT (tenant, idem_key) DO UPDATE SET request_hash = excluded.request_hash, \
             token = excluded.token, state = 'claimed', status = NULL, content_type = NULL, location = NULL, \
             body = NULL, created_at = excluded.created_at \
             WHERE (idempotency_keys.state = 'claimed' AND idempotency_keys.created_at <= $6) \
             OR (idempotency_keys.state = 'completed' AND idempotency_keys.created_at <= $7) \
             RETURNING token",
        )
        .bind(&c.tenant)
        .bind(&c.key)
        .bind(&c.request_hash)
        .bind(&c.token)
        .bind(micros(c.at))
        .bind(micros(lapse_cutoff(c)))
        .bind(micros(keep_cutoff(c)))
        .fetch_optional(pool)
        .await
        .map_err(map)?;
        if won.is_some() {
            return Ok(ClaimOutcome::Claimed);
        }
        let row: Option<KeyRow> = sqlx::query_as(
            "SELECT request_hash, state, status, content_type, location, body FROM idempotency_keys \
             WHERE tenant = $1 AND idem_key = $2",
        )
        .bind(&c.tenant)
        .bind(&c.key)
        .fetch_optional(pool)
        .await
        .map_err(map)?;
        if let Some(row) = row {
            return row.outcome(c);
        }
    }
    // Other requests keep taking and releasing the key: it is in use; the client retries.
    Ok(ClaimOutcome::InProgress)
}

pub(super) async fn complete(
    pool: &PgPool,
    tenant: &str,
    key: &str,
    token: &str,
    a: &StoredAnswer,
) -> StoreResult<bool> {
    check_answer(a)?;
    let done = sqlx::query(
        "UPDATE idempotency_keys SET state = 'completed', status = $4, content_type = $5, location = $6, \
         body = $7 WHERE tenant = $1 AND idem_key = $2 AND token = $3 AND state = 'claimed'",
    )
    .bind(tenant)
    .bind(key)
    .bind(token)
    .bind(i32::from(a.status))
    .bind(a.content_type.as_deref())
    .bind(a.location.as_deref())
    .bind(&a.body)
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected() == 1)
}

pub(super) async fn release(pool: &PgPool, tenant: &str, key: &str, token: &str) -> StoreResult<bool> {
    let done = sqlx::query(
        "DELETE FROM idempotency_keys WHERE tenant = $1 AND idem_key = $2 AND token = $3 AND state = 'claimed'",
    )
    .bind(tenant)
    .bind(key)
    .bind(token)
    .execute(pool)
    .await
    .map_err(map)?;
    Ok(done.rows_affected() == 1)
}

pub(super) async fn purge(pool: &PgPool, cutoff: DateTime<Utc>) -> StoreResult<u64> {
    let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at <= $1")
        .bind(micros(cutoff))
        .execute(pool)
        .await
        .map_err(map)?;
    Ok(done.rows_affected())
}
