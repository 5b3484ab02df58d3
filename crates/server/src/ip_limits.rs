//! Per-client-IP request rate for unauthenticated traffic: every `/v1` request in dev mode (no keys), and
//! every request that fails authentication when keys are configured. A token bucket per IP (capacity
//! `burst`, refilled at `requests_per_second`) answers `429 rate_limited` with `Retry-After`.
//!
//! The table is bounded by `max_clients`: when it is full, entries that sat idle long enough to refill
//! completely are dropped (forgetting them changes nothing: a new bucket starts full), at most once a
//! second; if none is idle, clients not in the table share one overflow bucket. So a flood from many
//! addresses can neither grow memory without limit nor get a fresh bucket per address.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorCode};

/// The default bound of the per-IP table.
pub const DEFAULT_MAX_CLIENTS: usize = 10_000;

/// How often a full table is swept for idle entries at most.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// The per-IP limit of unauthenticated requests. Off unless `requests_per_second` is set.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IpLimits {
    /// Sustained unauthenticated requests per second per client IP.
    #[serde(default)]
    pub requests_per_second: Option<f64>,
    /// Requests allowed in a burst (the bucket's capacity; default one second's worth, at least 1).
    #[serde(default)]
    pub burst: Option<u32>,
    /// Client IPs tracked at once (default [`DEFAULT_MAX_CLIENTS`]).
    #[serde(default)]
    pub max_clients: Option<usize>,
}

impl IpLimits {
    /// Refuses a non-positive or non-finite rate, a zero burst and a zero table.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(r) = self.requests_per_second
            && !(r.is_finite() && r > 0.0)
        {
            return Err(format!("requests_per_second must be a positive number, got {r}"));
        }
        if self.burst == Some(0) {
            return Err("burst must be at least 1".into());
        }
        if self.max_clients == Some(0) {
            return Err("max_clients must be at least 1".into());
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    /// The tokens at `now` (refilled, capped).
    fn level(&self, now: Instant, rate: f64, capacity: f64) -> f64 {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        (self.tokens + elapsed * rate).min(capacity)
    }

    /// Takes one token, or says how many seconds until there is one.
    fn take(&mut self, now: Instant, rate: f64, capacity: f64) -> Result<(), u64> {
        self.tokens = self.level(now, rate, capacity);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - self.tokens) / rate).ceil().max(1.0) as u64)
        }
    }
}

#[derive(Debug)]
struct Table {
    clients: HashMap<IpAddr, Bucket>,
    overflow: Bucket,
    last_sweep: Option<Instant>,
}

/// Enforces [`IpLimits`].
#[derive(Debug)]
pub struct IpLimiter {
    rate: Option<f64>,
    capacity: f64,
    max: usize,
    table: Mutex<Table>,
    limited: AtomicU64,
}

impl IpLimiter {
    /// A limiter for `limits` (inactive without a rate).
    pub fn new(limits: IpLimits) -> Self {
        let rate = limits.requests_per_second.filter(|r| r.is_finite() && *r > 0.0);
        let capacity = f64::from(
            limits
                .burst
                .unwrap_or_else(|| rate.map_or(1.0, |r| r.ceil().max(1.0)) as u32)
                .max(1),
        );
        let now = Instant::now();
        IpLimiter {
            rate,
            capacity,
            max: limits.max_clients.unwrap_or(DEFAULT_MAX_CLIENTS).max(1),
            table: Mutex::new(Table {
                clients: HashMap::new(),
                overflow: Bucket {
                    tokens: capacity,
                    at: now,
                },
                last_sweep: None,
            }),
            limited: AtomicU64::new(0),
        }
    }

    /// True when a rate is configured.
    pub fn active(&self) -> bool {
        self.rate.is_some()
    }

    /// Takes one request token of `ip`; `429 rate_limited` with `Retry-After` when it has none.
    pub fn admit(&self, ip: IpAddr) -> Result<(), ApiError> {
        self.admit_at(ip, Instant::now())
    }

    /// [`admit`](Self::admit) at a given instant (for tests of refill and eviction).
    pub fn admit_at(&self, ip: IpAddr, now: Instant) -> Result<(), ApiError> {
        let Some(rate) = self.rate else {
            return Ok(());
        };
        let capacity = self.capacity;
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        let known = table.clients.contains_key(&ip);
        if !known
            && table.clients.len() >= self.max
            && table
                .last_sweep
                .is_none_or(|t| now.saturating_duration_since(t) >= SWEEP_EVERY)
        {
            table
                .clients
                .retain(|_, b| b.level(now, rate, capacity) < capacity);
            table.last_sweep = Some(now);
        }
        let bucket = if known || table.clients.len() < self.max {
            table.clients.entry(ip).or_insert(Bucket {
                tokens: capacity,
                at: now,
            })
        } else {
            &mut table.overflow
        };
        bucket.take(now, rate, capacity).map_err(|wait| {
            self.limited.fetch_add(1, Ordering::Relaxed);
            ApiError::too_many(ErrorCode::RateLimited,
                format!(
                    "more than {rate} unauthenticated requests per second from this address (burst {capacity})"
                ),
                wait,
            )
        })
    }

    /// Requests refused so far.
    pub fn limited(&self) -> u64 {
        self.limited.load(Ordering::Relaxed)
    }

    /// The `/metrics` lines: requests refused, addresses tracked.
    pub fn render(&self) -> String {
        format!(
            "# HELP agent_adaptor_ip_rate_limited_total Unauthenticated requests refused by the per-IP limit.\n\
             # TYPE agent_adaptor_ip_rate_limited_total counter\n\
             agent_adaptor_ip_rate_limited_total {}\n\
             # HELP agent_adaptor_ip_clients_tracked Client addresses in the per-IP limit's table.\n\
             # TYPE agent_adaptor_ip_clients_tracked gauge\n\
             agent_adaptor_ip_clients_tracked {}\n",
            self.limited(),
            self.tracked()
        )
    }

    /// Client IPs tracked now.
    pub fn tracked(&self) -> usize {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).clients.len()
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn ip(n: u32) -> IpAddr {
        IpAddr::V4(Ipv4Addr::from(n))
    }

    fn limiter(rps: f64, burst: u32, max: usize) -> IpLimiter {
        IpLimiter::new(IpLimits {
            requests_per_second: Some(rps),
            burst: Some(burst),
            max_clients: Some(max),
        })
    }

    #[test]
    fn each_address_has_its_own_bucket_and_is_told_when_to_retry() {
        let l = limiter(0.5, 2, 100);
        let t0 = Instant::now();
        assert!(l.admit_at(ip(1), t0).is_ok());
        assert!(l.admit_at(ip(1), t0).is_ok());
        let e = l.admit_at(ip(1), t0).unwrap_err();
        assert_eq!(
            (e.status().as_u16(), e.code, e.retry_after),
            (429, ErrorCode::RateLimited, Some(2))
        );
        assert!(l.admit_at(ip(2), t0).is_ok(), "buckets are per address");
        assert!(l.admit_at(ip(1), t0 + Duration::from_secs(2)).is_ok(), "refilled");
    }

    #[test]
    fn without_a_rate_nothing_is_limited_or_tracked() {
        let l = IpLimiter::new(IpLimits::default());
        assert!(!l.active());
        for n in 0..1000 {
            assert!(l.admit(ip(n)).is_ok());
        }
        assert_eq!(l.tracked(), 0);
    }

    #[test]
    fn a_flood_of_addresses_stays_within_the_table_and_shares_the_overflow_bucket() {
        let l = limiter(1.0, 1, 64);
        let t0 = Instant::now();
        let mut admitted = 0;
        for n in 0..100_000 {
            if l.admit_at(ip(n), t0).is_ok() {
                admitted += 1;
            }
        }
        assert_eq!(l.tracked(), 64, "the table never grows past max_clients");
        assert_eq!(admitted, 64 + 1, "past the table, addresses share one bucket");
    }

    #[test]
    fn idle_entries_are_evicted_when_the_table_is_full() {
        let l = limiter(10.0, 1, 2);
        let t0 = Instant::now();
        assert!(l.admit_at(ip(1), t0).is_ok());
        assert!(l.admit_at(ip(2), t0).is_ok());
        // A second later both buckets are full again (idle): a new address takes a slot of its own.
        let t1 = t0 + Duration::from_secs(1);
        assert!(l.admit_at(ip(3), t1).is_ok());
        assert!(l.tracked() <= 2);
        assert!(
            l.admit_at(ip(4), t1).is_ok(),
            "the sweep freed room for more than one"
        );
        assert!(
            l.admit_at(ip(4), t1).is_err(),
            "and ip 4 has its own (now empty) bucket"
        );
    }
}
