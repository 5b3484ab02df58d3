//! The retention background task: applies the store's [`RetentionPolicy`] (events older than a maximum
//! age, each tenant's oldest events beyond a cap) every `interval`, until shutdown, and counts what it did
//! for `/metrics`; and at least hourly, purges the idempotency keys past their keep time.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::store::{RetentionPolicy, ThreadStore};

/// When and what the service deletes from the run event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetentionSettings {
    /// Delete events older than this.
    pub max_age: Option<Duration>,
    /// Keep at most this many events per tenant (the oldest go first).
    pub max_events_per_tenant: Option<u64>,
    /// How often the task runs (the first pass runs one interval after start).
    pub interval: Duration,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        RetentionSettings {
            max_age: None,
            max_events_per_tenant: None,
            interval: Duration::from_secs(3600),
        }
    }
}

impl RetentionSettings {
    /// True when there is something to enforce.
    pub fn is_active(&self) -> bool {
        self.max_age.is_some() || self.max_events_per_tenant.is_some()
    }

    fn policy(&self) -> RetentionPolicy {
        RetentionPolicy {
            max_age: self.max_age,
            max_events_per_tenant: self.max_events_per_tenant,
        }
    }
}

/// What the task did, for `/metrics`.
#[derive(Debug, Default)]
pub struct RetentionMetrics {
    /// Passes run (successful or not).
    pub passes: AtomicU64,
    /// Events deleted, in total.
    pub deleted: AtomicU64,
    /// Passes the store refused, in total.
    pub errors: AtomicU64,
    /// 1 when the last pass failed, else 0.
    pub last_failed: AtomicU64,
    /// When the last pass ended, in milliseconds since the Unix epoch (0: never).
    pub last_run_ms: AtomicI64,
}

impl RetentionMetrics {
    /// The Prometheus text of these counters.
    pub fn render(&self) -> String {
        let last = self.last_run_ms.load(Ordering::Relaxed) as f64 / 1000.0;
        format!(
            "# HELP agent_adaptor_retention_passes_total Retention passes run.\n\
             # TYPE agent_adaptor_retention_passes_total counter\n\
             agent_adaptor_retention_passes_total {}\n\
             # HELP agent_adaptor_retention_deleted_events_total Events deleted by retention.\n\
             # TYPE agent_adaptor_retention_deleted_events_total counter\n\
             agent_adaptor_retention_deleted_events_total {}\n\
             # HELP agent_adaptor_retention_errors_total Retention passes that failed.\n\
             # TYPE agent_adaptor_retention_errors_total counter\n\
             agent_adaptor_retention_errors_total {}\n\
             # HELP agent_adaptor_retention_last_run_failed 1 when the last retention pass failed.\n\
             # TYPE agent_adaptor_retention_last_run_failed gauge\n\
             agent_adaptor_retention_last_run_failed {}\n\
             # HELP agent_adaptor_retention_last_run_timestamp_seconds When the last retention pass ended (0: never).\n\
             # TYPE agent_adaptor_retention_last_run_timestamp_seconds gauge\n\
             agent_adaptor_retention_last_run_timestamp_seconds {last:.3}\n",
            self.passes.load(Ordering::Relaxed),
            self.deleted.load(Ordering::Relaxed),
            self.errors.load(Ordering::Relaxed),
            self.last_failed.load(Ordering::Relaxed),
        )
    }
}

/// One pass: applies the policy and records the outcome in `metrics`.
pub async fn pass(store: &dyn ThreadStore, settings: &RetentionSettings, metrics: &RetentionMetrics) {
    let outcome = store.retention(&settings.policy()).await;
    metrics.passes.fetch_add(1, Ordering::Relaxed);
    match outcome {
        Ok(n) => {
            metrics.deleted.fetch_add(n, Ordering::Relaxed);
            metrics.last_failed.store(0, Ordering::Relaxed);
            if n > 0 {
                tracing::info!(deleted = n, "retention deleted events");
            }
        }
        Err(e) => {
            metrics.errors.fetch_add(1, Ordering::Relaxed);
            metrics.last_failed.store(1, Ordering::Relaxed);
            tracing::warn!(error = %e, "retention failed");
        }
    }
    metrics
        .last_run_ms
        .store(chrono::Utc::now().timestamp_millis(), Ordering::Relaxed);
}

/// How often expired idempotency keys are purged (more often when `interval` is shorter).
pub const KEY_PURGE_INTERVAL: Duration = Duration::from_secs(3600);

/// Deletes the idempotency keys older than their keep time ([`super::idempotency::KEEP`]); returns how
/// many went.
pub async fn purge_keys(store: &dyn ThreadStore) -> Result<u64, crate::store::StoreError> {
    let cutoff = crate::store::now()
        - chrono::TimeDelta::from_std(super::idempotency::KEEP).unwrap_or(chrono::TimeDelta::MAX);
    let n = store.purge_idempotency(cutoff).await?;
    if n > 0 {
        tracing::info!(deleted = n, "retention purged expired idempotency keys");
    }
    Ok(n)
}

/// Spawns the task (unless `interval` is zero): every `interval` it applies the event-log policy when
/// `settings` has something to enforce, and at least hourly it purges expired idempotency keys. It stops
/// when `stop` fires (a pass in progress finishes first).
pub fn spawn(
    store: Arc<dyn ThreadStore>,
    settings: RetentionSettings,
    metrics: Arc<RetentionMetrics>,
    stop: CancellationToken,
) -> Option<JoinHandle<()>> {
    if settings.interval.is_zero() {
        return None;
    }
    let every = settings.interval.min(KEY_PURGE_INTERVAL);
    Some(tokio::spawn(async move {
        let start = tokio::time::Instant::now();
        let mut tick = tokio::time::interval_at(start + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut next_pass = start + settings.interval;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                now = tick.tick() => {
                    if settings.is_active() && now >= next_pass {
                        next_pass = now + settings.interval;
                        pass(store.as_ref(), &settings, &metrics).await;
                    }
                    if let Err(e) = purge_keys(store.as_ref()).await {
                        tracing::warn!(error = %e, "could not purge idempotency keys");
                    }
                }
            }
        }
    }))
}
