//! A real `kill -9` for the SQLite store: this test re-runs its own binary as a child that holds a lease,
//! finalizes, and appends event batches until the parent SIGKILLs it mid-stream. The parent then reopens
//! the file and checks that every acknowledged batch is there whole, no batch is half-written, the dead
//! child's lease lapses after its TTL, and a new owner continues from the finalized record.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agent_adaptor::store::{self, FinalizeRequest, Lease, NewEvent, Query, StoreError};

const CHILD_ENV: &str = "AGENT_ADAPTOR_STORE_KILL_CHILD";
const TEST: &str = "store::kill::sqlite_survives_kill_9";
const TTL: Duration = Duration::from_secs(2);
const BATCH: u64 = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_survives_kill_9() {
    if let Ok(url) = std::env::var(CHILD_ENV) {
        return child(&url).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("killed.db").display());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &url)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut token, mut acked, mut started) = (None, None, None);
    for line in lines {
        // libtest prints "test <name> ... " on the same line as the child's first output.
        let line = line.unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        for pair in words.windows(2) {
            match (pair[0], pair[1].parse::<u64>()) {
                ("LEASE", Ok(t)) => (token, started) = (Some(t), Some(Instant::now())),
                ("BATCH", Ok(b)) => acked = Some(b),
                _ => {}
            }
        }
        if acked.is_some_and(|b| b >= 10) {
            break;
        }
    }
    child.kill().unwrap(); // SIGKILL, mid-append
    child.wait().unwrap();
    let (token, acked, started) = (
        token.expect("the child leased"),
        acked.expect("the child appended"),
        started.unwrap(),
    );

    let reopened = store::open(&url).await.unwrap();
    let events = reopened.read_run("t", "run-1", None, 100_000).await.unwrap();
    let count = events.len() as u64;
    assert!(
        count >= (acked + 1) * BATCH,
        "acknowledged batches survive: {count} events, {} acknowledged",
        (acked + 1) * BATCH
    );
    assert_eq!(count % BATCH, 0, "no batch is half-written: {count} events");
    assert!(events.iter().map(|e| e.seq).eq(0..count), "the log is gap-free");

    let target = "key:t:k";
    if started.elapsed() + Duration::from_millis(500) < TTL {
        let busy = reopened.acquire_lease(target, "successor", TTL).await;
        assert!(
            matches!(busy, Err(StoreError::Busy { .. })),
            "the dead child's lease holds until its TTL: {busy:?}"
        );
    }
    tokio::time::sleep((TTL + Duration::from_millis(300)).saturating_sub(started.elapsed())).await;
    let lease = reopened.acquire_lease(target, "successor", TTL).await.unwrap();
    assert!(
        lease.token > token,
        "the takeover token {} must exceed the dead child's {token}",
        lease.token
    );
    let found = reopened
        .resolve(&Query::key("t", "", "k"))
        .await
        .unwrap()
        .expect("the finalized record");
    assert_eq!(found.id, "killed-session");
    let stale = Lease {
        target: target.into(),
        owner: "child".into(),
        token,
        expires_at: lease.expires_at,
    };
    let late = reopened.finalize(request(found.clone(), stale)).await;
    assert!(
        matches!(late, Err(StoreError::LeaseLost { .. })),
        "the dead child cannot finalize: {late:?}"
    );
    reopened.finalize(request(found, lease)).await.unwrap();
}

fn request(record: store::Record, lease: Lease) -> FinalizeRequest {
    FinalizeRequest {
        record,
        previous_id: None,
        held_leases: vec![lease],
        archive_old: false,
        rebind_active: true,
        require_key_absent: false,
    }
}

/// The child: lease, finalize, then append batches forever, reporting each acknowledged one.
async fn child(url: &str) {
    let store = store::open(url).await.unwrap();
    let lease = store.acquire_lease("key:t:k", "child", TTL).await.unwrap();
    println!("LEASE {}", lease.token);
    let now = store::now();
    let record = store::Record {
        id: "killed-session".into(),
        key: "k".into(),
        tenant: "t".into(),
        host_agent: String::new(),
        status: store::ThreadStatus::Active,
        driver_type: "reference".into(),
        agent: Default::default(),
        fingerprint: "fp".into(),
        compatibility_fingerprint: "cfp".into(),
        codec: "reference/v1".into(),
        state: None,
        created_at: now,
        updated_at: now,
    };
    store.finalize(request(record, lease)).await.unwrap();
    for batch in 0.. {
        let events = (batch * BATCH..(batch + 1) * BATCH)
            .map(|seq| NewEvent {
                tenant: "t".into(),
                agent: String::new(),
                thread_key: Some("k".into()),
                run_id: "run-1".into(),
                seq,
                kind: "text.content".into(),
                event: serde_json::json!({"seq": seq, "pad": "x".repeat(200)}),
                at: store::now(),
            })
            .collect();
        store.append_events(events).await.unwrap();
        println!("BATCH {batch}");
    }
}
