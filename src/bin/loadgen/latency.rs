//! Scenario (b): `runs` concurrent runs, each streaming `frames` stamped assistant messages at `rate` per
//! second, each followed by its own SSE client. Every run's fake waits for a common wall-clock start (so
//! all subscribers are connected first) plus a per-run phase offset (so the runs do not tick in
//! lockstep). The latency of a content delta is the client's `CLOCK_REALTIME` right after the `read` that
//! delivered it minus the stamp the fake took right before writing the frame to its stdout: it includes
//! the pipe, the driver's read and parse, the runtime's numbering and buffering, the pump's SQLite write,
//! the in-memory log, the SSE task, the socket, and the client's own scheduling on the same machine.

use std::net::SocketAddr;
use std::time::Duration;

use agent_adaptor::testkit::fake_cursor::stream::now_nanos;
use serde_json::{Value, json};
use tokio::task::JoinSet;

use crate::error::LoadError;
use crate::service::Service;
use crate::trace::{Trace, final_state, percentiles, read_to_done, start_run, subscribe};

/// What the scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Concurrent runs.
    pub runs: usize,
    /// Stamped frames per run.
    pub frames: u64,
    /// Frames per second per run.
    pub rate: f64,
}

async fn one(addr: SocketAddr, prompt: String) -> Result<(Trace, String), LoadError> {
    let run_id = start_run(addr, &prompt).await?;
    let mut sse = subscribe(addr, &run_id).await?;
    let live_from = now_nanos();
    let trace = read_to_done(&mut sse, live_from).await?;
    let state = final_state(addr, &run_id).await?;
    Ok((trace, state))
}

/// Runs the scenario.
pub async fn run(svc: &Service, plan: Plan) -> Result<Value, LoadError> {
    let addr = svc.addr;
    let cpu_before = svc.cpu_s()?;
    let margin = Duration::from_secs(3) + Duration::from_millis(30) * plan.runs as u32;
    let start_at = now_nanos() + margin.as_nanos();
    let period_ns = if plan.rate > 0.0 { 1e9 / plan.rate } else { 0.0 };
    let mut set = JoinSet::new();
    for i in 0..plan.runs {
        let offset = (period_ns * i as f64 / plan.runs as f64) as u128;
        let prompt = format!(
            "scenario=stream frames={} rate={} start_at={}",
            plan.frames,
            plan.rate,
            start_at + offset
        );
        set.spawn(one(addr, prompt));
    }
    let mut all = Vec::new();
    let (mut lost, mut duplicated, mut breaks, mut dropped, mut replayed, mut done, mut succeeded) =
        (0, 0, 0, 0, 0, 0, 0);
    let mut events = 0;
    while let Some(joined) = set.join_next().await {
        let (mut t, state) =
            joined.map_err(|e| LoadError::Protocol(format!("a subscriber task failed: {e}")))??;
        let (l, d) = t.lost_and_duplicated(plan.frames);
        lost += l;
        duplicated += d;
        breaks += t.seq_breaks;
        dropped += t.dropped_events;
        replayed += t.replayed;
        events += t.events;
        done += u64::from(t.done);
        succeeded += u64::from(state == "succeeded");
        all.append(&mut t.latencies);
    }
    let cpu = svc.cpu_s()? - cpu_before;
    let stats = percentiles(&mut all);
    let p99 = stats["p99_us"].as_f64();
    Ok(json!({
        "scenario": "latency",
        "runs": plan.runs,
        "frames_per_run": plan.frames,
        "rate_per_run": plan.rate,
        "events": events,
        "runs_done": done,
        "runs_succeeded": succeeded,
        "seq_breaks": breaks,
        "lost_frames": lost,
        "duplicated_frames": duplicated,
        "dropped_events": dropped,
        "replayed_untimed": replayed,
        "latency": stats,
        "server_cpu_s": cpu,
        "target_p99_under_1ms": p99.map(|p| p < 1000.0),
    }))
}
