//! Structured output: native through the driver, prompt + local validation otherwise, policy
//! violations, return-invalid, and refusals before launch.

use agent_adaptor::driver::{ContinueMode, StructuredCaps};
use agent_adaptor::runtime::{Agent, CallOptions, ErrorKind, FailureReason, SchemaOptions, run_as};
use agent_adaptor::testkit::reference::{
    ReferenceConfig, ReferenceDriver, Script, Step, reference_descriptor,
};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema, PartialEq)]
struct Ok_ {
    ok: bool,
}

fn with_caps(caps: StructuredCaps, script: Option<Script>) -> Agent {
    let mut d = reference_descriptor(ContinueMode::InRun);
    d.structured = caps;
    Agent::new(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(d),
        script,
        ..Default::default()
    }))
}

#[tokio::test]
async fn run_as_uses_native_schema_and_decodes() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let (value, result): (Ok_, _) = run_as(&agent, "give me json", CallOptions::new()).await.unwrap();
    assert_eq!(value, Ok_ { ok: true });
    assert_eq!(result.structured().unwrap()["ok"], true);
}

#[tokio::test]
async fn prompt_mode_validates_locally() {
    let prompt_only = StructuredCaps {
        native: false,
        prompt_validate: true,
        native_with_hitl: false,
    };
    let good = with_caps(
        prompt_only.clone(),
        Some(Script::new(vec![Step::text(r#"{"ok": false}"#)])),
    );
    let (v, _): (Ok_, _) = run_as(&good, "x", CallOptions::new()).await.unwrap();
    assert_eq!(v, Ok_ { ok: false });

    let bad = with_caps(
        prompt_only.clone(),
        Some(Script::new(vec![Step::text(r#"{"ok": "maybe"}"#)])),
    );
    let err = bad
        .send("x", CallOptions::new().schema::<Ok_>(SchemaOptions::new()))
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.reason(), Some(FailureReason::PolicyViolation));

    let kept = bad
        .send(
            "x",
            CallOptions::new().schema::<Ok_>(SchemaOptions::new().return_invalid()),
        )
        .result()
        .await
        .expect("return_invalid keeps a successful result");
    assert!(kept.decode::<Ok_>().is_err(), "but decode still fails");
}

#[tokio::test]
async fn unavailable_combinations_fail_before_launch() {
    let none = with_caps(StructuredCaps::default(), None);
    let stream = none.send("x", CallOptions::new().schema::<Ok_>(SchemaOptions::new()));
    assert_eq!(stream.run_id(), "");
    assert_eq!(
        stream.result().await.unwrap_err().kind(),
        ErrorKind::StructuredOutputUnsupported
    );
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let err = agent
        .send(
            "x",
            CallOptions::new().schema_json(b"{\"type\": 5}", SchemaOptions::new()),
        )
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidOutputSchema);
}

#[tokio::test]
async fn invalid_native_output_is_a_policy_violation_unless_return_invalid_keeps_the_result() {
    let native = StructuredCaps {
        native: true,
        prompt_validate: false,
        native_with_hitl: true,
    };
    let bad = with_caps(
        native,
        Some(Script::new(vec![Step::Structured(
            serde_json::json!({ "ok": "maybe" }),
        )])),
    );
    let err = bad
        .send("x", CallOptions::new().schema::<Ok_>(SchemaOptions::new()))
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Run);
    assert_eq!(err.reason(), Some(FailureReason::PolicyViolation));
    let partial = &err.as_run().expect("a run error").result;
    assert_eq!(
        partial.text, r#"{"ok":"maybe"}"#,
        "the partial result keeps the output"
    );
    assert!(partial.decode::<Ok_>().is_err());

    let kept = bad
        .send(
            "x",
            CallOptions::new().schema::<Ok_>(SchemaOptions::new().return_invalid()),
        )
        .result()
        .await
        .expect("return_invalid keeps a successful result");
    assert_eq!(kept.text, r#"{"ok":"maybe"}"#);
    assert!(kept.structured().is_none(), "no validated output");
    assert!(
        matches!(
            kept.decode::<Ok_>(),
            Err(agent_adaptor::runtime::DecodeError::Invalid(_))
        ),
        "decode reports the validation failure"
    );
}
