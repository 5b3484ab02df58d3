//! Failure tests: a crash mid-run (the store dropped without releasing anything) and recovery after the
//! lease TTL; a Postgres connection cut under load through a loopback proxy; a database from a newer
//! build; corrupt rows.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_adaptor::store::postgres::{PostgresOptions, PostgresStore};
use agent_adaptor::store::sqlite::SqliteStore;
use agent_adaptor::store::{
    self, AgentIdentity, FinalizeRequest, Lease, NewEvent, Query, Record, RunRecord, RunState, SessionState,
    StoreError, ThreadStatus, ThreadStore,
};
use sqlx::{Connection, SqliteConnection};

use super::pg;

fn record(tenant: &str, key: &str, id: &str) -> Record {
    let now = store::now();
    Record {
        id: id.to_owned(),
        key: key.to_owned(),
        tenant: tenant.to_owned(),
        host_agent: String::new(),
        status: ThreadStatus::Active,
        driver_type: "reference".to_owned(),
        agent: AgentIdentity {
            id: "a".into(),
            tenant: tenant.into(),
            profile: "p".into(),
            name: "n".into(),
        },
        fingerprint: "fp".to_owned(),
        compatibility_fingerprint: "cfp".to_owned(),
        codec: "reference/v1".to_owned(),
        state: Some(SessionState {
            resume_id: format!("resume-{id}"),
            display_id: id.to_owned(),
            data: Default::default(),
        }),
        created_at: now,
        updated_at: now,
    }
}

fn save(record: Record, leases: Vec<Lease>, previous: Option<&str>) -> FinalizeRequest {
    FinalizeRequest {
        record,
        previous_id: previous.map(str::to_owned),
        held_leases: leases,
        archive_old: previous.is_some(),
        rebind_active: true,
        require_key_absent: false,
    }
}

fn events(tenant: &str, key: Option<&str>, run: &str, seqs: std::ops::Range<u64>) -> Vec<NewEvent> {
    seqs.map(|seq| NewEvent {
        tenant: tenant.to_owned(),
        agent: String::new(),
        thread_key: key.map(str::to_owned),
        run_id: run.to_owned(),
        seq,
        kind: "text.content".to_owned(),
        event: serde_json::json!({"seq": seq}),
        at: store::now(),
    })
    .collect()
}

/// The `kill -9` analogue: a replica holds the thread lease, finalizes, appends events, and vanishes
/// without releasing or closing anything. A new process reopens the store: the lease is busy until its
/// TTL passes, then a new owner takes it with a higher token, continues from the last finalized record,
/// and the dead owner's lease can no longer finalize. The event log holds everything appended.
async fn crash_and_recover<F, Fut>(open: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = Arc<dyn ThreadStore>>,
{
    let ttl = Duration::from_secs(2);
    let (tenant, key) = ("tenant-crash", "thread-1");
    let target = format!("key:{tenant}:{key}");
    let first = open().await;
    let lease = first.acquire_lease(&target, "replica-1", ttl).await.unwrap();
    let acquired = Instant::now();
    let finalized = first
        .finalize(save(record(tenant, key, "session-1"), vec![lease.clone()], None))
        .await
        .unwrap();
    for batch in 0..5 {
        first
            .append_events(events(tenant, Some(key), "run-1", batch * 10..batch * 10 + 10))
            .await
            .unwrap();
    }
    drop(first);

    let second = open().await;
    if acquired.elapsed() + Duration::from_millis(500) < ttl {
        let busy = second.acquire_lease(&target, "replica-2", ttl).await;
        assert!(
            matches!(busy, Err(StoreError::Busy { .. })),
            "the dead owner's lease holds until its TTL: {busy:?}"
        );
    }
    tokio::time::sleep((ttl + Duration::from_millis(300)).saturating_sub(acquired.elapsed())).await;
    let taken = second
        .acquire_lease(&target, "replica-2", Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        taken.token > lease.token,
        "a takeover raises the fencing token: {lease:?} -> {taken:?}"
    );
    let stale = second
        .finalize(save(
            record(tenant, key, "session-stale"),
            vec![lease.clone()],
            None,
        ))
        .await;
    assert!(
        matches!(stale, Err(StoreError::LeaseLost { .. })),
        "the dead owner cannot finalize: {stale:?}"
    );

    let resumed = second.resolve(&Query::key(tenant, "", key)).await.unwrap();
    assert_eq!(
        resumed,
        Some(finalized.clone()),
        "the new owner continues from the last finalized record"
    );
    let logged = second.read_thread(tenant, "", key, None, 1000).await.unwrap();
    assert_eq!(
        logged.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (0..50).collect::<Vec<_>>(),
        "the log kept every event"
    );

    let next = second
        .finalize(save(
            record(tenant, key, "session-2"),
            vec![taken.clone()],
            Some("session-1"),
        ))
        .await
        .unwrap();
    assert_eq!(
        second.resolve(&Query::key(tenant, "", key)).await.unwrap(),
        Some(next)
    );
    let old = second
        .resolve(&Query::id(tenant, "session-1").include_archived())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(old.status, ThreadStatus::Archived);
    let cursors = second
        .append_events(events(tenant, Some(key), "run-2", 0..10))
        .await
        .unwrap();
    let last_before = logged.last().unwrap().cursor;
    assert!(
        cursors.iter().all(|c| *c > last_before),
        "cursors keep increasing across the restart"
    );
    second.release_lease(&taken).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_survives_a_crash_mid_run() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("crash.db").display());
    crash_and_recover(|| async { store::open(&url).await.unwrap() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_survives_a_crash_mid_run() {
    let Some(url) = pg::database_url("postgres_survives_a_crash_mid_run") else {
        return;
    };
    let shared = url.clone();
    pg::with_schema(&url, move |schema| async move {
        crash_and_recover(|| async {
            Arc::new(pg::store_in(&shared, &schema).await) as Arc<dyn ThreadStore>
        })
        .await;
    })
    .await;
}

/// One attempted batch under load: its run id, when it started and ended, and how it went.
struct Attempt {
    run: String,
    started: Instant,
    ended: Instant,
    outcome: Result<(), StoreError>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_connection_cut_under_load_is_typed_and_atomic() {
    let Some(url) = pg::database_url("postgres_connection_cut_under_load_is_typed_and_atomic") else {
        return;
    };
    let shared = url.clone();
    pg::with_schema(&url, move |schema| async move {
        connection_cut(&shared, &schema).await
    })
    .await;
}

async fn connection_cut(url: &str, schema: &str) {
    const BATCH: u64 = 20;
    let direct = pg::store_in(url, schema).await;
    let proxy = pg::Proxy::start(url).await;
    let options = PostgresOptions {
        max_connections: 4,
        acquire_timeout: Duration::from_secs(1),
        ..pg::options(schema)
    };
    let proxied: Arc<dyn ThreadStore> = Arc::new(
        PostgresStore::connect(&pg::via(url, proxy.addr), options)
            .await
            .unwrap(),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let attempts: Arc<Mutex<Vec<Attempt>>> = Arc::default();
    let mut writers = Vec::new();
    for w in 0..4 {
        let (store, stop, attempts) = (proxied.clone(), stop.clone(), attempts.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::SeqCst) {
                n += 1;
                let run = format!("w{w}-b{n}");
                let started = Instant::now();
                let outcome = store
                    .append_events(events("t", Some(&format!("th-{w}")), &run, 0..BATCH))
                    .await;
                let ended = Instant::now();
                attempts.lock().unwrap().push(Attempt {
                    run,
                    started,
                    ended,
                    outcome: outcome.map(drop),
                });
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
    }
    let lease = proxied
        .acquire_lease("cut-target", "owner", Duration::from_secs(30))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;

    proxy.cut().await;
    let cut_at = Instant::now();
    let renew = proxied.renew_lease(&lease, Duration::from_secs(30)).await;
    assert!(
        matches!(renew, Err(StoreError::Unavailable { .. })),
        "renew while cut: {renew:?}"
    );
    let finalize = proxied
        .finalize(save(record("t", "k", "s1"), vec![lease.clone()], None))
        .await;
    assert!(
        matches!(finalize, Err(StoreError::Unavailable { ref detail }) if !detail.is_empty()),
        "finalize while cut: {finalize:?}"
    );
    assert!(finalize.as_ref().is_err_and(StoreError::is_retryable));
    tokio::time::sleep(Duration::from_millis(1500)).await;

    proxy.restore();
    let restored_at = Instant::now();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    for writer in writers {
        writer.await.unwrap();
    }
    let renewed = proxied.renew_lease(&lease, Duration::from_secs(30)).await;
    assert!(renewed.is_ok(), "work resumes after the restore: {renewed:?}");
    let saved = proxied
        .finalize(save(record("t", "k", "s1"), vec![lease], None))
        .await;
    assert!(saved.is_ok(), "finalize resumes after the restore: {saved:?}");

    let attempts = std::mem::take(&mut *attempts.lock().unwrap());
    let wrong: Vec<String> = attempts
        .iter()
        .filter_map(|a| match &a.outcome {
            Err(e) if !matches!(e, StoreError::Unavailable { .. }) => Some(format!("{}: {e:?}", a.run)),
            _ => None,
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "a cut connection must surface as Unavailable, got {wrong:?}"
    );
    let during_cut = |a: &&Attempt| a.started > cut_at + Duration::from_millis(100) && a.ended < restored_at;
    assert!(
        attempts.iter().filter(during_cut).all(|a| a.outcome.is_err()),
        "nothing can succeed while the proxy is cut"
    );
    assert!(attempts.iter().any(|a| a.outcome.is_err()), "the cut was noticed");
    assert!(
        attempts.iter().any(|a| a.started < cut_at && a.outcome.is_ok()),
        "batches succeed before the cut"
    );
    assert!(
        attempts
            .iter()
            .any(|a| a.started > restored_at && a.outcome.is_ok()),
        "batches succeed after the restore"
    );

    let mut ambiguous = 0;
    for attempt in &attempts {
        let stored = direct
            .read_run("t", &attempt.run, None, 1000)
            .await
            .unwrap()
            .len() as u64;
        match (&attempt.outcome, stored) {
            (Ok(()), BATCH) | (Err(_), 0) => {}
            (Err(_), BATCH) => ambiguous += 1, // committed, but the acknowledgement was lost in the cut
            (outcome, n) => panic!(
                "batch {} is half-written: {n} of {BATCH} events ({outcome:?})",
                attempt.run
            ),
        }
    }
    for w in 0..4 {
        let log = direct
            .read_thread("t", "", &format!("th-{w}"), None, 10_000)
            .await
            .unwrap();
        assert!(
            log.windows(2).all(|p| p[0].cursor < p[1].cursor),
            "thread th-{w} replays in cursor order"
        );
    }
    eprintln!(
        "connection cut: {} batches attempted, {ambiguous} committed without acknowledgement",
        attempts.len()
    );
}

/// Writes a record, a run and events, then tampers with the rows through `tamper`; every read of a bad
/// row must be a `Corrupt` error naming its table and row.
async fn corrupt_rows_are_reported(store: &dyn ThreadStore, tamper: impl AsyncFnOnce()) {
    let lease = store
        .acquire_lease("corrupt-target", "o", Duration::from_secs(30))
        .await
        .unwrap();
    store
        .finalize(save(record("t", "k", "corrupt-1"), vec![lease], None))
        .await
        .unwrap();
    store
        .append_events(events("t", Some("k"), "run-c", 0..3))
        .await
        .unwrap();
    let run = RunRecord {
        run_id: "run-c".into(),
        tenant: "t".into(),
        agent: "reference".into(),
        thread_key: Some("k".into()),
        state: RunState::Running,
        owner: "replica".into(),
        result: None,
        error: None,
        created_at: store::now(),
        updated_at: store::now(),
    };
    store.put_run(&run).await.unwrap();
    tamper().await;
    let expect_corrupt = |what: &str, err: StoreError, needle: &str| match err {
        StoreError::Corrupt { detail } => {
            assert!(detail.contains(needle), "{what}: {detail:?} must name {needle:?}")
        }
        other => panic!("{what}: expected Corrupt, got {other:?}"),
    };
    expect_corrupt(
        "resolve",
        store.resolve(&Query::key("t", "", "k")).await.unwrap_err(),
        "threads row corrupt-1",
    );
    expect_corrupt(
        "get_run",
        store.get_run("t", "run-c").await.unwrap_err(),
        "runs row run-c: column state",
    );
}

#[tokio::test]
async fn sqlite_reports_a_newer_schema_and_corrupt_rows() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("old.db").display());
    let opened = SqliteStore::open(&url).await.unwrap();
    let raw = url.clone();
    corrupt_rows_are_reported(&opened, async || {
        let mut conn = SqliteConnection::connect(&raw).await.unwrap();
        sqlx::query("UPDATE threads SET state = '{not json' WHERE id = 'corrupt-1'")
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("UPDATE runs SET state = 'exploded' WHERE run_id = 'run-c'")
            .execute(&mut conn)
            .await
            .unwrap();
        sqlx::query("UPDATE events SET event = 'nope' WHERE seq = 1")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    })
    .await;
    let err = opened.read_thread("t", "", "k", None, 10).await.unwrap_err();
    assert!(
        matches!(&err, StoreError::Corrupt { detail } if detail.contains("events row")),
        "{err:?}"
    );
    let first = opened.read_run("t", "run-c", None, 1).await.unwrap();
    assert_eq!(first.len(), 1, "rows before the bad one still read");
    opened.close().await;

    let mut conn = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (20991231000000, 'from a newer build', TRUE, X'00', 0)",
    )
    .execute(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    let refused = SqliteStore::open(&url).await.unwrap_err();
    assert_eq!(
        refused,
        StoreError::SchemaVersion {
            found: 20991231000000,
            supported: 6
        }
    );
    assert!(refused.to_string().contains("newer"), "{refused}");
}

#[tokio::test]
async fn postgres_reports_a_newer_schema_and_corrupt_rows() {
    let Some(url) = pg::database_url("postgres_reports_a_newer_schema_and_corrupt_rows") else {
        return;
    };
    let shared = url.clone();
    pg::with_schema(&url, move |schema| async move {
        let opened = pg::store_in(&shared, &schema).await;
        let (raw_url, raw_schema) = (shared.clone(), schema.clone());
        corrupt_rows_are_reported(&opened, async move || {
            let mut conn = pg::raw(&raw_url, &raw_schema).await;
            sqlx::query("UPDATE threads SET state = '{\"resume_id\": 5}' WHERE id = 'corrupt-1'")
                .execute(&mut conn)
                .await
                .unwrap();
            sqlx::query("UPDATE runs SET state = 'exploded' WHERE run_id = 'run-c'")
                .execute(&mut conn)
                .await
                .unwrap();
            conn.close().await.unwrap();
        })
        .await;
        opened.close().await;

        let mut conn = pg::raw(&shared, &schema).await;
        sqlx::query(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
             VALUES (20991231000000, 'from a newer build', TRUE, '\\x00', 0)",
        )
        .execute(&mut conn)
        .await
        .unwrap();
        conn.close().await.unwrap();
        let refused = PostgresStore::connect(&shared, pg::options(&schema))
            .await
            .unwrap_err();
        assert_eq!(
            refused,
            StoreError::SchemaVersion {
                found: 20991231000000,
                supported: 6
            }
        );
    })
    .await;
}
