//! Runtime contract tests against the reference driver and small purpose-built drivers.

mod agui_registry;
mod approvals;
mod backpressure;
mod contract;
mod inspect;
mod lifecycle;
mod message_rules;
mod messages;
mod ordering;
mod replay;
mod results;
mod services;
mod structured;
mod verdicts;

use agent_adaptor::runtime::{Event, Payload, Stream};
use futures::StreamExt;

/// Drains a stream's events to the end.
pub async fn collect(stream: &Stream) -> Vec<Event> {
    stream.events().collect().await
}

/// The payload type names in order.
pub fn names(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.payload.type_name()).collect()
}

/// Asserts the envelope invariants: RunStarted first (when admitted), Done last, strictly
/// increasing sequence numbers.
pub fn assert_envelope(events: &[Event]) {
    assert!(!events.is_empty(), "no events");
    assert!(
        matches!(events.last().unwrap().payload, Payload::Done(_)),
        "Done must be last: {:?}",
        names(events)
    );
    assert_eq!(
        events.iter().filter(|e| e.is_done()).count(),
        1,
        "exactly one Done"
    );
    if events.len() > 1 {
        assert!(
            matches!(events[0].payload, Payload::RunStarted(_)),
            "RunStarted must be first: {:?}",
            names(events)
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e.payload, Payload::RunStarted(_)))
                .count(),
            1
        );
    }
    for w in events.windows(2) {
        assert!(
            w[0].meta.sequence < w[1].meta.sequence,
            "sequence must strictly increase: {:?}",
            names(events)
        );
    }
}
