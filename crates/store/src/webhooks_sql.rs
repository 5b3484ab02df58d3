//! The webhook tables (migration 0006) on SQLite and Postgres: one SQL text for both, because both
//! store times as integer microseconds and events as JSON text. The rows decode alike
//! ([`WebhookRow`], [`DeliveryRow`], [`AttemptRow`]); [`sql_webhook_store!`] writes the
//! [`WebhookStore`](super::webhooks::WebhookStore) impl of a backend from its read pool, write pool and
//! how it begins a write transaction — the only things that differ.

use super::StoreResult;
use super::decode;
use super::error::StoreError;
use super::rules;
use super::webhooks::{Attempt, Delivery, DeliveryState, Webhook};

/// The columns of `webhooks`, in `SELECT` order.
pub(crate) const WEBHOOK_COLUMNS: &str = "id, tenant, url, events, description, secret, created_at";
/// The columns of `webhook_deliveries`, in `SELECT` order.
pub(crate) const DELIVERY_COLUMNS: &str = "id, webhook_id, tenant, event_id, event_type, payload, state, \
                                           attempts, next_attempt_at, created_at, updated_at";

/// A `webhooks` row.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct WebhookRow {
    id: String,
    tenant: String,
    url: String,
    events: String,
    description: Option<String>,
    secret: String,
    created_at: i64,
}

impl WebhookRow {
    /// The subscription this row stores.
    pub(crate) fn decode(self) -> StoreResult<Webhook> {
        let at = decode::at("webhooks", &self.id);
        let events: Vec<String> = at.json_text("events", &self.events)?;
        let created_at = at.micros("created_at", self.created_at)?;
        Ok(Webhook {
            id: self.id,
            tenant: self.tenant,
            url: self.url,
            events,
            description: self.description,
            secret: self.secret,
            created_at,
        })
    }
}

/// A `webhook_deliveries` row.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct DeliveryRow {
    id: String,
    webhook_id: String,
    tenant: String,
    event_id: String,
    event_type: String,
    payload: String,
    state: String,
    attempts: i64,
    next_attempt_at: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl DeliveryRow {
    /// The delivery this row stores (without its attempts).
    pub(crate) fn decode(self) -> StoreResult<Delivery> {
        let at = decode::at("webhook_deliveries", &self.id);
        let state = at.text_enum("state", &self.state, DeliveryState::parse)?;
        let attempts = u32::try_from(self.attempts).map_err(|_| {
            StoreError::corrupt("webhook_deliveries", &self.id, "column attempts: out of range")
        })?;
        let next_attempt_at = self
            .next_attempt_at
            .map(|us| at.micros("next_attempt_at", us))
            .transpose()?;
        let created_at = at.micros("created_at", self.created_at)?;
        let updated_at = at.micros("updated_at", self.updated_at)?;
        Ok(Delivery {
            id: self.id,
            webhook_id: self.webhook_id,
            tenant: self.tenant,
            event_id: self.event_id,
            event_type: self.event_type,
            payload: self.payload,
            state,
            attempts,
            next_attempt_at,
            created_at,
            updated_at,
            log: Vec::new(),
        })
    }
}

/// A `webhook_attempts` row.
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct AttemptRow {
    pub(crate) delivery_id: String,
    attempt: i64,
    at: i64,
    status: Option<i64>,
    error: Option<String>,
    duration_ms: i64,
}

impl AttemptRow {
    /// The attempt this row stores.
    pub(crate) fn decode(self) -> StoreResult<Attempt> {
        let id = format!("{}/{}", self.delivery_id, self.attempt);
        let at = decode::at("webhook_attempts", &id);
        let corrupt =
            |c: &str| StoreError::corrupt("webhook_attempts", &id, format!("column {c}: out of range"));
        Ok(Attempt {
            attempt: u32::try_from(self.attempt).map_err(|_| corrupt("attempt"))?,
            at: at.micros("at", self.at)?,
            status: self
                .status
                .map(|s| u16::try_from(s).map_err(|_| corrupt("status")))
                .transpose()?,
            error: self.error,
            duration_ms: at.unsigned("duration_ms", self.duration_ms)?,
        })
    }
}

/// Gives each delivery its attempts (`rows` in any order; each delivery's sorted by attempt number).
pub(crate) fn attach(mut deliveries: Vec<Delivery>, rows: Vec<AttemptRow>) -> StoreResult<Vec<Delivery>> {
    for row in rows {
        let id = row.delivery_id.clone();
        let attempt = row.decode()?;
        if let Some(d) = deliveries.iter_mut().find(|d| d.id == id) {
            d.log.push(attempt);
        }
    }
    for d in &mut deliveries {
        d.log.sort_by_key(|a| a.attempt);
    }
    Ok(deliveries)
}

/// The stored form of a subscription's event types.
pub(crate) fn events_text(events: &[String]) -> String {
    serde_json::to_string(events).unwrap_or_else(|_| "[]".into())
}

/// A page size as an SQL `LIMIT` for deliveries.
pub(crate) fn delivery_limit(limit: u32) -> i64 {
    i64::from(limit.clamp(1, super::webhooks::MAX_DELIVERY_PAGE))
}

/// A count or duration as the `i64` SQL stores.
pub(crate) fn int(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Microseconds since the epoch.
pub(crate) fn us(at: chrono::DateTime<chrono::Utc>) -> i64 {
    rules::to_micros(at)
}

/// Implements [`WebhookStore`](crate::webhooks::WebhookStore) for an SQL backend `$store`:
/// `read(self)` and `write(self)` give the pools of reads and single statements that write,
/// `begin(self)` a write transaction.
macro_rules! sql_webhook_store {
    ($store:ty, read = |$r:ident| $read:expr, write = |$w:ident| $write:expr, begin = |$b:ident| $begin:expr $(,)?) => {
        #[async_trait::async_trait]
        impl $crate::webhooks::WebhookStore for $store {
            async fn create_webhook(&self, w: &$crate::webhooks::Webhook) -> $crate::StoreResult<()> {
                use $crate::webhooks_sql as s;
                $crate::webhooks::check_webhook(w)?;
                let $w = self;
                let done = sqlx::query(
                    "INSERT INTO webhooks (id, tenant, url, events, description, secret, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                )
                .bind(&w.id)
                .bind(&w.tenant)
                .bind(&w.url)
                .bind(s::events_text(&w.events))
                .bind(w.description.as_deref())
                .bind(&w.secret)
                .bind(s::us(w.created_at))
                .execute($write)
                .await;
                match done {
                    Ok(_) => Ok(()),
                    Err(e) if $crate::sql_error::is_unique_violation(&e) => {
                        Err($crate::StoreError::AlreadyExists { key: w.id.clone() })
                    }
                    Err(e) => Err($crate::sql_error::map(e)),
                }
            }

            async fn list_webhooks(
                &self,
                tenant: Option<&str>,
            ) -> $crate::StoreResult<Vec<$crate::webhooks::Webhook>> {
                use $crate::webhooks_sql as s;
                let $r = self;
                let sql = format!(
                    "SELECT {} FROM webhooks WHERE ($1 IS NULL OR tenant = $1) ORDER BY created_at, id",
                    s::WEBHOOK_COLUMNS
                );
                let rows: Vec<s::WebhookRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(tenant)
                    .fetch_all($read)
                    .await
                    .map_err($crate::sql_error::map)?;
                rows.into_iter().map(s::WebhookRow::decode).collect()
            }

            async fn get_webhook(
                &self,
                tenant: Option<&str>,
                id: &str,
            ) -> $crate::StoreResult<Option<$crate::webhooks::Webhook>> {
                use $crate::webhooks_sql as s;
                let $r = self;
                let sql = format!(
                    "SELECT {} FROM webhooks WHERE id = $1 AND ($2 IS NULL OR tenant = $2)",
                    s::WEBHOOK_COLUMNS
                );
                let row: Option<s::WebhookRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(id)
                    .bind(tenant)
                    .fetch_optional($read)
                    .await
                    .map_err($crate::sql_error::map)?;
                row.map(s::WebhookRow::decode).transpose()
            }

            async fn delete_webhook(&self, tenant: Option<&str>, id: &str) -> $crate::StoreResult<bool> {
                use $crate::sql_error::map;
                let $b = self;
                let mut tx = $begin.await.map_err(map)?;
                let gone = sqlx::query("DELETE FROM webhooks WHERE id = $1 AND ($2 IS NULL OR tenant = $2)")
                    .bind(id)
                    .bind(tenant)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
                if gone.rows_affected() == 0 {
                    return Ok(false);
                }
                sqlx::query(
                    "DELETE FROM webhook_attempts WHERE delivery_id IN \
                     (SELECT id FROM webhook_deliveries WHERE webhook_id = $1)",
                )
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(map)?;
                sqlx::query("DELETE FROM webhook_deliveries WHERE webhook_id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
                tx.commit().await.map_err(map)?;
                Ok(true)
            }

            async fn enqueue(
                &self,
                deliveries: &[$crate::webhooks::NewDelivery],
            ) -> $crate::StoreResult<()> {
                use $crate::sql_error::map;
                use $crate::webhooks_sql as s;
                for d in deliveries {
                    $crate::webhooks::check_delivery(d)?;
                }
                if deliveries.is_empty() {
                    return Ok(());
                }
                let $b = self;
                let mut tx = $begin.await.map_err(map)?;
                for d in deliveries {
                    let at = s::us(d.created_at);
                    sqlx::query(
                        "INSERT INTO webhook_deliveries (id, webhook_id, tenant, event_id, event_type, payload, \
                         state, attempts, next_attempt_at, created_at, updated_at) \
                         VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $7, $7, $7)",
                    )
                    .bind(&d.id)
                    .bind(&d.webhook_id)
                    .bind(&d.tenant)
                    .bind(&d.event_id)
                    .bind(&d.event_type)
                    .bind(&d.payload)
                    .bind(at)
                    .execute(&mut *tx)
                    .await
                    .map_err(map)?;
                }
                tx.commit().await.map_err(map)
            }

            async fn due(
                &self,
                now: chrono::DateTime<chrono::Utc>,
                limit: u32,
            ) -> $crate::StoreResult<Vec<$crate::webhooks::Delivery>> {
                use $crate::webhooks_sql as s;
                let $r = self;
                let sql = format!(
                    "SELECT {} FROM webhook_deliveries WHERE state = 'pending' AND next_attempt_at <= $1 \
                     ORDER BY next_attempt_at, id LIMIT $2",
                    s::DELIVERY_COLUMNS
                );
                let rows: Vec<s::DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(s::us(now))
                    .bind(s::delivery_limit(limit))
                    .fetch_all($read)
                    .await
                    .map_err($crate::sql_error::map)?;
                rows.into_iter().map(s::DeliveryRow::decode).collect()
            }

            async fn claim(
                &self,
                id: &str,
                seen: chrono::DateTime<chrono::Utc>,
                until: chrono::DateTime<chrono::Utc>,
            ) -> $crate::StoreResult<bool> {
                use $crate::webhooks_sql as s;
                let $w = self;
                let done = sqlx::query(
                    "UPDATE webhook_deliveries SET next_attempt_at = $3 \
                     WHERE id = $1 AND state = 'pending' AND next_attempt_at = $2",
                )
                .bind(id)
                .bind(s::us(seen))
                .bind(s::us(until))
                .execute($write)
                .await
                .map_err($crate::sql_error::map)?;
                Ok(done.rows_affected() == 1)
            }

            async fn record_attempt(
                &self,
                id: &str,
                attempt: &$crate::webhooks::Attempt,
                end: $crate::webhooks::AttemptEnd,
            ) -> $crate::StoreResult<bool> {
                use $crate::sql_error::map;
                use $crate::webhooks_sql as s;
                if attempt.attempt == 0 {
                    return Err($crate::StoreError::invalid("attempts are numbered from 1"));
                }
                if attempt.error.as_deref().is_some_and(|e| e.contains('\0')) {
                    return Err($crate::StoreError::invalid("an attempt's error must not contain NUL"));
                }
                let (state, next) = $crate::webhooks::after(end);
                let $b = self;
                let mut tx = $begin.await.map_err(map)?;
                let changed = sqlx::query(
                    "UPDATE webhook_deliveries SET state = $2, attempts = $3, next_attempt_at = $4, updated_at = $5 \
                     WHERE id = $1 AND state = 'pending' AND attempts = $6",
                )
                .bind(id)
                .bind(state.as_str())
                .bind(i64::from(attempt.attempt))
                .bind(next.map(s::us))
                .bind(s::us(attempt.at))
                .bind(i64::from(attempt.attempt) - 1)
                .execute(&mut *tx)
                .await
                .map_err(map)?;
                if changed.rows_affected() != 1 {
                    return Ok(false);
                }
                sqlx::query(
                    "INSERT INTO webhook_attempts (delivery_id, attempt, at, status, error, duration_ms) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(id)
                .bind(i64::from(attempt.attempt))
                .bind(s::us(attempt.at))
                .bind(attempt.status.map(i64::from))
                .bind(attempt.error.as_deref())
                .bind(s::int(attempt.duration_ms))
                .execute(&mut *tx)
                .await
                .map_err(map)?;
                tx.commit().await.map_err(map)?;
                Ok(true)
            }

            async fn list_deliveries(
                &self,
                webhook_id: &str,
                limit: u32,
            ) -> $crate::StoreResult<Vec<$crate::webhooks::Delivery>> {
                use $crate::sql_error::map;
                use $crate::webhooks_sql as s;
                let $r = self;
                let sql = format!(
                    "SELECT {} FROM webhook_deliveries WHERE webhook_id = $1 \
                     ORDER BY created_at DESC, id DESC LIMIT $2",
                    s::DELIVERY_COLUMNS
                );
                let rows: Vec<s::DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(webhook_id)
                    .bind(s::delivery_limit(limit))
                    .fetch_all($read)
                    .await
                    .map_err(map)?;
                let deliveries = rows
                    .into_iter()
                    .map(s::DeliveryRow::decode)
                    .collect::<$crate::StoreResult<Vec<_>>>()?;
                let Some(oldest) = deliveries.last().map(|d| s::us(d.created_at)) else {
                    return Ok(deliveries);
                };
                let attempts: Vec<s::AttemptRow> = sqlx::query_as(
                    "SELECT a.delivery_id, a.attempt, a.at, a.status, a.error, a.duration_ms \
                     FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id \
                     WHERE d.webhook_id = $1 AND d.created_at >= $2",
                )
                .bind(webhook_id)
                .bind(oldest)
                .fetch_all($read)
                .await
                .map_err(map)?;
                s::attach(deliveries, attempts)
            }

            async fn retry_delivery(
                &self,
                webhook_id: &str,
                id: &str,
                now: chrono::DateTime<chrono::Utc>,
            ) -> $crate::StoreResult<Option<$crate::webhooks::Delivery>> {
                use $crate::sql_error::map;
                use $crate::webhooks_sql as s;
                let $b = self;
                let mut tx = $begin.await.map_err(map)?;
                sqlx::query(
                    "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = $3, updated_at = $3 \
                     WHERE id = $1 AND webhook_id = $2 AND state <> 'pending'",
                )
                .bind(id)
                .bind(webhook_id)
                .bind(s::us($crate::micros(now)))
                .execute(&mut *tx)
                .await
                .map_err(map)?;
                let sql = format!(
                    "SELECT {} FROM webhook_deliveries WHERE id = $1 AND webhook_id = $2",
                    s::DELIVERY_COLUMNS
                );
                let row: Option<s::DeliveryRow> = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                    .bind(id)
                    .bind(webhook_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(map)?;
                tx.commit().await.map_err(map)?;
                row.map(s::DeliveryRow::decode).transpose()
            }
        }
    };
}

pub(crate) use sql_webhook_store;
