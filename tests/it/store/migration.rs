//! Migration 0005 (threads scoped by agent) on a database with rows: a SQLite file and a Postgres
//! database are created at schema 4 (the embedded migrations up to 0004), filled the way a build before
//! 0005 left them (two agents' runs on one key, a declared thread, a thread with no run), then opened by
//! this build, which migrates them to 5. Every old thread, with its receipts, continuity and history, is
//! found under the agent its data names.

use agent_adaptor::store::{self, ContinuityKind, Query, ThreadStatus, ThreadStore};

const T: &str = "tenant-m";

/// The rows of a schema-4 database; `ts(n)` spells a timestamp `n` seconds into the test's epoch.
fn rows(ts: fn(u32) -> String) -> Vec<String> {
    let thread = |id: &str, key: &str, status: &str, updated: u32| {
        format!(
            "INSERT INTO threads (id, tenant, thread_key, status, driver_type, agent_id, agent_tenant, \
             agent_profile, agent_name, fingerprint, compatibility_fingerprint, codec, state, created_at, \
             updated_at) VALUES ('{id}', '{T}', '{key}', '{status}', 'reference', '', '{T}', '', '', 'fp', \
             'cfp', 'reference/v1', NULL, {}, {})",
            ts(updated - 1),
            ts(updated)
        )
    };
    let run = |id: &str, agent: &str, key: &str, at: u32| {
        format!(
            "INSERT INTO runs (run_id, tenant, agent, thread_key, state, owner, result, error, created_at, \
             updated_at) VALUES ('{id}', '{T}', '{agent}', '{key}', 'succeeded', 'old-owner', NULL, NULL, \
             {}, {})",
            ts(at),
            ts(at + 1)
        )
    };
    let event = |run: &str, key: &str, seq: u32| {
        format!(
            "INSERT INTO events (tenant, thread_key, run_id, seq, kind, event, at) \
             VALUES ('{T}', '{key}', '{run}', {seq}, 'text.content', '{{\"seq\": {seq}}}', {})",
            ts(300 + seq)
        )
    };
    vec![
        // Key x: ref2 ran first (its record was archived at 150), then reference (active since 250).
        run("run-1", "ref2", "x", 100),
        run("run-2", "reference", "x", 200),
        thread("x-old", "x", "archived", 150),
        thread("x-new", "x", "active", 250),
        event("run-2", "x", 0),
        event("run-2", "x", 1),
        format!(
            "INSERT INTO receipts (tenant, thread_key, message_id, at) VALUES ('{T}', 'x', 'm1', {})",
            ts(260)
        ),
        format!(
            "INSERT INTO continuity (tenant, thread_key, kind, body, at) \
             VALUES ('{T}', 'x', 'assistant_turn', 'earlier answer', {})",
            ts(260)
        ),
        // Key y: only ref2's run.
        run("run-3", "ref2", "y", 400),
        thread("y-1", "y", "active", 410),
        // Key z: no run, a declaration names its agent.
        format!(
            "INSERT INTO thread_declarations (tenant, agent, thread_key, defaults, forked_from, created_at) \
             VALUES ('{T}', 'declared', 'z', '{{}}', NULL, {})",
            ts(500)
        ),
        thread("z-1", "z", "active", 510),
        // Key w: nothing names an agent (a library Agent without a name).
        thread("w-1", "w", "active", 600),
    ]
}

/// What the migrated store must answer.
async fn check(store: &dyn ThreadStore) {
    let at = |agent: &str, key: &str| Query::key(T, agent, key);
    let x = store
        .resolve(&at("reference", "x"))
        .await
        .unwrap()
        .expect("x under reference");
    assert_eq!((x.id.as_str(), x.host_agent.as_str()), ("x-new", "reference"));
    assert_eq!(
        store.resolve(&at("ref2", "x")).await.unwrap(),
        None,
        "x's active record is reference's"
    );
    let old = store
        .resolve(&Query::id(T, "x-old").include_archived())
        .await
        .unwrap()
        .expect("the archived record");
    assert_eq!(
        (old.status, old.host_agent.as_str()),
        (ThreadStatus::Archived, "ref2")
    );
    for (agent, key, id) in [("ref2", "y", "y-1"), ("declared", "z", "z-1"), ("", "w", "w-1")] {
        let found = store.resolve(&at(agent, key)).await.unwrap();
        assert_eq!(found.map(|r| r.id), Some(id.to_owned()), "{key} under {agent:?}");
    }
    let history = store.read_thread(T, "reference", "x", None, 100).await.unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    assert!(
        history
            .iter()
            .all(|e| e.agent == "reference" && e.run_id == "run-2")
    );
    assert!(
        store
            .read_thread(T, "ref2", "x", None, 100)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(store.has_receipt(T, "reference", "x", "m1").await.unwrap());
    assert!(!store.has_receipt(T, "ref2", "x", "m1").await.unwrap());
    let turns = store.continuity(T, "reference", "x").await.unwrap();
    assert_eq!(turns.len(), 1, "{turns:?}");
    assert_eq!(turns[0].kind, ContinuityKind::AssistantTurn);
    let listed = store
        .list_threads(T, "ref2", &store::Page::first(10))
        .await
        .unwrap();
    assert_eq!(listed.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(), ["y"]);
}

#[tokio::test]
async fn migration_5_finds_old_sqlite_threads_under_their_agent() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("v4.db").display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::migrate!("migrations/sqlite")
        .run_to(4, &pool)
        .await
        .unwrap();
    for sql in rows(|n| (1_700_000_000_000_000_i64 + i64::from(n) * 1_000_000).to_string()) {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&pool)
            .await
            .unwrap();
    }
    pool.close().await;
    let store = store::open(&format!("sqlite://{}", dir.path().join("v4.db").display()))
        .await
        .unwrap();
    check(store.as_ref()).await;
}

#[tokio::test]
async fn migration_5_finds_old_postgres_threads_under_their_agent() {
    crate::faults::with_scratch_database("migration_5_postgres", "aa_mig5", |url| async move {
        let pool = sqlx::PgPool::connect(&url).await.unwrap();
        sqlx::migrate!("migrations/postgres")
            .run_to(4, &pool)
            .await
            .unwrap();
        for sql in rows(|n| format!("to_timestamp({})", 1_700_000_000 + n)) {
            sqlx::query(sqlx::AssertSqlSafe(sql))
                .execute(&pool)
                .await
                .unwrap();
        }
        pool.close().await;
        let store = store::open(&url).await.unwrap();
        check(store.as_ref()).await;
    })
    .await;
}
