//! The persistent `codebuddy` process per thread (control transport), against the real CLI: a thread's
//! second run writes only its user frame to the kept process (no `initialize`, no `--resume` process
//! start) and the conversation continues in the same session; idle eviction, a signature change, a
//! crashed kept process and `WithSpawn` all lead to a fresh process resuming the session; runs that cannot
//! share the process (headless transport, native schema) stop the kept one first; a cancel during a reused
//! turn leaves nothing behind; a process an interrupt poisoned is replaced and the replacement kept;
//! Agent close reaps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_adaptor::driver::process::group_exists;
use agent_adaptor::runtime::{
    Agent, ApprovalHandler, Event, Payload, RunResult, SchemaOptions, Thread, approve_all,
};

use super::{Cb, drain, run_error, transport};
use crate::driver_support::{spawned, until_first_delta, wait_until};

/// The pid of the kept process a run reused, if it reused one.
fn reused(events: &[Event]) -> Option<u32> {
    crate::driver_support::reused(events, "codebuddy.process")
}

/// Sends `prompt` on `thread` over the control transport; its events and result.
async fn turn(cb: &Cb, thread: &Thread, prompt: &str) -> (Vec<Event>, Arc<RunResult>) {
    let stream = thread.send(prompt, cb.opts());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "control");
    (events, outcome.unwrap())
}

/// True when the last model request carried `text` as an earlier user query (history).
fn history_has(cb: &Cb, text: &str) -> bool {
    let last = cb.mock.completion_requests().pop().expect("a model request");
    let queries = last.user_queries();
    queries[..queries.len().saturating_sub(1)]
        .iter()
        .any(|q| q.contains(text))
}

/// The conversation id CodeBuddy sent with the last model request.
fn conversation(cb: &Cb) -> String {
    let last = cb.mock.completion_requests().pop().expect("a model request");
    last.header("x-conversation-id").unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_threads_second_run_reuses_its_process_and_close_reaps_it() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-warm");
    let started = Instant::now();
    let (events, first) = turn(&cb, &thread, "remember PAPAYA").await;
    let cold = started.elapsed();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "one process spawned");
    let pid = pids[0];
    let live = cb.driver.registry().list();
    assert_eq!(live.len(), 1, "kept after the run");
    assert_eq!(live[0].pid, pid);
    assert_eq!(cb.driver.idle_processes(), 1);
    assert_eq!(first.metadata["process_kept"], "true");
    let first_conversation = conversation(&cb);

    let started = Instant::now();
    let (events, second) = turn(&cb, &thread, "what word?").await;
    let warm = started.elapsed();
    assert!(spawned(&events).is_empty(), "nothing spawned for the second run");
    assert_eq!(reused(&events), Some(pid), "the same process");
    assert_eq!(cb.driver.registry().list(), live, "the same registered process");
    assert_eq!(second.text, "Reply n=2 to what word?");
    assert_eq!(second.metadata["session_id"], first.metadata["session_id"]);
    assert_eq!(second.metadata["processes"], "0");
    assert!(
        history_has(&cb, "remember PAPAYA"),
        "the process held the history"
    );
    assert_eq!(conversation(&cb), first_conversation, "one session");
    let stdout = String::from_utf8_lossy(&second.raw().stdout).into_owned();
    assert!(
        !stdout.contains("agent-adaptor-initialize"),
        "no second handshake: {stdout}"
    );
    // The figure for the docs: a cold control run pays the CLI's start and handshake.
    eprintln!("codebuddy thread run: cold {cold:?}, warm (kept process) {warm:?}");

    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
    assert_eq!(cb.driver.idle_processes(), 0);
    assert!(!group_exists(pid as i32), "its process group is gone");
}

#[tokio::test]
async fn an_idle_evicted_process_is_replaced_and_the_thread_resumes() {
    let Some(cb) = Cb::with(|c| c.idle_timeout = Some(Duration::from_millis(400))).await else {
        return;
    };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-idle");
    let (events, _) = turn(&cb, &thread, "remember MANGO").await;
    let first_pid = spawned(&events)[0];
    wait_until("the idle process is evicted", || {
        cb.driver.registry().live_count() == 0
    })
    .await;
    assert!(
        !group_exists(first_pid as i32),
        "stopped and reaped (stdin EOF, then SIGTERM)"
    );
    assert_eq!(cb.driver.idle_processes(), 0);

    let (events, r) = turn(&cb, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a new process");
    assert_ne!(pids[0], first_pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "Reply n=2 to what word?");
    assert!(history_has(&cb, "remember MANGO"), "resumed from the checkpoint");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn a_signature_change_restarts_the_process_and_the_thread_continues() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-sig");
    let (events, _) = turn(&cb, &thread, "remember KIWI").await;
    let first_pid = spawned(&events)[0];
    // Other instructions: another --append-system-prompt, fixed for a process's life.
    let stream = thread.send("what word?", cb.opts().instructions("Answer tersely."));
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "control");
    let r = outcome.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "restarted");
    assert_ne!(pids[0], first_pid);
    assert!(
        !group_exists(first_pid as i32),
        "the old process was stopped and reaped"
    );
    let live = cb.driver.registry().list();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].pid, pids[0], "only the new one is kept");
    assert!(r.text.ends_with("what word?"), "{}", r.text);
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn with_spawn_forces_a_one_off_process_and_the_kept_one_is_stopped() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-spawn");
    let (events, _) = turn(&cb, &thread, "remember FIG").await;
    let first_pid = spawned(&events)[0];
    let stream = thread.send("second", cb.opts().spawn());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process");
    assert_ne!(pids[0], first_pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "Reply n=2 to second");
    assert_eq!(r.metadata["process_kept"], "false");
    assert!(
        !group_exists(first_pid as i32),
        "the kept process would miss the turn: stopped"
    );
    cb.assert_reaped();
    assert_eq!(cb.driver.idle_processes(), 0, "a WithSpawn process is not kept");

    let (events, r) = turn(&cb, &thread, "what word?").await;
    assert_eq!(spawned(&events).len(), 1, "cold again");
    assert_eq!(r.text, "Reply n=3 to what word?");
    assert!(history_has(&cb, "remember FIG") && history_has(&cb, "second"));
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn a_crashed_kept_process_is_replaced_with_a_resume() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-crash");
    let (events, _) = turn(&cb, &thread, "remember LIME").await;
    let pid = spawned(&events)[0];
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    wait_until("the killed process is reaped", || {
        cb.driver.registry().live_count() == 0
    })
    .await;

    let (events, r) = turn(&cb, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process");
    assert_ne!(pids[0], pid);
    assert_eq!(reused(&events), None);
    assert_eq!(r.text, "Reply n=2 to what word?");
    assert!(history_has(&cb, "remember LIME"), "resumed");
    assert_eq!(cb.driver.idle_processes(), 1, "the new one is kept");
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn a_cancel_during_a_reused_turn_leaves_nothing_and_the_thread_goes_on() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-cancel");
    let (events, _) = turn(&cb, &thread, "remember PEAR").await;
    let pid = spawned(&events)[0];

    let stream = thread.send("zzslow answer please", cb.opts());
    let seen = until_first_delta(&stream).await;
    assert_eq!(reused(&seen), Some(pid), "the turn runs in the kept process");
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    cb.assert_reaped();
    assert_eq!(
        cb.driver.idle_processes(),
        0,
        "a cancelled turn's process is never kept"
    );
    assert!(!group_exists(pid as i32));

    let (events, r) = turn(&cb, &thread, "still there?").await;
    assert_eq!(spawned(&events).len(), 1, "a fresh process");
    assert!(r.text.ends_with("still there?"), "{}", r.text);
    assert!(
        history_has(&cb, "remember PEAR"),
        "the thread's history continues"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn runs_that_cannot_share_the_process_stop_the_kept_one_first() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-oneoff");
    let (events, _) = turn(&cb, &thread, "remember PLUM").await;
    let first_pid = spawned(&events)[0];
    // A headless run writes to the session elsewhere: the kept process would miss that turn.
    let r = thread.send("headless turn", cb.headless()).result().await;
    assert_eq!(transport(&r), "headless");
    assert!(!group_exists(first_pid as i32), "stopped before the headless run");
    cb.assert_reaped();
    let (events, r) = turn(&cb, &thread, "what word?").await;
    let pids = spawned(&events);
    assert_eq!(pids.len(), 1, "a fresh process with --resume");
    assert_eq!(r.text, "Reply n=3 to what word?");
    assert!(history_has(&cb, "headless turn"), "it sees the headless turn");
    assert_eq!(cb.driver.idle_processes(), 1);

    // A native schema is fixed for a process's life: a one-off process, and the kept one is stopped.
    let schema = br#"{"type":"object","properties":{"a":{"type":"string"}}}"#;
    let stream = thread.send("shaped", cb.opts().schema_json(schema, SchemaOptions::new()));
    let events = drain(&stream).await;
    let r = stream.result().await;
    assert_eq!(transport(&r), "control");
    let schema_pids = spawned(&events);
    assert_eq!(schema_pids.len(), 1);
    assert_ne!(schema_pids[0], pids[0]);
    assert!(
        !group_exists(pids[0] as i32),
        "the kept process was stopped first"
    );
    cb.assert_reaped();
    assert_eq!(
        cb.driver.idle_processes(),
        0,
        "a schema run's process is not kept"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
}

#[tokio::test]
async fn a_process_poisoned_by_an_interrupt_is_replaced_and_the_replacement_is_kept() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-poison");
    let (events, _) = turn(&cb, &thread, "remember QUINCE").await;
    let pid = spawned(&events)[0];
    let approve = ApprovalHandler::new(|req| async move { approve_all(&req).map_err(|e| e.to_string()) });
    let stream = thread.send("zzsleep then touch", cb.opts().on_approval(approve));
    // An interrupt during the running command: CodeBuddy sends no `result`, and the kept process would
    // run the next frame in a new, history-less session.
    let events = super::messages::interrupt_when(
        &stream,
        "zzafter the tool",
        Duration::from_secs(2),
        |p| matches!(p, Payload::Notice(n) if n.kind == "approval.resolved"),
    )
    .await;
    assert_eq!(reused(&events), Some(pid), "the turn started in the kept process");
    let r = stream.result().await.unwrap();
    assert!(r.text.contains("zzafter the tool"), "{}", r.text);
    assert!(!group_exists(pid as i32), "the poisoned process was stopped");
    let replacement = spawned(&events);
    assert_eq!(replacement.len(), 1, "one replacement, started with --resume");
    assert_eq!(r.metadata["process_kept"], "true", "the replacement is kept");
    assert_eq!(cb.driver.registry().list()[0].pid, replacement[0]);

    let (events, r) = turn(&cb, &thread, "what word?").await;
    assert_eq!(
        reused(&events),
        Some(replacement[0]),
        "the next run reuses the replacement"
    );
    assert!(r.text.ends_with("what word?"), "{}", r.text);
    assert!(
        history_has(&cb, "remember QUINCE") && history_has(&cb, "zzafter the tool"),
        "one session with the whole history"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cb.assert_reaped();
}

#[tokio::test]
async fn direct_agent_tasks_start_fresh_processes_and_keep_none() {
    let Some(cb) = Cb::new().await else {
        return;
    };
    let agent = Agent::new(cb.driver.clone());
    let mut pids = Vec::new();
    for prompt in ["hello", "hello again"] {
        let stream = agent.send(prompt, cb.opts());
        let events = drain(&stream).await;
        stream.result().await.unwrap();
        let started = spawned(&events);
        assert_eq!(started.len(), 1, "{prompt}: a process of its own");
        pids.push(started[0]);
        assert_eq!(
            cb.driver.idle_processes(),
            0,
            "{prompt}: a direct task keeps no process"
        );
    }
    assert_ne!(pids[0], pids[1], "no process shared between direct tasks");
    cb.assert_reaped();
}
