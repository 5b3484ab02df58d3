//! Continue-or-start, resume-only, fork, drift and rejection fallbacks, receipts.

use std::sync::Arc;

use agent_adaptor::runtime::{ErrorKind, ThreadErrorKind};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

use super::{agent, history, notices, run, tenant};

fn store() -> Arc<dyn ThreadStore> {
    Arc::new(MemoryStore::new())
}

#[tokio::test]
async fn continue_or_start_resumes_the_same_session() {
    let a = agent(store());
    let t = a.thread("chat-1");
    let (_, first) = run(t.send("hello", tenant("acme"))).await;
    assert_eq!(history(&first), 1);
    let (_, second) = run(t.send("again", tenant("acme"))).await;
    assert_eq!(history(&second), 2, "the second run resumed the session");
    let cp = t.checkpoint("acme").await.unwrap().expect("a checkpoint");
    assert!(!cp.resume_id.is_empty());
    assert!(!cp.pending_persistence);
    // Tenants are isolated: the same key under another tenant starts fresh.
    let (_, other) = run(a.thread("chat-1").send("hi", tenant("globex"))).await;
    assert_eq!(history(&other), 1);
}

#[tokio::test]
async fn resume_only_fails_without_a_record_and_continues_with_one() {
    let a = agent(store());
    let (events, outcome) = run(a.thread_resume_only("missing").send("x", tenant("t"))).await;
    let err = outcome.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Thread(ThreadErrorKind::NotFound));
    assert!(events.last().unwrap().is_done());
    run(a.thread("k").send("first", tenant("t"))).await.1.unwrap();
    let (_, again) = run(a.thread_resume_only("k").send("second", tenant("t"))).await;
    assert_eq!(history(&again), 2);
}

#[tokio::test]
async fn fork_leaves_the_parent_untouched_and_the_target_must_be_absent() {
    let s = store();
    let a = agent(s.clone());
    let parent = a.thread("parent");
    run(parent.send("one", tenant("t"))).await.1.unwrap();
    let before = parent.checkpoint("t").await.unwrap().unwrap();
    let child = parent.fork("child");
    let (_, forked) = run(child.send("branch", tenant("t"))).await;
    assert_eq!(history(&forked), 2, "the fork starts from the parent's history");
    let after = parent.checkpoint("t").await.unwrap().unwrap();
    assert_eq!(before, after, "the parent is never modified");
    let (_, next) = run(child.send("more", tenant("t"))).await;
    assert_eq!(
        history(&next),
        3,
        "after its first run the fork continues normally"
    );
    let (_, taken) = run(parent.fork("child").send("x", tenant("t"))).await;
    assert_eq!(
        taken.unwrap_err().kind(),
        ErrorKind::Thread(ThreadErrorKind::AlreadyExists)
    );
}

#[tokio::test]
async fn concurrent_forks_to_one_target_exactly_one_wins() {
    let a = agent(store());
    let parent = a.thread("p");
    run(parent.send("one", tenant("t"))).await.1.unwrap();
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let f = parent.fork("target");
        tasks.push(tokio::spawn(
            async move { run(f.send("go", tenant("t"))).await.1 },
        ));
    }
    let mut wins = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => wins += 1,
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    ErrorKind::Thread(ThreadErrorKind::AlreadyExists | ThreadErrorKind::Busy)
                        | ErrorKind::Run
                ),
                "{e}"
            ),
        }
    }
    assert_eq!(wins, 1);
}

#[tokio::test]
async fn configuration_drift_starts_fresh_with_bounded_recovery_context() {
    let a = agent(store());
    let t = a.thread("drift");
    run(t.send("remember the codename bluebird", tenant("t")))
        .await
        .1
        .unwrap();
    let (events, fresh) = run(t.send("what was it?", tenant("t").model("another-model"))).await;
    assert_eq!(history(&fresh), 1, "a fresh provider session");
    let n = notices(&events, "thread.continuity");
    assert_eq!(n.len(), 1, "one continuity notice");
    let text = &fresh.as_ref().unwrap().text;
    assert!(
        text.contains("bluebird"),
        "the recovery context carried the earlier reply: {text}"
    );
    // ResumeOnly refuses drift instead.
    let (_, refused) = run(a
        .thread_resume_only("drift")
        .send("x", tenant("t").model("third")))
    .await;
    assert_eq!(
        refused.unwrap_err().kind(),
        ErrorKind::Thread(ThreadErrorKind::Incompatible)
    );
}

#[tokio::test]
async fn a_resume_rejection_falls_back_once_to_a_fresh_session() {
    let s = store();
    run(agent(s.clone()).thread("r").send("first", tenant("t")))
        .await
        .1
        .unwrap();
    // A new driver instance has no in-memory sessions: it rejects the resume.
    let forgetful = agent_adaptor::runtime::Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
        .thread_store(s.clone())
        .build();
    let (events, outcome) = run(forgetful.thread("r").send("second", tenant("t"))).await;
    assert_eq!(history(&outcome), 1, "fresh session after the rejection");
    assert_eq!(notices(&events, "thread.continuity").len(), 1);
    let run_started = events
        .iter()
        .filter(|e| matches!(e.payload, agent_adaptor::runtime::Payload::RunStarted(_)))
        .count();
    assert_eq!(run_started, 1, "one lifecycle for the retried execution");
    let other = agent_adaptor::runtime::Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
        .thread_store(s)
        .build();
    let (_, strict) = run(other.thread_resume_only("r").send("third", tenant("t"))).await;
    assert!(strict.is_err(), "resume-only does not fall back");
}

#[tokio::test]
async fn failed_runs_never_replace_the_healthy_checkpoint() {
    let a = agent(store());
    let t = a.thread("f");
    run(t.send("good", tenant("t"))).await.1.unwrap();
    let healthy = t.checkpoint("t").await.unwrap().unwrap();
    assert!(run(t.send("please fail", tenant("t"))).await.1.is_err());
    assert_eq!(t.checkpoint("t").await.unwrap().unwrap(), healthy);
    let (_, next) = run(t.send("again", tenant("t"))).await;
    assert_eq!(history(&next), 2, "resumed from the last healthy checkpoint");
}

#[tokio::test]
async fn a_duplicate_starting_prompt_completes_with_zero_turns() {
    let s = store();
    let a = agent(s.clone());
    let t = a.thread("d");
    let (_, first) = run(t.send("do it", tenant("t").message_id("req-1"))).await;
    assert_eq!(first.unwrap().turns, 1);
    let (_, dup) = run(t.send("do it", tenant("t").message_id("req-1"))).await;
    let dup = dup.unwrap();
    assert_eq!((dup.turns, dup.text.as_str()), (0, ""));
    // Receipts are durable: a new Agent on the same store still deduplicates.
    let (_, again) = run(agent(s)
        .thread("d")
        .send("do it", tenant("t").message_id("req-1")))
    .await;
    assert_eq!(again.unwrap().turns, 0);
}

#[tokio::test]
async fn threads_without_a_tenant_persist_under_the_default_tenant() {
    let a = agent(store());
    let t = a.thread("no-tenant");
    run(t.send("one", ())).await.1.unwrap();
    let (_, second) = run(t.send("two", ())).await;
    assert_eq!(history(&second), 2, "resumed: the record was persisted");
    let cp = t
        .checkpoint("")
        .await
        .unwrap()
        .expect("persisted under the default tenant");
    assert!(!cp.pending_persistence);
}

#[tokio::test]
async fn forking_on_a_driver_without_fork_support_fails_before_launch() {
    let mut d =
        agent_adaptor::testkit::reference::reference_descriptor(agent_adaptor::driver::ContinueMode::InRun);
    d.sessions.fork = false;
    let a = agent_adaptor::runtime::Agent::builder(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(d),
        ..Default::default()
    }))
    .thread_store(store())
    .build();
    run(a.thread("p").send("one", tenant("t"))).await.1.unwrap();
    let (_, forked) = run(a.thread("p").fork("c").send("x", tenant("t"))).await;
    assert_eq!(
        forked.unwrap_err().kind(),
        ErrorKind::Thread(ThreadErrorKind::Incompatible)
    );
}
