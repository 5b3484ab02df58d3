//! Scenario (d): memory per active run. After a warm-up run (so pools, the driver and the allocator's
//! arenas exist), `runs` runs are started whose fake writes one stamped message and then hangs: each is
//! active (its process, driver tasks, runtime execution, pump and in-memory log live) but idle. Each is
//! confirmed live by reading its stream up to the stamped message (then that subscriber disconnects). The
//! figure is the service's RSS delta divided by the runs; the fake CLI children are other processes, so
//! their memory is not in it. Afterwards every run is cancelled and confirmed `done`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::error::LoadError;
use crate::service::Service;
use crate::trace::{Trace, cancel_run, final_state, read_to_done, start_run, subscribe};

const PARKED: &str = "scenario=stream frames=1 then=hang";

/// Starts a parked run and waits until its stamped message was delivered.
async fn park(addr: SocketAddr) -> Result<String, LoadError> {
    let run_id = start_run(addr, PARKED).await?;
    let mut sse = subscribe(addr, &run_id).await?;
    let mut t = Trace::default();
    while t.indices.is_empty() {
        match sse.next().await? {
            Some(f) => t.add(&f, 0),
            None => return Err(LoadError::Protocol(format!("{run_id} ended before its message"))),
        }
    }
    Ok(run_id)
}

/// Cancels a run and waits for its `done`; returns its final state.
async fn finish(addr: SocketAddr, run_id: String) -> Result<String, LoadError> {
    cancel_run(addr, &run_id).await?;
    let mut sse = subscribe(addr, &run_id).await?;
    let t = read_to_done(&mut sse, 0).await?;
    if !t.done {
        return Err(LoadError::Protocol(format!("{run_id}: no done after cancel")));
    }
    final_state(addr, &run_id).await
}

/// Runs the scenario.
pub async fn run(svc: &Service, runs: usize) -> Result<Value, LoadError> {
    let addr = svc.addr;
    // Warm-up: one parked run, cancelled, and one complete run.
    let warm = park(addr).await?;
    finish(addr, warm).await?;
    let id = start_run(addr, "scenario=stream frames=10").await?;
    read_to_done(&mut subscribe(addr, &id).await?, 0).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = svc.rss_kib()?;
    let gate = Arc::new(Semaphore::new(16));
    let mut set = JoinSet::new();
    for _ in 0..runs {
        let gate = gate.clone();
        set.spawn(async move {
            let _permit = gate.acquire().await;
            park(addr).await
        });
    }
    let mut ids = Vec::with_capacity(runs);
    while let Some(joined) = set.join_next().await {
        ids.push(joined.map_err(|e| LoadError::Protocol(format!("a start task failed: {e}")))??);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_active = svc.rss_kib()?;
    let mut set = JoinSet::new();
    for id in ids {
        let gate = gate.clone();
        set.spawn(async move {
            let _permit = gate.acquire().await;
            finish(addr, id).await
        });
    }
    let mut cancelled = 0u64;
    while let Some(joined) = set.join_next().await {
        let state = joined.map_err(|e| LoadError::Protocol(format!("a cancel task failed: {e}")))??;
        cancelled += u64::from(state == "cancelled");
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_end = svc.rss_kib()?;
    let per_run = rss_active.saturating_sub(rss_before) as f64 / runs.max(1) as f64;
    Ok(json!({
        "scenario": "memory",
        "runs": runs,
        "server_rss_before_kib": rss_before,
        "server_rss_active_kib": rss_active,
        "server_rss_after_cancel_kib": rss_end,
        "server_kib_per_active_run": (per_run * 100.0).round() / 100.0,
        "runs_cancelled": cancelled,
    }))
}
