//! Per-tenant limits: concurrent active runs and a request-rate token bucket, both answered with
//! `429` + `Retry-After` in the one JSON error shape.
//!
//! [`Limits`] is the configuration (service defaults, overridden field by field per tenant). [`Limiter`]
//! enforces it: [`Limiter::admit_request`] takes a token from the tenant's bucket (capacity `burst`,
//! refilled at `requests_per_second`), [`Limiter::acquire_run`] hands out a [`RunSlot`] that the run holds
//! until its pump finishes (parked runs count: they hold a child process). A slot also carries its
//! run's log budget ([`RunBudget`]: `max_run_events`, `max_run_log_bytes`), which the pump charges.
//! Across tenants, [`Limiter::with_max_active`] bounds the slots held at once (`[processes]
//! max_active`): past it a run is refused `503 capacity_exhausted`, after the tenant's own `429`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::auth::TenantSpec;
use super::error::{ApiError, ErrorCode};

/// Limits of one tenant. `None` means unlimited (or, in a tenant's override, "the service default").
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Runs active at once (running or parked on an approval).
    #[serde(default)]
    pub max_concurrent_runs: Option<u32>,
    /// Sustained `/v1/*` requests per second.
    #[serde(default)]
    pub requests_per_second: Option<f64>,
    /// Requests allowed in a burst above the sustained rate (the bucket's capacity; default: one
    /// second's worth, at least 1).
    #[serde(default)]
    pub burst: Option<u32>,
    /// Events one run may record (default [`DEFAULT_MAX_RUN_EVENTS`]; `0` lifts the bound). A run that
    /// goes past it is stopped as `limit_exceeded` (`details.code = run_events_exceeded`).
    #[serde(default)]
    pub max_run_events: Option<u64>,
    /// Bytes of event JSON one run may record (default [`DEFAULT_MAX_RUN_LOG_BYTES`]; `0` lifts the
    /// bound); past it the run is stopped as `limit_exceeded` (`run_log_bytes_exceeded`).
    #[serde(default)]
    pub max_run_log_bytes: Option<u64>,
    /// Standbys open at once (default [`DEFAULT_MAX_STANDBYS`]; `0` lifts the bound); past it opening
    /// one answers `429 too_many_standbys`. Each open Standby also holds one of `max_concurrent_runs`.
    #[serde(default)]
    pub max_standbys: Option<u32>,
}

/// Events a run may record when no `max_run_events` is configured.
pub const DEFAULT_MAX_RUN_EVENTS: u64 = 200_000;
/// Standbys a tenant may hold open when no `max_standbys` is configured.
pub const DEFAULT_MAX_STANDBYS: u32 = 64;
/// Bytes of event JSON a run may record when no `max_run_log_bytes` is configured (128 MiB).
pub const DEFAULT_MAX_RUN_LOG_BYTES: u64 = 128 * 1024 * 1024;

impl Limits {
    /// `self`, with the fields `over` sets replaced.
    pub fn overlay(&self, over: &Limits) -> Limits {
        Limits {
            max_concurrent_runs: over.max_concurrent_runs.or(self.max_concurrent_runs),
            requests_per_second: over.requests_per_second.or(self.requests_per_second),
            burst: over.burst.or(self.burst),
            max_run_events: over.max_run_events.or(self.max_run_events),
            max_run_log_bytes: over.max_run_log_bytes.or(self.max_run_log_bytes),
            max_standbys: over.max_standbys.or(self.max_standbys),
        }
    }

    /// The Standbys a tenant may hold open (`None`: no bound).
    pub fn standby_bound(&self) -> Option<u32> {
        match self.max_standbys.unwrap_or(DEFAULT_MAX_STANDBYS) {
            0 => None,
            n => Some(n),
        }
    }

    /// Refuses a non-positive or non-finite rate and a zero burst.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(r) = self.requests_per_second
            && !(r.is_finite() && r > 0.0)
        {
            return Err(format!("requests_per_second must be a positive number, got {r}"));
        }
        if self.burst == Some(0) {
            return Err("burst must be at least 1".into());
        }
        Ok(())
    }
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// Enforces [`Limits`] per tenant.
#[derive(Debug, Default)]
pub struct Limiter {
    defaults: Limits,
    per_tenant: RwLock<HashMap<String, Limits>>,
    buckets: Mutex<HashMap<String, Bucket>>,
    active: Mutex<HashMap<String, u32>>,
    /// Slots held at once across tenants (`None`: unbounded).
    max_active: Option<usize>,
    /// Runs refused for capacity.
    refused: AtomicU64,
}

impl Limiter {
    /// A limiter with `defaults`, overridden per tenant by each [`TenantSpec::limits`].
    pub fn new(defaults: Limits, tenants: &[TenantSpec]) -> Self {
        Limiter {
            defaults,
            per_tenant: RwLock::new(Self::overlays(defaults, tenants)),
            ..Default::default()
        }
    }

    fn overlays(defaults: Limits, tenants: &[TenantSpec]) -> HashMap<String, Limits> {
        tenants
            .iter()
            .map(|t| (t.name.clone(), defaults.overlay(&t.limits)))
            .collect()
    }

    /// Bounds the slots held at once across tenants to `max` (at least 1).
    pub fn with_max_active(mut self, max: usize) -> Self {
        self.max_active = Some(max.max(1));
        self
    }

    /// The bound on slots across tenants (`None`: unbounded).
    pub fn max_active(&self) -> Option<usize> {
        self.max_active
    }

    /// Slots held now across tenants.
    pub fn total_active(&self) -> usize {
        let active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        active.values().map(|n| *n as usize).sum()
    }

    /// True when every slot across tenants is held (`/readyz` answers 503).
    pub fn is_full(&self) -> bool {
        self.max_active.is_some_and(|max| self.total_active() >= max)
    }

    /// Runs refused `503 capacity_exhausted` so far.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Replaces the per-tenant overrides (a reload). Buckets and active-run counts are kept: a tenant
    /// that stays keeps its place, and a removed tenant's running runs still release their slots.
    pub fn set_tenants(&self, tenants: &[TenantSpec]) {
        let next = Self::overlays(self.defaults, tenants);
        *self.per_tenant.write().unwrap_or_else(|p| p.into_inner()) = next;
    }

    /// The limits of `tenant`.
    pub fn limits_of(&self, tenant: &str) -> Limits {
        self.per_tenant
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(tenant)
            .copied()
            .unwrap_or(self.defaults)
    }

    /// Takes one request token of `tenant`; `429 rate_limited` with the seconds until the next token.
    pub fn admit_request(&self, tenant: &str) -> Result<(), ApiError> {
        let limits = self.limits_of(tenant);
        let Some(rate) = limits.requests_per_second.filter(|r| r.is_finite() && *r > 0.0) else {
            return Ok(());
        };
        let capacity = f64::from(limits.burst.unwrap_or_else(|| rate.ceil().max(1.0) as u32).max(1));
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let b = buckets.entry(tenant.to_owned()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let elapsed = now.saturating_duration_since(b.at).as_secs_f64();
        b.tokens = (b.tokens + elapsed * rate).min(capacity);
        b.at = now;
        if b.tokens >= 1.0 {
            b.tokens -= 1.0;
            return Ok(());
        }
        let wait = ((1.0 - b.tokens) / rate).ceil() as u64;
        Err(ApiError::too_many(
            ErrorCode::RateLimited,
            format!("more than {rate} requests per second (burst {capacity})"),
            wait,
        ))
    }

    /// Admits one more active run of `tenant`; `429 too_many_runs` at the tenant's limit, then
    /// `503 capacity_exhausted` when the process holds `max_active` slots. The slot is released when
    /// the returned [`RunSlot`] drops.
    pub fn acquire_run(self: &Arc<Self>, tenant: &str) -> Result<RunSlot, ApiError> {
        let max = self.limits_of(tenant).max_concurrent_runs;
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        let mine = active.get(tenant).copied().unwrap_or(0);
        if let Some(max) = max
            && mine >= max
        {
            return Err(ApiError::too_many(
                ErrorCode::TooManyRuns,
                format!("{max} run(s) already active for this tenant"),
                1,
            ));
        }
        if let Some(cap) = self.max_active {
            let total: usize = active.values().map(|n| *n as usize).sum();
            if total >= cap {
                self.refused.fetch_add(1, Ordering::Relaxed);
                return Err(ApiError::capacity_exhausted(cap));
            }
        }
        *active.entry(tenant.to_owned()).or_insert(0) += 1;
        Ok(RunSlot {
            limiter: self.clone(),
            tenant: tenant.to_owned(),
        })
    }

    /// Runs of `tenant` holding a slot now.
    pub fn active_runs(&self, tenant: &str) -> u32 {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(tenant)
            .copied()
            .unwrap_or(0)
    }
}

/// What one run may still record: its tenant's `max_run_events` and `max_run_log_bytes`, charged by
/// the run's pump as it records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunBudget {
    max_events: Option<u64>,
    max_bytes: Option<u64>,
    events: u64,
    bytes: u64,
    spent: bool,
}

impl Default for RunBudget {
    fn default() -> Self {
        RunBudget::of(&Limits::default())
    }
}

/// Which bound a run went past, with the bound (for the run's `limit_exceeded` failure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overrun {
    /// More events than `max_run_events`.
    Events(u64),
    /// More event bytes than `max_run_log_bytes`.
    Bytes(u64),
}

impl Overrun {
    /// The `details.code` of the run's failure.
    pub fn code(self) -> &'static str {
        match self {
            Overrun::Events(_) => "run_events_exceeded",
            Overrun::Bytes(_) => "run_log_bytes_exceeded",
        }
    }

    /// The failure message.
    pub fn message(self) -> String {
        match self {
            Overrun::Events(n) => format!("the run recorded more than {n} events (max_run_events)"),
            Overrun::Bytes(n) => {
                format!("the run recorded more than {n} bytes of events (max_run_log_bytes)")
            }
        }
    }
}

impl RunBudget {
    /// The budget `limits` give one run (defaults where unset, `0` unbounded).
    pub fn of(limits: &Limits) -> Self {
        let bound = |v: Option<u64>, default| match v.unwrap_or(default) {
            0 => None,
            n => Some(n),
        };
        RunBudget {
            max_events: bound(limits.max_run_events, DEFAULT_MAX_RUN_EVENTS),
            max_bytes: bound(limits.max_run_log_bytes, DEFAULT_MAX_RUN_LOG_BYTES),
            events: 0,
            bytes: 0,
            spent: false,
        }
    }

    /// Charges `events` events of `bytes` bytes; the first call past a bound answers which one (later
    /// calls answer `None`: the run is being stopped, its terminal events still have to be recorded).
    pub fn charge(&mut self, events: usize, bytes: usize) -> Option<Overrun> {
        self.events = self.events.saturating_add(events as u64);
        self.bytes = self.bytes.saturating_add(bytes as u64);
        if self.spent {
            return None;
        }
        let over = match (self.max_events, self.max_bytes) {
            (Some(max), _) if self.events > max => Overrun::Events(max),
            (_, Some(max)) if self.bytes > max => Overrun::Bytes(max),
            _ => return None,
        };
        self.spent = true;
        Some(over)
    }
}

/// One admitted active run; dropping it frees the slot.
#[derive(Debug)]
pub struct RunSlot {
    limiter: Arc<Limiter>,
    tenant: String,
}

impl RunSlot {
    /// The log budget of the slot's run (its tenant's limits).
    pub fn budget(&self) -> RunBudget {
        RunBudget::of(&self.limiter.limits_of(&self.tenant))
    }
}

impl Drop for RunSlot {
    fn drop(&mut self) {
        let mut active = self.limiter.active.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = active.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refuses_beyond_its_burst_and_says_when_to_retry() {
        let l = Limiter::new(
            Limits {
                requests_per_second: Some(0.5),
                burst: Some(2),
                ..Default::default()
            },
            &[],
        );
        assert!(l.admit_request("t").is_ok());
        assert!(l.admit_request("t").is_ok());
        let e = l.admit_request("t").unwrap_err();
        assert_eq!(e.status().as_u16(), 429);
        assert_eq!(e.retry_after, Some(2));
        assert!(l.admit_request("other").is_ok(), "buckets are per tenant");
    }

    #[test]
    fn a_run_budget_answers_once_past_its_bound() {
        let mut b = RunBudget::of(&Limits {
            max_run_events: Some(3),
            max_run_log_bytes: Some(0),
            ..Default::default()
        });
        assert_eq!(b.charge(3, 10_000_000_000), None);
        assert_eq!(b.charge(1, 1), Some(Overrun::Events(3)));
        assert_eq!(b.charge(1, 1), None, "answered once");
        let mut b = RunBudget::of(&Limits {
            max_run_log_bytes: Some(100),
            ..Default::default()
        });
        assert_eq!(b.charge(1, 101), Some(Overrun::Bytes(100)));
        assert_eq!(RunBudget::default().max_events, Some(DEFAULT_MAX_RUN_EVENTS));
    }

    #[test]
    fn run_slots_are_counted_and_released_on_drop() {
        let l = Arc::new(Limiter::new(
            Limits {
                max_concurrent_runs: Some(1),
                ..Default::default()
            },
            &[TenantSpec::new("big").limits(Limits {
                max_concurrent_runs: Some(3),
                ..Default::default()
            })],
        ));
        let a = l.acquire_run("t").unwrap();
        assert_eq!(l.acquire_run("t").unwrap_err().code, ErrorCode::TooManyRuns);
        drop(a);
        assert!(l.acquire_run("t").is_ok());
        let held: Vec<_> = (0..3).map(|_| l.acquire_run("big").unwrap()).collect();
        assert_eq!(l.active_runs("big"), 3);
        assert!(l.acquire_run("big").is_err());
        drop(held);
        assert_eq!(l.active_runs("big"), 0);
    }

    #[test]
    fn max_active_refuses_across_tenants_after_the_tenants_own_limit() {
        let l = Arc::new(
            Limiter::new(
                Limits {
                    max_concurrent_runs: Some(1),
                    ..Default::default()
                },
                &[],
            )
            .with_max_active(2),
        );
        let a = l.acquire_run("a").unwrap();
        assert_eq!(
            l.acquire_run("a").unwrap_err().code.as_str(),
            "too_many_runs",
            "429 first"
        );
        let b = l.acquire_run("b").unwrap();
        assert!(l.is_full());
        let e = l.acquire_run("c").unwrap_err();
        assert_eq!(
            (e.status().as_u16(), e.code.as_str(), e.retry_after),
            (503, "capacity_exhausted", Some(5))
        );
        assert_eq!(l.acquire_run("a").unwrap_err().code.as_str(), "too_many_runs");
        assert_eq!(l.refused(), 1);
        drop(a);
        assert!(!l.is_full());
        assert!(l.acquire_run("c").is_ok());
        drop(b);
    }
}
