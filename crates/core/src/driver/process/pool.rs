//! [`ProcessPool`]: persistent provider processes kept per thread, for drivers whose CLI can run
//! several turns in one process (Codex `app-server`, Claude's stream-json input).
//!
//! The pool never spawns: the driver spawns through [`spawn`](super::spawn) as always and hands the
//! value owning the [`Child`] to the pool between runs. The rules:
//!
//! - **Keyed by thread.** A [`PoolKey`] is the tenant plus the host's thread key; direct (thread-less)
//!   runs never use the pool.
//! - **One writer.** [`ProcessPool::checkout`] leases the key's process to one run: the value leaves
//!   the pool and belongs to that run until [`Lease::release`]. A second checkout of a leased key does
//!   **not wait**: it gets a one-off lease (a fresh process that is never kept), and the leased process
//!   is marked stale, so neither process can be reused after a turn it did not see. (The runtime's
//!   thread lease already serializes runs of one thread; this is the backstop, and it never blocks.)
//! - **Signature.** Every process is kept under a signature (argv + env + configuration
//!   fingerprint, computed by the driver). A checkout with another signature stops and reaps the
//!   kept process first and gets a cold lease: the driver spawns a new one.
//! - **Forced spawn** (`WithSpawn`): the key's idle process is stopped and the run gets a one-off
//!   lease, so no process that missed the run's turn stays registered.
//! - **Idle eviction.** A process idle for longer than the idle timeout is stopped and reaped by a
//!   timer; a kept process found dead at checkout is discarded.
//! - **Capped.** Idle processes count against a [`KeptLimit`] shared by every pool (by default
//!   [`KeptLimit::global`]); keeping one past its cap stops the least recently kept idle process of
//!   any pool, whose thread resumes in a fresh process on its next run.
//! - **Never replay.** The pool only hands out processes; whether a run may fall back to a fresh
//!   process is the driver's call, and once a byte of a prompt was written it must not (a process
//!   that failed mid-turn is released unhealthy, which stops it, and the failure is reported).
//! - **Close.** [`ProcessPool::close`] stops and reaps every idle process, and leases released after
//!   it stop theirs; nothing is kept after close. Dropping the pool drops the idle values, whose
//!   [`Child`] drop kills their process groups.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use futures::future::BoxFuture;

use super::child::Child;
use super::kept::{Evict, KeptLimit};
use super::stop::{ExitInfo, StopPlan};

/// Default idle time after which a kept process is stopped.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// A value the pool can keep: it owns one child process.
pub trait Pooled: Send + 'static {
    /// The child process.
    fn child(&self) -> &Child;

    /// How to stop it (default: SIGTERM, then SIGKILL after `grace`). Override to add a polite
    /// protocol step such as closing stdin.
    fn stop_plan(&self, grace: Duration) -> StopPlan {
        StopPlan::new().term_grace(grace)
    }
}

/// The key of one kept process: tenant + thread key.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PoolKey(String);

impl PoolKey {
    /// The key of `thread` for `tenant`.
    pub fn new(tenant: &str, thread: &str) -> Self {
        // Length-prefixed, so no tenant/thread pair can collide with another.
        PoolKey(format!("{}:{tenant}{thread}", tenant.len()))
    }
}

/// What a checkout found.
pub enum Taken<T> {
    /// A kept, live process with the same signature, leased to this run.
    Warm(T, Lease<T>),
    /// Nothing usable: spawn a process and release it through the lease.
    Cold(Lease<T>),
}

impl<T> fmt::Debug for Taken<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Taken::Warm(_, l) => f.debug_tuple("Warm").field(l).finish(),
            Taken::Cold(l) => f.debug_tuple("Cold").field(l).finish(),
        }
    }
}

enum Slot<T> {
    Idle {
        value: T,
        signature: String,
        generation: u64,
    },
    Leased {
        generation: u64,
        /// Another run wrote to this thread through another process meanwhile.
        stale: bool,
    },
}

struct Inner<T> {
    /// Unique among pools, for the [`KeptLimit`]'s entries.
    id: u64,
    limit: KeptLimit,
    slots: Mutex<HashMap<PoolKey, Slot<T>>>,
    idle_timeout: Duration,
    grace: Duration,
    closed: AtomicBool,
    shutdown: CancellationToken,
    generation: AtomicU64,
}

impl<T> Inner<T> {
    fn lock(&self) -> MutexGuard<'_, HashMap<PoolKey, Slot<T>>> {
        // Nothing panics while holding the lock; recover the data if something ever did.
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn next_generation(&self) -> u64 {
        self.generation.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Tells the limit that `slot` (just removed from the map, under its lock) is no longer kept.
    fn forget(&self, slot: &Slot<T>) {
        if let Slot::Idle { generation, .. } = slot {
            self.limit.forget(self.id, *generation);
        }
    }
}

impl<T: Pooled> Evict for Inner<T> {
    fn evict(&self, key: &PoolKey, generation: u64) -> Option<BoxFuture<'static, ()>> {
        let value = {
            let mut slots = self.lock();
            if !matches!(slots.get(key), Some(Slot::Idle { generation: g, .. }) if *g == generation) {
                return None;
            }
            match slots.remove(key) {
                Some(Slot::Idle { value, .. }) => value,
                _ => return None,
            }
        };
        let grace = self.grace;
        Some(Box::pin(async move {
            let exit = stop(value, grace).await;
            tracing::debug!(?exit, "evicted a kept process over the cap");
        }))
    }
}

/// Distinguishes pools in the [`KeptLimit`].
static POOL_IDS: AtomicU64 = AtomicU64::new(0);

/// Cloneable pool of persistent processes; see the module docs.
pub struct ProcessPool<T> {
    inner: Arc<Inner<T>>,
}

impl<T> Clone for ProcessPool<T> {
    fn clone(&self) -> Self {
        ProcessPool {
            inner: self.inner.clone(),
        }
    }
}

impl<T> fmt::Debug for ProcessPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessPool")
            .field("idle_timeout", &self.inner.idle_timeout)
            .field("kept", &self.inner.lock().len())
            .field("closed", &self.inner.closed.load(Ordering::Acquire))
            .finish()
    }
}

/// A run's claim on a key; see [`ProcessPool::checkout`].
pub struct Lease<T> {
    pool: Weak<Inner<T>>,
    /// `None`: a one-off lease, whose process is never kept.
    key: Option<PoolKey>,
    signature: String,
    generation: u64,
    done: bool,
}

impl<T> fmt::Debug for Lease<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lease")
            .field("key", &self.key)
            .field("generation", &self.generation)
            .finish()
    }
}

impl<T: Pooled> ProcessPool<T> {
    /// An empty pool whose processes are stopped after `idle_timeout` without a run, each with
    /// `grace` between the stop steps, capped by [`KeptLimit::global`].
    pub fn new(idle_timeout: Duration, grace: Duration) -> Self {
        Self::with_limit(idle_timeout, grace, KeptLimit::global().clone())
    }

    /// [`new`](Self::new) with its own `limit` (shared with the pools given the same one).
    pub fn with_limit(idle_timeout: Duration, grace: Duration, limit: KeptLimit) -> Self {
        ProcessPool {
            inner: Arc::new(Inner {
                id: POOL_IDS.fetch_add(1, Ordering::Relaxed),
                limit,
                slots: Mutex::new(HashMap::new()),
                idle_timeout,
                grace,
                closed: AtomicBool::new(false),
                shutdown: CancellationToken::new(),
                generation: AtomicU64::new(0),
            }),
        }
    }

    /// How many processes are kept and idle.
    pub fn idle_count(&self) -> usize {
        self.inner
            .lock()
            .values()
            .filter(|s| matches!(s, Slot::Idle { .. }))
            .count()
    }

    /// The limit this pool's idle processes count against.
    pub fn limit(&self) -> &KeptLimit {
        &self.inner.limit
    }

    /// True once [`close`](Self::close) began.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::Acquire)
    }

    fn one_off(&self, signature: &str) -> Lease<T> {
        Lease {
            pool: Arc::downgrade(&self.inner),
            key: None,
            signature: signature.to_owned(),
            generation: 0,
            done: false,
        }
    }

    /// Marks `key` leased to a new generation and returns the lease that keeps or discards its process.
    fn lease_key(&self, slots: &mut HashMap<PoolKey, Slot<T>>, key: PoolKey, signature: &str) -> Lease<T> {
        let generation = self.inner.next_generation();
        slots.insert(
            key.clone(),
            Slot::Leased {
                generation,
                stale: false,
            },
        );
        Lease {
            pool: Arc::downgrade(&self.inner),
            key: Some(key),
            signature: signature.to_owned(),
            generation,
            done: false,
        }
    }

    /// Leases `key`'s process to one run. `fresh` (the caller's `WithSpawn`) stops the key's idle
    /// process and returns a one-off lease. A kept process with another `signature`, or one that
    /// died while idle, is stopped and reaped before this returns [`Taken::Cold`].
    pub async fn checkout(&self, key: PoolKey, signature: &str, fresh: bool) -> Taken<T> {
        if self.is_closed() {
            return Taken::Cold(self.one_off(signature));
        }
        let (taken, discard) = {
            let mut slots = self.inner.lock();
            let found = slots.remove(&key);
            if let Some(slot) = &found {
                self.inner.forget(slot);
            }
            match found {
                Some(Slot::Leased { generation, .. }) => {
                    // One writer: the current holder must not be kept after this run's turn.
                    slots.insert(
                        key,
                        Slot::Leased {
                            generation,
                            stale: true,
                        },
                    );
                    (Taken::Cold(self.one_off(signature)), None)
                }
                Some(Slot::Idle {
                    value, signature: s, ..
                }) if !fresh && s == signature && value.child().exit_info().is_none() => {
                    let lease = self.lease_key(&mut slots, key, signature);
                    (Taken::Warm(value, lease), None)
                }
                other => {
                    let old = match other {
                        Some(Slot::Idle { value, .. }) => Some(value),
                        _ => None,
                    };
                    if fresh {
                        (Taken::Cold(self.one_off(signature)), old)
                    } else {
                        let lease = self.lease_key(&mut slots, key, signature);
                        (Taken::Cold(lease), old)
                    }
                }
            }
        };
        if let Some(old) = discard {
            stop(old, self.inner.grace).await;
        }
        // From now on the kept process's CPU time is the leasing run's.
        if let Taken::Warm(value, _) = &taken {
            value.child().cpu.attach_current();
        }
        taken
    }

    /// Stops and reaps every idle process, makes later releases stop theirs and later checkouts
    /// one-off. Idempotent. Returns how many processes it stopped.
    pub async fn close(&self) -> usize {
        self.inner.closed.store(true, Ordering::Release);
        self.inner.shutdown.cancel();
        let idle: Vec<T> = {
            let mut slots = self.inner.lock();
            let keys: Vec<PoolKey> = slots
                .iter()
                .filter(|(_, s)| matches!(s, Slot::Idle { .. }))
                .map(|(k, _)| k.clone())
                .collect();
            keys.into_iter()
                .filter_map(|k| match slots.remove(&k) {
                    Some(Slot::Idle {
                        value, generation, ..
                    }) => {
                        self.inner.limit.forget(self.inner.id, generation);
                        Some(value)
                    }
                    _ => None,
                })
                .collect()
        };
        let n = idle.len();
        let grace = self.inner.grace;
        futures::future::join_all(idle.into_iter().map(|v| stop(v, grace))).await;
        n
    }
}

/// Stops `value`'s child with its plan and waits until it is reaped.
async fn stop<T: Pooled>(value: T, grace: Duration) -> ExitInfo {
    let plan = value.stop_plan(grace);
    value.child().stop(plan).await
}

impl<T: Pooled> Lease<T> {
    /// True when a healthy release keeps the process for the key's next run.
    pub fn is_kept(&self) -> bool {
        self.key.is_some()
    }

    /// Ends the run's claim. `healthy` (the run ended cleanly and the process is at a turn
    /// boundary) keeps `value` idle for the key's next run unless the lease is one-off, the key
    /// went stale, or the pool is closed; otherwise the process is stopped and reaped before this
    /// returns, with how it ended. `None` means it was kept.
    pub async fn release(mut self, value: T, healthy: bool) -> Option<ExitInfo> {
        self.done = true;
        let Some(inner) = self.pool.upgrade() else {
            return Some(stop(value, Duration::from_secs(2)).await);
        };
        let grace = inner.grace;
        let Some(key) = self.key.take() else {
            return Some(stop(value, grace).await);
        };
        let keep = {
            let mut slots = inner.lock();
            let mine = matches!(slots.get(&key), Some(Slot::Leased { generation, stale: false }) if *generation == self.generation);
            if matches!(slots.get(&key), Some(Slot::Leased { generation, .. }) if *generation == self.generation)
            {
                slots.remove(&key);
            }
            let alive = value.child().exit_info().is_none();
            if healthy && mine && alive && !inner.closed.load(Ordering::Acquire) {
                // The run's share is charged now; idle time is nobody's.
                value.child().cpu.detach();
                let generation = inner.next_generation();
                slots.insert(
                    key.clone(),
                    Slot::Idle {
                        value,
                        signature: std::mem::take(&mut self.signature),
                        generation,
                    },
                );
                let me: Weak<dyn Evict> = Arc::downgrade(&inner) as Weak<Inner<T>>;
                let victims = inner.limit.keep(me, inner.id, key.clone(), generation);
                Ok((generation, victims))
            } else {
                Err(value)
            }
        };
        match keep {
            Ok((generation, victims)) => {
                let weak = Arc::downgrade(&inner);
                let shutdown = inner.shutdown.clone();
                let idle = inner.idle_timeout;
                tokio::spawn(evict_when_idle(weak, shutdown, key, generation, idle));
                inner.limit.evict(victims).await;
                None
            }
            Err(value) => Some(stop(value, grace).await),
        }
    }
}

impl<T> Drop for Lease<T> {
    fn drop(&mut self) {
        // A lease dropped without release: its value (if any) is dropped by its owner, which kills
        // the group; forget the key so the next checkout is cold.
        if self.done {
            return;
        }
        if let (Some(inner), Some(key)) = (self.pool.upgrade(), self.key.as_ref()) {
            let mut slots = inner.lock();
            if matches!(slots.get(key), Some(Slot::Leased { generation, .. }) if *generation == self.generation)
            {
                slots.remove(key);
            }
        }
    }
}

/// The idle timer of one kept process: after `idle` it is stopped, unless a run took it meanwhile
/// (the generation changed) or the pool closed (close stops it).
async fn evict_when_idle<T: Pooled>(
    pool: Weak<Inner<T>>,
    shutdown: CancellationToken,
    key: PoolKey,
    generation: u64,
    idle: Duration,
) {
    let started = Instant::now();
    tokio::select! {
        () = shutdown.cancelled() => return,
        () = tokio::time::sleep(idle) => {}
    }
    let Some(inner) = pool.upgrade() else { return };
    let grace = inner.grace;
    let value = {
        let mut slots = inner.lock();
        match slots.get(&key) {
            Some(Slot::Idle { generation: g, .. }) if *g == generation => match slots.remove(&key) {
                Some(Slot::Idle { value, .. }) => {
                    inner.limit.forget(inner.id, generation);
                    value
                }
                _ => return,
            },
            _ => return,
        }
    };
    drop(inner);
    let exit = stop(value, grace).await;
    tracing::debug!(?exit, idle = ?started.elapsed(), "evicted an idle persistent process");
}
