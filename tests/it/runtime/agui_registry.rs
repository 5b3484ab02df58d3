//! The AG-UI bridge's `RunRegistry` (spec §17) through the library: `send` starts on an idle thread and
//! supplements an active execution (reporting which), with the latest user id, a human author and
//! `Soon`, the receipt on the original execution's events; `send_active` never starts and answers
//! `ErrRunFinished` when nothing is active; `forget` removes only the execution it names.

use std::time::Duration;

use agent_adaptor::agui::{RunAgentInput, RunRegistry, SendError};
use agent_adaptor::driver::{AuthorKind, Timing};
use agent_adaptor::runtime::{Agent, MessageErrorKind, MessageState, Payload};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

fn input(messages: serde_json::Value) -> RunAgentInput {
    serde_json::from_value(serde_json::json!({"threadId": "t", "runId": "r", "messages": messages})).unwrap()
}

fn slow() -> Agent {
    Agent::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(25),
        ..Default::default()
    }))
}

#[tokio::test]
async fn agui_registry_starts_when_idle_and_supplements_the_active_execution() {
    let agent = slow();
    let registry = RunRegistry::default();
    let thread = agent.thread("agui:1:t");
    assert!(
        registry.active("agui:1:t").is_none(),
        "a zero registry is usable and empty"
    );

    let first =
        input(serde_json::json!([{"id": "u1", "role": "user", "content": "one two three four five six"}]));
    let (stream, supplemented) = registry.send(&thread, &first, ()).await.unwrap();
    assert!(!supplemented, "an idle thread starts");
    assert_eq!(
        registry.active("agui:1:t").map(|s| s.run_id().to_owned()),
        Some(stream.run_id().to_owned())
    );
    let mut events = stream.events();
    // Wait until the execution streams, then the next user message supplements it.
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    let second = input(serde_json::json!([
        {"id": "u1", "role": "user", "content": "one two three four five six"},
        {"id": "a1", "role": "assistant", "content": "..."},
        {"id": "u2", "role": "user", "content": "also this"}
    ]));
    let (same, supplemented) = registry.send(&thread, &second, ()).await.unwrap();
    assert!(supplemented, "an active execution is supplemented");
    assert_eq!(same.run_id(), stream.run_id());
    let by_active = registry.send_active("agui:1:t", &second).await.unwrap();
    assert_eq!(by_active.run_id(), stream.run_id());

    // The receipt is on the original execution's events, under the latest user id, human, Soon.
    let mut accepted = None;
    while let Some(e) = events.next().await {
        if let Payload::MessageUpdate(u) = &e.payload
            && u.id == "u2"
            && u.state == MessageState::Accepted
        {
            accepted = Some(u.clone());
        }
    }
    let r = stream.result().await.unwrap();
    assert!(
        accepted.is_some(),
        "the supplement's receipt is on the original stream"
    );
    let outcome = r
        .messages()
        .iter()
        .find(|m| m.id == "u2")
        .cloned()
        .expect("u2's outcome");
    assert_eq!(outcome.from.kind, AuthorKind::Human);
    assert_eq!(outcome.timing, Timing::Soon);

    // Finished: not active any more; forget of another execution leaves a later one.
    assert!(registry.active("agui:1:t").is_none());
    let (third, supplemented) = registry.send(&thread, &first, ()).await.unwrap();
    assert!(
        !supplemented,
        "a finished execution is not supplemented: a new one starts"
    );
    registry.forget("agui:1:t", &stream);
    assert_eq!(
        registry.active("agui:1:t").map(|s| s.run_id().to_owned()),
        Some(third.run_id().to_owned()),
        "forgetting an older execution keeps the newer one"
    );
    registry.forget("agui:1:t", &third);
    assert!(registry.active("agui:1:t").is_none(), "forget removes it");
    third.cancel();
    let _ = third.result().await;
}

#[tokio::test]
async fn agui_registry_send_active_never_starts_and_reports_run_finished() {
    let agent = slow();
    let registry = RunRegistry::new();
    let msg = input(serde_json::json!([{"id": "u9", "role": "user", "content": "anyone there?"}]));
    let err = registry.send_active("agui:1:idle", &msg).await.unwrap_err();
    assert_eq!(err.kind, MessageErrorKind::RunFinished, "ErrRunFinished");
    assert_eq!(err.id, "u9");
    assert!(registry.active("agui:1:idle").is_none(), "nothing was started");
    // No user text: typed, not a panic.
    let empty = input(serde_json::json!([]));
    let thread = agent.thread("agui:1:idle");
    assert_eq!(
        registry.send(&thread, &empty, ()).await.unwrap_err(),
        SendError::NoInput
    );
}
