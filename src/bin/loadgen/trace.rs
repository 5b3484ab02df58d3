//! Starting a run on the fake agent and reading its SSE stream into a [`Trace`]: every frame's sequence
//! and every stamped text delta, with the checks the report needs (sequence gaps and repeats, lost and
//! duplicated frames, runtime `dropped` events) and the per-frame latency from the fake's stdout write
//! (its `CLOCK_REALTIME` stamp) to the client's read.

use std::net::SocketAddr;

use agent_adaptor::testkit::fake_cursor::stream::parse_stamp;
use serde_json::json;

use crate::error::LoadError;
use crate::http::{Sse, post_json};
use crate::service::AGENT;

/// Starts a stateless run with `prompt` and returns its id.
pub async fn start_run(addr: SocketAddr, prompt: &str) -> Result<String, LoadError> {
    let path = format!("/v1/agents/{AGENT}/runs");
    let v = post_json(addr, &path, &json!({ "prompt": prompt }), 201).await?;
    v["run_id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| LoadError::Protocol(format!("no run_id in {v}")))
}

/// Requests cancellation (202, or 409 when the run already finished).
pub async fn cancel_run(addr: SocketAddr, run_id: &str) -> Result<(), LoadError> {
    let path = format!("/v1/runs/{run_id}/cancel");
    let (status, body) = crate::http::request(addr, "POST", &path, None).await?;
    match status {
        202 | 409 => Ok(()),
        _ => Err(LoadError::Status { path, status, body }),
    }
}

/// The run's lifecycle state (`running`, `succeeded`, `cancelled`, …).
pub async fn run_state(addr: SocketAddr, run_id: &str) -> Result<String, LoadError> {
    let path = format!("/v1/runs/{run_id}");
    let (status, body) = crate::http::request(addr, "GET", &path, None).await?;
    if status != 200 {
        return Err(LoadError::Status { path, status, body });
    }
    let v: serde_json::Value =
        serde_json::from_str(&body).map_err(|e| LoadError::Http(format!("{path}: bad JSON: {e}")))?;
    Ok(v["state"].as_str().unwrap_or("").to_owned())
}

/// The run's state once it is terminal: the pump records the run's end just after its `done` event
/// reaches subscribers, so a client that saw `done` may briefly still read `running`; this polls (every
/// 10 ms, at most 5 s) until the state is terminal.
pub async fn final_state(addr: SocketAddr, run_id: &str) -> Result<String, LoadError> {
    for _ in 0..500 {
        let state = run_state(addr, run_id).await?;
        if !matches!(state.as_str(), "running" | "queued" | "parked") {
            return Ok(state);
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    Err(LoadError::Timeout(format!(
        "{run_id} still not terminal 5 s after done"
    )))
}

/// Opens the run's event stream from the start.
pub async fn subscribe(addr: SocketAddr, run_id: &str) -> Result<Sse, LoadError> {
    Sse::connect(addr, &format!("/v1/runs/{run_id}/events")).await
}

/// What one subscriber saw of one run.
#[derive(Debug, Default, Clone)]
pub struct Trace {
    /// Frames with an id.
    pub events: u64,
    /// Sequences that did not follow the previous one by exactly 1 (a gap or a repeat).
    pub seq_breaks: u64,
    /// The first and last sequence seen.
    pub first_seq: Option<u64>,
    /// The last sequence seen.
    pub last_seq: Option<u64>,
    /// Stamped frame indices seen, in order (one per stamped assistant message).
    pub indices: Vec<u64>,
    /// Latency of each stamped content delta received live, nanoseconds.
    pub latencies: Vec<u64>,
    /// Stamped deltas written before the subscriber was connected (replayed, not timed).
    pub replayed: u64,
    /// `dropped` events (the runtime shed content under backpressure).
    pub dropped_events: u64,
    /// Receipt time of the first and last frame.
    pub first_recv: u128,
    /// Receipt time of the last frame.
    pub last_recv: u128,
    /// The `done` event arrived.
    pub done: bool,
    /// The payload of `done` (for error reporting).
    pub done_data: String,
}

impl Trace {
    /// Folds one frame in; `live_from` is when the subscriber was connected (earlier stamps are replays).
    pub fn add(&mut self, f: &crate::http::Frame, live_from: u128) {
        if let Some(seq) = f.id {
            self.events += 1;
            if let Some(last) = self.last_seq
                && seq != last + 1
            {
                self.seq_breaks += 1;
            }
            self.first_seq.get_or_insert(seq);
            self.last_seq = Some(seq);
        }
        if self.first_recv == 0 {
            self.first_recv = f.received;
        }
        self.last_recv = f.received;
        match f.event.as_str() {
            "text_delta" => {
                if let Some((stamp, index)) = parse_stamp(&f.data) {
                    self.indices.push(index);
                    if stamp < live_from {
                        self.replayed += 1;
                    } else {
                        let lat = f.received.saturating_sub(stamp);
                        self.latencies.push(u64::try_from(lat).unwrap_or(u64::MAX));
                    }
                }
            }
            "dropped" => self.dropped_events += 1,
            "done" => {
                self.done = true;
                self.done_data.clone_from(&f.data);
            }
            _ => {}
        }
    }

    /// Stamped frames of `0..expected` never seen, and frames seen more than once.
    pub fn lost_and_duplicated(&self, expected: u64) -> (u64, u64) {
        let mut seen = vec![0u32; usize::try_from(expected).unwrap_or(0)];
        let mut dup = 0;
        let mut out_of_range = 0;
        for &i in &self.indices {
            match seen.get_mut(usize::try_from(i).unwrap_or(usize::MAX)) {
                Some(n) => {
                    *n += 1;
                    if *n > 1 {
                        dup += 1;
                    }
                }
                None => out_of_range += 1,
            }
        }
        let lost = seen.iter().filter(|n| **n == 0).count() as u64;
        (lost, dup + out_of_range)
    }
}

/// Reads `sse` to its end (or the `done` event), folding every frame into a trace.
pub async fn read_to_done(sse: &mut Sse, live_from: u128) -> Result<Trace, LoadError> {
    let mut t = Trace::default();
    while let Some(f) = sse.next().await? {
        t.add(&f, live_from);
        if t.done {
            break;
        }
    }
    Ok(t)
}

/// Latency percentiles of `samples` (nanoseconds) in microseconds: p50, p90, p99, p99.9, max, count.
pub fn percentiles(samples: &mut [u64]) -> serde_json::Value {
    if samples.is_empty() {
        return json!({ "count": 0 });
    }
    samples.sort_unstable();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i.min(samples.len() - 1)] as f64 / 1000.0
    };
    let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / samples.len() as f64 / 1000.0;
    json!({
        "count": samples.len(),
        "p50_us": at(0.5),
        "p90_us": at(0.9),
        "p99_us": at(0.99),
        "p999_us": at(0.999),
        "max_us": at(1.0),
        "mean_us": (mean * 10.0).round() / 10.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::Frame;

    fn frame(id: u64, event: &str, data: &str, received: u128) -> Frame {
        Frame {
            id: Some(id),
            event: event.into(),
            data: data.into(),
            received,
        }
    }

    #[test]
    fn gaps_repeats_losses_and_duplicates_are_counted() {
        let mut t = Trace::default();
        t.add(&frame(1, "run_started", "{}", 10), 0);
        t.add(&frame(2, "text_delta", r#"{"text":"lg:100:0;"}"#, 150), 0);
        t.add(&frame(4, "text_delta", r#"{"text":"lg:200:0;"}"#, 260), 0);
        t.add(&frame(4, "dropped", "{}", 270), 0);
        t.add(&frame(5, "done", "{}", 300), 0);
        assert_eq!(t.events, 5);
        assert_eq!(t.seq_breaks, 2, "a gap (2 -> 4) and a repeat (4 -> 4)");
        assert_eq!(t.lost_and_duplicated(3), (2, 1));
        assert_eq!(t.latencies, vec![50, 60]);
        assert_eq!(t.dropped_events, 1);
        assert!(t.done);
        let mut live = Trace::default();
        live.add(&frame(1, "text_delta", r#"{"text":"lg:100:0;"}"#, 150), 120);
        assert_eq!((live.replayed, live.latencies.len()), (1, 0));
    }

    #[test]
    fn percentiles_pick_ranks() {
        let mut s: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        let p = percentiles(&mut s);
        assert_eq!(p["count"], 1000);
        assert_eq!(p["p50_us"], 501.0);
        assert_eq!(p["p99_us"], 990.0);
        assert_eq!(p["max_us"], 1000.0);
        assert_eq!(percentiles(&mut [])["count"], 0);
    }
}
