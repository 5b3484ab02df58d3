//! The W3C trace context reaches the real `claude` process: a run started inside a traced span spawns
//! its CLI with `TRACEPARENT` carrying the caller's trace id (read back from the live kept process's
//! `/proc/<pid>/environ`), so a CLI that traces itself joins the caller's trace.

use std::collections::HashMap;

use agent_adaptor::runtime::Agent;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Instrument;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

use super::Cl;
use crate::driver_support::{drain, spawned};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn environ(pid: u32) -> HashMap<String, String> {
    let raw = std::fs::read(format!("/proc/{pid}/environ")).expect("the kept process is alive");
    raw.split(|b| *b == 0)
        .filter_map(|kv| {
            let kv = String::from_utf8_lossy(kv);
            let (k, v) = kv.split_once('=')?;
            Some((k.to_owned(), v.to_owned()))
        })
        .collect()
}

#[tokio::test]
async fn the_cli_inherits_the_callers_trace_context() {
    let Some(cl) = Cl::new().await else { return };
    // nextest runs each test in its own process: this subscriber is this test's alone.
    let provider = SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let carrier = HashMap::from([(
        "traceparent".to_owned(),
        format!("00-{TRACE_ID}-00f067aa0ba902b7-01"),
    )]);
    let span = tracing::info_span!("caller");
    span.set_parent(TraceContextPropagator::new().extract(&carrier))
        .unwrap();

    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-trace");
    let events = async {
        let stream = thread.send("hello", cl.opts());
        let events = drain(&stream).await;
        stream.result().await.unwrap();
        events
    }
    .instrument(span)
    .await;
    let pid = *spawned(&events).first().expect("a spawned claude process");
    let env = environ(pid);
    let parent = env.get("TRACEPARENT").unwrap_or_else(|| {
        panic!(
            "no TRACEPARENT in the CLI's environment: {:?}",
            env.keys().collect::<Vec<_>>()
        )
    });
    let parts: Vec<&str> = parent.split('-').collect();
    assert_eq!(parts.len(), 4, "{parent}");
    assert_eq!(parts[0], "00");
    assert_eq!(parts[1], TRACE_ID, "the caller's trace");
    assert_eq!(parts[2].len(), 16);
    assert_eq!(parts[3], "01", "sampled");
    agent.close(std::time::Duration::from_secs(10)).await.unwrap();
}
