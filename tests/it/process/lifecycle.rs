//! Process lifecycle: group kill, the stop ladder, natural exit with leftovers, drop without
//! stop, the registry, shutdown, and spawn errors.

use std::time::Duration;

use agent_adaptor::driver::process::{
    Escalation, OWNER_ENV, ProcessError, ProcessRegistry, ProcessSpec, StopPlan, group_exists, spawn,
};

use super::{alive, eventually, group_members, live_group_members, proc_state, sh, wait_for_marker};

#[tokio::test]
async fn stop_kills_the_whole_group_and_reaps() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("sleep 300 & sleep 300 & echo ready; wait"))
        .await
        .unwrap();
    let (pid, pgid) = (child.pid(), child.pgid());
    assert_eq!(pgid, i32::try_from(pid).unwrap(), "the child leads its own group");
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    assert_eq!(
        live_group_members(pgid).len(),
        3,
        "sh and two sleeps: {:?}",
        group_members(pgid)
    );
    assert_eq!(registry.live_count(), 1);

    let exit = child
        .stop(StopPlan::new().term_grace(Duration::from_secs(1)))
        .await;

    assert_eq!(exit.escalation_used, Escalation::Terminate);
    assert_eq!(exit.signal, Some(15), "SIGTERM");
    assert_eq!(proc_state(pid), None, "the leader is reaped, not a zombie");
    assert!(
        live_group_members(pgid).is_empty(),
        "left behind: {:?}",
        group_members(pgid)
    );
    let our_pid = std::process::id();
    assert!(
        group_members(pgid).iter().all(|m| m.1 != our_pid),
        "no zombie of ours remains: {:?}",
        group_members(pgid)
    );
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn natural_exit_kills_background_leftovers() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("sleep 300 & echo ready; exit 3"))
        .await
        .unwrap();
    let pgid = child.pgid();
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    let exit = child.wait().await;
    assert_eq!(
        (exit.code, exit.escalation_used, exit.stop_duration),
        (Some(3), Escalation::None, None)
    );
    assert!(
        live_group_members(pgid).is_empty(),
        "the background sleep must die: {:?}",
        group_members(pgid)
    );
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn a_child_ignoring_sigterm_is_killed_after_term_grace() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(
        &registry,
        sh("trap '' TERM; echo ready; while :; do sleep 0.05; done"),
    )
    .await
    .unwrap();
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    let grace = Duration::from_millis(300);
    let exit = child.stop(StopPlan::new().term_grace(grace)).await;
    assert_eq!(exit.escalation_used, Escalation::Kill);
    assert_eq!(exit.signal, Some(9));
    let took = exit.stop_duration.unwrap();
    assert!(
        took >= grace && took < grace + Duration::from_secs(1),
        "stop took {took:?}"
    );
    assert!(live_group_members(child.pgid()).is_empty());
}

#[tokio::test]
async fn a_child_that_obeys_the_protocol_interrupt_never_sees_a_signal() {
    let registry = ProcessRegistry::new();
    let script = "trap 'echo got TERM >&2; exit 1' TERM; echo ready; \
                  while read l; do [ \"$l\" = interrupt ] && exit 0; done";
    let mut child = spawn(&registry, sh(script).stdin_piped(true)).await.unwrap();
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    let stdin = child.stdin().unwrap();
    let plan = StopPlan::new()
        .interrupt(async move {
            let _ = stdin.send_line("interrupt").await;
        })
        .interrupt_grace(Duration::from_secs(2))
        .term_grace(Duration::from_millis(200));
    let exit = child.stop(plan).await;
    assert_eq!(
        (exit.code, exit.escalation_used),
        (Some(0), Escalation::Interrupt)
    );
    assert!(
        !child.stderr().full().bytes.windows(4).any(|w| w == b"TERM"),
        "it saw SIGTERM"
    );
    assert!(exit.stop_duration.unwrap() < Duration::from_secs(1));
}

#[tokio::test]
async fn an_unanswered_interrupt_escalates_to_sigterm() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("echo ready; sleep 300").stdin_piped(true))
        .await
        .unwrap();
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    let plan = StopPlan::new()
        .interrupt(std::future::pending())
        .interrupt_grace(Duration::from_millis(100))
        .term_grace(Duration::from_secs(1));
    let exit = child.stop(plan).await;
    assert_eq!(exit.escalation_used, Escalation::Terminate);
    // A second stop is a no-op that reports the same exit.
    assert_eq!(child.stop(StopPlan::new()).await, exit);
}

#[tokio::test]
async fn dropping_a_child_kills_and_reaps_it() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("sleep 300 & echo ready; wait"))
        .await
        .unwrap();
    let (pid, pgid) = (child.pid(), child.pgid());
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    drop(child);
    assert!(eventually(Duration::from_secs(2), || registry.live_count() == 0).await);
    assert_eq!(proc_state(pid), None, "reaped, not a zombie");
    assert!(live_group_members(pgid).is_empty(), "{:?}", group_members(pgid));
}

#[tokio::test]
async fn registry_lists_live_children_and_shutdown_all_stops_everything() {
    let registry = ProcessRegistry::new();
    let mut children = Vec::new();
    for (i, script) in [
        "echo ready; sleep 300",
        "echo ready; sleep 300",
        "trap '' TERM; echo ready; sleep 300",
    ]
    .into_iter()
    .enumerate()
    {
        let mut child = spawn(&registry, sh(script).label(format!("c{i}"))).await.unwrap();
        let mut out = child.take_stdout().unwrap();
        wait_for_marker(&mut out, "ready").await;
        children.push(child);
    }
    let listed = registry.list();
    assert_eq!(
        listed.iter().map(|p| p.label.as_str()).collect::<Vec<_>>(),
        ["c0", "c1", "c2"]
    );
    assert_eq!(listed[0].pid, children[0].pid());

    let report = registry.shutdown_all(Duration::from_millis(300)).await;

    assert_eq!(
        (report.targeted, report.terminated, report.killed, report.unreaped),
        (3, 2, 1, 0)
    );
    assert_eq!(registry.live_count(), 0);
    for child in &children {
        assert!(!alive(child.pid()));
        assert!(!group_exists(child.pgid()) || live_group_members(child.pgid()).is_empty());
    }
    assert_eq!(children[2].exit_info().unwrap().escalation_used, Escalation::Kill);
    let refused = spawn(&registry, sh("true")).await;
    assert!(matches!(refused, Err(ProcessError::ShuttingDown)), "{refused:?}");
}

#[tokio::test]
async fn a_missing_program_is_not_found() {
    let registry = ProcessRegistry::new();
    let err = spawn(
        &registry,
        ProcessSpec::new("/nonexistent/agent-adaptor-no-such-cli"),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ProcessError::NotFound { .. }), "{err:?}");
    assert_eq!(registry.live_count(), 0);
}

#[tokio::test]
async fn the_child_gets_only_the_spec_env_and_its_cwd() {
    let registry = ProcessRegistry::new();
    let dir = tempfile::tempdir().unwrap();
    let spec = ProcessSpec::new("/usr/bin/env")
        .env("ONLY_THIS", "1")
        .cwd(dir.path());
    let mut child = spawn(&registry, spec).await.unwrap();
    let mut out = child.take_stdout().unwrap();
    assert!(child.wait().await.success());
    while futures::StreamExt::next(&mut out).await.is_some() {}
    let printed = String::from_utf8(out.take_raw().bytes.to_vec()).unwrap();
    let names: Vec<&str> = printed.lines().map(|l| l.split_once('=').unwrap().0).collect();
    assert_eq!(names, [OWNER_ENV, "ONLY_THIS"], "{printed}");
    assert!(printed.contains("ONLY_THIS=1\n"));

    let mut child = spawn(&registry, ProcessSpec::new("/bin/pwd").cwd(dir.path()))
        .await
        .unwrap();
    let mut out = child.take_stdout().unwrap();
    child.wait().await;
    while futures::StreamExt::next(&mut out).await.is_some() {}
    let printed = String::from_utf8(out.take_raw().bytes.to_vec()).unwrap();
    assert_eq!(
        std::fs::canonicalize(printed.trim()).unwrap(),
        std::fs::canonicalize(dir.path()).unwrap()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_outlives_the_thread_that_spawned_it() {
    // PR_SET_PDEATHSIG fires when the forking THREAD exits; forking happens on a dedicated
    // thread, so a short-lived caller thread must not take the child down with it.
    let registry = ProcessRegistry::new();
    let (handle, reg) = (tokio::runtime::Handle::current(), registry.clone());
    let child = std::thread::spawn(move || handle.block_on(spawn(&reg, sh("sleep 300"))))
        .join()
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(alive(child.pid()), "the child died with its spawning thread");
    assert!(child.exit_info().is_none());
    let exit = child.stop(StopPlan::new()).await;
    assert_eq!(exit.escalation_used, Escalation::Terminate);
}

#[tokio::test]
async fn stop_also_kills_descendants_that_left_the_group() {
    let registry = ProcessRegistry::new();
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("survived");
    // The grandchild moves to a session (and group) of its own, as Codex's shell commands do.
    let script = format!(
        "setsid sh -c 'sleep 2; touch {}' & sleep 1; echo ready; wait",
        marker.display()
    );
    let mut child = spawn(&registry, sh(&script)).await.unwrap();
    let mut out = child.take_stdout().unwrap();
    wait_for_marker(&mut out, "ready").await;
    let exit = child
        .stop(StopPlan::new().term_grace(Duration::from_secs(1)))
        .await;
    assert_eq!(exit.escalation_used, Escalation::Terminate);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        !marker.exists(),
        "a descendant outside the group outlived the stop"
    );
}
