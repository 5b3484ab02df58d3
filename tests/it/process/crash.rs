//! When the server is SIGKILLed: PR_SET_PDEATHSIG takes its direct children down at once, and
//! `reap_orphans` (run at the next start) takes care of their descendants.
//!
//! The "server" is this test binary re-executed with [`HELPER_ENV`] set and a filter selecting
//! the calling test: in that mode the test spawns children through `spawn`, prints their pids as
//! a JSON line and waits to be killed.

use std::io::Write;
use std::time::Duration;

use agent_adaptor::driver::process::{Child, Line, ProcessRegistry, ProcessSpec, reap_orphans, spawn};
use futures::StreamExt;

use super::{alive, eventually, proc_state, sh};

const HELPER_ENV: &str = "AGENT_ADAPTOR_CRASH_HELPER";

/// Re-executes this test binary as a helper "server" running `test` in `mode`; returns it and the
/// first JSON object it prints.
async fn start_helper(registry: &ProcessRegistry, test: &str, mode: &str) -> (Child, serde_json::Value) {
    // /proc/self/exe, not current_exe(): the shared target dir means another checkout's build can
    // replace the file at our path while we run; the exe link always names the running image.
    let spec = ProcessSpec::new("/proc/self/exe")
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .inherit_base_env()
        .env(HELPER_ENV, mode)
        .label("crash-helper");
    let mut helper = spawn(registry, spec).await.unwrap();
    let mut out = helper.take_stdout().unwrap();
    let report = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(line) = out.next().await {
            if let Ok(Line::Json { value, .. }) = line
                && value.is_object()
            {
                return value;
            }
        }
        panic!(
            "the helper exited without reporting: {}",
            helper.stderr().tail_lossy()
        );
    })
    .await
    .unwrap();
    (helper, report)
}

fn pid_of(report: &serde_json::Value, key: &str) -> u32 {
    u32::try_from(report[key].as_u64().unwrap()).unwrap()
}

fn sigkill(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Helper mode: report the children, then wait to be killed (exit 3 if nobody does).
async fn report_and_wait(report: serde_json::Value) {
    // Leading newline: libtest has already printed "test <name> ... " without one.
    println!("\n{report}");
    std::io::stdout().flush().unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;
    std::process::exit(3);
}

#[tokio::test]
async fn the_child_dies_when_its_parent_is_sigkilled() {
    if std::env::var(HELPER_ENV).as_deref() == Ok("pdeathsig") {
        let registry = ProcessRegistry::new();
        let child = spawn(&registry, ProcessSpec::new("sleep").arg("300").inherit_base_env())
            .await
            .unwrap();
        return report_and_wait(serde_json::json!({ "child": child.pid() })).await;
    }
    let registry = ProcessRegistry::new();
    let test = "process::crash::the_child_dies_when_its_parent_is_sigkilled";
    let (helper, report) = start_helper(&registry, test, "pdeathsig").await;
    let child = pid_of(&report, "child");
    assert!(alive(child), "the helper's child runs before the helper dies");

    sigkill(helper.pid());
    assert_eq!(helper.wait().await.signal, Some(9));

    assert!(
        eventually(Duration::from_secs(1), || !alive(child)).await,
        "the child survived its parent's SIGKILL (state {:?})",
        proc_state(child)
    );
}

#[tokio::test]
async fn descendants_left_by_a_killed_server_are_reaped_at_the_next_start() {
    if std::env::var(HELPER_ENV).as_deref() == Ok("orphan") {
        let registry = ProcessRegistry::new();
        let mut child = spawn(&registry, sh("sleep 300 & echo \"{\\\"orphan\\\": $!}\"; wait"))
            .await
            .unwrap();
        let mut out = child.take_stdout().unwrap();
        let Some(Ok(Line::Json { value, .. })) = out.next().await else {
            panic!("no pid from sh")
        };
        let report = serde_json::json!({ "child": child.pid(), "orphan": value["orphan"] });
        return report_and_wait(report).await;
    }
    let registry = ProcessRegistry::new();
    let test = "process::crash::descendants_left_by_a_killed_server_are_reaped_at_the_next_start";
    let (helper, report) = start_helper(&registry, test, "orphan").await;
    let (child, orphan) = (pid_of(&report, "child"), pid_of(&report, "orphan"));
    let bystander = spawn(&registry, sh("sleep 300")).await.unwrap();

    sigkill(helper.pid());
    helper.wait().await;
    assert!(
        eventually(Duration::from_secs(1), || !alive(child)).await,
        "PDEATHSIG took the direct child"
    );
    assert!(
        alive(orphan),
        "its background job survives PDEATHSIG: that is the gap the reaper closes"
    );

    let reaped = reap_orphans();

    assert!(reaped.killed >= 1, "{reaped:?}");
    assert!(
        eventually(Duration::from_secs(1), || !alive(orphan)).await,
        "state {:?}",
        proc_state(orphan)
    );
    assert!(
        alive(bystander.pid()),
        "a live server's children are never touched"
    );
    assert!(bystander.exit_info().is_none());
}
