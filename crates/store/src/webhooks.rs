//! Webhooks: per-tenant subscriptions and the durable outbox of their deliveries, behind
//! [`WebhookStore`] (a trait of its own beside [`ThreadStore`](super::ThreadStore), reached through
//! [`ThreadStore::webhooks`](super::ThreadStore::webhooks)).
//!
//! * A **subscription** ([`Webhook`]) is a tenant's URL, the event types it wants and its signing secret.
//! * An event becomes one **delivery** per matching subscription ([`NewDelivery`]): the exact body to
//!   send, `pending` and due at once. Deliveries are rows, so a restart loses none.
//! * A worker takes a due delivery with [`claim`](WebhookStore::claim) (a compare-and-set on its due time,
//!   which it moves to the claim's end: a crashed worker's claim lapses and the delivery is due again),
//!   posts it, and records the **attempt** with [`record_attempt`](WebhookStore::record_attempt): the
//!   delivery is then `delivered`, `failed` (given up) or `pending` again with its next due time.
//!
//! Times are the caller's, stored with microsecond precision. Both SQL backends run the same SQL
//! ([`super::webhooks_sql`]); they differ only in their pools and how a write transaction begins.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
use super::error::StoreError;
use super::rules;

/// The most deliveries [`WebhookStore::list_deliveries`] returns.
pub const MAX_DELIVERY_PAGE: u32 = 100;

/// One subscription.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhook {
    /// Its id.
    pub id: String,
    /// The tenant whose events it receives.
    pub tenant: String,
    /// Where deliveries are posted (`http` or `https`).
    pub url: String,
    /// The event types it receives.
    pub events: Vec<String>,
    /// A note for humans.
    pub description: Option<String>,
    /// The signing secret (`whsec_` + base64 of the key bytes).
    pub secret: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
}

/// A delivery to enqueue: due at `created_at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewDelivery {
    /// The delivery's id.
    pub id: String,
    /// The subscription.
    pub webhook_id: String,
    /// The subscription's tenant.
    pub tenant: String,
    /// The event's id (the `webhook-id` header; the same on every attempt).
    pub event_id: String,
    /// The event's type.
    pub event_type: String,
    /// The body, exactly as sent and signed.
    pub payload: String,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Waiting for its next attempt (or in flight).
    Pending,
    /// A receiver answered 2xx.
    Delivered,
    /// Every attempt failed; given up.
    Failed,
}

impl DeliveryState {
    /// The stored and shown name.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    /// The inverse of [`as_str`](Self::as_str).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(DeliveryState::Pending),
            "delivered" => Some(DeliveryState::Delivered),
            "failed" => Some(DeliveryState::Failed),
            _ => None,
        }
    }
}

/// One delivery and, when listed, its attempts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Its id.
    pub id: String,
    /// The subscription.
    pub webhook_id: String,
    /// The tenant.
    pub tenant: String,
    /// The event's id.
    pub event_id: String,
    /// The event's type.
    pub event_type: String,
    /// The body as sent.
    pub payload: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made.
    pub attempts: u32,
    /// When it is due next (pending only; while claimed, the claim's end).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// When it was enqueued.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// Its attempts, oldest first ([`WebhookStore::list_deliveries`] only; empty elsewhere).
    pub log: Vec<Attempt>,
}

/// One attempt of a delivery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// One-based attempt number.
    pub attempt: u32,
    /// When it started.
    pub at: DateTime<Utc>,
    /// The receiver's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why it failed without (or besides) a status: connection refused, timeout, refused address.
    pub error: Option<String>,
    /// How long it took.
    pub duration_ms: u64,
}

/// What an attempt leaves a delivery in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptEnd {
    /// Delivered.
    Delivered,
    /// Failed; try again at this time.
    RetryAt(DateTime<Utc>),
    /// Failed; give up.
    GiveUp,
}

/// Subscriptions and their deliveries. Object-safe: shared as `Arc<dyn WebhookStore>`.
///
/// `tenant: None` is the operator's view (every tenant); `Some(t)` never sees another tenant's rows.
#[async_trait]
pub trait WebhookStore: Send + Sync + 'static {
    /// Stores a subscription; [`StoreError::AlreadyExists`] if its id is taken.
    async fn create_webhook(&self, webhook: &Webhook) -> StoreResult<()>;

    /// The subscriptions of `tenant` (every tenant's with `None`), oldest first.
    async fn list_webhooks(&self, tenant: Option<&str>) -> StoreResult<Vec<Webhook>>;

    /// One subscription, if `tenant` may see it.
    async fn get_webhook(&self, tenant: Option<&str>, id: &str) -> StoreResult<Option<Webhook>>;

    /// Deletes a subscription with its deliveries and their attempts; false when there was none.
    async fn delete_webhook(&self, tenant: Option<&str>, id: &str) -> StoreResult<bool>;

    /// Enqueues deliveries (one transaction): each pending, due at its `created_at`.
    async fn enqueue(&self, deliveries: &[NewDelivery]) -> StoreResult<()>;

    /// Pending deliveries due at or before `now`, earliest due first, at most `limit`.
    async fn due(&self, now: DateTime<Utc>, limit: u32) -> StoreResult<Vec<Delivery>>;

    /// Claims a due delivery for one attempt: moves its due time from `seen` to `until`; false when
    /// another worker changed it first (or it is no longer pending).
    async fn claim(&self, id: &str, seen: DateTime<Utc>, until: DateTime<Utc>) -> StoreResult<bool>;

    /// Records attempt `attempt.attempt` and where it leaves the delivery; false (nothing written) unless
    /// the delivery is pending with `attempt.attempt - 1` attempts made.
    async fn record_attempt(&self, id: &str, attempt: &Attempt, end: AttemptEnd) -> StoreResult<bool>;

    /// The newest deliveries of a subscription (newest first, at most `limit`, capped at
    /// [`MAX_DELIVERY_PAGE`]), each with its attempts.
    async fn list_deliveries(&self, webhook_id: &str, limit: u32) -> StoreResult<Vec<Delivery>>;

    /// Makes a delivered or failed delivery of the subscription pending and due at `now` (a pending one
    /// is left as it is); the delivery after it, or `None` when the subscription has no such delivery.
    async fn retry_delivery(
        &self,
        webhook_id: &str,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;
}

/// Checks a subscription before any backend stores it.
pub(crate) fn check_webhook(w: &Webhook) -> Result<(), StoreError> {
    rules::require("webhook id", &w.id)?;
    rules::require("tenant", &w.tenant)?;
    rules::require("webhook url", &w.url)?;
    rules::require("webhook secret", &w.secret)?;
    for e in &w.events {
        rules::require("event type", e)?;
    }
    if let Some(d) = &w.description
        && d.contains('\0')
    {
        return Err(StoreError::invalid("a description must not contain NUL (U+0000)"));
    }
    Ok(())
}

/// Checks a delivery before any backend stores it.
pub(crate) fn check_delivery(d: &NewDelivery) -> Result<(), StoreError> {
    rules::require("delivery id", &d.id)?;
    rules::require("webhook id", &d.webhook_id)?;
    rules::require("tenant", &d.tenant)?;
    rules::require("event id", &d.event_id)?;
    rules::require("event type", &d.event_type)?;
    rules::require("payload", &d.payload)
}

/// The state and next due time an attempt's end stores.
pub(crate) fn after(end: AttemptEnd) -> (DeliveryState, Option<DateTime<Utc>>) {
    match end {
        AttemptEnd::Delivered => (DeliveryState::Delivered, None),
        AttemptEnd::RetryAt(at) => (DeliveryState::Pending, Some(rules::micros(at))),
        AttemptEnd::GiveUp => (DeliveryState::Failed, None),
    }
}
