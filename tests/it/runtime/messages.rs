//! Supplemental messages: admission vs delivery, Soon/AfterTurn/Interrupt, typed admission errors,
//! turn limits and the limit notice, outcomes, and core-driven continuation through resume.

use std::time::Duration;

use agent_adaptor::driver::{ContinueMode, MessageFailure, MessagePolicy, Policy, Timing};
use agent_adaptor::runtime::{
    Agent, CallOptions, Event, MessageErrorKind, MessageOptions, MessageState, Payload, Stream,
};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

const PROMPT: &str = "one two three four five six seven eight";

fn slow(mode: ContinueMode) -> Agent {
    Agent::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(25),
        continue_mode: mode,
        ..Default::default()
    }))
}

/// Waits for the first assistant content delta, sends, then drains.
async fn send_mid_run(
    stream: &Stream,
    text: &str,
    opts: MessageOptions,
) -> (Result<String, agent_adaptor::runtime::MessageError>, Vec<Event>) {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = None;
    while let Some(e) = events.next().await {
        let is_delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if is_delta && sent.is_none() {
            sent = Some(stream.send(text, opts.clone()).await);
        }
    }
    (sent.expect("a text delta was streamed"), all)
}

fn updates<'a>(events: &'a [Event], id: &str) -> Vec<&'a agent_adaptor::runtime::MessageUpdate> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::MessageUpdate(u) if u.id == id => Some(u),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn soon_is_delivered_inside_the_running_turn() {
    let agent = slow(ContinueMode::InRun);
    let stream = agent.send(PROMPT, ());
    let (sent, events) = send_mid_run(&stream, "also mention tests", MessageOptions::new().id("m-1")).await;
    assert_eq!(sent.unwrap(), "m-1");
    let ups = updates(&events, "m-1");
    assert_eq!(ups.first().unwrap().state, MessageState::Accepted);
    let delivered = ups
        .iter()
        .find(|u| u.state == MessageState::Delivered)
        .expect("delivered");
    assert_eq!(delivered.boundary, "in_turn");
    assert_eq!(delivered.turn, 1);
    let turn_end = events.iter().find_map(|e| match &e.payload {
        Payload::TurnEnd(t) => Some(t),
        _ => None,
    });
    assert_eq!(turn_end.unwrap().message_ids, vec!["m-1".to_string()]);
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 1);
    assert!(r.text.contains("(noted: also mention tests)"));
    assert_eq!(r.messages()[0].state, MessageState::Delivered);
    assert!(
        r.transcript()
            .iter()
            .any(|t| t.message.as_ref().is_some_and(|m| m.id == "m-1"))
    );
}

#[tokio::test]
async fn after_turn_starts_a_new_turn_in_run() {
    let agent = slow(ContinueMode::InRun);
    let stream = agent.send(PROMPT, ());
    let (sent, events) = send_mid_run(
        &stream,
        "next topic",
        MessageOptions::new().when(Timing::AfterTurn),
    )
    .await;
    let id = sent.unwrap();
    let delivered = updates(&events, &id)
        .into_iter()
        .find(|u| u.state == MessageState::Delivered)
        .cloned()
        .unwrap();
    assert_eq!(delivered.boundary, "turn_end");
    assert_eq!(delivered.turn, 2);
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert_eq!(r.text, "Reference reply: next topic");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
            .count(),
        2
    );
}

#[tokio::test]
async fn interrupt_aborts_the_turn_and_continues_with_the_input() {
    let agent = slow(ContinueMode::InRun);
    let stream = agent.send(PROMPT, ());
    let (sent, events) = send_mid_run(
        &stream,
        "stop and do this",
        MessageOptions::new().when(Timing::Interrupt),
    )
    .await;
    let id = sent.unwrap();
    let delivered = updates(&events, &id)
        .into_iter()
        .find(|u| u.state == MessageState::Delivered)
        .cloned()
        .unwrap();
    assert_eq!(delivered.boundary, "interrupt");
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert_eq!(r.text, "Reference reply: stop and do this");
}

#[tokio::test]
async fn admission_errors_are_typed_and_keep_the_text() {
    // Disabled by policy.
    let agent = slow(ContinueMode::InRun);
    let p = Policy {
        messages: MessagePolicy {
            disabled: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let stream = agent.send(PROMPT, CallOptions::new().policy(p));
    let e = stream.send("x", ()).await.unwrap_err();
    assert_eq!(e.kind, MessageErrorKind::Disabled);
    assert_eq!(e.text, "x");
    stream.cancel();
    let _ = stream.result().await;

    // Unsupported timing: Resume-continuation drivers cannot interrupt.
    let agent = slow(ContinueMode::Resume);
    let stream = agent.send(PROMPT, ());
    let e = stream
        .send("x", MessageOptions::new().when(Timing::Interrupt))
        .await
        .unwrap_err();
    assert!(matches!(e.kind, MessageErrorKind::Unsupported(_)));
    let _ = stream.result().await;

    // Finished run.
    let e = stream.send("late", ()).await.unwrap_err();
    assert_eq!(e.kind, MessageErrorKind::RunFinished);
}

#[tokio::test]
async fn the_turn_limit_fails_pending_input_and_warns_before() {
    let agent = slow(ContinueMode::InRun);
    let p = Policy {
        messages: MessagePolicy {
            max_turns: 1,
            ..Default::default()
        },
        ..Default::default()
    };
    let stream = agent.send(PROMPT, CallOptions::new().policy(p));
    let (sent, events) =
        send_mid_run(&stream, "one more", MessageOptions::new().when(Timing::AfterTurn)).await;
    let id = sent.unwrap();
    let r = stream
        .result()
        .await
        .expect("the execution itself succeeds at the limit");
    assert_eq!(r.turns, 1);
    let und = r.undelivered();
    assert_eq!(und.len(), 1);
    assert_eq!(und[0].id, id);
    assert_eq!(und[0].reason, Some(MessageFailure::LimitExceeded));
    assert_eq!(und[0].text, "one more");
    assert!(
        updates(&events, &id)
            .iter()
            .any(|u| u.state == MessageState::Failed)
    );

    let p = Policy {
        messages: MessagePolicy {
            max_turns: 2,
            ..Default::default()
        },
        ..Default::default()
    };
    let stream = agent.send(PROMPT, CallOptions::new().policy(p));
    let (_, events) = send_mid_run(&stream, "again", MessageOptions::new().when(Timing::AfterTurn)).await;
    let notice_pos = events
        .iter()
        .position(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "limit.approaching"));
    let first_turn_end = events
        .iter()
        .position(|e| matches!(e.payload, Payload::TurnEnd(_)));
    assert!(
        notice_pos.is_some(),
        "limit.approaching after min(ceil(0.8*2), 1) = 1 turn"
    );
    assert!(notice_pos > first_turn_end);
    assert_eq!(stream.result().await.unwrap().turns, 2);
}

#[tokio::test]
async fn the_core_continues_through_resume_for_resume_mode_drivers() {
    let agent = slow(ContinueMode::Resume);
    let stream = agent.send(PROMPT, ());
    let (sent, events) = send_mid_run(
        &stream,
        "follow-up",
        MessageOptions::new().when(Timing::AfterTurn),
    )
    .await;
    let id = sent.unwrap();
    let delivered = updates(&events, &id)
        .into_iter()
        .find(|u| u.state == MessageState::Delivered)
        .cloned()
        .unwrap();
    assert_eq!(delivered.mechanism, "resume");
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(
        r.text
            .starts_with("Reference reply: [Additional message from the user"),
        "{}",
        r.text
    );
    assert_eq!(
        r.metadata.get("history_len").map(String::as_str),
        Some("2"),
        "the session was resumed"
    );
}
