//! `codex exec --json` scenarios against the Responses mock: text, a command round trip, resume,
//! `--output-schema`, model errors and an unknown resume id.

use agent_adaptor::testkit::mock::responses::{Reply, Script, StreamOutcome};
use serde_json::{Value, json};

use super::fixture;
use super::harness::Lab;

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[tokio::test]
async fn exec_text() {
    let script = Script::new().then(
        Reply::new()
            .reasoning_full("Thinking about a greeting.", "raw thoughts")
            .text("Hi! I am the mock model."),
    );
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["say hi"]).await;
    let ev = run.events();
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    assert_eq!(ev[0]["type"], "thread.started");
    assert!(ev[0]["thread_id"].as_str().is_some_and(|s| !s.is_empty()));
    let msg = ev
        .iter()
        .find(|e| e["item"]["type"] == "agent_message")
        .expect("agent_message");
    assert_eq!(msg["item"]["text"], "Hi! I am the mock model.");
    let last = ev.last().unwrap();
    assert_eq!(last["type"], "turn.completed");
    assert_eq!(last["usage"]["input_tokens"], 100);
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(
        reqs[0].headers.get("authorization").map(String::as_str),
        Some("Bearer dummy-key")
    );
    assert_eq!(reqs[0].last_user_text().as_deref(), Some("say hi"));
    fixture::exec("text", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_command_round_trip() {
    let script = Script::new()
        .then(
            Reply::new()
                .text("I will run it.")
                .exec_command("echo hi-from-tool"),
        )
        .then_with(Script::tool_output_reply);
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["please run echo"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let ev = run.events();
    let started = ev
        .iter()
        .find(|e| e["type"] == "item.started" && e["item"]["type"] == "command_execution")
        .expect("command started");
    assert_eq!(started["item"]["status"], "in_progress");
    let done = ev
        .iter()
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "command_execution")
        .expect("command completed");
    assert_eq!(done["item"]["exit_code"], 0);
    assert_eq!(done["item"]["aggregated_output"], "hi-from-tool\n");
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    let out = reqs[1]
        .tool_output("call_mock_0001_1")
        .expect("function_call_output for the call");
    assert!(out.contains("hi-from-tool"), "{out}");
    fixture::exec("command", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_resume_keeps_thread_and_history() {
    let Some(lab) = Lab::new(Script::echo()).await else {
        return;
    };
    let first = lab.exec(&["remember the word PAPAYA"]).await;
    assert_eq!(first.code, Some(0), "stderr: {}", first.stderr);
    let id = first.events()[0]["thread_id"].as_str().unwrap().to_owned();
    let second = lab.exec(&["resume", &id, "what was the word?"]).await;
    assert_eq!(second.code, Some(0), "stderr: {}", second.stderr);
    let ev = second.events();
    assert_eq!(ev[0]["type"], "thread.started");
    assert_eq!(ev[0]["thread_id"], id.as_str(), "resume keeps the thread id");
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    let users = reqs[1].texts_of_role("user");
    assert!(
        users.iter().any(|t| t == "remember the word PAPAYA"),
        "history replayed: {users:?}"
    );
    assert_eq!(users.last().map(String::as_str), Some("what was the word?"));
    assert!(
        reqs[1]
            .texts_of_role("assistant")
            .iter()
            .any(|t| t.starts_with("ECHO n=1"))
    );
    fixture::exec("resume_first", &first, &reqs[..1], lab.dir.path());
    fixture::exec("resume", &second, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_output_schema() {
    let script = Script::new().then(Reply::new().text(r#"{"name":"Ada Lovelace","born":1815}"#));
    let Some(lab) = Lab::new(script).await else { return };
    let schema = json!({
        "type": "object",
        "properties": { "name": { "type": "string" }, "born": { "type": "integer" } },
        "required": ["name", "born"],
        "additionalProperties": false
    });
    let path = lab.dir.path().join("schema.json");
    std::fs::write(&path, schema.to_string()).unwrap();
    let run = lab
        .exec(&[
            "--output-schema",
            path.to_str().unwrap(),
            "who wrote the first program?",
        ])
        .await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let ev = run.events();
    let msg = ev.iter().find(|e| e["item"]["type"] == "agent_message").unwrap();
    let parsed: Value = serde_json::from_str(msg["item"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(parsed["born"], 1815);
    let reqs = lab.mock.requests();
    let fmt = reqs[0].text_format().expect("text.format sent");
    assert_eq!(fmt["type"], "json_schema");
    assert_eq!(fmt["name"], "codex_output_schema");
    assert_eq!(fmt["strict"], true);
    assert_eq!(fmt["schema"], schema);
    fixture::exec("output_schema", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_model_error_400_fails_the_turn() {
    let script = Script::new().then(Reply::bad_request("Bad request (mock)"));
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["say hi"]).await;
    assert_eq!(run.code, Some(1));
    let ev = run.events();
    let t = types(&ev);
    assert!(t.contains(&"error".to_owned()), "{t:?}");
    assert_eq!(t.last().map(String::as_str), Some("turn.failed"));
    assert!(
        ev.last().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Bad request (mock)")
    );
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 1, "a 400 is not retried");
    fixture::exec("model_error_400", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_model_error_500_then_success_is_retried_silently() {
    let script = Script::new()
        .then(Reply::server_error())
        .then(Reply::new().text("recovered"));
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["say hi"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let ev = run.events();
    assert_eq!(ev.last().unwrap()["type"], "turn.completed");
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].outcome, StreamOutcome::HttpError(500));
    fixture::exec("model_error_500_retried", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_model_error_429_exhausts_retries() {
    let script = Script::new()
        .then(Reply::rate_limited(1))
        .then(Reply::rate_limited(1))
        .then(Reply::rate_limited(1));
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["say hi"]).await;
    assert_eq!(run.code, Some(1));
    let ev = run.events();
    assert_eq!(ev.last().unwrap()["type"], "turn.failed");
    let msg = ev.last().unwrap()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(msg.contains("429"), "{msg}");
    fixture::exec("model_error_429", &run, &lab.mock.requests(), lab.dir.path());
}

#[tokio::test]
async fn exec_dropped_stream_reconnects_then_fails() {
    let script = Script::new()
        .then(Reply::new().text("never finished").drop_after(4))
        .then(Reply::new().text("again").drop_after(4));
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["say hi"]).await;
    assert_eq!(run.code, Some(1));
    let ev = run.events();
    let errors: Vec<&str> = ev
        .iter()
        .filter(|e| e["type"] == "error")
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(errors.iter().any(|m| m.contains("Reconnecting")), "{errors:?}");
    assert_eq!(ev.last().unwrap()["type"], "turn.failed");
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 2, "one retry with stream_max_retries = 1");
    fixture::exec("dropped_stream", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_unknown_resume_id() {
    let Some(lab) = Lab::new(Script::echo()).await else {
        return;
    };
    let run = lab
        .exec(&["resume", "00000000-0000-0000-0000-000000000000", "hi"])
        .await;
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr.contains("no rollout found for thread id"),
        "stderr: {}",
        run.stderr
    );
    assert!(
        lab.mock.requests().is_empty(),
        "no model call for an unknown thread"
    );
    fixture::exec("unknown_resume", &run, &[], lab.dir.path());
}

#[tokio::test]
async fn exec_apply_patch_file_change() {
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from apply_patch\n*** End Patch\n";
    let script = Script::new()
        .then(Reply::new().apply_patch(patch))
        .then(Reply::new().text("Created hello.txt."));
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["-s", "workspace-write", "create hello.txt"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let ev = run.events();
    let fc = ev
        .iter()
        .find(|e| e["type"] == "item.completed" && e["item"]["type"] == "file_change")
        .expect("file_change");
    assert_eq!(fc["item"]["status"], "completed");
    assert_eq!(fc["item"]["changes"][0]["kind"], "add");
    let written = std::fs::read_to_string(lab.env.cwd.join("hello.txt")).unwrap();
    assert_eq!(written, "hello from apply_patch\n");
    let reqs = lab.mock.requests();
    fixture::exec("apply_patch", &run, &reqs, lab.dir.path());
}

#[tokio::test]
async fn exec_web_search_item() {
    let script = Script::new().then(
        Reply::new()
            .web_search("rust serde tolerant enums")
            .text("Found it."),
    );
    let Some(lab) = Lab::new(script).await else { return };
    let run = lab.exec(&["search the web"]).await;
    assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
    let ev = run.events();
    assert!(
        ev.iter().any(|e| e["item"]["type"] == "web_search"),
        "{:?}",
        types(&ev)
    );
    fixture::exec("web_search", &run, &lab.mock.requests(), lab.dir.path());
}
