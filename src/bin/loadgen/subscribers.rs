//! Scenario (c): `subscribers` concurrent SSE clients on one long run (the fake writes one stamped message
//! and then hangs, so the run stays active), and (e) the same on a Standby: the clients follow
//! `…/standby/events` while the Standby's execution is that run (ids `<execution>:<seq>`, the same reader
//! underneath). Each client connects, receives the replay up to the stamped message, and then waits.
//! Once all are connected the scenario reads the service's RSS (delta over the RSS before the first
//! subscriber, divided by the subscribers) and its `agent_adaptor_sse_subscribers` gauge, holds them for
//! `hold`, then cancels the run: the subscribers are "held" when every one of them connected, none was
//! closed early, and every one received the run's `done` event after the cancel.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::error::LoadError;
use crate::service::Service;
use crate::trace::{Trace, cancel_run, start_run};

/// What the subscribers follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A run's events (`/v1/runs/{id}/events`).
    Run,
    /// A Standby's events (`/v1/agents/{agent}/threads/{key}/standby/events`) while its execution runs.
    Standby,
}

/// The Standby thread of scenario (e).
const STANDBY: &str = "/v1/agents/fake/threads/loadgen-standby/standby";

/// What the scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Concurrent subscribers.
    pub subscribers: usize,
    /// How long all of them stay connected before the cancel.
    pub hold: Duration,
    /// Connections being opened at once.
    pub connect_concurrency: usize,
}

#[derive(Default)]
struct Counters {
    ready: AtomicU64,
    failed: AtomicU64,
    early_end: AtomicU64,
}

/// Reads `path`'s events until the stamped message (the replay); returns the open stream.
async fn attach(addr: SocketAddr, path: &str) -> Result<(crate::http::Sse, Trace), LoadError> {
    let mut sse = crate::http::Sse::connect(addr, path).await?;
    let mut t = Trace::default();
    while t.indices.is_empty() {
        match sse.next().await? {
            Some(f) => t.add(&f, 0),
            None => return Err(LoadError::Protocol("the stream ended during the replay".into())),
        }
    }
    Ok((sse, t))
}

async fn subscriber(
    addr: SocketAddr,
    path: Arc<str>,
    gate: Arc<Semaphore>,
    counters: Arc<Counters>,
) -> Result<bool, LoadError> {
    let attached = {
        let _permit = gate.acquire().await;
        attach(addr, &path).await
    };
    let (mut sse, mut t) = match attached {
        Ok(x) => x,
        Err(e) => {
            counters.failed.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
    };
    sse.shrink();
    counters.ready.fetch_add(1, Ordering::Relaxed);
    while let Some(f) = sse.next().await? {
        t.add(&f, 0);
        if t.done {
            return Ok(true);
        }
    }
    counters.early_end.fetch_add(1, Ordering::Relaxed);
    Ok(false)
}

/// The `agent_adaptor_sse_subscribers` gauge of `/metrics`.
async fn gauge(addr: SocketAddr) -> Result<Option<u64>, LoadError> {
    let (_, body) = crate::http::request(addr, "GET", "/metrics", None).await?;
    Ok(body.lines().find_map(|l| {
        l.strip_prefix("agent_adaptor_sse_subscribers ")
            .and_then(|v| v.trim().parse().ok())
    }))
}

/// The soft `RLIMIT_NOFILE` of this process (`/proc/self/limits`).
fn nofile_soft() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Starts what the subscribers follow; its events path and, for a run, its id.
async fn begin(addr: SocketAddr, target: Target) -> Result<(String, Option<String>), LoadError> {
    const PROMPT: &str = "scenario=stream frames=1 then=hang";
    match target {
        Target::Run => {
            let run_id = start_run(addr, PROMPT).await?;
            Ok((format!("/v1/runs/{run_id}/events"), Some(run_id)))
        }
        Target::Standby => {
            crate::http::post_json(addr, STANDBY, &json!({}), 201).await?;
            let path = format!("{STANDBY}/messages");
            crate::http::post_json(addr, &path, &json!({ "text": PROMPT }), 202).await?;
            Ok((format!("{STANDBY}/events"), None))
        }
    }
}

/// Cancels the followed run (the Standby's current execution).
async fn end(addr: SocketAddr, run_id: Option<&str>) -> Result<(), LoadError> {
    match run_id {
        Some(id) => cancel_run(addr, id).await,
        None => {
            let path = format!("{STANDBY}/cancel");
            crate::http::post_json(addr, &path, &json!({}), 202)
                .await
                .map(drop)
        }
    }
}

/// Runs the scenario.
pub async fn run(svc: &Service, plan: Plan, kind: Target) -> Result<Value, LoadError> {
    let addr = svc.addr;
    let (path, run_id) = begin(addr, kind).await?;
    let path: Arc<str> = path.into();
    drop(attach(addr, &path).await?);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = svc.rss_kib()?;
    let counters = Arc::new(Counters::default());
    let gate = Arc::new(Semaphore::new(plan.connect_concurrency.max(1)));
    let connect_started = Instant::now();
    let mut set = JoinSet::new();
    for _ in 0..plan.subscribers {
        set.spawn(subscriber(addr, path.clone(), gate.clone(), counters.clone()));
    }
    let target = plan.subscribers as u64;
    let deadline = Instant::now() + Duration::from_secs(300);
    while counters.ready.load(Ordering::Relaxed) + counters.failed.load(Ordering::Relaxed) < target {
        if Instant::now() > deadline {
            return Err(LoadError::Timeout(
                "subscribers did not connect within 300 s".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let connect_s = connect_started.elapsed().as_secs_f64();
    let connected = counters.ready.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = svc.rss_kib()?;
    let open_gauge = gauge(addr).await?;
    tokio::time::sleep(plan.hold).await;
    let early_during_hold = counters.early_end.load(Ordering::Relaxed);
    let rss_held = svc.rss_kib()?;
    let cancelled_at = Instant::now();
    end(addr, run_id.as_deref()).await?;
    let mut got_done = 0u64;
    let mut errors = 0u64;
    let mut first_error = None;
    let fan_out = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(Ok(true)) => got_done += 1,
                Ok(Ok(false)) => {}
                Ok(Err(e)) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| e.to_string());
                }
                Err(e) => {
                    errors += 1;
                    first_error.get_or_insert_with(|| e.to_string());
                }
            }
        }
    })
    .await;
    if fan_out.is_err() {
        set.abort_all();
    }
    let fan_out_s = cancelled_at.elapsed().as_secs_f64();
    let delta = rss_after.saturating_sub(rss_before);
    let per_sub_kib = if connected > 0 {
        delta as f64 / connected as f64
    } else {
        0.0
    };
    let held = connected == target && early_during_hold == 0 && got_done == target;
    Ok(json!({
        "scenario": match kind {
            Target::Run => "subscribers",
            Target::Standby => "standby_subscribers",
        },
        "subscribers": plan.subscribers,
        "connected": connected,
        "connect_failures": counters.failed.load(Ordering::Relaxed),
        "first_error": first_error,
        "connect_s": connect_s,
        "server_gauge_open": open_gauge,
        "closed_early": counters.early_end.load(Ordering::Relaxed),
        "hold_s": plan.hold.as_secs_f64(),
        "received_done_after_cancel": got_done,
        "errors": errors,
        "fan_out_s": fan_out_s,
        "held": held,
        "server_rss_before_kib": rss_before,
        "server_rss_connected_kib": rss_after,
        "server_rss_after_hold_kib": rss_held,
        "server_kib_per_subscriber": (per_sub_kib * 100.0).round() / 100.0,
        "target_10k_under_64kib_each": plan.subscribers >= 10_000 && held && per_sub_kib < 64.0,
        "nofile_soft_limit": nofile_soft(),
    }))
}
