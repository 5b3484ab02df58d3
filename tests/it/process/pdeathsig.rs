//! PR_SET_PDEATHSIG: when the process that spawned a child is SIGKILLed, the child dies too.
//!
//! The "parent" is this test binary re-executed with [`HELPER_ENV`] set and a filter selecting
//! this very test: in that mode the test spawns `sleep 300` through `spawn`, prints its pid as a
//! JSON line and waits to be killed.

use std::io::Write;
use std::time::Duration;

use agent_adaptor::driver::process::{Line, ProcessRegistry, ProcessSpec, spawn};
use futures::StreamExt;

use super::{alive, eventually, proc_state};

const HELPER_ENV: &str = "AGENT_ADAPTOR_PDEATHSIG_HELPER";

#[tokio::test]
async fn the_child_dies_when_its_parent_is_sigkilled() {
    if std::env::var_os(HELPER_ENV).is_some() {
        return be_the_parent().await;
    }
    let registry = ProcessRegistry::new();
    // /proc/self/exe, not current_exe(): the shared target dir means another checkout's build can
    // replace the file at our path while we run; the exe link always names the running image.
    let spec = ProcessSpec::new("/proc/self/exe")
        .args([
            "--exact",
            "process::pdeathsig::the_child_dies_when_its_parent_is_sigkilled",
            "--nocapture",
        ])
        .args(["--test-threads=1"])
        .inherit_base_env()
        .env(HELPER_ENV, "1")
        .label("pdeathsig-parent");
    let mut parent = spawn(&registry, spec).await.unwrap();
    let mut out = parent.take_stdout().unwrap();
    let grandchild = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(line) = out.next().await {
            if let Ok(Line::Json { value, .. }) = line
                && let Some(pid) = value["grandchild"].as_u64()
            {
                return u32::try_from(pid).unwrap();
            }
        }
        panic!(
            "the helper exited without reporting its child: {}",
            parent.stderr().tail_lossy()
        );
    })
    .await
    .unwrap();
    assert!(
        alive(grandchild),
        "the helper's child runs before the helper dies"
    );

    let killed = std::process::Command::new("kill")
        .args(["-KILL", &parent.pid().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert_eq!(parent.wait().await.signal, Some(9));

    assert!(
        eventually(Duration::from_secs(1), || !alive(grandchild)).await,
        "the orphan survived its parent's SIGKILL (state {:?})",
        proc_state(grandchild)
    );
}

async fn be_the_parent() {
    let registry = ProcessRegistry::new();
    let child = spawn(&registry, ProcessSpec::new("sleep").arg("300").inherit_base_env())
        .await
        .unwrap();
    // Leading newline: libtest has already printed "test <name> ... " without one.
    println!("\n{}", serde_json::json!({ "grandchild": child.pid() }));
    std::io::stdout().flush().unwrap();
    tokio::time::sleep(Duration::from_secs(30)).await;
    // Only reached if nobody killed us: exit non-zero so the outer test fails loudly.
    drop(child);
    std::process::exit(3);
}
