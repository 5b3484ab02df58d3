//! Supplemental input: CodeBuddy starts a concurrent, history-less turn for a frame written mid-turn, so
//! the driver holds input until the turn's `result` and then continues the same session — by the next
//! user frame (control) or by `--resume` in a new process (headless).

use agent_adaptor::runtime::{Agent, CallOptions, MessageOptions, MessageState, Payload, Stream};
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
            stream
                .send(text, MessageOptions::new().id("m-1"))
                .await
                .unwrap();
        }
    }
    assert!(sent, "a text delta was streamed");
    all
}

async fn held_until_the_result(cb: &Cb, opts: CallOptions, mechanism: &str) {
    let agent = Agent::new(cb.driver.clone());
    let stream = agent.send("zzslow answer please", opts);
    let events = send_mid_turn(&stream, "zzsecond after it").await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert_eq!(r.text, "Reply n=2 to zzsecond after it");
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!((m.boundary.as_str(), m.mechanism.as_str()), ("turn_end", mechanism));
    let requests = cb.mock.completion_requests();
    assert_eq!(requests.len(), 2, "no concurrent turn");
    assert_eq!(
        requests[1].user_queries(),
        ["zzslow answer please", "zzsecond after it"],
        "the second turn has the first in its history"
    );
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
async fn interrupt_when(
    stream: &Stream,
    text: &str,
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
            let opts = MessageOptions::new().id("m-int").when(agent_adaptor::driver::Timing::Interrupt);
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
    interrupt_when(&stream, "zzafter the interrupt", |p| {
        matches!(p, Payload::TextDelta(t) if !t.text.is_empty())
    })
    .await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Reply n=2 to zzafter the interrupt");
    let m = &r.messages()[0];
    assert_eq!((m.state, m.boundary.as_str()), (MessageState::Delivered, "interrupt"));
    let requests = cb.mock.completion_requests();
    assert_eq!(requests.len(), 2, "no concurrent turn");
    assert_eq!(
        requests[1].user_queries(),
        ["zzslow answer please", "zzafter the interrupt"],
        "same session, history kept"
    );
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
    let events = interrupt_when(&stream, "zzafter the tool", |p| {
        matches!(p, Payload::Notice(n) if n.kind == "approval.resolved")
    })
    .await;
    let r = stream.result().await.unwrap();
    assert!(r.text.ends_with("to zzafter the tool"), "{}", r.text);
    assert_eq!(r.metadata["processes"], "2", "the poisoned process was replaced");
    assert!(!cb.ws.join("marker-created").exists(), "the command was interrupted");
    let last = cb.mock.completion_requests().pop().unwrap();
    assert_eq!(
        last.user_queries(),
        ["zzsleep then touch", "zzafter the tool"],
        "the resumed session kept its history"
    );
    let turn_ends = events
        .iter()
        .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
        .count();
    assert_eq!(turn_ends, 2, "the interrupted turn is counted");
    cb.assert_reaped();
}
