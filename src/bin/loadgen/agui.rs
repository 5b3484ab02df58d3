//! Scenario (f): `streams` concurrent AG-UI clients, each the `POST /v1/agents/fake/agui` stream of its own
//! run on its own thread (an AG-UI client always drives its own run; the fake writes one stamped message
//! and hangs). Each stream is read until the stamped text arrives as `TEXT_MESSAGE_CONTENT` (the AG-UI
//! translation reads the run's log like every other output). Then the service's RSS delta divided by the
//! streams is the cost of one AG-UI stream *with its run* (compare scenario (d), a run alone); the streams
//! are held for `hold`, every run is cancelled through `POST /v1/runs/{id}/cancel`, and each stream must end
//! with its terminal (`RUN_ERROR`, code `cancelled`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use agent_adaptor::testkit::fake_cursor::stream::parse_stamp;
use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::error::LoadError;
use crate::http::Sse;
use crate::service::{AGENT, Service};
use crate::trace::cancel_run;

/// What the scenario runs.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    /// Concurrent AG-UI streams (each its own run and fake CLI process).
    pub streams: usize,
    /// How long all of them stay open before their runs are cancelled.
    pub hold: Duration,
    /// Streams being opened at once.
    pub connect_concurrency: usize,
}

#[derive(Default)]
struct Counters {
    ready: AtomicU64,
    failed: AtomicU64,
    early_end: AtomicU64,
}

/// The AG-UI `type` of a frame.
fn kind(data: &str) -> String {
    serde_json::from_str::<Value>(data)
        .ok()
        .and_then(|v| v["type"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// One AG-UI client: opens its run's stream, reads until the stamped text, then to the terminal.
/// `Ok(Some(type))` is the terminal's type; `Ok(None)` a stream that ended without one.
async fn client(
    addr: SocketAddr,
    n: usize,
    gate: Arc<Semaphore>,
    counters: Arc<Counters>,
) -> Result<Option<String>, LoadError> {
    let thread = format!("loadgen-agui-{n}");
    let input = json!({
        "threadId": thread, "runId": format!("{thread}-run"), "state": {}, "tools": [], "context": [],
        "forwardedProps": {},
        "messages": [{"id": format!("{thread}-u"), "role": "user", "content": "scenario=stream frames=1 then=hang"}],
    });
    let attached = {
        let _permit = gate.acquire().await;
        let mut sse = Sse::post(addr, &format!("/v1/agents/{AGENT}/agui"), &input).await?;
        loop {
            match sse.next().await? {
                Some(f) if kind(&f.data) == "TEXT_MESSAGE_CONTENT" && parse_stamp(&f.data).is_some() => {
                    break Ok::<_, LoadError>(sse);
                }
                Some(_) => {}
                None => {
                    break Err(LoadError::Protocol(format!(
                        "{thread}: the AG-UI stream ended before the stamped text"
                    )));
                }
            }
        }
    };
    let mut sse = match attached {
        Ok(s) => s,
        Err(e) => {
            counters.failed.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
    };
    sse.shrink();
    counters.ready.fetch_add(1, Ordering::Relaxed);
    while let Some(f) = sse.next().await? {
        let k = kind(&f.data);
        if k == "RUN_FINISHED" || k == "RUN_ERROR" {
            return Ok(Some(k));
        }
    }
    counters.early_end.fetch_add(1, Ordering::Relaxed);
    Ok(None)
}

/// The active run of AG-UI thread `n`.
async fn active_run(addr: SocketAddr, n: usize) -> Result<Option<String>, LoadError> {
    let key = agent_adaptor::agui::thread_key(&format!("loadgen-agui-{n}"));
    let path = format!("/v1/agents/{AGENT}/threads/{key}");
    let (status, body) = crate::http::request(addr, "GET", &path, None).await?;
    if status != 200 {
        return Err(LoadError::Status { path, status, body });
    }
    let v: Value = serde_json::from_str(&body).map_err(|e| LoadError::Http(format!("{path}: {e}")))?;
    Ok(v["active_run"].as_str().map(str::to_owned))
}

/// Runs the scenario.
pub async fn run(svc: &Service, plan: Plan) -> Result<Value, LoadError> {
    let addr = svc.addr;
    // Warm-up: one AG-UI stream, to its stamped text, cancelled.
    let warm_counters = Arc::new(Counters::default());
    let warm = tokio::spawn(client(
        addr,
        usize::MAX,
        Arc::new(Semaphore::new(1)),
        warm_counters.clone(),
    ));
    while warm_counters.ready.load(Ordering::Relaxed) == 0 {
        if warm.is_finished() {
            return Err(LoadError::Protocol("the warm-up AG-UI stream failed".into()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(run) = active_run(addr, usize::MAX).await? {
        cancel_run(addr, &run).await?;
    }
    let _ = tokio::time::timeout(Duration::from_secs(30), warm).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let rss_before = svc.rss_kib()?;

    let counters = Arc::new(Counters::default());
    let gate = Arc::new(Semaphore::new(plan.connect_concurrency.max(1)));
    let started = Instant::now();
    let mut set = JoinSet::new();
    for n in 0..plan.streams {
        set.spawn(client(addr, n, gate.clone(), counters.clone()));
    }
    let target = plan.streams as u64;
    let deadline = Instant::now() + Duration::from_secs(300);
    while counters.ready.load(Ordering::Relaxed) + counters.failed.load(Ordering::Relaxed) < target {
        if Instant::now() > deadline {
            return Err(LoadError::Timeout(
                "AG-UI streams did not open within 300 s".into(),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let connect_s = started.elapsed().as_secs_f64();
    let connected = counters.ready.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = svc.rss_kib()?;
    tokio::time::sleep(plan.hold).await;
    let early_during_hold = counters.early_end.load(Ordering::Relaxed);
    let cancelled_at = Instant::now();
    for n in 0..plan.streams {
        if let Some(run) = active_run(addr, n).await? {
            cancel_run(addr, &run).await?;
        }
    }
    let (mut terminals, mut cancelled, mut errors) = (0u64, 0u64, 0u64);
    let mut first_error = None;
    let ended = tokio::time::timeout(Duration::from_secs(120), async {
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(Ok(Some(k))) => {
                    terminals += 1;
                    cancelled += u64::from(k == "RUN_ERROR");
                }
                Ok(Ok(None)) => {}
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
    if ended.is_err() {
        set.abort_all();
    }
    let delta = rss_after.saturating_sub(rss_before);
    let per_stream = if connected > 0 {
        delta as f64 / connected as f64
    } else {
        0.0
    };
    let held = connected == target && early_during_hold == 0 && terminals == target;
    Ok(json!({
        "scenario": "agui_streams",
        "streams": plan.streams,
        "connected": connected,
        "connect_failures": counters.failed.load(Ordering::Relaxed),
        "first_error": first_error,
        "connect_s": connect_s,
        "closed_early": counters.early_end.load(Ordering::Relaxed),
        "hold_s": plan.hold.as_secs_f64(),
        "terminal_after_cancel": terminals,
        "run_error_cancelled": cancelled,
        "errors": errors,
        "end_s": cancelled_at.elapsed().as_secs_f64(),
        "held": held,
        "server_rss_before_kib": rss_before,
        "server_rss_connected_kib": rss_after,
        "server_kib_per_stream_with_its_run": (per_stream * 100.0).round() / 100.0,
    }))
}
