//! The AG-UI translator (`agui::Translator`) on the reference driver's runs: each translated stream passes
//! the client's verifier rules (moved here from the translator's unit tests when the workspace split put
//! the reference driver in the test kit, a crate above core).

use std::collections::BTreeSet;

use agent_adaptor::agui::interrupts::decision_call_id;
use agent_adaptor::agui::{AguiEvent, Outcome, Translator};
use agent_adaptor::driver::Phase;
use agent_adaptor::runtime::Agent;
use agent_adaptor::runtime::{Event, Payload};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;
use serde_json::{Value, json};

/// A minimal re-implementation of the client's verifier rules, to test the translator.
fn verify(events: &[AguiEvent]) -> Result<(), String> {
    let mut open_text = BTreeSet::new();
    let mut open_tools = BTreeSet::new();
    let mut open_reasoning = BTreeSet::new();
    if !matches!(events.first(), Some(AguiEvent::RunStarted { .. })) {
        return Err("first event must be RUN_STARTED".into());
    }
    for (i, e) in events.iter().enumerate() {
        if i > 0 && events[i - 1].is_terminal() {
            return Err(format!("{e:?} after the terminal"));
        }
        match e {
            AguiEvent::TextMessageStart { message_id, .. } if !open_text.insert(message_id.clone()) => {
                return Err(format!("text {message_id} opened twice"));
            }
            AguiEvent::TextMessageContent { message_id, .. } if !open_text.contains(message_id) => {
                return Err(format!("content for closed text {message_id}"));
            }
            AguiEvent::TextMessageEnd { message_id } if !open_text.remove(message_id) => {
                return Err(format!("end for closed text {message_id}"));
            }
            AguiEvent::ToolCallStart { tool_call_id, .. } if !open_tools.insert(tool_call_id.clone()) => {
                return Err("tool opened twice".into());
            }
            AguiEvent::ToolCallArgs { tool_call_id, .. } if !open_tools.contains(tool_call_id) => {
                return Err("args for closed tool".into());
            }
            AguiEvent::ToolCallEnd { tool_call_id } if !open_tools.remove(tool_call_id) => {
                return Err("end for closed tool".into());
            }
            AguiEvent::ReasoningMessageStart { message_id, role }
                if role != "reasoning" || !open_reasoning.insert(message_id.clone()) =>
            {
                return Err("bad reasoning start".into());
            }
            AguiEvent::ReasoningMessageEnd { message_id } if !open_reasoning.remove(message_id) => {
                return Err("bad reasoning end".into());
            }
            AguiEvent::RunFinished { .. }
                if !(open_text.is_empty() && open_tools.is_empty() && open_reasoning.is_empty()) =>
            {
                return Err("RUN_FINISHED with open lifecycles".into());
            }
            _ => {}
        }
    }
    if events.iter().filter(|e| e.is_terminal()).count() != 1 || !events.last().unwrap().is_terminal() {
        return Err("exactly one terminal, last".into());
    }
    Ok(())
}

async fn translate(prompt: &str) -> Vec<AguiEvent> {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let stream = agent.send(
        prompt,
        agent_adaptor::runtime::CallOptions::new().policy(agent_adaptor::driver::Policy {
            approvals: agent_adaptor::driver::ApprovalPolicy::auto_approve(),
            ..Default::default()
        }),
    );
    let mut t = Translator::new("thread-1", "run-1");
    let mut out = Vec::new();
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        out.extend(t.event(&e));
    }
    out
}

#[tokio::test]
async fn reference_runs_translate_into_verifiable_streams() {
    for prompt in ["hello", "permission please", "please fail"] {
        let events = translate(prompt).await;
        verify(&events).unwrap_or_else(|e| panic!("{prompt}: {e}\n{events:#?}"));
    }
    let ok = translate("hello").await;
    assert!(matches!(ok.last(), Some(AguiEvent::RunFinished { .. })));
    assert!(
        ok.iter()
            .any(|e| matches!(e, AguiEvent::ReasoningMessageStart { .. }))
    );
    assert!(
        ok.iter()
            .any(|e| matches!(e, AguiEvent::ToolCallResult { content, .. } if content == "hello"))
    );
    let failed = translate("please fail").await;
    assert!(matches!(failed.last(), Some(AguiEvent::RunError { code: Some(c), .. }) if c == "agent_error"));
}

#[tokio::test]
async fn a_decision_tool_call_names_the_run_to_answer_it_on() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let stream = agent.send("permission please", agent_adaptor::runtime::CallOptions::new());
    let mut t = Translator::new("thread-1", "run-1");
    let mut events = Vec::new();
    let mut live = stream.events();
    while let Some(e) = live.next().await {
        if let Payload::ApprovalRequest(req) = &e.payload {
            req.approve().expect("approve");
        }
        events.extend(t.event(&e));
    }
    verify(&events).expect("verifiable");
    let call = events
        .iter()
        .find_map(|e| match e {
            AguiEvent::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } if tool_call_name == "dec.permission" => Some(tool_call_id.clone()),
            _ => None,
        })
        .expect("a dec.permission tool call");
    let args: String = events
        .iter()
        .filter_map(|e| match e {
            AguiEvent::ToolCallArgs { tool_call_id, delta } if *tool_call_id == call => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    let args: Value = serde_json::from_str(&args).expect("JSON args");
    let run_id = args["run_id"].as_str().expect("run_id in the args");
    assert!(
        run_id.starts_with("run-"),
        "the execution's run id, got {run_id:?}"
    );
    assert!(args["request_id"].as_str().is_some_and(|s| !s.is_empty()));
}

#[tokio::test]
async fn a_paused_run_and_its_resumption_are_each_verifiable() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let stream = agent.send(
        "a question for you",
        agent_adaptor::runtime::CallOptions::new()
            .policy(agent_adaptor::driver::Policy {
                approvals: agent_adaptor::testkit::reference::ask_everything(),
                ..Default::default()
            })
            .approvals_as_events(),
    );
    let mut live = stream.events();
    let mut first = Translator::new("thread-1", "run-1");
    let mut paused = Vec::new();
    let mut request = None;
    while let Some(e) = live.next().await {
        paused.extend(first.event(&e));
        if let Payload::ApprovalRequest(req) = &e.payload {
            let interrupt = agent_adaptor::agui::interrupts::interrupt_for(req);
            paused.extend(first.pause(Some(Outcome::Interrupt {
                interrupts: vec![interrupt],
            })));
            request = Some(req.clone());
            break;
        }
    }
    verify(&paused).expect("the paused run verifies");
    let Some(AguiEvent::RunFinished {
        outcome: Some(Outcome::Interrupt { interrupts }),
        ..
    }) = paused.last()
    else {
        panic!("an interrupt outcome: {paused:#?}");
    };
    let req = request.expect("a question");
    assert_eq!(
        interrupts[0].tool_call_id.as_deref(),
        Some(decision_call_id(&req.id).as_str())
    );

    // The resumed run reuses the run id; its message ids must not collide with the first run's.
    let mut second = Translator::new("thread-1", "run-1");
    second.expect_decision(&req.id, Some(json!({"decision": "answer", "answer": "green"})));
    req.answer("green").expect("answered");
    let mut resumed = Vec::new();
    while let Some(e) = live.next().await {
        resumed.extend(second.event(&e));
    }
    verify(&resumed).expect("the resumed run verifies");
    let result = resumed
        .iter()
        .find_map(|e| match e {
            AguiEvent::ToolCallResult {
                tool_call_id,
                content,
                ..
            } if *tool_call_id == decision_call_id(&req.id) => Some(content.clone()),
            _ => None,
        })
        .expect("the decision's result in the resumed run");
    assert!(result.contains("green"), "{result}");
    assert!(
        !resumed
            .iter()
            .any(|e| matches!(e, AguiEvent::ToolCallStart { tool_call_id, .. } if *tool_call_id == decision_call_id(&req.id))),
        "the decision tool call is not re-emitted"
    );
    let first_ids: BTreeSet<&String> = paused
        .iter()
        .filter_map(|e| match e {
            AguiEvent::TextMessageStart { message_id, .. } => Some(message_id),
            _ => None,
        })
        .collect();
    assert!(resumed.iter().all(
        |e| !matches!(e, AguiEvent::TextMessageStart { message_id, .. } if first_ids.contains(message_id))
    ));
    assert!(
        stream
            .result()
            .await
            .expect("succeeds")
            .text
            .contains("[answer: green]")
    );
}

#[test]
fn a_tool_call_closes_the_text_and_later_text_gets_a_fresh_id() {
    let mut t = Translator::new("t", "r");
    let meta = |seq: u64| agent_adaptor::runtime::EventMeta {
        run_id: "x".into(),
        thread_key: String::new(),
        sequence: seq,
        time: chrono::Utc::now(),
        turn_id: String::new(),
        source: None,
    };
    let text = |s: &str, seq| Event {
        meta: meta(seq),
        payload: Payload::TextDelta(agent_adaptor::driver::TextDelta {
            message_id: "m".into(),
            text: s.into(),
            ..Default::default()
        }),
    };
    let tool = Event {
        meta: meta(2),
        payload: Payload::ToolCall(agent_adaptor::driver::ToolCall {
            id: "c".into(),
            name: "n".into(),
            phase: Phase::Start,
            ..Default::default()
        }),
    };
    let mut out = t.event(&text("a", 1));
    out.extend(t.event(&tool));
    out.extend(t.event(&text("b", 3)));
    let ids: Vec<&String> = out
        .iter()
        .filter_map(|e| match e {
            AguiEvent::TextMessageStart { message_id, .. } => Some(message_id),
            _ => None,
        })
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1]);
    assert_eq!(
        AguiEvent::TextMessageEnd {
            message_id: "x".into()
        }
        .to_sse(),
        "data: {\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"x\"}\n\n"
    );
}
