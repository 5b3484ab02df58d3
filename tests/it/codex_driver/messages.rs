//! Mid-run input on the real app-server: `Soon` steered into the running turn (while the model streams,
//! and while a command runs) and `Interrupt` ending the turn and starting the next one with the input.

use std::time::{Duration, Instant};

use agent_adaptor::driver::Timing;
use agent_adaptor::runtime::{Agent, Event, MessageOptions, MessageState, Payload, Stream};
use agent_adaptor::testkit::mock::responses::{Reply, Script, StreamOutcome};
use futures::StreamExt;

use super::Cx;

fn slow_words() -> Reply {
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    Reply::new().text_paced(words, Duration::from_millis(40))
}

/// Reads events until `ready` holds for one, then sends `text` with `timing`; returns every event.
async fn send_when(
    stream: &Stream,
    ready: impl Fn(&Event) -> bool,
    text: &str,
    id: &str,
    timing: Timing,
) -> (Vec<Event>, Duration) {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent_at = None;
    while let Some(e) = events.next().await {
        let go = sent_at.is_none() && ready(&e);
        all.push(e);
        if go {
            sent_at = Some(Instant::now());
            stream
                .send(text, MessageOptions::new().id(id).when(timing))
                .await
                .unwrap();
        }
    }
    let took = sent_at.expect("the trigger event arrived").elapsed();
    (all, took)
}

fn first_delta(e: &Event) -> bool {
    matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty())
}

fn notices<'a>(events: &'a [Event], source: &str) -> Vec<&'a agent_adaptor::driver::Notice> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Notice(n) if n.metadata.get("source").map(String::as_str) == Some(source) => Some(n),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn soon_input_is_steered_into_the_streaming_turn() {
    let Some(cx) = Cx::new(Script::new().then(slow_words())).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("talk slowly", cx.auto());
    let (events, took) = send_when(&stream, first_delta, "zz steer now", "m-steer", Timing::Soon).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 1, "the steer joins the running turn");
    assert!(r.text.starts_with("ECHO n=2: "), "{}", r.text);
    assert!(r.text.contains("zz steer now"), "{}", r.text);
    assert!(
        took < Duration::from_secs(5),
        "delivered long before the 8 s answer would end: {took:?}"
    );
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!((m.boundary.as_str(), m.mechanism.as_str()), ("in_turn", "steer"));
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].outcome,
        StreamOutcome::ClientGone,
        "Codex abandons the streaming response"
    );
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "talk slowly"), "{users:?}");
    assert!(
        users.last().is_some_and(|t| t.contains("zz steer now")),
        "{users:?}"
    );
    assert!(
        reqs[1].texts_of_role("assistant").is_empty(),
        "the partial text is not in history"
    );
    let abandoned = notices(&events, "codex.steer");
    assert_eq!(abandoned.len(), 1, "the abandoned response is reported");
    assert!(
        abandoned[0].data["discarded_text"]
            .as_str()
            .is_some_and(|t| t.starts_with("w0 ")),
        "{abandoned:?}"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn soon_input_during_a_command_arrives_after_its_output() {
    let script = Script::new()
        .then(Reply::new().exec_command("sleep 1 && echo slept"))
        .otherwise(Script::echo_reply);
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("run it", cx.auto());
    let tool_started = |e: &Event| matches!(&e.payload, Payload::ToolCall(c) if c.name == "shell");
    let (events, _) = send_when(&stream, tool_started, "zz also this", "m-tool", Timing::Soon).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 1);
    assert!(r.text.contains("zz also this"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.mechanism.as_str()),
        (MessageState::Delivered, "steer")
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs[0].outcome, StreamOutcome::Completed, "nothing abandoned");
    let input = reqs[1].input();
    let output_at = input.iter().position(|i| i["type"] == "function_call_output");
    let steer_at = input
        .iter()
        .rposition(|i| i["type"] == "message" && i["content"].to_string().contains("zz also this"));
    assert!(
        matches!((output_at, steer_at), (Some(o), Some(s)) if o < s),
        "the steer follows the command output: {:?}",
        reqs[1].input_summary()
    );
    assert!(notices(&events, "codex.steer").is_empty());
    cx.assert_reaped();
}

#[tokio::test]
async fn interrupt_input_ends_the_turn_and_starts_the_next_with_it() {
    let Some(cx) = Cx::new(Script::new().then(slow_words())).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("talk slowly", cx.auto());
    let (events, took) = send_when(
        &stream,
        first_delta,
        "zz stop and do this",
        "m-int",
        Timing::Interrupt,
    )
    .await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2, "the interrupted turn and the new one");
    assert!(r.text.starts_with("ECHO n=2: "), "{}", r.text);
    assert!(r.text.contains("zz stop and do this"), "{}", r.text);
    assert!(took < Duration::from_secs(5), "{took:?}");
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("interrupt", "interrupt")
    );
    let turn_ends: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TurnEnd(t) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(turn_ends.len(), 2);
    assert!(turn_ends[0].error.is_some(), "the first turn was interrupted");
    assert!(turn_ends[1].error.is_none());
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].outcome, StreamOutcome::ClientGone);
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|u| u.contains("<turn_aborted>")), "{users:?}");
    assert!(
        users.last().is_some_and(|u| u.contains("zz stop and do this")),
        "{users:?}"
    );
    assert_eq!(notices(&events, "codex.interrupt").len(), 1);
    cx.assert_reaped();
}
