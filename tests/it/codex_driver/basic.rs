//! Text with reasoning, a command round trip, model errors, a crashing CLI, cancellation with reaping,
//! instructions and native structured output, and inspection — against the real CLI.

use std::time::{Duration, Instant};

use agent_adaptor::driver::{Driver, TranscriptKind, notice_kind};
use agent_adaptor::runtime::{Agent, Payload, SchemaOptions};
use agent_adaptor::testkit::mock::responses::{Reply, Script, StreamOutcome};
use futures::StreamExt;

use super::{Cx, code, delta_text, drain, run_error};

#[tokio::test]
async fn text_and_reasoning_stream_with_usage_and_a_valid_checkpoint() {
    let script = Script::new().then(Reply::new().reasoning("Thinking about a greeting.").text_deltas([
        "Hi! ",
        "I am ",
        "the mock ",
        "model.",
    ]));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("say hi", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Hi! I am the mock model.");
    assert_eq!(
        delta_text(&events),
        "Hi! I am the mock model.",
        "deltas rendered once"
    );
    assert_eq!(r.provider, "codex");
    assert_eq!(r.model, "gpt-5.5");
    assert_eq!(r.metadata["transport"], "app-server");
    let thinking: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Thinking(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "Thinking about a greeting.");
    let usage = r.usage.unwrap();
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0, "{usage:?}");
    let kinds: Vec<_> = r.transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(
        kinds,
        [
            TranscriptKind::Init,
            TranscriptKind::Thinking,
            TranscriptKind::Assistant,
            TranscriptKind::Result
        ]
    );
    let raw = r.raw();
    let terminal = raw.terminal.unwrap();
    assert_eq!(terminal.event, "turn/completed");
    assert_eq!(terminal.json["params"]["turn"]["status"], "completed");
    assert!(String::from_utf8_lossy(&raw.stdout).contains("\"userAgent\":\"agent-adaptor/"));
    let req = &cx.mock.requests()[0];
    assert_eq!(
        req.headers.get("originator").map(String::as_str),
        Some("agent-adaptor")
    );
    assert_eq!(req.last_user_text().as_deref(), Some("say hi"));
    assert!(
        cx.codex_home.join("config.toml").is_file(),
        "the SDK-owned CODEX_HOME"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn a_command_round_trip_streams_its_output_as_a_shell_tool() {
    let script = Script::new()
        .then(Reply::new().exec_command("printf 'line-1\\n'; printf 'line-2\\n'"))
        .then(Reply::new().text("Ran it."));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("run two lines", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Ran it.");
    let start = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolCall(c) if c.name == "shell" => Some(c.clone()),
            _ => None,
        })
        .expect("a shell tool start");
    assert_eq!(start.id, "call_mock_0001_0");
    assert!(
        start.args.unwrap()["command"]
            .as_str()
            .unwrap()
            .contains("line-1")
    );
    let result = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolResult(t) => Some(t.result.clone()),
            _ => None,
        })
        .expect("a tool result");
    assert_eq!(result["output"], "line-1\nline-2\n");
    assert_eq!(result["exit_code"], 0);
    let t = r.transcript();
    let res = t.iter().find(|i| i.kind == TranscriptKind::ToolResult).unwrap();
    assert_eq!(res.tool_use_id, "call_mock_0001_0");
    assert_eq!(res.text, "line-1\nline-2\n");
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1]
            .tool_output("call_mock_0001_0")
            .unwrap()
            .contains("line-2")
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn model_errors_fail_with_their_classification_and_partial_results() {
    let script = Script::new()
        .then(Reply::bad_request("Bad request (mock)"))
        .then(Reply::new().text("cut short").drop_after(4))
        .then(Reply::new().text("cut short").drop_after(4));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let outcome = agent.send("first", cx.auto()).result().await;
    assert_eq!(code(&outcome), "agent_error", "{}", run_error(&outcome).message);
    assert!(run_error(&outcome).message.contains("Bad request (mock)"));
    let r = &run_error(&outcome).result;
    assert_eq!(
        r.raw().terminal.unwrap().json["params"]["turn"]["status"],
        "failed"
    );
    assert!(
        r.transcript()
            .iter()
            .any(|i| i.kind == TranscriptKind::Result && i.is_error),
        "the failed turn is in the transcript"
    );

    let stream = agent.send("second", cx.auto());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(code(&outcome), "network_error", "{}", run_error(&outcome).message);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::PROVIDER_RETRY)),
        "the retry is announced"
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs[1].outcome, StreamOutcome::Dropped);
    cx.assert_reaped();
}

#[tokio::test]
async fn a_crashing_cli_is_a_typed_failure() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("codex");
    std::fs::write(&fake, "#!/bin/sh\necho 'boom: cannot start' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let Some(cx) = Cx::with(Script::echo(), |c| c.common.command = Some(fake.clone())).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let outcome = agent.send("hello", cx.auto()).result().await;
    assert_eq!(code(&outcome), "agent_error");
    let err = run_error(&outcome);
    assert!(err.message.contains("initialize"), "{}", err.message);
    assert!(String::from_utf8_lossy(&err.result.raw().stderr).contains("boom: cannot start"));
    assert_eq!(cx.mock.requests().len(), 0);

    let missing = cx.driver.config().clone();
    let mut missing = missing;
    missing.common.command = Some(dir.path().join("does-not-exist"));
    let d = agent_adaptor::providers::codex::CodexDriver::new(missing);
    let outcome = Agent::new(d).send("hello", cx.auto()).result().await;
    assert_eq!(code(&outcome), "agent_error");
    assert!(run_error(&outcome).message.contains("cannot start Codex"));
    cx.assert_reaped();
}

#[tokio::test]
async fn cancel_mid_stream_interrupts_stops_and_reaps_the_cli() {
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let script = Script::new().then(Reply::new().text_paced(words, Duration::from_millis(50)));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("talk slowly", cx.auto());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    let started = Instant::now();
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn instructions_are_developer_instructions_and_schemas_are_native() {
    let script = Script::new().then(Reply::new().text(r#"{"answer":"forty-two","n":42}"#));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let schema = br#"{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"],"additionalProperties":false}"#;
    let opts = cx
        .auto()
        .instructions("Always answer in haiku ZZMARK.")
        .schema_json(schema, SchemaOptions::new());
    let r = agent.send("the answer?", opts).result().await.unwrap();
    assert_eq!(
        r.structured().unwrap(),
        &serde_json::json!({"answer": "forty-two", "n": 42})
    );
    let req = &cx.mock.requests()[0];
    let fmt = req.text_format().expect("text.format");
    assert_eq!(fmt["type"], "json_schema");
    assert_eq!(fmt["schema"]["required"], serde_json::json!(["answer", "n"]));
    let developer = req.texts_of_role("developer").join("\n");
    assert!(
        developer.contains("ZZMARK"),
        "instructions are a developer message"
    );
    assert!(
        !req.last_user_text().unwrap_or_default().contains("ZZMARK"),
        "not prefixed to the prompt"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn environment_and_models_are_inspected_without_a_model_call() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let report = cx.driver.environment().await.unwrap();
    assert!(report.healthy, "{report:?}");
    assert_eq!(report.version.as_deref(), Some("0.171.0"));
    assert_eq!(report.messages, cx.driver.descriptor().messages);
    let models = cx.driver.models().await.unwrap();
    assert!(models.iter().any(|m| m.id == "gpt-5.5"), "{models:?}");
    assert!(
        cx.driver
            .config_schema()
            .unwrap()
            .fields
            .iter()
            .any(|f| f.name == "provider")
    );
    assert!(cx.mock.requests().is_empty());
    cx.assert_reaped();
}

/// Codex starts shell commands outside its own process group, so a group signal alone left them
/// running after a cancel (seen in 5 of 13 runs before the stop ladder learned to find them).
#[tokio::test]
async fn a_command_running_at_cancel_does_not_outlive_the_run() {
    let script = Script::new()
        .then(Reply::new().exec_command("sleep 3 && touch cancel-marker.txt"))
        .then(Reply::new().text("done"));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("run a slow command", cx.auto());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::ToolCall(c) if c.name == "shell") {
            break;
        }
    }
    // Let the command start under Codex before cancelling.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    cx.assert_reaped();
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        !cx.ws.join("cancel-marker.txt").exists(),
        "the command outlived the cancelled run"
    );
}

#[tokio::test]
async fn the_common_config_directory_and_timeout_are_honoured() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let d = dir.clone();
    let words = || (0..100).map(|i| format!("w{i} ")).collect::<Vec<_>>();
    let script = Script::new()
        .then(Reply::new().exec_command("pwd"))
        .then(Reply::new().text("Ran it."))
        .then(Reply::new().text_paced(words(), Duration::from_millis(50)))
        .then(Reply::new().text_paced(words(), Duration::from_millis(50)));
    let Some(cx) = Cx::with(script, move |c| {
        c.common.directory = Some(d);
        c.common.timeout = Some(Duration::from_millis(1500));
    })
    .await
    else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let auto = || {
        agent_adaptor::runtime::CallOptions::new()
            .policy(agent_adaptor::driver::Policy::workspace_write().with_approvals(super::auto_approve()))
    };
    // No workspace option: the command runs in CommonConfig.directory.
    let stream = agent.send("where are you", auto().timeout(Duration::from_secs(60)));
    let events = drain(&stream).await;
    stream.result().await.unwrap();
    let output = events
        .iter()
        .find_map(|e| match &e.payload {
            Payload::ToolResult(t) => t.result["output"].as_str().map(str::to_owned),
            _ => None,
        })
        .expect("the command's output");
    assert_eq!(
        std::path::PathBuf::from(output.trim()),
        dir,
        "the CLI ran in CommonConfig.directory"
    );
    // CommonConfig.timeout bounds the execution (the paced answer takes about 5 s).
    let started = Instant::now();
    let outcome = agent.send("talk slowly", auto()).result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "deadline_exceeded");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    cx.assert_reaped();
    let r = agent
        .send("talk slowly", auto().timeout(Duration::from_secs(60)))
        .result()
        .await;
    assert!(r.is_ok(), "a call's own timeout wins: {r:?}");
}
