//! `CpuMeter`: a child's CPU time (its own and its waited-for descendants') is charged to the meter in
//! scope where it was spawned, from its rusage at exit; a pooled process charges each run that leased
//! it for its own share, read from `/proc` while it lives.

use std::time::Duration;

use agent_adaptor::driver::process::{
    Child, CpuMeter, PoolKey, Pooled, ProcessPool, ProcessRegistry, Taken, spawn,
};

use super::sh;

/// About a quarter second of CPU in a grandchild (`awk`), which `sh` waits for.
const BURN: &str = "awk 'BEGIN{while(i<1e7)i++}'";

/// What every burn costs at least, at any clock-tick resolution.
const AT_LEAST: Duration = Duration::from_millis(60);

#[tokio::test]
async fn a_child_charges_its_rusage_including_waited_descendants_to_the_meter_it_was_spawned_in() {
    let registry = ProcessRegistry::new();
    let meter = CpuMeter::new();
    let bystander = CpuMeter::new();
    let exit = meter
        .clone()
        .scope(async {
            let child = spawn(&registry, sh(BURN)).await.unwrap();
            child.wait().await
        })
        .await;
    assert!(exit.success(), "{exit:?}");
    let used = meter.total();
    assert!(used >= AT_LEAST, "the burn was not charged: {used:?}");
    assert!(used < Duration::from_secs(30), "{used:?}");
    assert_eq!(bystander.total(), Duration::ZERO);

    // A child spawned outside any meter's scope charges nobody.
    let child = spawn(&registry, sh(BURN)).await.unwrap();
    child.wait().await;
    assert_eq!(meter.total(), used, "a child outside the scope was charged");
}

/// A kept shell that burns CPU for every line it reads and answers it.
struct Burner(Child);

impl Pooled for Burner {
    fn child(&self) -> &Child {
        &self.0
    }
}

async fn burn_once(b: &mut Burner, lines: &mut agent_adaptor::driver::process::StdoutLines) {
    use futures::StreamExt;
    b.0.stdin().unwrap().send_line("go").await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(30), lines.next()).await;
    assert!(matches!(answer, Ok(Some(Ok(_)))), "{answer:?}");
}

#[tokio::test]
async fn a_pooled_process_charges_each_leasing_run_for_its_own_share_only() {
    let registry = ProcessRegistry::new();
    let pool: ProcessPool<Burner> = ProcessPool::new(Duration::from_secs(60), Duration::from_millis(500));
    let key = PoolKey::new("tenant", "thread");
    let script = format!("while read l; do {BURN}; echo '{{\"done\":true}}'; done");

    // Run A spawns the process, burns once, and gives it back to the pool.
    let run_a = CpuMeter::new();
    let mut lines = run_a
        .clone()
        .scope(async {
            let Taken::Cold(lease) = pool.checkout(key.clone(), "sig", false).await else {
                panic!("nothing was kept yet");
            };
            let mut b = Burner(spawn(&registry, sh(&script).stdin_piped(true)).await.unwrap());
            let mut lines = b.0.take_stdout().unwrap();
            burn_once(&mut b, &mut lines).await;
            assert!(lease.release(b, true).await.is_none(), "kept");
            lines
        })
        .await;
    let a_used = run_a.total();
    assert!(a_used >= AT_LEAST, "run A's burn: {a_used:?}");

    // Run B leases the same process and burns twice.
    let run_b = CpuMeter::new();
    run_b
        .clone()
        .scope(async {
            let Taken::Warm(mut b, lease) = pool.checkout(key.clone(), "sig", false).await else {
                panic!("the process was kept");
            };
            burn_once(&mut b, &mut lines).await;
            burn_once(&mut b, &mut lines).await;
            assert!(lease.release(b, true).await.is_none(), "kept");
        })
        .await;
    let b_used = run_b.total();
    assert!(b_used >= AT_LEAST * 2, "run B's two burns: {b_used:?}");
    assert_eq!(run_a.total(), a_used, "run A was charged for run B's lease");
    pool.close().await;
}
