//! Reliable lease release: an ended execution or Standby gives its thread lease up with retries, and a
//! lease the store would not let go is kept in process and released before this process next takes the
//! same target, so a thread is never left `thread_busy` until the lease TTL by its own idle owner.
//!
//! Owners are per execution (a fresh id each), so without this a release lost to one store hiccup
//! left the next run on the thread admitted and then failing `thread_busy` for up to the TTL (5 min).
//! Keeping is safe: a release only frees a lease whose owner and fencing token still match, so a
//! lease someone else took since is never touched.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;

use crate::store::{Lease, StoreError, ThreadStore};

/// Release attempts before a lease is kept for later.
pub(crate) const RELEASE_ATTEMPTS: u32 = 3;
/// The pause before the second attempt; it grows fivefold per attempt (20 ms, 100 ms).
const FIRST_BACKOFF: Duration = Duration::from_millis(20);
/// At most this many unreleased leases are kept (the oldest go first; they lapse by TTL anyway).
const KEPT_CAP: usize = 4096;

/// The leases this process failed to release, with the store they belong to (its address).
static KEPT: Mutex<Vec<(usize, Lease)>> = Mutex::new(Vec::new());

fn store_id(store: &Arc<dyn ThreadStore>) -> usize {
    Arc::as_ptr(store) as *const () as usize
}

fn kept() -> std::sync::MutexGuard<'static, Vec<(usize, Lease)>> {
    KEPT.lock().unwrap_or_else(|p| p.into_inner())
}

/// Releases `lease`, retrying a failed attempt ([`RELEASE_ATTEMPTS`] in all). When every attempt
/// fails the lease is kept for [`settle`] and the last error is returned (the caller reports it).
pub(crate) async fn release(store: &Arc<dyn ThreadStore>, lease: &Lease) -> Result<(), StoreError> {
    let mut pause = FIRST_BACKOFF;
    let mut attempt = 1;
    loop {
        match store.release_lease(lease).await {
            Ok(()) => return Ok(()),
            Err(e) if attempt >= RELEASE_ATTEMPTS => {
                let mut kept = kept();
                if kept.len() >= KEPT_CAP {
                    kept.remove(0);
                }
                kept.push((store_id(store), lease.clone()));
                return Err(e);
            }
            Err(_) => {
                tokio::time::sleep(pause).await;
                pause *= 5;
                attempt += 1;
            }
        }
    }
}

/// Before this process takes the lease on `target`: releases the leases of `target` it failed to
/// release earlier (they are its own and idle: the executions that held them have ended). One the
/// store still refuses stays kept; an expired one is dropped without a call.
pub(crate) async fn settle(store: &Arc<dyn ThreadStore>, target: &str) {
    let id = store_id(store);
    let now = Utc::now();
    let mine: Vec<Lease> = {
        let mut kept = kept();
        kept.retain(|(_, l)| l.expires_at > now);
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *kept)
            .into_iter()
            .partition(|(s, l)| *s == id && l.target == target);
        *kept = rest;
        mine.into_iter().map(|(_, l)| l).collect()
    };
    for lease in mine {
        if let Err(e) = store.release_lease(&lease).await {
            tracing::warn!(lease = %lease.target, error = %e, "a lease kept from an earlier failed release is still not released");
            kept().push((id, lease));
        }
    }
}
