//! Webhooks: per-tenant subscriptions notified when a run ends, fails, asks for approval, or a
//! supplemental message fails — signed per the Standard Webhooks specification, delivered from a
//! durable outbox in the store, retried with exponential backoff and jitter, each attempt logged.
//!
//! | file | owns |
//! |---|---|
//! | `settings` | `[webhooks]`: attempts, backoff, timeout, polling, the private-target policy |
//! | `sign` | secrets (`whsec_…`) and the `webhook-signature` HMAC |
//! | `target` | which URLs a subscription may name and which addresses an attempt may reach |
//! | `deliver` | the worker: due deliveries claimed, posted, their attempts recorded |
//! | `routes` | `/v1/webhooks`: create, list, get, delete, the delivery log, retry |
//!
//! [`Webhooks::emit`] turns an event into one delivery per subscription of the tenant that wants its
//! type (the body built once: every subscription gets the same bytes and `webhook-id`), stored before
//! the worker is woken, so a restart loses nothing enqueued. Order: deliveries go out by due time,
//! earliest first, several at once; nothing orders two deliveries of one subscription (a receiver
//! orders by the body's `created_at` and deduplicates by `webhook-id`).

mod deliver;
pub mod routes;
pub mod settings;
pub mod sign;
pub mod target;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::SecondsFormat;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::store::webhooks::NewDelivery;
use crate::store::{ThreadStore, WebhookStore};
pub use settings::{WebhookSettings, WebhooksFile};

/// The event types a subscription may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Every run that reaches a terminal state, with that state.
    RunFinished,
    /// A run that ended `failed` or `interrupted` (sent besides `run.finished`).
    RunFailed,
    /// A run asks a human for approval.
    ApprovalRequested,
    /// A supplemental (or Standby) message will not be delivered.
    MessageFailed,
}

impl EventType {
    /// Every type, in documentation order.
    pub const ALL: [EventType; 4] = [
        EventType::RunFinished,
        EventType::RunFailed,
        EventType::ApprovalRequested,
        EventType::MessageFailed,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::RunFinished => "run.finished",
            EventType::RunFailed => "run.failed",
            EventType::ApprovalRequested => "approval.requested",
            EventType::MessageFailed => "message.failed",
        }
    }

    /// The type a wire name names.
    pub fn parse(s: &str) -> Option<Self> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// Delivery counters for `/metrics`.
#[derive(Debug, Default)]
pub struct WebhookMetrics {
    /// Deliveries enqueued.
    pub enqueued: AtomicU64,
    /// Attempts answered 2xx.
    pub delivered: AtomicU64,
    /// Failed attempts that will be retried.
    pub retried: AtomicU64,
    /// Deliveries given up (attempts exhausted, or a refused target).
    pub failed: AtomicU64,
}

/// The service's webhooks: the store's subscriptions and outbox, the settings, the worker's wake-up.
pub struct Webhooks {
    store: Option<Arc<dyn WebhookStore>>,
    settings: WebhookSettings,
    allow_private: bool,
    wake: Notify,
    /// Counters.
    pub metrics: WebhookMetrics,
}

impl std::fmt::Debug for Webhooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Webhooks {
    /// The webhooks of `store` (none when it keeps none) under `settings`; `keyed` says whether API
    /// keys are configured (private targets are then refused unless the settings allow them).
    pub fn new(store: &Arc<dyn ThreadStore>, settings: WebhookSettings, keyed: bool) -> Self {
        let allow_private = settings.allow_private_targets.unwrap_or(!keyed);
        Webhooks {
            store: store.webhooks(),
            settings,
            allow_private,
            wake: Notify::new(),
            metrics: WebhookMetrics::default(),
        }
    }

    /// The store's webhook side, if it has one.
    pub fn store(&self) -> Option<&Arc<dyn WebhookStore>> {
        self.store.as_ref()
    }

    /// Whether deliveries may reach non-public addresses.
    pub fn allows_private_targets(&self) -> bool {
        self.allow_private
    }

    /// Enqueues `event` with `data` for every subscription of `tenant` that wants it, then wakes the
    /// worker; returns how many deliveries were enqueued. A store failure is logged (the event is lost
    /// for webhooks, never for the run).
    pub async fn emit(&self, tenant: &str, event: EventType, data: Value) -> usize {
        let Some(store) = &self.store else {
            return 0;
        };
        let subs = match store.list_webhooks(Some(tenant)).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, event = event.as_str(), "could not list webhooks; event not sent");
                return 0;
            }
        };
        let wanted: Vec<_> = subs
            .into_iter()
            .filter(|s| s.events.iter().any(|e| e == event.as_str()))
            .collect();
        if wanted.is_empty() {
            return 0;
        }
        let now = crate::store::now();
        let event_id = format!("evt_{}", uuid::Uuid::now_v7().simple());
        let body = json!({
            "id": event_id,
            "type": event.as_str(),
            "created_at": now.to_rfc3339_opts(SecondsFormat::Micros, true),
            "tenant": tenant,
            "data": data,
        })
        .to_string();
        let deliveries: Vec<NewDelivery> = wanted
            .iter()
            .map(|s| NewDelivery {
                id: format!("dlv_{}", uuid::Uuid::now_v7().simple()),
                webhook_id: s.id.clone(),
                tenant: tenant.to_owned(),
                event_id: event_id.clone(),
                event_type: event.as_str().to_owned(),
                payload: body.clone(),
                created_at: now,
            })
            .collect();
        if let Err(e) = store.enqueue(&deliveries).await {
            tracing::warn!(error = %e, event = event.as_str(), "could not enqueue webhook deliveries");
            return 0;
        }
        self.metrics
            .enqueued
            .fetch_add(deliveries.len() as u64, Ordering::Relaxed);
        self.wake.notify_one();
        deliveries.len()
    }

    /// Wakes the worker (a delivery was re-armed).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Starts the delivery worker until `shutdown` (none when delivery is off or the store keeps no
    /// webhooks).
    pub fn spawn(
        self: &Arc<Self>,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> Option<tokio::task::JoinHandle<()>> {
        if !self.settings.enabled || self.store.is_none() {
            return None;
        }
        Some(tokio::spawn(deliver::run(self.clone(), shutdown)))
    }

    /// The counters in the Prometheus text format.
    pub fn render(&self) -> String {
        let m = &self.metrics;
        format!(
            "# HELP agent_adaptor_webhook_deliveries_enqueued_total Webhook deliveries enqueued.\n\
             # TYPE agent_adaptor_webhook_deliveries_enqueued_total counter\n\
             agent_adaptor_webhook_deliveries_enqueued_total {}\n\
             # HELP agent_adaptor_webhook_attempts_total Webhook delivery attempts by outcome (delivered: 2xx; \
             retried: failed, to be retried; failed: failed, given up).\n\
             # TYPE agent_adaptor_webhook_attempts_total counter\n\
             agent_adaptor_webhook_attempts_total{{outcome=\"delivered\"}} {}\n\
             agent_adaptor_webhook_attempts_total{{outcome=\"retried\"}} {}\n\
             agent_adaptor_webhook_attempts_total{{outcome=\"failed\"}} {}\n",
            m.enqueued.load(Ordering::Relaxed),
            m.delivered.load(Ordering::Relaxed),
            m.retried.load(Ordering::Relaxed),
            m.failed.load(Ordering::Relaxed),
        )
    }
}

/// The `data` of a run's `run.finished` / `run.failed`: ids, state, and the error's code, reason and
/// message (never its details, nor the run's output: the exposure policy decides what a reader of the
/// log sees, a webhook says only that something happened).
pub fn run_data(
    run_id: &str,
    agent: &str,
    thread_key: Option<&str>,
    state: &str,
    error: Option<&Value>,
) -> Value {
    let mut data = json!({
        "run_id": run_id,
        "agent": agent,
        "thread_key": thread_key,
        "state": state,
    });
    if let Some(e) = error {
        let pick = |k: &str| e.get(k).cloned().unwrap_or(Value::Null);
        data["error"] = json!({"code": pick("code"), "reason": pick("reason"), "message": pick("message")});
    }
    data
}
