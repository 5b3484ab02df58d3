//! Webhook subscriptions and deliveries for the in-memory store: one mutex over plain maps, so each
//! operation is atomic like a transaction of the SQL backends, with the same semantics.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::webhooks::{
    Attempt, AttemptEnd, Delivery, DeliveryState, MAX_DELIVERY_PAGE, NewDelivery, Webhook, WebhookStore,
    after, check_delivery, check_webhook,
};
use crate::{StoreError, StoreResult, micros};

/// The in-memory [`WebhookStore`] (a [`MemoryStore`](super::MemoryStore) holds one).
#[derive(Debug, Default)]
pub(super) struct MemoryWebhooks {
    inner: Mutex<Tables>,
}

/// Subscriptions by id, deliveries by id.
#[derive(Debug, Default)]
struct Tables {
    webhooks: BTreeMap<String, Webhook>,
    deliveries: BTreeMap<String, Delivery>,
}

impl MemoryWebhooks {
    fn lock(&self) -> MutexGuard<'_, Tables> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// True when `tenant` (the operator's `None`, or one tenant) may see `owner`'s rows.
fn visible(tenant: Option<&str>, owner: &str) -> bool {
    tenant.is_none_or(|t| t == owner)
}

#[async_trait]
impl WebhookStore for MemoryWebhooks {
    async fn create_webhook(&self, webhook: &Webhook) -> StoreResult<()> {
        check_webhook(webhook)?;
        let mut t = self.lock();
        if t.webhooks.contains_key(&webhook.id) {
            return Err(StoreError::AlreadyExists {
                key: webhook.id.clone(),
            });
        }
        let stored = Webhook {
            created_at: micros(webhook.created_at),
            ..webhook.clone()
        };
        t.webhooks.insert(webhook.id.clone(), stored);
        Ok(())
    }

    async fn list_webhooks(&self, tenant: Option<&str>) -> StoreResult<Vec<Webhook>> {
        let mut all: Vec<Webhook> = self
            .lock()
            .webhooks
            .values()
            .filter(|w| visible(tenant, &w.tenant))
            .cloned()
            .collect();
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn get_webhook(&self, tenant: Option<&str>, id: &str) -> StoreResult<Option<Webhook>> {
        Ok(self
            .lock()
            .webhooks
            .get(id)
            .filter(|w| visible(tenant, &w.tenant))
            .cloned())
    }

    async fn delete_webhook(&self, tenant: Option<&str>, id: &str) -> StoreResult<bool> {
        let mut t = self.lock();
        if !t.webhooks.get(id).is_some_and(|w| visible(tenant, &w.tenant)) {
            return Ok(false);
        }
        t.webhooks.remove(id);
        t.deliveries.retain(|_, d| d.webhook_id != id);
        Ok(true)
    }

    async fn enqueue(&self, deliveries: &[NewDelivery]) -> StoreResult<()> {
        for d in deliveries {
            check_delivery(d)?;
        }
        let mut t = self.lock();
        if let Some(d) = deliveries.iter().find(|d| t.deliveries.contains_key(&d.id)) {
            return Err(StoreError::AlreadyExists { key: d.id.clone() });
        }
        for d in deliveries {
            let at = micros(d.created_at);
            t.deliveries.insert(
                d.id.clone(),
                Delivery {
                    id: d.id.clone(),
                    webhook_id: d.webhook_id.clone(),
                    tenant: d.tenant.clone(),
                    event_id: d.event_id.clone(),
                    event_type: d.event_type.clone(),
                    payload: d.payload.clone(),
                    state: DeliveryState::Pending,
                    attempts: 0,
                    next_attempt_at: Some(at),
                    created_at: at,
                    updated_at: at,
                    log: Vec::new(),
                },
            );
        }
        Ok(())
    }

    async fn due(&self, now: DateTime<Utc>, limit: u32) -> StoreResult<Vec<Delivery>> {
        let mut due: Vec<Delivery> = self
            .lock()
            .deliveries
            .values()
            .filter(|d| d.state == DeliveryState::Pending && d.next_attempt_at.is_some_and(|at| at <= now))
            .map(|d| Delivery {
                log: Vec::new(),
                ..d.clone()
            })
            .collect();
        due.sort_by(|a, b| (a.next_attempt_at, &a.id).cmp(&(b.next_attempt_at, &b.id)));
        due.truncate(limit.clamp(1, MAX_DELIVERY_PAGE) as usize);
        Ok(due)
    }

    async fn claim(&self, id: &str, seen: DateTime<Utc>, until: DateTime<Utc>) -> StoreResult<bool> {
        let mut t = self.lock();
        let Some(d) = t.deliveries.get_mut(id) else {
            return Ok(false);
        };
        if d.state != DeliveryState::Pending || d.next_attempt_at != Some(micros(seen)) {
            return Ok(false);
        }
        d.next_attempt_at = Some(micros(until));
        Ok(true)
    }

    async fn record_attempt(&self, id: &str, attempt: &Attempt, end: AttemptEnd) -> StoreResult<bool> {
        if attempt.attempt == 0 {
            return Err(StoreError::invalid("attempts are numbered from 1"));
        }
        if attempt.error.as_deref().is_some_and(|e| e.contains('\0')) {
            return Err(StoreError::invalid("an attempt's error must not contain NUL"));
        }
        let mut t = self.lock();
        let Some(d) = t.deliveries.get_mut(id) else {
            return Ok(false);
        };
        if d.state != DeliveryState::Pending || d.attempts + 1 != attempt.attempt {
            return Ok(false);
        }
        let (state, next) = after(end);
        d.state = state;
        d.attempts = attempt.attempt;
        d.next_attempt_at = next;
        d.updated_at = micros(attempt.at);
        d.log.push(Attempt {
            at: micros(attempt.at),
            ..attempt.clone()
        });
        Ok(true)
    }

    async fn list_deliveries(&self, webhook_id: &str, limit: u32) -> StoreResult<Vec<Delivery>> {
        let mut all: Vec<Delivery> = self
            .lock()
            .deliveries
            .values()
            .filter(|d| d.webhook_id == webhook_id)
            .cloned()
            .collect();
        all.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        all.truncate(limit.clamp(1, MAX_DELIVERY_PAGE) as usize);
        Ok(all)
    }

    async fn retry_delivery(
        &self,
        webhook_id: &str,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>> {
        let mut t = self.lock();
        let Some(d) = t.deliveries.get_mut(id).filter(|d| d.webhook_id == webhook_id) else {
            return Ok(None);
        };
        if d.state != DeliveryState::Pending {
            d.state = DeliveryState::Pending;
            d.next_attempt_at = Some(micros(now));
            d.updated_at = micros(now);
        }
        Ok(Some(Delivery {
            log: Vec::new(),
            ..d.clone()
        }))
    }
}
