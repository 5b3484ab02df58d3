//! OpenTelemetry traces of the service: the `request`, `run` and `standby` spans become OpenTelemetry
//! spans, a request's W3C `traceparent` header becomes the parent of its `request` span, a run joins the
//! trace of the request that started it, and the CLI a run starts inherits `TRACEPARENT`.
//!
//! Trace contexts always exist (so ids propagate to CLIs and across requests); **export** is off unless
//! an OTLP endpoint is configured by the standard variables: `OTEL_EXPORTER_OTLP_ENDPOINT` or
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (OTLP over HTTP, `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf`,
//! the default, or `http/json`; headers, timeout and batching by their `OTEL_*` variables), and not
//! switched off by `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The service name is
//! `OTEL_SERVICE_NAME`, else `agent-adaptor`.

use axum::http::HeaderMap;
use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use tracing::Subscriber;
use tracing_opentelemetry::OpenTelemetryLayer;
use tracing_subscriber::registry::LookupSpan;

/// Why tracing could not be set up as configured.
#[derive(Debug, thiserror::Error)]
pub enum OtelError {
    /// The OTLP exporter refused its configuration (an unsupported protocol, a malformed endpoint).
    #[error("cannot export traces over OTLP: {0}")]
    Exporter(#[from] opentelemetry_otlp::ExporterBuildError),
    /// `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL` names a protocol this build does not speak.
    #[error(
        "OTLP protocol {0:?} is not supported: use http/protobuf or http/json (the OTLP/HTTP port, 4318)"
    )]
    Protocol(String),
}

/// The service's tracer provider: always there for trace contexts, exporting when configured.
#[derive(Debug)]
pub struct Otel {
    provider: SdkTracerProvider,
    exporting: bool,
}

impl Otel {
    /// Builds the provider from the process environment (see the module docs).
    pub fn from_env() -> Result<Otel, OtelError> {
        let exporting = export_configured(|k| std::env::var(k).ok());
        let mut resource = Resource::builder();
        // A non-empty `OTEL_SERVICE_NAME` is already applied by the SDK's environment detector.
        if !std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.trim().is_empty()) {
            resource = resource.with_service_name("agent-adaptor");
        }
        let mut builder = SdkTracerProvider::builder().with_resource(resource.build());
        if exporting {
            let protocol = protocol(|k| std::env::var(k).ok())?;
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(protocol)
                .build()?;
            builder = builder.with_batch_exporter(exporter);
        }
        Ok(Otel {
            provider: builder.build(),
            exporting,
        })
    }

    /// Whether spans leave the process.
    pub fn exporting(&self) -> bool {
        self.exporting
    }

    /// The `tracing` layer that turns spans into OpenTelemetry spans of this provider.
    pub fn layer<S>(&self) -> OpenTelemetryLayer<S, SdkTracer>
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("agent-adaptor"))
            .with_tracked_inactivity(false)
    }

    /// Exports what is still queued and stops the exporter (at shutdown). A failure is logged.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::warn!(error = %e, "OpenTelemetry: flushing the last spans failed");
        }
    }
}

/// Whether the variables (read through `get`) ask for trace export.
pub fn export_configured(get: impl Fn(&str) -> Option<String>) -> bool {
    let set = |k: &str| get(k).is_some_and(|v| !v.trim().is_empty());
    let disabled = get("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    let none = get("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
    (set("OTEL_EXPORTER_OTLP_ENDPOINT") || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) && !disabled && !none
}

/// The OTLP protocol the variables ask for: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
/// `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf` (the specification's default; the exporter crate's
/// own default is JSON when both encodings are built in, hence explicit).
pub fn protocol(get: impl Fn(&str) -> Option<String>) -> Result<Protocol, OtelError> {
    let asked = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .filter(|v| !v.trim().is_empty())
        .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL").filter(|v| !v.trim().is_empty()));
    match asked.as_deref().map(str::trim) {
        None | Some("http/protobuf") => Ok(Protocol::HttpBinary),
        Some("http/json") => Ok(Protocol::HttpJson),
        Some(other) => Err(OtelError::Protocol(other.to_owned())),
    }
}

/// The trace context a request carries in `traceparent`/`tracestate` (an empty context when it carries
/// none or a malformed one: a bad header starts a new trace, it never fails the request).
pub fn parent_of(headers: &HeaderMap) -> Context {
    TraceContextPropagator::new().extract(&Headers(headers))
}

struct Headers<'a>(&'a HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|v| v.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry::trace::TraceContextExt;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn export_needs_an_endpoint_and_is_off_when_disabled() {
        assert!(!export_configured(vars(&[])));
        assert!(!export_configured(vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")])));
        assert!(export_configured(vars(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://127.0.0.1:4318"
        )])));
        assert!(export_configured(vars(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://127.0.0.1:4318/v1/traces"
        )])));
        assert!(!export_configured(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_SDK_DISABLED", "TRUE"),
        ])));
        assert!(!export_configured(vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_TRACES_EXPORTER", "none"),
        ])));
    }

    #[test]
    fn protobuf_unless_json_is_asked_for_and_grpc_is_refused() {
        assert!(matches!(protocol(vars(&[])), Ok(Protocol::HttpBinary)));
        assert!(matches!(
            protocol(vars(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")])),
            Ok(Protocol::HttpJson)
        ));
        assert!(matches!(
            protocol(vars(&[
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ])),
            Ok(Protocol::HttpBinary)
        ));
        let refused = protocol(vars(&[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(refused.to_string().contains("grpc"), "{refused}");
    }

    #[test]
    fn a_valid_traceparent_is_the_parent_and_a_bad_one_is_ignored() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "traceparent",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
                .parse()
                .unwrap(),
        );
        let cx = parent_of(&headers);
        let span = cx.span();
        let sc = span.span_context();
        assert!(sc.is_valid() && sc.is_remote());
        assert_eq!(sc.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(sc.span_id().to_string(), "b7ad6b7169203331");

        headers.insert("traceparent", "00-not-a-trace-01".parse().unwrap());
        assert!(!parent_of(&headers).span().span_context().is_valid());
    }
}
