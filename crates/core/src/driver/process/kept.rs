//! [`KeptLimit`]: one cap on the processes every [`ProcessPool`](super::ProcessPool) keeps idle
//! between runs, across pools (drivers), least recently used first out.
//!
//! A pool tells its limit when it keeps a process (a healthy release) and when it stops keeping one
//! (checkout, idle eviction, close). When keeping one more would go past the cap, the limit picks
//! the least recently kept idle process of any pool and that pool stops and reaps it with its usual
//! escalating stop; the thread it belonged to starts a fresh process (resuming its session) on its
//! next run, exactly as after an idle timeout. Processes leased to a running run are never counted
//! nor evicted: admission bounds those.
//!
//! Lock order: a pool's lock, then the limit's; the limit never calls into a pool while it holds its
//! own lock.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use futures::future::BoxFuture;

use super::memory;
use super::pool::PoolKey;

/// A pool as the limit sees it: something that can stop one of its idle processes.
pub(super) trait Evict: Send + Sync {
    /// Removes `key`'s idle process if it is still the one kept at `generation`; the future stops
    /// and reaps it. `None` when a run took it meanwhile (or it is gone).
    fn evict(&self, key: &PoolKey, generation: u64) -> Option<BoxFuture<'static, ()>>;
}

/// One idle kept process.
struct Entry {
    pool: Weak<dyn Evict>,
    pool_id: u64,
    key: PoolKey,
    generation: u64,
    used: u64,
}

#[derive(Default)]
struct Lru {
    clock: u64,
    entries: Vec<Entry>,
}

struct Inner {
    max: AtomicUsize,
    lru: Mutex<Lru>,
    evictions: AtomicU64,
}

/// A cap on idle kept processes shared by pools; cloning shares it. See the module docs.
#[derive(Clone)]
pub struct KeptLimit {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for KeptLimit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptLimit")
            .field("max", &self.max())
            .field("kept", &self.kept())
            .field("evictions", &self.evictions())
            .finish()
    }
}

/// A process the limit chose to evict, to be stopped by its pool outside every lock.
pub(super) struct Victim {
    pool: Weak<dyn Evict>,
    key: PoolKey,
    generation: u64,
}

impl KeptLimit {
    /// A limit of `max` idle kept processes (at least 1).
    pub fn new(max: usize) -> Self {
        KeptLimit {
            inner: Arc::new(Inner {
                max: AtomicUsize::new(max.max(1)),
                lru: Mutex::new(Lru::default()),
                evictions: AtomicU64::new(0),
            }),
        }
    }

    /// The process-wide limit every driver's pool uses, created on first use with
    /// [`memory::default_max_kept`] (one per GiB of `MemAvailable`, 1 to 64; 8 when unknown).
    /// `agent-adaptor serve` sets it from `[processes] max_kept`; a library host calls
    /// [`set_max`](Self::set_max).
    pub fn global() -> &'static KeptLimit {
        static GLOBAL: OnceLock<KeptLimit> = OnceLock::new();
        GLOBAL.get_or_init(|| KeptLimit::new(memory::default_max_kept()))
    }

    /// Changes the cap (at least 1); applied from the next process kept.
    pub fn set_max(&self, max: usize) {
        self.inner.max.store(max.max(1), Ordering::Release);
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.inner.max.load(Ordering::Acquire)
    }

    /// Idle processes kept now, across every pool.
    pub fn kept(&self) -> usize {
        let mut lru = self.lock();
        prune(&mut lru);
        lru.entries.len()
    }

    /// Processes evicted to stay under the cap since the limit was made.
    pub fn evictions(&self) -> u64 {
        self.inner.evictions.load(Ordering::Relaxed)
    }

    fn lock(&self) -> MutexGuard<'_, Lru> {
        self.inner.lru.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records that `pool` keeps `key`'s process at `generation` (call under the pool's lock) and
    /// returns the least recently kept processes that must go to stay under the cap.
    pub(super) fn keep(
        &self,
        pool: Weak<dyn Evict>,
        pool_id: u64,
        key: PoolKey,
        generation: u64,
    ) -> Vec<Victim> {
        let max = self.max();
        let mut lru = self.lock();
        prune(&mut lru);
        lru.clock += 1;
        let used = lru.clock;
        lru.entries.push(Entry {
            pool,
            pool_id,
            key,
            generation,
            used,
        });
        let mut victims = Vec::new();
        while lru.entries.len() > max {
            let Some(oldest) = lru
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.used)
                .map(|(i, _)| i)
            else {
                break;
            };
            let e = lru.entries.swap_remove(oldest);
            victims.push(Victim {
                pool: e.pool,
                key: e.key,
                generation: e.generation,
            });
        }
        victims
    }

    /// Records that `pool_id` no longer keeps the process of `generation` (call under the pool's lock).
    pub(super) fn forget(&self, pool_id: u64, generation: u64) {
        let mut lru = self.lock();
        lru.entries
            .retain(|e| !(e.pool_id == pool_id && e.generation == generation));
    }

    /// Stops and reaps `victims` (outside every lock), counting each one actually evicted.
    pub(super) async fn evict(&self, victims: Vec<Victim>) {
        let stops: Vec<_> = victims
            .into_iter()
            .filter_map(|v| v.pool.upgrade()?.evict(&v.key, v.generation))
            .collect();
        if stops.is_empty() {
            return;
        }
        self.inner
            .evictions
            .fetch_add(stops.len() as u64, Ordering::Relaxed);
        tracing::debug!(
            evicted = stops.len(),
            max = self.max(),
            "evicted the least recently used kept processes"
        );
        futures::future::join_all(stops).await;
    }
}

/// Drops the entries of pools that no longer exist (their processes died with them).
fn prune(lru: &mut Lru) {
    lru.entries.retain(|e| e.pool.strong_count() > 0);
}
