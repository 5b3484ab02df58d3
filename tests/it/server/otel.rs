//! OpenTelemetry export of `agent-adaptor serve`: with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at an
//! in-process OTLP/HTTP collector on loopback, a request carrying a W3C `traceparent` yields a `request`
//! span that is the caller's child and a `run` span in the same trace under it — for a REST run, an
//! AG-UI run and a Standby. (When export is on is `server::otel`'s unit tests.)

use std::io::BufReader;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use prost::Message;
use serde_json::{Value, json};

use super::{all_frames, client, listening_url, serve_command, sigterm};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// One exported span, ids in hex.
#[derive(Debug, Clone)]
struct Exported {
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    service: String,
}

type Seen = Arc<Mutex<Vec<Exported>>>;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn traces(State(seen): State<Seen>, body: Bytes) -> &'static str {
    let req = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf export");
    let mut seen = seen.lock().unwrap();
    for rs in req.resource_spans {
        let service = rs
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|a| a.key == "service.name")
            .and_then(|a| a.value.as_ref())
            .map(|v| format!("{:?}", v.value))
            .unwrap_or_default();
        for span in rs.scope_spans.into_iter().flat_map(|s| s.spans) {
            seen.push(Exported {
                name: span.name,
                trace_id: hex(&span.trace_id),
                span_id: hex(&span.span_id),
                parent: hex(&span.parent_span_id),
                service: service.clone(),
            });
        }
    }
    ""
}

/// An OTLP/HTTP collector on loopback; its base URL and what it received.
async fn collector() -> (String, Seen) {
    let seen: Seen = Arc::default();
    let app = axum::Router::new()
        .route("/v1/traces", post(traces))
        .with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

/// Starts a run with `traceparent` and reads its events to the end.
async fn traced_run(base: &str) {
    let started: Value = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .header("traceparent", format!("00-{TRACE_ID}-{CALLER_SPAN}-01"))
        .json(&json!({"prompt": "hello there"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run = started["run_id"].as_str().expect("a run id").to_owned();
    let frames = all_frames(
        client()
            .get(format!("{base}/v1/runs/{run}/events"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(
        frames.iter().any(|f| f.event.as_deref() == Some("done")),
        "the run ended: {frames:?}"
    );
}

/// A `serve` exporting to a fresh collector: the child, its base URL and what the collector received.
async fn exporting_serve() -> (std::process::Child, String, Seen) {
    let (otlp, seen) = collector().await;
    let mut child = serve_command()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &otlp)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env_remove("OTEL_SERVICE_NAME")
        .env_remove("OTEL_SDK_DISABLED")
        .env_remove("OTEL_TRACES_EXPORTER")
        .spawn()
        .unwrap();
    let base = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    (child, base, seen)
}

/// Waits (at most 10 s) until the collector holds a span named `name` in `trace`; then every span seen.
async fn spans_until(seen: &Seen, trace: &str, name: &str) -> Vec<Exported> {
    let mut spans = Vec::new();
    for _ in 0..100 {
        spans = seen.lock().unwrap().clone();
        if spans.iter().any(|s| s.name == name && s.trace_id == trace) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    spans
}

/// The span named `name` in `trace`, and the `request` span of that trace under `caller`; asserts the
/// first is the second's child.
fn started_under_its_request(spans: &[Exported], trace: &str, caller: &str, name: &str) {
    let request = spans
        .iter()
        .find(|s| s.name == "request" && s.trace_id == trace && s.parent == caller)
        .unwrap_or_else(|| panic!("no request span in {trace} under {caller}: {spans:#?}"));
    let span = spans
        .iter()
        .find(|s| s.name == name && s.trace_id == trace)
        .unwrap_or_else(|| panic!("no {name} span in the caller's trace {trace}: {spans:#?}"));
    assert_eq!(
        span.parent, request.span_id,
        "{name}: under the request that started it"
    );
}

#[tokio::test]
async fn a_traceparent_request_and_its_run_are_exported_in_the_callers_trace() {
    let (child, base, seen) = exporting_serve().await;
    traced_run(&base).await;
    let spans = spans_until(&seen, TRACE_ID, "run").await;
    sigterm(&child);
    let mut child = child;
    let _ = child.wait();

    let start = spans
        .iter()
        .find(|s| s.name == "request" && s.parent == CALLER_SPAN)
        .unwrap_or_else(|| panic!("no request span under the caller's span: {spans:#?}"));
    assert_eq!(start.trace_id, TRACE_ID, "the caller's trace");
    assert!(start.service.contains("agent-adaptor"), "{start:?}");
    let run = spans
        .iter()
        .find(|s| s.name == "run")
        .unwrap_or_else(|| panic!("no run span: {spans:#?}"));
    assert_eq!(run.trace_id, TRACE_ID, "the run joins the caller's trace");
    assert_eq!(run.parent, start.span_id, "under the request that started it");
    assert_ne!(run.span_id, start.span_id);
}

/// The AG-UI route and a Standby join the caller's trace like a REST run: the AG-UI `run` span and the
/// Standby's `standby` span are children of the `request` span of the request that started them.
#[tokio::test]
async fn agui_runs_and_standbys_join_the_callers_trace() {
    const AGUI_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    const STANDBY_TRACE: &str = "5b8efff798038103d269b633813fc60c";
    let (mut child, base, seen) = exporting_serve().await;
    let c = client();

    let agui = c
        .post(format!("{base}/v1/agents/reference/agui"))
        .header("accept", "text/event-stream")
        .header("traceparent", format!("00-{AGUI_TRACE}-{CALLER_SPAN}-01"))
        .json(&json!({
            "threadId": "otel-agui", "runId": "otel-r1", "protocolVersion": "1.0", "state": {},
            "messages": [{"id": "u-1", "role": "user", "content": "hello agui"}],
            "tools": [], "context": [], "forwardedProps": {}
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(agui.status(), 200);
    let frames = all_frames(agui).await;
    assert_eq!(
        frames.last().map(|f| f.json()["type"].clone()),
        Some(json!("RUN_FINISHED")),
        "{frames:?}"
    );

    let standby = format!("{base}/v1/agents/reference/threads/otel-sb/standby");
    let opened = c
        .post(&standby)
        .header("traceparent", format!("00-{STANDBY_TRACE}-{CALLER_SPAN}-01"))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 201);
    assert!(c.delete(&standby).send().await.unwrap().status().is_success());

    spans_until(&seen, AGUI_TRACE, "run").await;
    let spans = spans_until(&seen, STANDBY_TRACE, "standby").await;
    sigterm(&child);
    let _ = child.wait();
    started_under_its_request(&spans, AGUI_TRACE, CALLER_SPAN, "run");
    started_under_its_request(&spans, STANDBY_TRACE, CALLER_SPAN, "standby");
}
