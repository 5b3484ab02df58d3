//! Supplemental input over the bidirectional transport, natively: Soon is written at once with a client
//! `uuid` (`priority:"next"`) and folded into the running turn's next model request (or run as the next
//! turn when none follows), AfterTurn is written after the `result`, Interrupt sends `interrupt` first.
//! Each is acknowledged once, when the CLI reports its delivery.

use std::time::Duration;

use agent_adaptor::driver::Timing;
use agent_adaptor::runtime::{
    Agent, ApprovalHandler, Event, MessageOptions, MessageState, Payload, Stream, approve_all,
};
use futures::StreamExt;

use super::Cl;

/// Drains `stream`, sending `text` with `timing` after `delay` once `trigger` matches an event.
async fn send_when(
    stream: &Stream,
    text: &str,
    timing: Timing,
    delay: Duration,
    trigger: impl Fn(&Payload) -> bool,
) -> Vec<Event> {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let fire = !sent && trigger(&e.payload);
        all.push(e);
        if fire {
            sent = true;
            tokio::time::sleep(delay).await;
            let opts = MessageOptions::new().id("m-1").when(timing);
            stream.send(text, opts).await.unwrap();
        }
    }
    assert!(sent, "the trigger matched");
    all
}

fn first_delta(p: &Payload) -> bool {
    matches!(p, Payload::TextDelta(t) if !t.text.is_empty())
}

fn approve() -> ApprovalHandler {
    ApprovalHandler::new(|req| async move { approve_all(&req).map_err(|e| e.to_string()) })
}

#[tokio::test]
async fn a_soon_message_during_a_tool_is_folded_into_the_running_turn() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("please run sleep", cl.opts().on_approval(approve()));
    send_when(
        &stream,
        "SECOND while tool runs",
        Timing::Soon,
        Duration::from_millis(300),
        |p| matches!(p, Payload::ToolCall(c) if c.name == "Bash"),
    )
    .await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 1, "one provider turn");
    assert!(r.text.starts_with("Tool said: done | also got"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("in_turn", "in_turn")
    );
    let requests = cl.requests();
    assert_eq!(requests.len(), 2);
    let texts = requests[1].last_user_texts().join("|");
    assert!(
        texts.contains("The user sent a new message while you were working")
            && texts.contains("SECOND while tool runs"),
        "{texts}"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn a_soon_message_during_a_text_only_turn_runs_as_the_next_turn() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("a slow answer please", cl.opts());
    send_when(
        &stream,
        "SECOND while streaming",
        Timing::Soon,
        Duration::ZERO,
        first_delta,
    )
    .await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(r.text.starts_with("ECHO n=2: "), "{}", r.text);
    assert!(r.text.contains("SECOND while streaming"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.boundary.as_str()),
        (MessageState::Delivered, "in_turn")
    );
    assert_eq!(r.metadata["processes"], "1");
    cl.assert_reaped();
}

#[tokio::test]
async fn an_after_turn_message_waits_for_the_result() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("please run sleep", cl.opts().on_approval(approve()));
    send_when(
        &stream,
        "LATER please",
        Timing::AfterTurn,
        Duration::from_millis(300),
        |p| matches!(p, Payload::ToolCall(c) if c.name == "Bash"),
    )
    .await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(
        r.text.starts_with("ECHO n=3: ") && r.text.contains("LATER please"),
        "{}",
        r.text
    );
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.boundary.as_str()),
        (MessageState::Delivered, "turn_end")
    );
    let second = &cl.requests()[1];
    assert!(
        !second.last_user_texts().join("|").contains("LATER please"),
        "not folded into the tool turn"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn an_interrupt_message_stops_the_turn_and_runs_next_in_the_same_process() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("a slow answer please", cl.opts());
    let events = send_when(
        &stream,
        "AFTER INTERRUPT",
        Timing::Interrupt,
        Duration::ZERO,
        first_delta,
    )
    .await;
    let r = stream.result().await.unwrap();
    assert!(
        r.text.starts_with("ECHO n=2: ") && r.text.contains("AFTER INTERRUPT"),
        "{}",
        r.text
    );
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.boundary.as_str(), m.mechanism.as_str()),
        (MessageState::Delivered, "interrupt", "interrupt")
    );
    assert_eq!(r.metadata["processes"], "1", "the same process continued");
    let turn_ends = events
        .iter()
        .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
        .count();
    assert_eq!(turn_ends, 2, "the interrupted turn is counted");
    let history = cl.requests()[1].all_texts().join("|");
    assert!(history.contains("[Request interrupted by user]"), "{history}");
    cl.assert_reaped();
}
