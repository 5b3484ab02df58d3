//! Approvals over HTTP: listed while pending, answered exactly once across concurrent POSTs, typed refusals
//! (409 duplicate, 410 expired, 422 wrong kind, 404 unknown), shown to AG-UI clients as a tool call, and the
//! approvals view telling every ending (approved, denied, answered, expired, cancelled) on SQLite and Postgres.

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

/// `agent_adaptor_approvals_pending` in `/metrics`.
async fn pending_gauge(base: &str) -> u64 {
    let text = super::get(base, "/metrics").await.text().await.unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("agent_adaptor_approvals_pending "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the pending gauge")
}

/// The run's approvals (`?pending=true` when `pending`).
async fn listed(base: &str, run_id: &str, pending: bool) -> Vec<Value> {
    let q = if pending { "?pending=true" } else { "" };
    let v = super::get_json(base, &format!("/v1/runs/{run_id}/approvals{q}")).await;
    v["approvals"].as_array().cloned().unwrap_or_default()
}

/// How one path of the walk ends the request.
enum End {
    /// `POST …/approvals/{id}` with this body (200).
    Answer(Value),
    /// Wait past the approval's timeout.
    Wait(u64),
    /// `POST /v1/runs/{id}/cancel`.
    Cancel,
}

/// One path of the walk: a run asks, `end` ends the request, then the list, the filter, a late POST and
/// `/metrics` must all tell the same `outcome`.
async fn walk_one(base: &str, prompt: &str, approvals: Value, end: End, outcome: &str, late: u16) {
    let (run_id, req) = run_until_approval(base, prompt, approvals).await;
    let id = req["id"].as_str().unwrap().to_owned();
    let live = listed(base, &run_id, true).await;
    assert_eq!(live.len(), 1, "{prompt}: pending while asked: {live:?}");
    assert_eq!(live[0]["pending"], true);
    assert_eq!(pending_gauge(base).await, 1, "{prompt}");
    match end {
        End::Answer(body) => assert_eq!(decide(base, &run_id, &id, body).await.status(), 200),
        End::Wait(ms) => tokio::time::sleep(std::time::Duration::from_millis(ms)).await,
        End::Cancel => assert!(super::cancel(base, &run_id).await.status().is_success()),
    }
    super::finished_state(base, &run_id).await;
    let all = listed(base, &run_id, false).await;
    assert_eq!(all.len(), 1, "{prompt}: {all:?}");
    assert_eq!(all[0]["id"], id.as_str());
    assert_eq!(all[0]["pending"], false, "{prompt}: {all:?}");
    assert_eq!(all[0]["outcome"], outcome, "{prompt}: {all:?}");
    assert!(
        listed(base, &run_id, true).await.is_empty(),
        "{prompt}: ?pending=true lists nothing once {outcome}"
    );
    let again = decide(base, &run_id, &id, json!({"decision": "deny"})).await;
    assert_eq!(again.status(), late, "{prompt} ({outcome}): a late answer");
    assert_eq!(pending_gauge(base).await, 0, "{prompt}");
}

/// Every way an approval ends, on one server: the approvals view, the `?pending=true` filter, the POST
/// answer and `/metrics` agree.
async fn walk(base: &str) {
    let approve = || End::Answer(json!({"decision": "approve"}));
    walk_one(base, "permission please", json!({}), approve(), "approved", 409).await;
    let deny = End::Answer(json!({"decision": "deny", "reason": "no"}));
    walk_one(base, "permission please", json!({}), deny, "denied", 409).await;
    let green = End::Answer(json!({"decision": "answer", "answer": "green"}));
    walk_one(
        base,
        "a question for you",
        json!({"question": "ask"}),
        green,
        "answered",
        409,
    )
    .await;
    // Approved, then the run fails: the approval stays approved.
    walk_one(
        base,
        "permission please, then fail",
        json!({}),
        approve(),
        "approved",
        409,
    )
    .await;
    // Timed out, and the run fails on it.
    let timeout = json!({"timeout": 150, "on_timeout": "abort"});
    walk_one(base, "permission please", timeout, End::Wait(400), "expired", 410).await;
    // The run is cancelled while it waits.
    walk_one(
        base,
        "permission please",
        json!({}),
        End::Cancel,
        "cancelled",
        410,
    )
    .await;
}

#[tokio::test]
async fn the_approvals_view_tells_every_ending_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = agent_adaptor::server::ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = super::start_with(config).await;
    walk(&server.url()).await;
    // `?pending` is documented.
    let doc = super::get_json(&server.url(), "/openapi.json").await;
    let params = &doc["paths"]["/v1/runs/{run_id}/approvals"]["get"]["parameters"];
    assert!(
        params
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["name"] == "pending" && p["in"] == "query")),
        "{params}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_approvals_view_tells_every_ending_on_postgres() {
    let Some(url) = crate::store::pg::database_url("the_approvals_view_tells_every_ending_on_postgres")
    else {
        return;
    };
    let at = url.clone();
    crate::store::pg::with_schema(&url, |schema| async move {
        let store = crate::store::pg::store_in(&at, &schema).await;
        let server = agent_adaptor::server::Server::start_with_store(
            agent_adaptor::server::ServerConfig::for_tests(),
            std::sync::Arc::new(store),
        )
        .await
        .unwrap();
        walk(&server.url()).await;
        server.shutdown().await.unwrap();
    })
    .await;
}
