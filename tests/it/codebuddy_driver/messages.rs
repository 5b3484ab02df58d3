//! Supplemental input: CodeBuddy starts a concurrent, history-less turn for a frame written mid-turn, so
//! the driver holds input until the turn's `result` and then continues the same session — by the next
//! user frame (control) or by `--resume` in a new process (headless).

use agent_adaptor::runtime::{Agent, CallOptions, MessageOptions, MessageState, Payload, Stream};
use std::time::Duration;

use futures::StreamExt;

use super::Cb;

/// Sends `text` after the first streamed text delta; drains the stream.
async fn send_mid_turn(stream: &Stream, text: &str) -> Vec<agent_adaptor::runtime::Event> {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if delta && !sent {
            sent = true;
            stream.send(text, MessageOptions::new().id("m-1")).await.unwrap();
        }
    }
    assert!(sent, "a text delta was streamed");
    all
}

/// The conversation of `req` is the first prompt, then the (framed) supplemental message.
fn assert_queries(req: &agent_adaptor::testkit::mock::chat::RequestLog, first: &str, then: &str) {
    let q = req.user_queries();
    assert_eq!(q.len(), 2, "{q:?}");
    assert_eq!(q[0], first, "history kept: {q:?}");
    assert!(q[1].contains(then), "{q:?}");
}

async fn held_until_the_result(cb: &Cb, opts: CallOptions, mechanism: &str) {
    let agent = Agent::new(cb.driver.clone());
    let stream = agent.send("zzslow answer please", opts);
    let events = send_mid_turn(&stream, "zzsecond after it").await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(r.text.starts_with("Reply n=2 to "), "{}", r.text);
    assert!(
        r.text.contains("zzsecond after it"),
        "the core's framing of the message: {}",
        r.text
    );
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("turn_end", mechanism)
    );
    let requests = cb.mock.completion_requests();
    assert_eq!(requests.len(), 2, "no concurrent turn");
    assert_queries(&requests[1], "zzslow answer please", "zzsecond after it");
    assert_eq!(
        requests[0].header("x-conversation-id"),
        requests[1].header("x-conversation-id"),
        "one session"
    );
    let turn_ends = events
        .iter()
        .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
        .count();
    assert_eq!(turn_ends, 2);
    cb.assert_reaped();
}

#[tokio::test]
async fn control_transport_writes_held_input_after_the_result() {
    let Some(cb) = Cb::new().await else { return };
    held_until_the_result(&cb, cb.opts(), "stdin").await;
}

#[tokio::test]
async fn headless_transport_resumes_with_held_input() {
    let Some(cb) = Cb::new().await else { return };
    held_until_the_result(&cb, cb.headless(), "resume").await;
}

/// Drains `stream`, sending an interrupt-timed `text` once `trigger` matches an event.
pub(super) async fn interrupt_when(
    stream: &Stream,
    text: &str,
    delay: std::time::Duration,
    trigger: impl Fn(&Payload) -> bool,
) -> Vec<agent_adaptor::runtime::Event> {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let fire = !sent && trigger(&e.payload);
        all.push(e);
        if fire {
            sent = true;
            tokio::time::sleep(delay).await;
            let opts = MessageOptions::new()
                .id("m-int")
                .when(agent_adaptor::driver::Timing::Interrupt);
            stream.send(text, opts).await.unwrap();
        }
    }
    assert!(sent, "the trigger matched");
    all
}

#[tokio::test]
async fn an_interrupt_mid_stream_waits_for_the_result_then_continues() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let stream = agent.send("zzslow answer please", cb.opts());
    interrupt_when(
        &stream,
        "zzafter the interrupt",
        Duration::ZERO,
        |p| matches!(p, Payload::TextDelta(t) if !t.text.is_empty()),
    )
    .await;
    let r = stream.result().await.unwrap();
    assert!(r.text.starts_with("Reply n=2 to "), "{}", r.text);
    assert!(r.text.contains("zzafter the interrupt"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.boundary.as_str()),
        (MessageState::Delivered, "interrupt")
    );
    let requests = cb.mock.completion_requests();
    assert_eq!(requests.len(), 2, "no concurrent turn");
    assert_queries(&requests[1], "zzslow answer please", "zzafter the interrupt");
    assert_eq!(r.metadata["processes"], "1", "the same process continued");
    cb.assert_reaped();
}

#[tokio::test]
async fn an_interrupt_during_a_tool_resumes_the_session_in_a_new_process() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let approve = agent_adaptor::runtime::ApprovalHandler::new(|req| async move {
        agent_adaptor::runtime::approve_all(&req).map_err(|e| e.to_string())
    });
    let stream = agent.send("zzsleep then touch", cb.opts().on_approval(approve));
    // Two seconds after the approval the six-second command is running.
    let events = interrupt_when(
        &stream,
        "zzafter the tool",
        Duration::from_secs(2),
        |p| matches!(p, Payload::Notice(n) if n.kind == "approval.resolved"),
    )
    .await;
    let r = stream.result().await.unwrap();
    assert!(r.text.contains("zzafter the tool"), "{}", r.text);
    assert_eq!(r.metadata["processes"], "2", "the poisoned process was replaced");
    assert!(
        !cb.ws.join("marker-created").exists(),
        "the command was interrupted"
    );
    let requests = cb.mock.completion_requests();
    let summary: Vec<_> = requests
        .iter()
        .map(|r| {
            (
                r.n,
                r.roles().len(),
                r.header("x-conversation-id").map(str::to_owned),
            )
        })
        .collect();
    assert_queries(requests.last().unwrap(), "zzsleep then touch", "zzafter the tool");
    assert!(requests.len() <= 3, "{summary:?}");
    let turn_ends = events
        .iter()
        .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
        .count();
    assert_eq!(turn_ends, 2, "the interrupted turn is counted");
    cb.assert_reaped();
}
