//! The persistent app-server per thread, against the real CLI: a thread's second run reuses the
//! running process (no `thread/resume`, just `turn/start`) and the conversation continues; an
//! idle-evicted process is replaced transparently (resume from the checkpoint); a signature change
//! restarts it; a cancel during a reused process's turn leaves nothing behind; Agent close reaps.

use std::time::Duration;

use agent_adaptor::driver::Policy;
use agent_adaptor::driver::process::group_exists;
use agent_adaptor::runtime::{Agent, Event};
use agent_adaptor::testkit::mock::responses::{Reply, Script};

use super::{Cx, auto_approve, drain, run_error};
use crate::driver_support::{spawned, until_first_delta, wait_until};

/// The pid of the kept app-server a run reused, if it reused one.
fn reused(events: &[Event]) -> Option<u32> {
    crate::driver_support::reused(events, "codex.process")
}

#[tokio::test]
async fn a_threads_second_run_reuses_its_app_server_and_close_reaps_it() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-warm");
    let stream = thread.send("remember PAPAYA", cx.auto());
    let first_events = drain(&stream).await;
    let first = stream.result().await.unwrap();
    let pids = spawned(&first_events);
    assert_eq!(pids.len(), 1, "one app-server spawned");
    let pid = pids[0];
    let live = cx.driver.registry().list();
    assert_eq!(live.len(), 1, "kept after the run");
    assert_eq!(live[0].pid, pid);
    assert_eq!(cx.driver.idle_processes(), 1);

    let stream = thread.send("what word?", cx.auto());
    let events = drain(&stream).await;
    let second = stream.result().await.unwrap();
    assert!(spawned(&events).is_empty(), "nothing spawned for the second run");
    assert_eq!(reused(&events), Some(pid), "the same app-server");
    assert_eq!(cx.driver.registry().list(), live, "the same registered process");
    assert_eq!(second.metadata["thread_id"], first.metadata["thread_id"]);
    assert_eq!(second.text, "ECHO n=2: what word?");
    // The model saw the first turn: the process held the thread (no thread/resume was needed).
    let users = cx.mock.requests()[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "remember PAPAYA"), "history: {users:?}");
    assert!(
        !String::from_utf8_lossy(&second.raw().stdout).contains("\"thread\":{"),
        "no thread/start|resume answer in the second run's stdout"
    );

    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
    assert!(!group_exists(pid as i32), "its process group is gone");
}

#[tokio::test]
async fn an_idle_evicted_app_server_is_replaced_and_the_thread_resumes() {
    let Some(cx) = Cx::with(Script::echo(), |c| {
        c.idle_timeout = Some(Duration::from_millis(400))
    })
    .await
    else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-idle");
    let stream = thread.send("remember MANGO", cx.auto());
    let first_pid = spawned(&drain(&stream).await)[0];
    stream.result().await.unwrap();
    wait_until("the idle app-server is evicted", || {
        cx.driver.registry().live_count() == 0
    })
    .await;
    assert!(!group_exists(first_pid as i32));
    assert_eq!(cx.driver.idle_processes(), 0);

    let stream = thread.send("what word?", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a new app-server");
    assert_ne!(pids[0], first_pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "ECHO n=2: what word?");
    let users = cx.mock.requests()[1].texts_of_role("user");
    assert!(
        users.iter().any(|t| t == "remember MANGO"),
        "resumed from the checkpoint: {users:?}"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn a_signature_change_restarts_the_app_server_and_the_thread_continues() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-sig");
    let stream = thread.send("remember KIWI", cx.auto());
    let first_pid = spawned(&drain(&stream).await)[0];
    stream.result().await.unwrap();
    // Another sandbox is part of the process signature (thread/resume fixes it for the thread).
    let read_only = cx
        .opts()
        .policy(Policy::read_only().with_approvals(auto_approve()));
    let stream = thread.send("what word?", read_only);
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "restarted");
    assert_ne!(pids[0], first_pid);
    assert!(
        !group_exists(first_pid as i32),
        "the old app-server was stopped and reaped"
    );
    let live = cx.driver.registry().list();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].pid, pids[0], "only the new one is kept");
    assert_eq!(r.text, "ECHO n=2: what word?");
    let users = cx.mock.requests()[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "remember KIWI"), "history: {users:?}");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn a_cancel_during_a_reused_app_servers_turn_leaves_nothing_behind() {
    let words: Vec<String> = (0..200).map(|i| format!("w{i} ")).collect();
    let script = Script::new()
        .then(Reply::new().text("ok"))
        .then(Reply::new().text_paced(words, Duration::from_millis(50)));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-cancel");
    let stream = thread.send("first", cx.auto());
    let pid = spawned(&drain(&stream).await)[0];
    stream.result().await.unwrap();

    let stream = thread.send("talk slowly", cx.auto());
    let seen = until_first_delta(&stream).await;
    assert_eq!(reused(&seen), Some(pid), "the turn runs in the kept app-server");
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    cx.assert_reaped();
    assert_eq!(
        cx.driver.idle_processes(),
        0,
        "a cancelled turn's process is never kept"
    );
    assert!(!group_exists(pid as i32));
}

#[tokio::test]
async fn a_threads_run_with_a_schema_reuses_its_app_server() {
    let script = Script::new()
        .then(Reply::new().text("noted"))
        .then(Reply::new().text(r#"{"ok":true}"#));
    let Some(cx) = Cx::new(script).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-schema");
    let stream = thread.send("remember PAPAYA", cx.auto());
    let first_events = drain(&stream).await;
    stream.result().await.unwrap();
    let pid = spawned(&first_events)[0];
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Verdict {
        ok: bool,
    }
    let stream = thread.send(
        "answer as JSON",
        cx.auto()
            .schema::<Verdict>(agent_adaptor::runtime::SchemaOptions::new()),
    );
    let events = drain(&stream).await;
    let r = stream.result().await.expect("structured run");
    assert_eq!(r.structured(), Some(&serde_json::json!({ "ok": true })));
    assert!(spawned(&events).is_empty(), "nothing spawned for the schema run");
    assert_eq!(
        reused(&events),
        Some(pid),
        "the thread's app-server, schema or not"
    );
    let reqs = cx.mock.requests();
    assert!(
        reqs[1].body.to_string().contains("\"ok\""),
        "the schema reached the model request natively"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn direct_agent_tasks_start_fresh_processes_and_keep_none() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let mut pids = Vec::new();
    for prompt in ["hello", "hello again"] {
        let stream = agent.send(prompt, cx.opts());
        let events = drain(&stream).await;
        stream.result().await.unwrap();
        let started = spawned(&events);
        assert_eq!(started.len(), 1, "{prompt}: a process of its own");
        pids.push(started[0]);
        assert_eq!(
            cx.driver.idle_processes(),
            0,
            "{prompt}: a direct task keeps no process"
        );
    }
    assert_ne!(pids[0], pids[1], "no process shared between direct tasks");
    cx.assert_reaped();
}
