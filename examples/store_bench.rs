//! A load program for the thread stores: lease acquire+release, finalize, event-log appends at several
//! batch sizes, and replay, each measured for a fixed time against real databases.
//!
//! ```text
//! cargo run --release --example store_bench -- [--url sqlite://… --url postgres://…] [--seconds 3]
//! ```
//!
//! Without `--url` it measures a temporary SQLite file, plus Postgres when `DATABASE_URL` is set (in a
//! fresh schema that is dropped afterwards). A load program rather than a divan bench: the operations are
//! I/O-bound, need a tokio runtime and a database per run, and the interesting numbers are throughputs
//! under concurrency and batching, which a per-iteration timer does not measure.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_adaptor::store::postgres::{PostgresOptions, PostgresStore};
use agent_adaptor::store::{
    self, AgentIdentity, FinalizeRequest, NewEvent, Record, SessionState, ThreadStatus, ThreadStore,
};
use clap::Parser;
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// Measures store throughput.
#[derive(Parser, Debug)]
struct Args {
    /// Store URLs to measure (default: a temporary SQLite file, and `DATABASE_URL` if set).
    #[arg(long)]
    url: Vec<String>,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 3)]
    seconds: u64,
    /// Concurrent tasks for the concurrent measurements.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Event batch sizes to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,100,1000")]
    batch: Vec<usize>,
    /// Events to replay.
    #[arg(long, default_value_t = 200_000)]
    replay_events: u64,
}

#[tokio::main]
async fn main() {
    let args = Args::parse();
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut urls = args.url.clone();
    if urls.is_empty() {
        urls.push(format!("sqlite://{}", dir.path().join("bench.db").display()));
        if let Ok(url) = std::env::var("DATABASE_URL") {
            urls.push(url);
        }
    }
    println!("| backend | measurement | tasks | batch | ops/s | events/s |");
    println!("|---|---|---|---|---|---|");
    for url in urls {
        let schema = format!("aa_bench_{}", uuid::Uuid::new_v4().simple());
        let is_pg = url.starts_with("postgres");
        let store: Arc<dyn ThreadStore> = if is_pg {
            let options = PostgresOptions {
                schema: Some(schema.clone()),
                max_connections: (args.concurrency as u32 * 2).max(4),
                ..PostgresOptions::default()
            };
            Arc::new(
                PostgresStore::connect(&url, options)
                    .await
                    .expect("connect to Postgres"),
            )
        } else {
            store::open(&url).await.expect("open the store")
        };
        run(&args, store).await;
        if is_pg {
            let mut conn = PgConnection::connect(&url).await.expect("connect for cleanup");
            let drop = format!("DROP SCHEMA \"{schema}\" CASCADE");
            sqlx::query(AssertSqlSafe(drop))
                .execute(&mut conn)
                .await
                .expect("drop the bench schema");
        }
    }
}

async fn run(args: &Args, store: Arc<dyn ThreadStore>) {
    let backend = store.backend();
    let window = Duration::from_secs(args.seconds);
    for tasks in [1, args.concurrency] {
        let ops = timed(tasks, window, store.clone(), |store, task, n| async move {
            let target = format!("bench-lease-{task}");
            let lease = store
                .acquire_lease(&target, &format!("owner-{n}"), Duration::from_secs(30))
                .await
                .expect("acquire");
            store.release_lease(&lease).await.expect("release");
            0
        })
        .await;
        println!("| {backend} | lease acquire+release | {tasks} | - | {ops:.0} | - |");
    }
    for tasks in [1, args.concurrency] {
        let ops = timed(tasks, window, store.clone(), |store, task, n| async move {
            let target = format!("bench-fin-{task}");
            let lease = store
                .acquire_lease(&target, "finalizer", Duration::from_secs(30))
                .await
                .expect("acquire");
            let request = FinalizeRequest {
                record: record(&format!("thread-{task}"), &format!("session-{task}-{n}")),
                previous_id: (n > 0).then(|| format!("session-{task}-{}", n - 1)),
                held_leases: vec![lease],
                archive_old: true,
                rebind_active: true,
                require_key_absent: false,
            };
            store.finalize(request).await.expect("finalize");
            0
        })
        .await;
        println!("| {backend} | finalize (archive + rebind, incl. acquire) | {tasks} | - | {ops:.0} | - |");
    }
    for &batch in &args.batch {
        for tasks in [1, args.concurrency] {
            let events = timed(tasks, window, store.clone(), move |store, task, n| async move {
                let run = format!("bench-run-{batch}-{tasks}-{task}");
                let seq0 = n * batch as u64;
                let events = (seq0..seq0 + batch as u64)
                    .map(|seq| event(&format!("thread-{task}"), &run, seq))
                    .collect();
                store.append_events(events).await.expect("append");
                batch as u64
            })
            .await;
            println!(
                "| {backend} | append_events | {tasks} | {batch} | {:.0} | {events:.0} |",
                events / batch as f64
            );
        }
    }
    for producers in [1, 16, 64] {
        let writer = store::EventWriter::spawn(store.clone(), 2000);
        let events = timed(producers, window, store.clone(), move |_, task, n| {
            let writer = writer.clone();
            async move {
                let run = format!("bench-writer-{producers}-{task}");
                writer
                    .append(event(&format!("thread-{task}"), &run, n))
                    .await
                    .expect("append");
                1
            }
        })
        .await;
        println!(
            "| {backend} | EventWriter.append (1 event per call, group commit) | {producers} | - | - | {events:.0} |"
        );
    }
    replay(args, backend, store).await;
}

/// Appends `replay_events` to one thread, then reads them back page by page.
async fn replay(args: &Args, backend: &str, store: Arc<dyn ThreadStore>) {
    let run = "bench-replay";
    let mut seq = 0;
    while seq < args.replay_events {
        let end = (seq + 5000).min(args.replay_events);
        store
            .append_events((seq..end).map(|s| event("replay-thread", run, s)).collect())
            .await
            .expect("append");
        seq = end;
    }
    for (name, page) in [
        ("read_thread", 1000u32),
        ("read_thread", 5000),
        ("read_run", 5000),
    ] {
        let start = Instant::now();
        let mut after = None;
        let mut read = 0u64;
        loop {
            let events = if name == "read_run" {
                store.read_run("bench", run, after, page).await.expect("read")
            } else {
                store
                    .read_thread("bench", "bench-agent", "replay-thread", after, page)
                    .await
                    .expect("read")
            };
            let Some(last) = events.last() else { break };
            after = Some(if name == "read_run" { last.seq } else { last.cursor });
            read += events.len() as u64;
        }
        assert_eq!(read, args.replay_events, "replay returned every event");
        let rate = read as f64 / start.elapsed().as_secs_f64();
        println!("| {backend} | replay {name} (page {page}) | 1 | - | - | {rate:.0} |");
    }
}

/// Runs `op` in `tasks` loops for `window`; returns operations per second, or events per second when
/// `op` returns a count of events.
async fn timed<F, Fut>(tasks: usize, window: Duration, store: Arc<dyn ThreadStore>, op: F) -> f64
where
    F: Fn(Arc<dyn ThreadStore>, usize, u64) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = u64> + Send,
{
    let start = Instant::now();
    let mut handles = Vec::new();
    for task in 0..tasks {
        let (store, op) = (store.clone(), op.clone());
        handles.push(tokio::spawn(async move {
            let (mut ops, mut events) = (0u64, 0u64);
            while start.elapsed() < window {
                events += op(store.clone(), task, ops).await;
                ops += 1;
            }
            if events > 0 { events } else { ops }
        }));
    }
    let mut total = 0;
    for handle in handles {
        total += handle.await.expect("bench task");
    }
    total as f64 / start.elapsed().as_secs_f64()
}

fn record(key: &str, id: &str) -> Record {
    let now = store::now();
    Record {
        id: id.to_owned(),
        key: key.to_owned(),
        tenant: "bench".to_owned(),
        host_agent: "bench-agent".to_owned(),
        status: ThreadStatus::Active,
        driver_type: "reference".to_owned(),
        agent: AgentIdentity {
            id: "a".into(),
            tenant: "bench".into(),
            profile: "p".into(),
            name: "bench".into(),
        },
        fingerprint: "0123456789abcdef".to_owned(),
        compatibility_fingerprint: "fedcba9876543210".to_owned(),
        codec: "reference/v1".to_owned(),
        state: Some(SessionState {
            resume_id: format!("resume-{id}"),
            display_id: id.to_owned(),
            data: [("session.cwd".to_owned(), "/work/space".to_owned())].into(),
        }),
        created_at: now,
        updated_at: now,
    }
}

/// A text-delta event of about 200 bytes of JSON.
fn event(thread: &str, run: &str, seq: u64) -> NewEvent {
    NewEvent {
        tenant: "bench".to_owned(),
        agent: "bench-agent".to_owned(),
        thread_key: Some(thread.to_owned()),
        run_id: run.to_owned(),
        seq,
        kind: "text.content".to_owned(),
        event: serde_json::json!({
            "type": "text.content",
            "message_id": "msg-0190f1d2-7c4e-7a3b-9f00-123456789abc",
            "delta": "The quick brown fox jumps over the lazy dog, again and again.",
            "seq": seq,
        }),
        at: store::now(),
    }
}
