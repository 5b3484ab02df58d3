//! `POST /v1/agents/{agent}/agui`: RunAgentInput in, AG-UI events out.

use std::time::Duration;

use agent_adaptor::agui::thread_key;
use agent_adaptor::server::ServerConfig;
use agent_adaptor::store::{Page, RunState};
use serde_json::{Value, json};

use super::{all_frames, client, error_code, eventually, read_frames, start, start_with};

fn input(thread: &str, run: &str, text: &str) -> Value {
    json!({
        "threadId": thread, "runId": run, "protocolVersion": "1.0", "state": {},
        "messages": [{"id": format!("u-{run}"), "role": "user", "content": text}],
        "tools": [], "context": [], "forwardedProps": {}
    })
}

fn types(frames: &[super::Frame]) -> Vec<String> {
    frames
        .iter()
        .map(|f| f.json()["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn agui_streams_run_started_first_and_exactly_one_terminal() {
    let server = start().await;
    let resp = client()
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .header("accept", "text/event-stream")
        .json(&input("t-hello", "r-1", "hello agui"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let h = resp.headers();
    assert!(
        h["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(h["cache-control"], "no-cache");
    assert_eq!(h["x-accel-buffering"], "no");
    assert!(h.get("content-encoding").is_none());
    let frames = all_frames(resp).await;
    let t = types(&frames);
    assert_eq!(t.first().map(String::as_str), Some("RUN_STARTED"), "{t:?}");
    let first = frames[0].json();
    assert_eq!(first["threadId"], "t-hello");
    assert_eq!(first["runId"], "r-1");
    assert_eq!(t.last().map(String::as_str), Some("RUN_FINISHED"), "{t:?}");
    assert_eq!(
        t.iter()
            .filter(|x| *x == "RUN_FINISHED" || *x == "RUN_ERROR")
            .count(),
        1
    );
    let text: String = frames
        .iter()
        .map(|f| f.json())
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|e| e["delta"].as_str().unwrap().to_owned())
        .collect();
    assert!(text.contains("Reference reply: hello agui"), "{text:?}");
    assert!(t.contains(&"REASONING_MESSAGE_START".to_owned()));
    assert!(t.contains(&"TOOL_CALL_RESULT".to_owned()));
    // Every frame is `data:` only (no `event:` line confuses the client) and LF-framed.
    assert!(frames.iter().all(|f| f.event.is_none()));
    // The run was recorded under the AG-UI thread key.
    let runs = server
        .state()
        .store
        .list_runs("default", Some(&thread_key("t-hello")), &Page::first(10))
        .await
        .unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].state, RunState::Succeeded);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_default_route_serves_the_first_agent_and_failures_are_typed() {
    let server = start().await;
    let c = client();
    let ok = c
        .post(format!("{}/v1/agui", server.url()))
        .json(&input("t-default", "r-d", "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status(), 200);
    assert_eq!(types(&all_frames(ok).await).last().unwrap(), "RUN_FINISHED");

    let unknown = c
        .post(format!("{}/v1/agents/nope/agui", server.url()))
        .json(&input("t", "r", "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(error_code(unknown).await.1, "not_found");

    let bad_json = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let (status, code, _) = error_code(bad_json).await;
    assert_eq!((status, code.as_str()), (400, "invalid_json"));

    let no_prompt = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&json!({"threadId": "t", "runId": "r", "messages": []}))
        .send()
        .await
        .unwrap();
    let (status, code, body) = error_code(no_prompt).await;
    assert_eq!((status, code.as_str()), (422, "invalid_request"));
    assert_eq!(body["error"]["field"], "messages");

    // A failing run ends with RUN_ERROR carrying the failure reason as code.
    let failed = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&input("t-fail", "r-f", "please fail"))
        .send()
        .await
        .unwrap();
    let frames = all_frames(failed).await;
    let last = frames.last().unwrap().json();
    assert_eq!(last["type"], "RUN_ERROR");
    assert_eq!(last["code"], "agent_error");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_client_abort_cancels_the_agui_run() {
    let mut config = ServerConfig::for_tests();
    config.reference_chunk_delay = Duration::from_millis(50);
    let server = start_with(config).await;
    let resp = client()
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&input(
            "t-abort",
            "r-a",
            "a slow answer with many many words to stream one by one",
        ))
        .send()
        .await
        .unwrap();
    let seen = read_frames(resp, |f| f.json()["type"] != "TEXT_MESSAGE_CONTENT").await;
    assert_eq!(seen.last().unwrap().json()["type"], "TEXT_MESSAGE_CONTENT");
    // The response was dropped: the run is cancelled, not finished.
    let store = server.state().store.clone();
    let state = eventually(|| {
        let store = store.clone();
        async move {
            let runs = store
                .list_runs("default", Some(&thread_key("t-abort")), &Page::first(10))
                .await
                .unwrap();
            runs.first().map(|r| r.state).filter(|s| *s != RunState::Running)
        }
    })
    .await;
    assert_eq!(state, RunState::Cancelled);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_second_run_on_a_busy_thread_is_refused_with_409() {
    let mut config = ServerConfig::for_tests();
    config.reference_chunk_delay = Duration::from_millis(40);
    let server = start_with(config).await;
    let c = client();
    let first = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&input("t-busy", "r-1", "a slow answer with many words to stream"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let second = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&input("t-busy", "r-2", "me too"))
        .send()
        .await
        .unwrap();
    let (status, code, _) = error_code(second).await;
    assert_eq!((status, code.as_str()), (409, "thread_busy"));
    // Another thread is not affected.
    let other = c
        .post(format!("{}/v1/agents/reference/agui", server.url()))
        .json(&input("t-other", "r-3", "hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    assert_eq!(types(&all_frames(first).await).last().unwrap(), "RUN_FINISHED");
    assert_eq!(types(&all_frames(other).await).last().unwrap(), "RUN_FINISHED");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn cors_preflight_is_answered_for_configured_origins() {
    let mut config = ServerConfig::for_tests();
    config.cors_origins = vec!["http://localhost:3000".into()];
    let server = start_with(config).await;
    let c = client();
    let pre = c
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/agents/reference/agui", server.url()),
        )
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "content-type")
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success());
    assert_eq!(
        pre.headers()["access-control-allow-origin"],
        "http://localhost:3000"
    );
    let foreign = c
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/agents/reference/agui", server.url()),
        )
        .header("origin", "http://evil.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert!(foreign.headers().get("access-control-allow-origin").is_none());
    server.shutdown().await.unwrap();
}

/// POSTs an AG-UI body and reads the whole stream as JSON events.
async fn agui(base: &str, body: &Value) -> Vec<Value> {
    let resp = client()
        .post(format!("{base}/v1/agents/reference/agui"))
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    all_frames(resp).await.iter().map(|f| f.json()).collect()
}

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

fn one_terminal_last(events: &[Value]) -> &Value {
    assert_eq!(events[0]["type"], "RUN_STARTED", "{events:#?}");
    let terminals = events
        .iter()
        .filter(|e| e["type"] == "RUN_FINISHED" || e["type"] == "RUN_ERROR")
        .count();
    assert_eq!(terminals, 1, "{events:#?}");
    events.last().unwrap()
}

async fn thread_runs(
    server: &agent_adaptor::server::RunningServer,
    thread: &str,
) -> Vec<agent_adaptor::store::RunRecord> {
    server
        .state()
        .store
        .list_runs("default", Some(&thread_key(thread)), &Page::first(10))
        .await
        .unwrap()
}

#[tokio::test]
async fn an_interrupt_parks_the_run_and_resume_continues_the_same_execution() {
    let server = start().await;
    let base = server.url();
    let ask = input("t-int", "r-1", "a question for you");
    let first = agui(&base, &ask).await;
    let end = one_terminal_last(&first);
    assert_eq!(end["type"], "RUN_FINISHED", "{first:#?}");
    assert_eq!(end["outcome"]["type"], "interrupt");
    let interrupt = &end["outcome"]["interrupts"][0];
    let id = interrupt["id"].as_str().expect("an interrupt id").to_owned();
    let call = format!("dec-{id}");
    assert_eq!(interrupt["reason"], "input_required");
    assert_eq!(interrupt["toolCallId"], call.as_str());
    assert_eq!(interrupt["metadata"]["choices"][1]["key"], "green");
    assert!(
        first
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_END" && e["toolCallId"] == call.as_str())
    );
    assert!(
        !first
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call.as_str())
    );
    // Parked: the execution is still running and still the thread's only run.
    let runs = thread_runs(&server, "t-int").await;
    assert_eq!((runs.len(), runs[0].state), (1, RunState::Running));
    let execution = runs[0].run_id.clone();

    // A request that answers nothing, or answers an interrupt that is not open, gets RUN_ERROR and
    // leaves the run parked.
    let plain = agui(&base, &input("t-int", "r-2", "hello again")).await;
    assert_eq!(
        one_terminal_last(&plain)["code"],
        "interrupt_pending",
        "{plain:#?}"
    );
    let unknown = agui(
        &base,
        &with(
            ask.clone(),
            "resume",
            json!([{"interruptId": "nope", "status": "resolved", "payload": {"answer": "x"}}]),
        ),
    )
    .await;
    assert_eq!(one_terminal_last(&unknown)["code"], "unknown_interrupt");
    let wrong = agui(
        &base,
        &with(
            ask.clone(),
            "resume",
            json!([{"interruptId": id, "status": "resolved", "payload": {"approved": true}}]),
        ),
    )
    .await;
    assert_eq!(one_terminal_last(&wrong)["code"], "invalid_resume");

    // The answer, with the interrupted run's id reused (as CopilotKit does).
    let resume = with(
        ask.clone(),
        "resume",
        json!([{"interruptId": id, "status": "resolved", "payload": {"answer": "green"}}]),
    );
    let second = agui(&base, &resume).await;
    let end = one_terminal_last(&second);
    assert_eq!(end["type"], "RUN_FINISHED", "{second:#?}");
    assert!(end.get("outcome").is_none());
    assert_eq!(second[0]["runId"], "r-1");
    assert!(
        !second
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_START" && e["toolCallId"] == call.as_str())
    );
    let result = second
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call.as_str())
        .expect("the decision's result");
    assert!(result["content"].as_str().unwrap().contains("green"), "{result}");
    let first_ids: Vec<&Value> = first
        .iter()
        .filter(|e| e["type"] == "TEXT_MESSAGE_START")
        .map(|e| &e["messageId"])
        .collect();
    assert!(
        second
            .iter()
            .filter(|e| e["type"] == "TEXT_MESSAGE_START")
            .all(|e| !first_ids.contains(&&e["messageId"]))
    );
    let text: String = second
        .iter()
        .filter(|e| e["type"] == "TEXT_MESSAGE_CONTENT")
        .map(|e| e["delta"].as_str().unwrap().to_owned())
        .collect();
    assert!(text.contains("Reference reply: a question for you"), "{text:?}");

    // The same execution finished, with the answer.
    let store = server.state().store.clone();
    let done = eventually(|| {
        let store = store.clone();
        let execution = execution.clone();
        async move {
            store
                .get_run("default", &execution)
                .await
                .unwrap()
                .filter(|r| r.state != RunState::Running)
        }
    })
    .await;
    assert_eq!(done.state, RunState::Succeeded);
    assert!(
        done.result.unwrap()["text"]
            .as_str()
            .unwrap()
            .contains("[answer: green]")
    );
    assert_eq!(thread_runs(&server, "t-int").await.len(), 1);

    // Nothing is parked any more: repeating the resume is refused as expired.
    let again = agui(&base, &resume).await;
    assert_eq!(one_terminal_last(&again)["code"], "interrupt_expired");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_decision_left_to_the_client_continues_from_its_tool_message() {
    let server = start().await;
    let base = server.url();
    // An 0.0.x client (no protocolVersion) asking for the frontend-tool mode.
    let mut ask = input("t-tool", "r-1", "permission to write the notes");
    ask.as_object_mut().unwrap().remove("protocolVersion");
    ask["forwardedProps"] = json!({"approvals": "tool"});
    let first = agui(&base, &ask).await;
    let end = one_terminal_last(&first);
    assert_eq!(end["type"], "RUN_FINISHED", "{first:#?}");
    assert!(
        end.get("outcome").is_none(),
        "no interrupt outcome in the tool mode"
    );
    let start = first
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "dec.permission")
        .expect("the decision tool call");
    let call = start["toolCallId"].as_str().unwrap().to_owned();
    assert!(
        !first
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call.as_str())
    );
    assert!(
        !first
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "write_file")
    );

    // The client's tool result continues the same tool call: the gated tool runs in the same execution.
    let mut next = ask.clone();
    next["runId"] = json!("r-2");
    let messages = next["messages"].as_array_mut().unwrap();
    messages.push(json!({"id": "a1", "role": "assistant", "toolCalls": [
        {"id": call, "type": "function", "function": {"name": "dec.permission", "arguments": "{}"}}]}));
    messages.push(json!({"id": "t1", "role": "tool", "toolCallId": call, "content": "{\"approved\":true}"}));
    let second = agui(&base, &next).await;
    let end = one_terminal_last(&second);
    assert_eq!(end["type"], "RUN_FINISHED", "{second:#?}");
    assert!(
        !second
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call.as_str()),
        "the client's own tool result is not echoed"
    );
    let write = second
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "write_file")
        .expect("the approved tool runs");
    assert!(second.iter().any(|e| e["type"] == "TOOL_CALL_RESULT"
        && e["toolCallId"] == write["toolCallId"]
        && e["content"] == "wrote 5 bytes to notes.txt"));
    let runs = thread_runs(&server, "t-tool").await;
    assert_eq!(runs.len(), 1, "one execution, not a new user turn");
    server.shutdown().await.unwrap();
}

/// The ids an AG-UI stream mints, in order: text and reasoning message ids, tool call ids and tool
/// result message ids.
fn minted_ids(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e["type"].as_str()? {
            "TEXT_MESSAGE_START" | "REASONING_MESSAGE_START" | "TOOL_CALL_RESULT" => {
                e["messageId"].as_str().map(str::to_owned)
            }
            "TOOL_CALL_START" => e["toolCallId"].as_str().map(str::to_owned),
            _ => None,
        })
        .collect()
}

/// The recorded events of execution `run_id`, translated again for AG-UI run `agui_run`.
async fn replayed(
    server: &agent_adaptor::server::RunningServer,
    thread: &str,
    agui_run: &str,
    run_id: &str,
) -> Vec<Value> {
    let records = server
        .state()
        .store
        .read_run("default", run_id, None, 10_000)
        .await
        .unwrap();
    let mut t = agent_adaptor::agui::Translator::new(thread, agui_run);
    let mut out = Vec::new();
    for r in records {
        let ev: agent_adaptor::runtime::Event = serde_json::from_value(r.event).unwrap();
        out.extend(t.event(&ev));
    }
    out.iter().map(|e| serde_json::to_value(e).unwrap()).collect()
}

#[tokio::test]
async fn agui_ids_are_unique_across_the_runs_of_a_thread_and_stable_on_replay() {
    let server = start().await;
    let base = server.url();
    let first = agui(&base, &input("t-ids", "r-1", "hello once")).await;
    let second = agui(&base, &input("t-ids", "r-2", "hello twice")).await;
    for events in [&first, &second] {
        assert_eq!(one_terminal_last(events)["type"], "RUN_FINISHED", "{events:#?}");
        assert!(
            events.iter().any(|e| e["type"] == "TOOL_CALL_START"),
            "each run has a tool call: {events:#?}"
        );
        assert!(events.iter().any(|e| e["type"] == "REASONING_MESSAGE_START"));
    }
    let (a, b) = (minted_ids(&first), minted_ids(&second));
    let mut all: Vec<&String> = a.iter().chain(&b).collect();
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "ids repeat across the runs: {a:?} / {b:?}");

    // The same executions, translated again from their recorded events, mint the same ids.
    let mut runs = thread_runs(&server, "t-ids").await;
    runs.sort_by_key(|r| r.created_at);
    assert_eq!(runs.len(), 2);
    for ((agui_run, live), run) in [("r-1", &first), ("r-2", &second)].into_iter().zip(&runs) {
        let again = replayed(&server, "t-ids", agui_run, &run.run_id).await;
        assert_eq!(minted_ids(&again), minted_ids(live), "replay of {agui_run}");
    }
    server.shutdown().await.unwrap();
}

/// A prompt whose approval `details` and notice `data` carry secrets (an `api_key`, a bearer value).
const SECRET_PROMPT: &str = r#"permission please, and a notice {"api_key": "sk-live-0123456789abcdefghij", "auth": "Bearer abcdefghijklmnopqrstuvwxyz0123", "path": "notes.txt", "max_tokens": 64}"#;

/// AG-UI shows a run as REST shows it: the approval's `details` and the notice's `data` redacted the same
/// way on both, no secret anywhere, usage counts numeric.
#[tokio::test]
async fn agui_shows_the_exposed_redacted_log_as_rest_sse_does() {
    let mut config = ServerConfig::for_tests();
    config.agents[0].exposure = agent_adaptor::recorder::ExposurePolicy {
        include_usage: true,
        ..Default::default()
    };
    let server = start_with(config).await;
    let base = server.url();
    let secrets = ["sk-live-0123456789abcdefghij", "abcdefghijklmnopqrstuvwxyz0123"];

    // REST: the run's SSE up to the approval, answered, then the whole replay.
    let resp = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .json(&json!({"prompt": SECRET_PROMPT}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let run: Value = resp.json().await.unwrap();
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    let live = client()
        .get(format!("{base}/v1/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    let frames = read_frames(live, |f| f.event.as_deref() != Some("approval_request")).await;
    let request = frames.last().unwrap().json();
    let approve = client()
        .post(format!(
            "{base}/v1/runs/{run_id}/approvals/{}",
            request["id"].as_str().unwrap()
        ))
        .json(&json!({"decision": "approve"}))
        .send()
        .await
        .unwrap();
    assert_eq!(approve.status(), 200);
    let replay = client()
        .get(format!("{base}/v1/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    let rest: Vec<Value> = all_frames(replay).await.iter().map(|f| f.json()).collect();
    let rest_text = serde_json::to_string(&rest).unwrap();
    let rest_details = rest
        .iter()
        .find(|e| e["type"] == "approval_request")
        .map(|e| e["details"].clone())
        .expect("an approval request on REST");
    let rest_data = rest
        .iter()
        .find(|e| e["type"] == "notice" && e["kind"] == "reference.note")
        .map(|e| e["data"].clone())
        .expect("the notice on REST");
    assert_eq!(rest_details["path"], "notes.txt");
    assert_eq!(rest_details["max_tokens"], 64);
    assert_eq!(rest_details["api_key"], "[redacted]");
    assert_eq!(rest_data, rest_details, "the same object, redacted the same way");
    let usage = rest
        .iter()
        .find_map(|e| e["result"].get("usage").cloned())
        .expect("usage is exposed");
    assert!(usage["input_tokens"].is_u64(), "{usage}");
    assert!(usage["output_tokens"].is_u64(), "{usage}");

    // AG-UI: the same run, up to its interrupt.
    let events = agui(&base, &input("t-secret", "r-s", SECRET_PROMPT)).await;
    let agui_text = serde_json::to_string(&events).unwrap();
    for secret in secrets {
        assert!(!rest_text.contains(secret), "REST leaks {secret}");
        assert!(!agui_text.contains(secret), "AG-UI leaks {secret}: {agui_text}");
    }
    let call = events
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "dec.permission")
        .and_then(|e| e["toolCallId"].as_str())
        .expect("the decision tool call")
        .to_owned();
    let args: String = events
        .iter()
        .filter(|e| e["type"] == "TOOL_CALL_ARGS" && e["toolCallId"] == call.as_str())
        .map(|e| e["delta"].as_str().unwrap().to_owned())
        .collect();
    let args: Value = serde_json::from_str(&args).unwrap();
    assert_eq!(args["payload"], rest_details);
    let custom = events
        .iter()
        .find(|e| e["type"] == "CUSTOM" && e["name"] == "reference.note")
        .expect("the notice as CUSTOM");
    assert_eq!(custom["value"]["data"], rest_data);
    server.shutdown().await.unwrap();
}
