//! Approvals over HTTP: listed while pending, answered exactly once across concurrent POSTs, typed refusals
//! (409 duplicate, 410 expired, 422 wrong kind, 404 unknown), and shown to AG-UI clients as a tool call.

use serde_json::{Value, json};

use super::{Frame, all_frames, client, error_code, read_frames, start};

async fn run_until_approval(base: &str, prompt: &str, approvals: Value) -> (String, Value) {
    let resp = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .json(&json!({"prompt": prompt, "approvals": approvals}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let run: Value = resp.json().await.unwrap();
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    let events = client()
        .get(format!("{base}/v1/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    let frames = read_frames(events, |f| f.event.as_deref() != Some("approval_request")).await;
    let req = frames.last().unwrap().json();
    assert_eq!(req["type"], "approval_request", "{frames:?}");
    (run_id, req)
}

async fn decide(base: &str, run_id: &str, id: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{base}/v1/runs/{run_id}/approvals/{id}"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn final_event(base: &str, run_id: &str) -> Frame {
    let resp = client()
        .get(format!("{base}/v1/runs/{run_id}/events"))
        .send()
        .await
        .unwrap();
    all_frames(resp).await.pop().unwrap()
}

#[tokio::test]
async fn a_permission_is_listed_and_answered_exactly_once_under_concurrent_posts() {
    let server = start().await;
    let base = server.url();
    let (run_id, req) = run_until_approval(&base, "permission please", json!({})).await;
    let id = req["id"].as_str().unwrap().to_owned();
    let listed: Value = client()
        .get(format!("{base}/v1/runs/{run_id}/approvals"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed["approvals"][0]["id"], id.as_str());
    assert_eq!(listed["approvals"][0]["kind"], "permission");
    let run: Value = client()
        .get(format!("{base}/v1/runs/{run_id}"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(run["state"], "parked");

    let posts = (0..8).map(|i| {
        let (base, run_id, id) = (base.clone(), run_id.clone(), id.clone());
        tokio::spawn(async move {
            let body = if i % 2 == 0 {
                json!({"decision": "approve"})
            } else {
                json!({"decision": "deny", "reason": "no"})
            };
            decide(&base, &run_id, &id, body).await.status().as_u16()
        })
    });
    let statuses: Vec<u16> = futures::future::join_all(posts)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 7, "{statuses:?}");
    let done = final_event(&base, &run_id).await;
    assert_eq!(done.event.as_deref(), Some("done"));
    // Answered once more after the run: still a typed conflict, from the durable record.
    let late = decide(&base, &run_id, &id, json!({"decision": "approve"})).await;
    assert_eq!(error_code(late).await.0, 409);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_question_takes_an_answer_and_refuses_approve_with_422() {
    let server = start().await;
    let base = server.url();
    let (run_id, req) = run_until_approval(&base, "a question for you", json!({"question": "ask"})).await;
    let id = req["id"].as_str().unwrap().to_owned();
    let wrong = decide(&base, &run_id, &id, json!({"decision": "approve"})).await;
    let (status, code, _) = error_code(wrong).await;
    assert_eq!((status, code.as_str()), (422, "approval_kind_mismatch"));
    let empty = decide(&base, &run_id, &id, json!({"decision": "answer"})).await;
    assert_eq!(error_code(empty).await.0, 422);
    let unknown = decide(&base, &run_id, "nope", json!({"decision": "deny"})).await;
    assert_eq!(error_code(unknown).await.0, 404);
    let bad = decide(&base, &run_id, &id, json!({"decision": "maybe"})).await;
    assert_eq!(error_code(bad).await.0, 400);
    let ok = decide(
        &base,
        &run_id,
        &id,
        json!({"decision": "answer", "answer": "green"}),
    )
    .await;
    assert_eq!(ok.status(), 200);
    let done = final_event(&base, &run_id).await;
    assert_eq!(
        done.json()["result"]["text"]
            .as_str()
            .map(|t| t.contains("Reference reply")),
        Some(true)
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_expired_approval_answers_410() {
    let server = start().await;
    let base = server.url();
    let (run_id, req) = run_until_approval(
        &base,
        "permission please",
        json!({"timeout": 150, "on_timeout": "abort"}),
    )
    .await;
    let id = req["id"].as_str().unwrap().to_owned();
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    let late = decide(&base, &run_id, &id, json!({"decision": "approve"})).await;
    let (status, code, _) = error_code(late).await;
    assert_eq!((status, code.as_str()), (410, "approval_expired"), "{code}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_agui_client_sees_the_approval_as_a_tool_call_and_answers_it_over_post() {
    let server = start().await;
    let base = server.url();
    let resp = client()
        .post(format!("{base}/v1/agents/reference/agui"))
        .json(&json!({"threadId": "t-approve", "runId": "r-1",
            "messages": [{"id": "u1", "role": "user", "content": "permission please"}]}))
        .send()
        .await
        .unwrap();
    let mut request_id = None;
    let reader = {
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        let mut tx = Some(tx);
        let handle = tokio::spawn(read_frames(resp, move |f| {
            let e = f.json();
            if e["type"] == "TOOL_CALL_ARGS"
                && let Ok(args) = serde_json::from_str::<Value>(e["delta"].as_str().unwrap_or(""))
                && let Some(id) = args["request_id"].as_str()
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(id.to_owned());
            }
            true
        }));
        request_id.replace(rx.await.expect("an approval tool call"));
        handle
    };
    let id = request_id.unwrap();
    let run = server
        .state()
        .store
        .list_runs(
            "default",
            Some(&agent_adaptor::agui::thread_key("t-approve")),
            &agent_adaptor::store::Page::first(1),
        )
        .await
        .unwrap()
        .pop()
        .unwrap();
    let ok = decide(&base, &run.run_id, &id, json!({"decision": "approve"})).await;
    assert_eq!(ok.status(), 200);
    let frames = reader.await.unwrap();
    let events: Vec<Value> = frames.iter().map(Frame::json).collect();
    let start = events
        .iter()
        .find(|e| e["type"] == "TOOL_CALL_START" && e["toolCallName"] == "dec.permission")
        .expect("the approval as a tool call");
    let call = start["toolCallId"].as_str().unwrap();
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "TOOL_CALL_RESULT" && e["toolCallId"] == call)
    );
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED");
    server.shutdown().await.unwrap();
}
