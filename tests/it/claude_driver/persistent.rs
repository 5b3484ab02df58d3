//! The persistent `claude` process per thread (bidirectional transport), against the real CLI: a
//! thread's second run writes only its user frame to the kept process (no handshake, no `--resume`
//! process start) and the conversation continues; idle eviction, a signature change, a crashed kept
//! process and `WithSpawn` all lead to a fresh process resuming the session; runs that cannot share the
//! process (one-shot transport, native schema) stop the kept one first; a cancel during a reused turn
//! leaves nothing behind; Agent close reaps.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::process::group_exists;
use agent_adaptor::driver::{ApprovalPolicy, Policy, QuestionMode};
use agent_adaptor::runtime::{Agent, Event, RunResult, SchemaOptions, Thread};

use super::{Cl, drain, run_error, transport};
use crate::driver_support::{spawned, until_first_delta, wait_until};

/// The pid of the kept process a run reused, if it reused one.
fn reused(events: &[Event]) -> Option<u32> {
    crate::driver_support::reused(events, "claude.process")
}

/// Sends `prompt` on `thread` over the bidirectional transport; its events and result.
async fn turn(cl: &Cl, thread: &Thread, prompt: &str) -> (Vec<Event>, Arc<RunResult>) {
    let stream = thread.send(prompt, cl.opts());
    let events = drain(&stream).await;
    (events, stream.result().await.unwrap())
}

/// True when the last model request carried `text` as history.
fn history_has(cl: &Cl, text: &str) -> bool {
    let last = cl.requests().pop().expect("a model request");
    last.all_texts().iter().any(|t| t.contains(text))
}

#[tokio::test]
async fn a_threads_second_run_reuses_its_process_and_close_reaps_it() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-warm");
    let (events, first) = turn(&cl, &thread, "remember PAPAYA").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "one process spawned");
    let pid = pids[0];
    let live = cl.driver.registry().list();
    assert_eq!(live.len(), 1, "kept after the run");
    assert_eq!(live[0].pid, pid);
    assert_eq!(cl.driver.idle_processes(), 1);
    assert_eq!(first.metadata["process_kept"], "true");

    let (events, second) = turn(&cl, &thread, "what word?").await;
    assert!(spawned(&events).is_empty(), "nothing spawned for the second run");
    assert_eq!(reused(&events), Some(pid), "the same process");
    assert_eq!(cl.driver.registry().list(), live, "the same registered process");
    assert_eq!(second.text, "ECHO n=2: what word?");
    assert_eq!(second.metadata["session_id"], first.metadata["session_id"]);
    assert_eq!(second.metadata["processes"], "0");
    assert!(
        history_has(&cl, "remember PAPAYA"),
        "the process held the history"
    );
    let stdout = String::from_utf8_lossy(&second.raw().stdout).into_owned();
    assert!(
        !stdout.contains("agent-adaptor-init"),
        "no second handshake: {stdout}"
    );
    assert!(
        stdout.contains("\"subtype\":\"init\""),
        "the CLI's own per-turn init"
    );

    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
    assert_eq!(cl.driver.idle_processes(), 0);
    assert!(!group_exists(pid as i32), "its process group is gone");
}

#[tokio::test]
async fn an_idle_evicted_process_is_replaced_and_the_thread_resumes() {
    let Some(cl) = Cl::with(|c| c.idle_timeout = Some(Duration::from_millis(400))).await else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-idle");
    let (events, _) = turn(&cl, &thread, "remember MANGO").await;
    let first_pid = spawned(&events)[0];
    wait_until("the idle process is evicted", || {
        cl.driver.registry().live_count() == 0
    })
    .await;
    assert!(!group_exists(first_pid as i32));
    assert_eq!(cl.driver.idle_processes(), 0);

    let (events, r) = turn(&cl, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a new process");
    assert_ne!(pids[0], first_pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "ECHO n=2: what word?");
    assert!(history_has(&cl, "remember MANGO"), "resumed from the checkpoint");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn a_signature_change_restarts_the_process_and_the_thread_continues() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-sig");
    let (events, _) = turn(&cl, &thread, "remember KIWI").await;
    let first_pid = spawned(&events)[0];
    // Permissions auto-approved but questions asked: still bidirectional, another --permission-mode.
    let approvals = ApprovalPolicy {
        question: QuestionMode::Ask,
        ..ApprovalPolicy::auto_approve()
    };
    let opts = cl.opts().policy(Policy::default().with_approvals(approvals));
    let stream = thread.send("what word?", opts);
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "bidi");
    let r = outcome.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "restarted");
    assert_ne!(pids[0], first_pid);
    assert!(
        !group_exists(first_pid as i32),
        "the old process was stopped and reaped"
    );
    let live = cl.driver.registry().list();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].pid, pids[0], "only the new one is kept");
    assert_eq!(r.text, "ECHO n=2: what word?", "resumed with --resume");
    assert!(history_has(&cl, "remember KIWI"));
    let second_pid = pids[0];

    // A model change restarts too (the runtime starts a new session with recovery context for it).
    let stream = thread.send("which model?", cl.opts().model("claude-sonnet-5-0"));
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "restarted");
    assert!(!group_exists(second_pid as i32));
    assert!(r.text.ends_with("which model?"), "{}", r.text);
    assert_eq!(cl.requests().pop().unwrap().model(), Some("claude-sonnet-5-0"));
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn with_spawn_forces_a_one_off_process_and_the_kept_one_is_stopped() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-spawn");
    let (events, _) = turn(&cl, &thread, "remember FIG").await;
    let first_pid = spawned(&events)[0];
    let stream = thread.send("second", cl.opts().spawn());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process");
    assert_ne!(pids[0], first_pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "ECHO n=2: second");
    assert_eq!(r.metadata["process_kept"], "false");
    assert!(
        !group_exists(first_pid as i32),
        "the kept process would miss the turn: stopped"
    );
    cl.assert_reaped();
    assert_eq!(cl.driver.idle_processes(), 0, "a WithSpawn process is not kept");

    let (events, r) = turn(&cl, &thread, "what word?").await;
    assert_eq!(spawned(&events).len(), 1, "cold again");
    assert_eq!(r.text, "ECHO n=3: what word?");
    assert!(history_has(&cl, "remember FIG") && history_has(&cl, "second"));
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn a_crashed_kept_process_is_replaced_with_a_resume() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-crash");
    let (events, _) = turn(&cl, &thread, "remember LIME").await;
    let pid = spawned(&events)[0];
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    wait_until("the killed process is reaped", || {
        cl.driver.registry().live_count() == 0
    })
    .await;

    let (events, r) = turn(&cl, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process");
    assert_ne!(pids[0], pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "ECHO n=2: what word?");
    assert!(history_has(&cl, "remember LIME"), "resumed");
    assert_eq!(cl.driver.idle_processes(), 1, "the new one is kept");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn a_cancel_during_a_reused_turn_leaves_nothing_and_the_thread_goes_on() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-cancel");
    let (events, _) = turn(&cl, &thread, "first").await;
    let pid = spawned(&events)[0];

    let stream = thread.send("a slow answer please", cl.opts());
    let seen = until_first_delta(&stream).await;
    assert_eq!(reused(&seen), Some(pid), "the turn runs in the kept process");
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    cl.assert_reaped();
    assert_eq!(
        cl.driver.idle_processes(),
        0,
        "a cancelled turn's process is never kept"
    );
    assert!(!group_exists(pid as i32));

    let (events, r) = turn(&cl, &thread, "still there?").await;
    assert_eq!(spawned(&events).len(), 1, "a fresh process");
    assert!(
        r.text.starts_with("ECHO n=") && r.text.ends_with("still there?"),
        "{}",
        r.text
    );
    assert!(history_has(&cl, "first"), "the thread's history continues");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn runs_that_cannot_share_the_process_stop_the_kept_one_first() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-oneoff");
    let (events, _) = turn(&cl, &thread, "remember PLUM").await;
    let first_pid = spawned(&events)[0];
    // A one-shot-transport run writes to the session elsewhere: the kept process would miss that turn.
    let r = thread.send("one shot turn", cl.oneshot()).result().await;
    assert_eq!(transport(&r), "one_shot");
    assert!(!group_exists(first_pid as i32), "stopped before the one-shot run");
    cl.assert_reaped();
    let (events, r) = turn(&cl, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process with --resume");
    assert_eq!(r.text, "ECHO n=3: what word?");
    assert!(history_has(&cl, "one shot turn"), "it sees the one-shot turn");
    assert_eq!(cl.driver.idle_processes(), 1);

    // A native schema is fixed for a process's life: a one-off process, and the kept one is stopped.
    let schema = br#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let stream = thread.send("shaped", cl.opts().schema_json(schema, SchemaOptions::new()));
    let events = drain(&stream).await;
    let r = stream.result().await;
    assert_eq!(transport(&r), "bidi");
    let schema_pids = spawned(&events);
    assert_eq!(schema_pids.len(), 1);
    assert_ne!(schema_pids[0], pids[0]);
    assert!(
        !group_exists(pids[0] as i32),
        "the kept process was stopped first"
    );
    cl.assert_reaped();
    assert_eq!(
        cl.driver.idle_processes(),
        0,
        "a schema run's process is not kept"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test]
async fn direct_agent_tasks_start_fresh_processes_and_keep_none() {
    let Some(cl) = Cl::new().await else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    let mut pids = Vec::new();
    for prompt in ["hello", "hello again"] {
        let stream = agent.send(prompt, cl.opts());
        let events = drain(&stream).await;
        stream.result().await.unwrap();
        let started = spawned(&events);
        assert_eq!(started.len(), 1, "{prompt}: a process of its own");
        pids.push(started[0]);
        assert_eq!(
            cl.driver.idle_processes(),
            0,
            "{prompt}: a direct task keeps no process"
        );
    }
    assert_ne!(pids[0], pids[1], "no process shared between direct tasks");
    cl.assert_reaped();
}
