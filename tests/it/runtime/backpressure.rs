//! Backpressure: only content deltas, stdout/stderr chunks and subagent deltas may drop; every
//! drop is reported; blocking mode never drops; result-only releases producers; the worked
//! example of the reference doc (buffer 1) holds exactly.

use std::time::Duration;

use agent_adaptor::driver::{
    Descriptor, Driver, DriverEvent, InvalidConfig, Notice, Request, Response, RunIo, TextDelta,
};
use agent_adaptor::runtime::{Agent, Payload};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
use futures::StreamExt;

use super::{assert_envelope, collect};

fn bulk(count: usize) -> ReferenceDriver {
    ReferenceDriver::scripted(Script::new(vec![
        Step::Bulk { count },
        Step::Notice(Notice::new("checkpoint", "after bulk")),
    ]))
}

#[tokio::test]
async fn drops_are_reported_and_critical_events_survive() {
    let agent = Agent::builder(bulk(5000)).event_buffer(8).build();
    let stream = agent.send("x", ());
    let mut events = stream.events();
    // Consume slowly at first so the buffer overflows.
    let first = events.next().await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut all = vec![first];
    all.extend(events.collect::<Vec<_>>().await);
    assert_envelope(&all);
    let dropped: u64 = all
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Dropped(d) => Some(d.count),
            _ => None,
        })
        .sum();
    let delivered = all
        .iter()
        .filter(|e| matches!(&e.payload, Payload::TextDelta(t) if t.message_id == "bulk"))
        .count();
    assert!(dropped > 0, "a slow consumer with buffer 8 must see drops");
    assert_eq!(
        delivered as u64 + dropped,
        5000,
        "every dropped delta is accounted for"
    );
    for e in &all {
        if let Payload::Dropped(d) = &e.payload {
            assert!(
                d.by_kind.keys().all(|k| k == "text.content"),
                "only content deltas dropped: {:?}",
                d.by_kind
            );
            assert!(d.first_sequence <= d.last_sequence);
        }
    }
    assert!(
        all.iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "checkpoint")),
        "notices are reliable"
    );
    assert!(all.iter().any(|e| matches!(e.payload, Payload::TurnEnd(_))));
    assert!(stream.result().await.is_ok());
}

#[tokio::test]
async fn blocking_mode_never_drops() {
    let agent = Agent::builder(bulk(3000))
        .event_buffer(4)
        .blocking_events()
        .build();
    let stream = agent.send("x", ());
    let mut events = stream.events();
    let mut all = Vec::new();
    while let Some(e) = events.next().await {
        if all.len() % 500 == 0 {
            tokio::task::yield_now().await;
        }
        all.push(e);
    }
    assert_envelope(&all);
    assert!(!all.iter().any(|e| matches!(e.payload, Payload::Dropped(_))));
    let delivered = all
        .iter()
        .filter(|e| matches!(&e.payload, Payload::TextDelta(t) if t.message_id == "bulk"))
        .count();
    assert_eq!(delivered, 3000);
}

#[tokio::test]
async fn result_without_events_releases_blocked_producers_and_keeps_the_critical_log() {
    let agent = Agent::builder(bulk(2000))
        .event_buffer(2)
        .blocking_events()
        .build();
    let stream = agent.send("x", ());
    let result = tokio::time::timeout(Duration::from_secs(10), stream.result())
        .await
        .expect("producers released");
    assert!(result.is_ok());
    let late = collect(&stream).await;
    assert_envelope(&late);
    assert!(
        late.iter().any(|e| matches!(e.payload, Payload::Dropped(_))),
        "a Dropped summary is retained"
    );
    assert!(
        late.iter().any(|e| matches!(e.payload, Payload::TurnEnd(_))),
        "critical events are retained"
    );
    let ordinary = late
        .iter()
        .filter(|e| matches!(&e.payload, Payload::TextDelta(t) if t.message_id == "bulk"))
        .count();
    assert!(
        ordinary <= 2,
        "no full ordinary replay for a late subscriber (got {ordinary})"
    );
}

/// Emits exactly one content delta and one notice, then waits to be cancelled.
struct WorkedExample;

#[async_trait::async_trait]
impl Driver for WorkedExample {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: "worked-example".into(),
            display_name: "worked example".into(),
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, io: RunIo) -> Response {
        io.events
            .emit(DriverEvent::TextDelta(TextDelta {
                message_id: "m".into(),
                text: "a".into(),
                ..Default::default()
            }))
            .await;
        io.events.notice(Notice::new("todo.updated", "critical")).await;
        io.cancel.cancelled().await;
        Response::failed(agent_adaptor::driver::FailureCode::Cancelled, "cancelled")
    }
}

#[tokio::test]
async fn the_worked_example_with_buffer_one() {
    let agent = Agent::builder(WorkedExample).event_buffer(1).build();
    let stream = agent.send("x", ());
    let mut events = stream.events();
    // Let the driver publish into the full buffer before anything is read.
    tokio::time::sleep(Duration::from_millis(50)).await;
    stream.cancel();
    // Drain only after the cancellation has been finalized.
    let outcome = stream.result().await;
    let mut all = Vec::new();
    while let Some(e) = events.next().await {
        all.push(e);
    }
    let seqs: Vec<(u64, &str)> = all
        .iter()
        .map(|e| (e.meta.sequence, e.payload.type_name()))
        .collect();
    assert_eq!(
        seqs,
        vec![
            (1, "run_started"),
            (5, "dropped"),
            (6, "run_finished"),
            (7, "done")
        ],
        "RunStarted seq1; delta seq2 dropped; pending Dropped seq3; critical seq4; cancel -> final Dropped seq5, \
         RunFinished seq6, Done seq7"
    );
    let Payload::Dropped(d) = &all[1].payload else {
        unreachable!()
    };
    assert_eq!(d.count, 3);
    assert_eq!((d.first_sequence, d.last_sequence), (2, 4));
    let kinds: Vec<(&str, u64)> = d.by_kind.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(kinds, vec![("dropped", 1), ("notice", 1), ("text.content", 1)]);
    assert_eq!(outcome.unwrap_err().reason().unwrap().as_str(), "cancelled");
}
