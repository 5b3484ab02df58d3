//! `ProcessPool` rules with real children (`cat`, which lives until stdin closes): a healthy release
//! is reused, a signature change restarts, idle eviction, one writer per key, `WithSpawn`, unhealthy
//! releases and dead processes are discarded, and close reaps everything; a `KeptLimit` shared by
//! pools caps their idle processes, evicting the least recently kept one of any pool.

use std::time::{Duration, Instant};

use agent_adaptor::driver::process::{
    Child, KeptLimit, PoolKey, Pooled, ProcessPool, ProcessRegistry, StopPlan, Taken, group_exists, spawn,
};

use super::sh;

/// A pooled `cat`: closing stdin ends it politely.
struct Cat(Child);

impl Pooled for Cat {
    fn child(&self) -> &Child {
        &self.0
    }

    fn stop_plan(&self, grace: Duration) -> StopPlan {
        let w = self.0.stdin().expect("piped");
        StopPlan::new()
            .term_grace(grace)
            .interrupt(async move { w.close().await })
    }
}

async fn cat(registry: &ProcessRegistry) -> Cat {
    Cat(spawn(registry, sh("exec cat").stdin_piped(true)).await.unwrap())
}

fn pool(idle: Duration) -> ProcessPool<Cat> {
    ProcessPool::new(idle, Duration::from_millis(500))
}

fn key(thread: &str) -> PoolKey {
    PoolKey::new("tenant-a", thread)
}

/// Checks out `k`, spawning when cold; returns the value, its lease and whether it was warm.
async fn take(
    pool: &ProcessPool<Cat>,
    registry: &ProcessRegistry,
    k: &str,
    sig: &str,
    fresh: bool,
) -> (Cat, agent_adaptor::driver::process::Lease<Cat>, bool) {
    match pool.checkout(key(k), sig, fresh).await {
        Taken::Warm(v, l) => (v, l, true),
        Taken::Cold(l) => (cat(registry).await, l, false),
    }
}

async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_healthy_release_is_reused_and_a_signature_change_restarts() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_secs(60));
    let (v, lease, warm) = take(&pool, &registry, "t1", "sig-1", false).await;
    assert!(!warm);
    assert!(lease.is_kept());
    let pid = v.0.pid();
    assert_eq!(lease.release(v, true).await, None, "kept");
    assert_eq!(pool.idle_count(), 1);

    let (v, lease, warm) = take(&pool, &registry, "t1", "sig-1", false).await;
    assert!(warm, "same key and signature: the same process");
    assert_eq!(v.0.pid(), pid);
    assert!(lease.release(v, true).await.is_none());

    // Another tenant's thread of the same name is another key.
    let other = pool
        .checkout(PoolKey::new("tenant-b", "t1"), "sig-1", false)
        .await;
    assert!(matches!(other, Taken::Cold(_)));
    drop(other);

    let (v, lease, warm) = take(&pool, &registry, "t1", "sig-2", false).await;
    assert!(!warm, "a new signature never gets the old process");
    assert!(
        !group_exists(pid as i32),
        "the old process was stopped and reaped first"
    );
    assert_eq!(registry.live_count(), 1);
    let exit = lease.release(v, false).await.expect("an unhealthy release stops");
    assert!(exit.success(), "stopped politely (stdin EOF): {exit}");
    assert_eq!(registry.live_count(), 0);
    assert_eq!(pool.idle_count(), 0);
}

#[tokio::test]
async fn an_idle_process_is_evicted_after_the_idle_timeout() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_millis(300));
    let (v, lease, _) = take(&pool, &registry, "t1", "s", false).await;
    let pid = v.0.pid();
    assert!(lease.release(v, true).await.is_none());
    // A run taking it before the timer fires resets the clock.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(warm);
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(lease.release(v, true).await.is_none());
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(
        registry.live_count(),
        1,
        "400 ms after first use but only 150 ms idle"
    );
    wait_until("evicted", || registry.live_count() == 0).await;
    assert!(!group_exists(pid as i32));
    assert_eq!(pool.idle_count(), 0);
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(!warm, "an evicted process is replaced by a new one");
    assert_ne!(v.0.pid(), pid);
    lease.release(v, false).await;
}

#[tokio::test]
async fn one_writer_a_concurrent_checkout_gets_a_one_off_and_neither_is_kept() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_secs(60));
    let (first, first_lease, _) = take(&pool, &registry, "t1", "s", false).await;
    // While the first run holds the key, a second run neither waits nor shares the process.
    let (second, second_lease, warm) =
        tokio::time::timeout(Duration::from_secs(2), take(&pool, &registry, "t1", "s", false))
            .await
            .expect("a concurrent checkout does not wait");
    assert!(!warm);
    assert!(!second_lease.is_kept(), "one-off");
    assert_ne!(first.0.pid(), second.0.pid());
    assert!(
        second_lease.release(second, true).await.is_some(),
        "a one-off is never kept"
    );
    // The first process missed the second run's turn: it is stale and not kept either.
    assert!(first_lease.release(first, true).await.is_some());
    assert_eq!(pool.idle_count(), 0);
    assert_eq!(registry.live_count(), 0);
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(!warm);
    assert!(lease.is_kept(), "the key is usable again");
    lease.release(v, false).await;
}

#[tokio::test]
async fn a_forced_spawn_stops_the_kept_process_and_is_not_kept() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_secs(60));
    let (v, lease, _) = take(&pool, &registry, "t1", "s", false).await;
    let pid = v.0.pid();
    assert!(lease.release(v, true).await.is_none());
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", true).await;
    assert!(!warm);
    assert!(!lease.is_kept());
    assert!(
        !group_exists(pid as i32),
        "the kept process is gone: a single writer"
    );
    assert!(lease.release(v, true).await.is_some());
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn dead_or_unhealthy_processes_are_never_handed_out() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_secs(60));
    let (v, lease, _) = take(&pool, &registry, "t1", "s", false).await;
    let stdin = v.0.stdin().unwrap();
    assert!(lease.release(v, true).await.is_none());
    // The kept process dies on its own while idle.
    stdin.close().await;
    wait_until("reaped", || registry.live_count() == 0).await;
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(!warm, "a dead process is discarded");
    // A run that failed mid-turn releases unhealthy: stopped, never reused.
    assert!(lease.release(v, false).await.is_some());
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(!warm);
    // A lease dropped without release forgets the key (its value's drop kills the process).
    drop(lease);
    drop(v);
    wait_until("reaped", || registry.live_count() == 0).await;
    let (v, lease, warm) = take(&pool, &registry, "t1", "s", false).await;
    assert!(!warm);
    assert!(lease.is_kept());
    lease.release(v, false).await;
}

#[tokio::test]
async fn close_reaps_idle_processes_and_later_releases() {
    let registry = ProcessRegistry::new();
    let pool = pool(Duration::from_secs(60));
    let (a, lease_a, _) = take(&pool, &registry, "a", "s", false).await;
    let (b, lease_b, _) = take(&pool, &registry, "b", "s", false).await;
    let (pid_a, pid_b) = (a.0.pid(), b.0.pid());
    assert!(lease_a.release(a, true).await.is_none());
    assert_eq!(pool.close().await, 1, "one idle process stopped");
    assert!(!group_exists(pid_a as i32));
    assert!(pool.is_closed());
    // A run that was in flight at close: its process is stopped at release, not kept.
    let exit = lease_b.release(b, true).await.expect("not kept after close");
    assert!(exit.success(), "{exit}");
    assert!(!group_exists(pid_b as i32));
    // After close every checkout is one-off.
    match pool.checkout(key("a"), "s", false).await {
        Taken::Cold(l) => assert!(!l.is_kept()),
        Taken::Warm(..) => panic!("nothing is kept after close"),
    }
    assert_eq!(pool.close().await, 0, "idempotent");
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn a_shared_kept_limit_evicts_the_least_recently_kept_process_of_any_pool() {
    let registry = ProcessRegistry::new();
    let limit = KeptLimit::new(2);
    let grace = Duration::from_millis(500);
    let a = ProcessPool::with_limit(Duration::from_secs(60), grace, limit.clone());
    let b = ProcessPool::with_limit(Duration::from_secs(60), grace, limit.clone());

    let (v, lease, _) = take(&a, &registry, "t1", "s", false).await;
    let oldest = v.0.pid();
    assert!(lease.release(v, true).await.is_none());
    let (v, lease, _) = take(&b, &registry, "t2", "s", false).await;
    let second = v.0.pid();
    assert!(lease.release(v, true).await.is_none());
    assert_eq!((limit.kept(), limit.evictions()), (2, 0));

    // t1 is used again: now t2 is the least recently kept.
    let (v, lease, warm) = take(&a, &registry, "t1", "s", false).await;
    assert!(warm);
    assert_eq!(limit.kept(), 1, "a leased process is not counted");
    assert!(lease.release(v, true).await.is_none());

    // A third kept process (in pool a) evicts t2's (in pool b), stopped and reaped before release returns.
    let (v, lease, _) = take(&a, &registry, "t3", "s", false).await;
    assert!(lease.release(v, true).await.is_none());
    assert_eq!((limit.kept(), limit.evictions()), (2, 1));
    assert!(
        !group_exists(second as i32),
        "the least recently kept process is gone"
    );
    assert!(group_exists(oldest as i32), "t1 was used since");
    assert_eq!((a.idle_count(), b.idle_count()), (2, 0));
    assert_eq!(registry.live_count(), 2);

    // The evicted thread gets a cold lease: its next run starts a fresh process.
    let (v, lease, warm) = take(&b, &registry, "t2", "s", false).await;
    assert!(!warm);
    assert!(lease.release(v, true).await.is_none());
    assert_eq!(limit.kept(), 2);
    assert_eq!(limit.evictions(), 2);
    a.close().await;
    b.close().await;
    assert_eq!(limit.kept(), 0);
    wait_until("every child is reaped", || registry.live_count() == 0).await;
}
