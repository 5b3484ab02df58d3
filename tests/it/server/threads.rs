//! Thread routes beyond listing: create (201, idempotent 200, 409 on other defaults), runs inheriting the
//! thread's defaults, fork (201, the first run continues the parent's conversation, the parent untouched),
//! and fork's typed refusals (no checkpoint 404, taken key 409, a driver without fork 422).

use agent_adaptor::server::{AgentSpec, ServerConfig};
use serde_json::{Value, json};

use super::{
    all_frames, error_code, finished_state, get, get_json, post_json, run_id, start_run, start_with,
    with_metadata,
};

/// The `done` event of a finished run.
async fn done_event(base: &str, run: &str) -> Value {
    let resp = get(base, &format!("/v1/runs/{run}/events")).await;
    let frames = all_frames(resp).await;
    let last = frames.last().expect("events");
    assert_eq!(last.event.as_deref(), Some("done"));
    last.json()
}

#[tokio::test]
async fn create_is_idempotent_by_key_and_runs_inherit_the_thread_defaults() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    let threads = "/v1/agents/reference/threads";
    let body = json!({"key": "made-1", "model": "reference-big", "metadata": {"team": "a"}});
    let created = post_json(&base, threads, body.clone()).await;
    assert_eq!(created.status(), 201);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["key"], "made-1");
    assert_eq!(created["checkpoint"], Value::Null, "no run yet");
    assert_eq!(created["defaults"]["model"], "reference-big");
    // The same request again: 200 with the same thread; other defaults: 409.
    let again = post_json(&base, threads, body).await;
    assert_eq!(again.status(), 200);
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["defaults"], created["defaults"]);
    let other = post_json(&base, threads, json!({"key": "made-1", "model": "other"})).await;
    let (status, code, err) = error_code(other).await;
    assert_eq!((status, code.as_str()), (409, "thread_exists"));
    assert_eq!(err["error"]["field"], "key");
    // It is visible before its first run.
    assert_eq!(
        get_json(&base, "/v1/agents/reference/threads/made-1").await["defaults"]["metadata"]["team"],
        "a"
    );
    // A run on it uses the thread's model unless it names its own.
    let run = start_run(
        &base,
        "/v1/agents/reference/threads/made-1/runs",
        json!({"prompt": "which model?"}),
    )
    .await;
    let run = run_id(&run);
    assert_eq!(finished_state(&base, &run).await["state"], "succeeded");
    let done = done_event(&base, &run).await;
    assert_eq!(done["result"]["model"], "reference-big", "{done}");
    let own = start_run(
        &base,
        "/v1/agents/reference/threads/made-1/runs",
        json!({"prompt": "and now?", "model": "reference-small"}),
    )
    .await;
    let own = run_id(&own);
    finished_state(&base, &own).await;
    assert_eq!(
        done_event(&base, &own).await["result"]["model"],
        "reference-small"
    );
    // Once it ran, an identical create still answers 200; the record exists.
    let after = post_json(
        &base,
        threads,
        json!({"key": "made-1", "model": "reference-big", "metadata": {"team": "a"}}),
    )
    .await;
    assert_eq!(after.status(), 200);
    let after: Value = after.json().await.unwrap();
    assert!(after["checkpoint"]["resume_id"].is_string(), "{after}");
    // A generated key, and bad input.
    let generated: Value = post_json(&base, threads, json!({})).await.json().await.unwrap();
    assert!(
        generated["key"].as_str().unwrap().starts_with("thr-"),
        "{generated}"
    );
    let (status, _, err) = error_code(post_json(&base, threads, json!({"key": ""})).await).await;
    assert_eq!((status, err["error"]["field"].as_str()), (422, Some("key")));
    let (status, code, _) = error_code(post_json(&base, threads, json!({"kee": "x"})).await).await;
    assert_eq!((status, code.as_str()), (400, "invalid_json"));
    let (status, _, _) =
        error_code(post_json(&base, "/v1/agents/nope/threads", json!({"key": "x"})).await).await;
    assert_eq!(status, 404);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_fork_continues_the_parents_conversation_and_leaves_the_parent_alone() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    for prompt in ["one", "two"] {
        let run = start_run(
            &base,
            "/v1/agents/reference/threads/parent/runs",
            json!({"prompt": prompt}),
        )
        .await;
        finished_state(&base, &run_id(&run)).await;
    }
    let parent = get_json(&base, "/v1/agents/reference/threads/parent").await;
    let parent_resume = parent["checkpoint"]["resume_id"].clone();
    let forked = post_json(
        &base,
        "/v1/agents/reference/threads/parent/fork",
        json!({"key": "child"}),
    )
    .await;
    assert_eq!(forked.status(), 201);
    let forked: Value = forked.json().await.unwrap();
    assert_eq!(forked["key"], "child");
    assert_eq!(forked["forked_from"], "parent");
    assert_eq!(forked["checkpoint"], Value::Null);
    // The fork's first run starts from the parent's conversation (two earlier prompts + this one).
    let run = start_run(
        &base,
        "/v1/agents/reference/threads/child/runs",
        json!({"prompt": "three"}),
    )
    .await;
    let run = run_id(&run);
    assert_eq!(finished_state(&base, &run).await["state"], "succeeded");
    let done = done_event(&base, &run).await;
    assert_eq!(done["result"]["metadata"]["history_len"], "3", "{done}");
    let child = get_json(&base, "/v1/agents/reference/threads/child").await;
    assert!(child["checkpoint"]["resume_id"].is_string(), "{child}");
    assert_ne!(child["checkpoint"]["resume_id"], parent_resume);
    // Its second run continues the fork itself.
    let next = start_run(
        &base,
        "/v1/agents/reference/threads/child/runs",
        json!({"prompt": "four"}),
    )
    .await;
    let next = run_id(&next);
    finished_state(&base, &next).await;
    assert_eq!(
        done_event(&base, &next).await["result"]["metadata"]["history_len"],
        "4"
    );
    // The parent is untouched.
    let parent_after = get_json(&base, "/v1/agents/reference/threads/parent").await;
    assert_eq!(parent_after["checkpoint"]["resume_id"], parent_resume);

    // Typed refusals: taken key, no checkpoint to fork, unknown agent.
    let taken = post_json(
        &base,
        "/v1/agents/reference/threads/parent/fork",
        json!({"key": "child"}),
    )
    .await;
    assert_eq!(error_code(taken).await.1, "thread_exists");
    let empty = post_json(&base, "/v1/agents/reference/threads/nothing/fork", json!({})).await;
    assert_eq!(error_code(empty).await.0, 404);
    let generated: Value = post_json(&base, "/v1/agents/reference/threads/parent/fork", json!({}))
        .await
        .json()
        .await
        .unwrap();
    assert!(generated["key"].as_str().unwrap().starts_with("thr-"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_driver_without_session_fork_is_refused_with_422_fork_unsupported() {
    let mut config = ServerConfig::for_tests();
    config.agents = vec![AgentSpec::new("nofork", "reference").with_config(json!({"fork": false}))];
    let server = start_with(config).await;
    let base = server.url();
    let agent = get_json(&base, "/v1/agents/nofork").await;
    assert_eq!(agent["descriptor"]["sessions"]["fork"], false);
    let run = start_run(&base, "/v1/agents/nofork/threads/p/runs", json!({"prompt": "hi"})).await;
    finished_state(&base, &run_id(&run)).await;
    let refused = post_json(&base, "/v1/agents/nofork/threads/p/fork", json!({"key": "c"})).await;
    let (status, code, _) = error_code(refused).await;
    assert_eq!((status, code.as_str()), (422, "fork_unsupported"));
    assert_eq!(
        get(&base, "/v1/agents/nofork/threads/c").await.status(),
        404,
        "nothing was declared"
    );
    server.shutdown().await.unwrap();
}
