//! Logs of the service: a `request` span per HTTP request (method, matched route, tenant, status,
//! latency) made by tower-http's `TraceLayer`, a `run` span per run (run id, agent, thread key, tenant)
//! that the run's pump and execution run in (a `standby` span likewise per Standby), and the subscriber that writes them to stderr as text or
//! JSON lines ([`LogFormat`]), filtered by `RUST_LOG` (default `info`); the same spans go to
//! OpenTelemetry ([`super::otel`]).
//!
//! Spans carry ids and names only: never an API key, a header value, a query string or prompt text.

use std::str::FromStr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::MatchedPath;
use axum::http::{Request, Response};
use serde::{Deserialize, Serialize};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::otel::Otel;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// Human-readable lines (the default).
    #[default]
    Text,
    /// One JSON object per line, with the current span and the span list.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("unknown log format {other:?}: use text or json")),
        }
    }
}

/// The filter when `RUST_LOG` is unset.
pub const DEFAULT_FILTER: &str = "info";

/// What [`init`] set up: whether its subscriber was installed, and the OpenTelemetry provider whose last
/// spans [`Telemetry::shutdown`] flushes.
#[derive(Debug)]
pub struct Telemetry {
    /// `false` when a subscriber was already installed (nothing of this one is in effect).
    pub installed: bool,
    otel: Option<Otel>,
}

impl Telemetry {
    /// Whether spans are exported over OTLP.
    pub fn exporting(&self) -> bool {
        self.otel.as_ref().is_some_and(Otel::exporting)
    }

    /// Flushes the spans still queued for export (call once, at shutdown).
    pub fn shutdown(&self) {
        if let Some(otel) = &self.otel {
            otel.shutdown();
        }
    }
}

/// Installs the global subscriber: `format` lines on stderr, filtered by `RUST_LOG` (else
/// [`DEFAULT_FILTER`]), and the OpenTelemetry layer ([`super::otel`]; exporting when the `OTEL_*`
/// variables ask for it). An unparsable `RUST_LOG` falls back to the default and says so; an OTLP
/// configuration the exporter refuses is logged and the service runs without export.
pub fn init(format: LogFormat) -> Telemetry {
    use tracing_subscriber::EnvFilter;
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let (filter, bad) = match std::env::var("RUST_LOG") {
        Ok(v) if !v.trim().is_empty() => match EnvFilter::try_new(&v) {
            Ok(f) => (f, None),
            Err(e) => (EnvFilter::new(DEFAULT_FILTER), Some(format!("{v:?}: {e}"))),
        },
        _ => (EnvFilter::new(DEFAULT_FILTER), None),
    };
    let (otel, otel_error) = match Otel::from_env() {
        Ok(o) => (Some(o), None),
        Err(e) => (None, Some(e)),
    };
    let lines = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    let lines = match format {
        LogFormat::Text => lines
            .with_ansi(colour(
                std::io::IsTerminal::is_terminal(&std::io::stderr()),
                std::env::var_os("NO_COLOR").as_deref(),
            ))
            .boxed(),
        LogFormat::Json => lines.json().with_current_span(true).with_span_list(true).boxed(),
    };
    let installed = tracing_subscriber::registry()
        .with(filter)
        .with(lines)
        .with(otel.as_ref().map(Otel::layer))
        .try_init()
        .is_ok();
    if let Some(why) = bad {
        tracing::warn!(rust_log = %why, "RUST_LOG is not a valid filter; using {DEFAULT_FILTER}");
    }
    if let Some(e) = otel_error {
        tracing::error!(error = %e, "OpenTelemetry export is off");
    }
    Telemetry { installed, otel }
}

/// Whether log lines carry ANSI colours: only on a terminal, and never when `NO_COLOR` is set to a
/// non-empty value (<https://no-color.org>). Piped or redirected logs (a file, a collector) stay plain.
pub fn colour(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|v| v.is_empty())
}

/// The `request` span of one HTTP request: method and matched route template (`/v1/runs/{run_id}`, not the
/// path, so ids and keys stay out of the span name); `tenant`, `client_ip`, `status` and `latency_ms` are recorded
/// later (by the auth guard and [`on_response`]).
pub fn make_span(req: &Request<Body>) -> Span {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or("<unmatched>", MatchedPath::as_str);
    let request_id = req
        .headers()
        .get("x-request-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let span = tracing::info_span!(
        "request",
        method = %req.method(),
        route,
        request_id,
        tenant = Empty,
        client_ip = Empty,
        status = Empty,
        latency_ms = Empty,
    );
    // The caller's `traceparent` (if any, and well-formed) is the request span's parent. Without the
    // OpenTelemetry layer (a library embedding the router) there is nothing to set: not an error.
    let _ = span.set_parent(super::otel::parent_of(req.headers()));
    span
}

/// Makes `span` (a root span: it outlives its request) a child of the current span's trace, so a run or a
/// Standby is found under the request that started it.
fn joins_current_trace(span: Span) -> Span {
    let _ = span.set_parent(Span::current().context());
    span
}

/// Records the status and latency on the request span and logs one `response` line.
pub fn on_response(res: &Response<Body>, latency: Duration, span: &Span) {
    let status = res.status().as_u16();
    let latency_ms = latency.as_secs_f64() * 1000.0;
    span.record("status", status);
    span.record("latency_ms", latency_ms);
    tracing::info!(status, latency_ms, "response");
}

/// Records the client address of a request (behind a trusted proxy, the one it forwarded) on the
/// current (request) span.
pub fn record_client(ip: std::net::IpAddr) {
    Span::current().record("client_ip", tracing::field::display(ip));
}

/// Records the tenant a request acts for on the current (request) span.
pub fn record_tenant(tenant: &str) {
    Span::current().record("tenant", tenant);
}

/// The `run` span of one run: a root span (a run outlives the request that started it) with the agent,
/// thread key and tenant; the run id is recorded once the runtime assigned it.
pub fn run_span(agent: &str, thread_key: Option<&str>, tenant: &str) -> Span {
    joins_current_trace(tracing::info_span!(
        parent: None,
        "run",
        run_id = Empty,
        agent,
        thread_key = thread_key.unwrap_or(""),
        tenant,
    ))
}

/// The `standby` span of one Standby over HTTP: a root span with the agent, thread key and tenant that its
/// worker, its executions and its recording pump run in.
pub fn standby_span(agent: &str, thread_key: &str, tenant: &str) -> Span {
    joins_current_trace(tracing::info_span!(parent: None, "standby", agent, thread_key, tenant))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_formats_parse_case_insensitively_and_refuse_others() {
        assert_eq!("JSON".parse::<LogFormat>(), Ok(LogFormat::Json));
        assert_eq!("text".parse::<LogFormat>(), Ok(LogFormat::Text));
        assert!("yaml".parse::<LogFormat>().unwrap_err().contains("yaml"));
    }

    #[test]
    fn colour_only_on_a_terminal_and_never_with_no_color() {
        use std::ffi::OsStr;
        assert!(colour(true, None));
        assert!(
            colour(true, Some(OsStr::new(""))),
            "an empty NO_COLOR does not count"
        );
        assert!(!colour(true, Some(OsStr::new("1"))));
        assert!(!colour(false, None));
        assert!(!colour(false, Some(OsStr::new("1"))));
    }
}
