//! Threads over app-server: resume in a new process (`WithSpawn`), a lost thread rejected and retried
//! fresh once, a fork that leaves the parent alone, and AfterTurn input continuing the same thread
//! in-run. The persistent app-server per thread is in `persistent.rs`.

use std::time::Duration;

use agent_adaptor::driver::{Timing, notice_kind};
use agent_adaptor::runtime::{Agent, MessageOptions, MessageState, Payload};
use agent_adaptor::testkit::mock::responses::{Reply, Script};
use futures::StreamExt;

use super::{Cx, drain};

#[tokio::test]
async fn a_thread_resumes_in_a_new_process_with_its_history() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-resume");
    let first = thread.send("remember PAPAYA", cx.auto()).result().await.unwrap();
    let tid = first.metadata["thread_id"].clone();
    assert!(!tid.is_empty());
    assert_eq!(cx.driver.idle_processes(), 1, "the thread's app-server is kept");
    // WithSpawn: a fresh process resumes the thread from the checkpoint, and neither is kept.
    let stream = thread.send("what word?", cx.auto().spawn());
    let events = drain(&stream).await;
    let second = stream.result().await.unwrap();
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::ProcessInfo(p) if p.metadata.get("persistent").map(String::as_str) == Some("false"))),
        "a new, one-off process"
    );
    assert_eq!(cx.driver.idle_processes(), 0);
    assert_eq!(
        second.metadata["thread_id"], tid,
        "the same Codex thread continues"
    );
    assert_eq!(second.text, "ECHO n=2: what word?");
    let reqs = cx.mock.requests();
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "remember PAPAYA"), "history: {users:?}");
    assert_eq!(users.last().map(String::as_str), Some("what word?"));
    cx.assert_reaped();
}

#[tokio::test]
async fn a_lost_thread_is_a_resume_rejection_and_the_thread_starts_fresh() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-lost");
    let first = thread.send("first", cx.auto()).result().await.unwrap();
    std::fs::remove_dir_all(&cx.codex_home).unwrap();
    // A fresh process (the kept one still holds the thread in memory) finds no rollout.
    let stream = thread.send("second", cx.auto().spawn());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(r.text.starts_with("ECHO n=2: "), "{}", r.text);
    assert!(r.text.ends_with("second"), "{}", r.text);
    assert!(
        r.text.contains("could not be resumed"),
        "the core's recovery context: {}",
        r.text
    );
    assert_ne!(
        r.metadata["thread_id"], first.metadata["thread_id"],
        "a new thread"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::THREAD_CONTINUITY)),
        "the fresh fallback is announced"
    );
    let users = cx.mock.requests()[1].texts_of_role("user");
    assert!(!users.iter().any(|t| t == "first"), "no history: {users:?}");
    cx.assert_reaped();
}

#[tokio::test]
async fn a_fork_branches_the_thread_and_leaves_the_parent_alone() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let parent = agent.thread("cx-parent");
    let first = parent.send("root prompt", cx.auto()).result().await.unwrap();
    let parent_tid = first.metadata["thread_id"].clone();
    let child = parent.fork("cx-child");
    let forked = child.send("branch prompt", cx.auto()).result().await.unwrap();
    assert_ne!(forked.metadata["thread_id"], parent_tid, "a new thread");
    let users = cx.mock.requests().pop().unwrap().texts_of_role("user");
    assert!(
        users.iter().any(|t| t == "root prompt"),
        "with the parent's history: {users:?}"
    );
    assert_eq!(users.last().map(String::as_str), Some("branch prompt"));
    let again = parent.send("parent again", cx.auto()).result().await.unwrap();
    assert_eq!(again.metadata["thread_id"], parent_tid);
    let users = cx.mock.requests().pop().unwrap().texts_of_role("user");
    assert!(
        !users.iter().any(|t| t == "branch prompt"),
        "the branch is not in the parent: {users:?}"
    );
    assert_eq!(
        cx.driver.idle_processes(),
        2,
        "parent and child each keep an app-server"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn after_turn_input_starts_the_next_turn_in_the_same_process() {
    let words: Vec<String> = (0..20).map(|i| format!("w{i} ")).collect();
    let script = Script::new().then(Reply::new().text_paced(words, Duration::from_millis(40)));
    let Some(cx) = Cx::new(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("talk slowly", cx.auto());
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if delta && !sent {
            sent = true;
            stream
                .send(
                    "zz after that",
                    MessageOptions::new().id("m-1").when(Timing::AfterTurn),
                )
                .await
                .unwrap();
        }
    }
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(r.text.starts_with("ECHO n=2: "), "{}", r.text);
    assert!(r.text.contains("zz after that"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered);
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("turn_end", "turn_start")
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2);
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "talk slowly"), "one thread: {users:?}");
    let turn_ends = all
        .iter()
        .filter(|e| matches!(e.payload, Payload::TurnEnd(_)))
        .count();
    assert_eq!(turn_ends, 2);
    cx.assert_reaped();
}
