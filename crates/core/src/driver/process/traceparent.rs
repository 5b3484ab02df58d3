//! The W3C trace context a child process inherits: `TRACEPARENT` (and `TRACESTATE`) of the span the
//! process is started in, the environment-variable carrier of OpenTelemetry's context propagation.
//!
//! A CLI started inside a run's span gets that run's trace, so an agent CLI that traces itself joins the
//! caller's trace. A process kept for reuse keeps the context of the run that started it (a process's
//! environment is fixed at spawn), and the variables are never part of a kept process's signature. Outside
//! any OpenTelemetry-aware subscriber the span has no context and nothing is set.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// `TRACEPARENT` and, when the trace carries one, `TRACESTATE` for the current span; empty when the
/// current span has no valid trace context.
pub fn env() -> Vec<(&'static str, String)> {
    let cx = tracing::Span::current().context();
    if !cx.span().span_context().is_valid() {
        return Vec::new();
    }
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&cx, &mut carrier);
    let mut out = Vec::new();
    if let Some(parent) = carrier.remove("traceparent") {
        out.push(("TRACEPARENT", parent));
    }
    if let Some(state) = carrier.remove("tracestate").filter(|s| !s.is_empty()) {
        out.push(("TRACESTATE", state));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_subscriber_no_variables() {
        let span = tracing::info_span!("run");
        let _entered = span.enter();
        assert!(env().is_empty());
    }
}
