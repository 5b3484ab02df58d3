//! Event coordinates on replay (§6.2, `WithEventMeta`): an event read back from the log carries the
//! coordinates it had live (run id, thread key, sequence, time, turn, provider source), not new ones.
//! Live sinks cannot set them: drivers and service sources emit payloads, and the core assigns the
//! envelope.

use std::sync::Arc;

use agent_adaptor::driver::Identity;
use agent_adaptor::driver::Timing;
use agent_adaptor::recorder::{ExposurePolicy, Recorder};
use agent_adaptor::runtime::{Agent, CallOptions, Event};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

#[tokio::test]
async fn replayed_events_restore_their_live_coordinates() {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let agent = Agent::builder(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: std::time::Duration::from_millis(5),
        ..Default::default()
    }))
    .thread_store(store.clone())
    .build();
    let opts = CallOptions::new().identity(Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let stream = agent.thread("replay-key").send("one two three four", opts);
    // A second turn, so turn ids differ within the run.
    stream
        .send(
            "more",
            agent_adaptor::runtime::MessageOptions::new().when(Timing::AfterTurn),
        )
        .await
        .unwrap();
    let live: Vec<Event> = stream.events().collect().await;
    assert!(
        live.iter().any(|e| e.meta.turn_id == "2"),
        "two turns: {:?}",
        live.iter().map(|e| e.meta.turn_id.clone()).collect::<Vec<_>>()
    );
    let rec = Recorder::new(store, "t", "", ExposurePolicy::default());
    rec.record(&live).await.unwrap();
    let all = rec
        .since("replay-key", None, 10_000, &ExposurePolicy::default())
        .await
        .unwrap();
    assert_eq!(all.len(), live.len());
    for (record, original) in all.iter().zip(&live) {
        let replayed = record.replay().expect("a typed event");
        assert_eq!(
            replayed.meta,
            original.meta,
            "{}: the live coordinates are restored",
            original.payload.type_name()
        );
        assert!(!replayed.meta.run_id.is_empty() && replayed.meta.thread_key == "replay-key");
    }
}
