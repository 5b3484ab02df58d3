//! Envelope and ordering: RunStarted first, Done last and equal to `result()`, strictly increasing
//! sequence numbers, refusals before admission.

use std::sync::Arc;

use agent_adaptor::driver::{Policy, SandboxLevel};
use agent_adaptor::runtime::{Agent, CallOptions, ErrorKind, Payload};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

use super::{assert_envelope, collect};

#[tokio::test]
async fn a_run_is_framed_by_run_started_and_done_and_done_equals_result() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let stream = agent.send("hello there", ());
    assert!(
        stream.run_id().starts_with("run-"),
        "run id is available immediately"
    );
    let events = collect(&stream).await;
    assert_envelope(&events);
    let result = stream.result().await.expect("success");
    let Payload::Done(done) = &events.last().unwrap().payload else {
        unreachable!()
    };
    let done_result = done.outcome.as_ref().expect("done carries success");
    assert!(
        Arc::ptr_eq(done_result, &result),
        "Done carries exactly the result() pointer"
    );
    assert_eq!(result.text, "Reference reply: hello there");
    assert_eq!(result.turns, 1);
    assert_eq!(result.usage.unwrap().output_tokens, 34);
    assert!(events.iter().all(|e| e.meta.run_id == stream.run_id()));
    assert!(
        events
            .iter()
            .any(|e| matches!(e.payload, Payload::RunFinished(_)))
    );
    assert!(events.iter().any(|e| matches!(e.payload, Payload::TurnEnd(_))));
    // result() is repeatable and concurrency-safe.
    let (a, b) = tokio::join!(stream.result(), stream.result());
    assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
}

#[tokio::test]
async fn transcript_and_text_lifecycle_are_complete() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let stream = agent.send("look", ());
    let events = collect(&stream).await;
    let result = stream.result().await.unwrap();
    let transcript_notices = events
        .iter()
        .filter(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "transcript.item"))
        .count();
    assert_eq!(
        transcript_notices,
        result.transcript().len(),
        "transcript notices mirror the transcript"
    );
    assert!(result.raw().terminal.is_some());
}

#[tokio::test]
async fn refusals_before_admission_emit_only_done_and_start_nothing() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(agent_adaptor::driver::Descriptor {
            driver_type: "bare".into(),
            ..Default::default()
        }),
        ..Default::default()
    }));
    let stream = agent.send(
        "x",
        CallOptions::new().policy(Policy {
            sandbox: SandboxLevel::ReadOnly,
            ..Default::default()
        }),
    );
    assert_eq!(stream.run_id(), "", "no run id is invented for a refusal");
    let events = collect(&stream).await;
    assert_eq!(events.len(), 1, "only Done");
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PolicyCapabilityUnsupported);

    let invalid = Agent::new(ReferenceDriver::new(ReferenceConfig {
        invalid: true,
        ..Default::default()
    }));
    let err = invalid.send("x", ()).result().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidDriverConfig);
}

#[tokio::test]
async fn per_call_options_never_leak_into_defaults_under_concurrency() {
    let agent = Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
        .model("default-model")
        .build();
    let mut handles = Vec::new();
    for i in 0..32 {
        let agent = agent.clone();
        handles.push(tokio::spawn(async move {
            let opts = if i % 2 == 0 {
                CallOptions::new().model(format!("m{i}"))
            } else {
                CallOptions::new()
            };
            let r = agent.send("x", opts).result().await.unwrap();
            (i, r.model.clone())
        }));
    }
    for h in handles {
        let (i, model) = h.await.unwrap();
        let expect = if i % 2 == 0 {
            format!("m{i}")
        } else {
            "default-model".into()
        };
        assert_eq!(model, expect);
    }
}

#[tokio::test]
async fn unknown_notice_kinds_and_extensions_pass_through_unchanged() {
    use agent_adaptor::driver::Notice;
    use agent_adaptor::testkit::reference::{Script, Step, unknown_frame_notice};
    let mut vendor = Notice::new("vendor.custom_thing", "something only this vendor says")
        .with_meta("code", "vendor_code")
        .with_meta("x-extension", "1")
        .with_data("nested", serde_json::json!({ "a": [1, 2, { "b": null }] }));
    vendor.data.insert("flag".into(), true.into());
    let frame = unknown_frame_notice(r#"{"type":"brand_new_frame","x":1}"#);
    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![
        agent_adaptor::testkit::reference::Step::Notice(vendor.clone()),
        Step::Notice(frame.clone()),
        Step::text("ok"),
    ])));
    let stream = agent.send("go", ());
    let events = collect(&stream).await;
    assert_envelope(&events);
    let notices: Vec<&Notice> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Notice(n) => Some(n),
            _ => None,
        })
        .collect();
    assert!(
        notices.contains(&&vendor),
        "the unknown kind with every extension: {notices:?}"
    );
    assert!(notices.contains(&&frame), "an unrecognized provider frame too");
    assert!(stream.result().await.is_ok(), "and neither fails the run");
}
