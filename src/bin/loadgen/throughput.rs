//! Scenario (a): one run, `frames` stamped assistant messages written as fast as the pipe takes them,
//! one SSE client; the events per second it receives, end to end (fake CLI stdout → Cursor driver →
//! runtime → pump + SQLite recorder → in-memory log → SSE writer → socket).

use std::time::Instant;

use serde_json::{Value, json};

use crate::error::LoadError;
use crate::service::Service;
use crate::trace::{final_state, percentiles, read_to_done, start_run, subscribe};

/// Runs the scenario.
pub async fn run(svc: &Service, frames: u64) -> Result<Value, LoadError> {
    let addr = svc.addr;
    let cpu_before = svc.cpu_s()?;
    let started = Instant::now();
    let run_id = start_run(addr, &format!("scenario=stream frames={frames} rate=0")).await?;
    let mut sse = subscribe(addr, &run_id).await?;
    let mut trace = read_to_done(&mut sse, 0).await?;
    let wall = started.elapsed().as_secs_f64();
    if !trace.done {
        return Err(LoadError::Protocol(format!(
            "the stream of {run_id} ended without `done`"
        )));
    }
    let (lost, duplicated) = trace.lost_and_duplicated(frames);
    let span = (trace.last_recv.saturating_sub(trace.first_recv)) as f64 / 1e9;
    let eps = if span > 0.0 {
        trace.events as f64 / span
    } else {
        0.0
    };
    let state = final_state(addr, &run_id).await?;
    let cpu = svc.cpu_s()? - cpu_before;
    Ok(json!({
        "scenario": "throughput",
        "frames": frames,
        "events": trace.events,
        "stamped_received": trace.indices.len(),
        "seq_breaks": trace.seq_breaks,
        "lost_frames": lost,
        "duplicated_frames": duplicated,
        "dropped_events": trace.dropped_events,
        "run_state": state,
        "seconds_first_to_last_event": span,
        "events_per_s": eps.round(),
        "server_cpu_s": cpu,
        "events_per_server_cpu_s": if cpu > 0.0 { (trace.events as f64 / cpu).round() } else { 0.0 },
        "wall_s_post_to_done": wall,
        "latency_under_saturation": percentiles(&mut trace.latencies),
    }))
}
