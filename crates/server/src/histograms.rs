//! Latency histograms for `/metrics`, kept by the `prometheus-client` crate (not hand-formatted):
//! request duration per method, matched route and status class; a run's time to its first event;
//! a run's duration per agent and end state.
//!
//! Labels are bounded by construction: the route is the matched template (`/v1/runs/{run_id}`), never
//! the raw path; an unmatched request counts under `unmatched`; the status is its class (`2xx`…).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{MatchedPath, State};
use axum::http::Request;
use axum::middleware::Next;
use axum::response::Response;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of a request's duration.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: String,
}

/// Labels of a run's timings.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AgentLabels {
    agent: String,
}

/// Labels of a run's duration.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndLabels {
    agent: String,
    state: String,
}

/// Request buckets: 0.25 ms to ~16 s, doubling.
fn request_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 17))
}

/// Time-to-first-event buckets: 1 ms to ~65 s, doubling (a cold CLI takes seconds).
fn first_event_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 17))
}

/// Run-duration buckets: 10 ms to ~12 h, quadrupling.
fn run_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 4.0, 12))
}

/// The service's latency histograms.
#[derive(Debug)]
pub struct Histograms {
    registry: Registry,
    requests: Family<RequestLabels, Histogram, fn() -> Histogram>,
    first_event: Family<AgentLabels, Histogram, fn() -> Histogram>,
    runs: Family<EndLabels, Histogram, fn() -> Histogram>,
}

impl Default for Histograms {
    fn default() -> Self {
        let requests = Family::<RequestLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            request_buckets as fn() -> Histogram,
        );
        let first_event = Family::<AgentLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            first_event_buckets as fn() -> Histogram,
        );
        let runs = Family::<EndLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            run_buckets as fn() -> Histogram,
        );
        let mut registry = Registry::with_prefix("agent_adaptor");
        registry.register(
            "http_request_duration_seconds",
            "HTTP request duration until the response head, by method, matched route and status class",
            requests.clone(),
        );
        registry.register(
            "run_first_event_seconds",
            "Time from a run's admission to its first event after run_started, by agent",
            first_event.clone(),
        );
        registry.register(
            "run_duration_seconds",
            "Time from a run's admission to its recorded end, by agent and end state",
            runs.clone(),
        );
        Histograms {
            registry,
            requests,
            first_event,
            runs,
        }
    }
}

impl Histograms {
    /// Counts one request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let labels = RequestLabels {
            method: method.to_owned(),
            route: route.to_owned(),
            status: format!("{}xx", status / 100),
        };
        self.requests.get_or_create(&labels).observe(took.as_secs_f64());
    }

    /// Counts a run's first event.
    pub fn observe_first_event(&self, agent: &str, took: Duration) {
        let labels = AgentLabels {
            agent: agent.to_owned(),
        };
        self.first_event
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// Counts a run's end.
    pub fn observe_run(&self, agent: &str, state: &str, took: Duration) {
        let labels = EndLabels {
            agent: agent.to_owned(),
            state: state.to_owned(),
        };
        self.runs.get_or_create(&labels).observe(took.as_secs_f64());
    }

    /// The histograms in the Prometheus text format (without OpenMetrics' `# EOF` line, so they can be
    /// followed by the hand-kept counters).
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "could not encode the latency histograms; /metrics goes out without them");
            return String::new();
        }
        match out.strip_suffix("# EOF\n") {
            Some(body) => body.to_owned(),
            None => out,
        }
    }
}

/// Middleware: times every request to its response head and counts it under its matched route.
pub async fn time_requests(State(h): State<Arc<Histograms>>, req: Request<Body>, next: Next) -> Response {
    let method = req.method().as_str().to_owned();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |m| m.as_str().to_owned());
    let start = Instant::now();
    let res = next.run(req).await;
    h.observe_request(&method, &route, res.status().as_u16(), start.elapsed());
    res
}
