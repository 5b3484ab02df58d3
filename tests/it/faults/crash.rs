//! A crashed server's runs end visibly (issue #22, item 2): the real `serve` binary is killed with
//! SIGKILL while a run waits for an approval, then restarted on the same store (a SQLite file, a
//! Postgres database of the test's own). The run is `interrupted`, its replay ends with a `done` frame
//! (also for a client whose cursor is past everything recorded), its approval is no longer pending,
//! and the next run on the same thread is admitted at once and succeeds.

use std::io::BufReader;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agent_adaptor::store::{self, ThreadStore};
use serde_json::{Value, json};

use crate::server::{all_frames, client, finished_state, get_json, listening_url, run_id, start_run};

/// `serve` on `store_url` (dev mode, tenant `default`), with a stable replica id when given.
fn spawn_serve(store_url: &str, replica: Option<&str>) -> (Child, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"));
    cmd.args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--store",
        store_url,
        "--no-discover",
    ])
    .args(["--reference-chunk-delay-ms", "0"])
    .env_remove("AGENT_ADAPTOR_REPLICA_ID")
    .stdout(Stdio::piped())
    .stderr(Stdio::null());
    if let Some(id) = replica {
        cmd.env("AGENT_ADAPTOR_REPLICA_ID", id);
    }
    let mut child = cmd.spawn().expect("spawn serve");
    let url = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    (child, url)
}

/// Polls `f` until it returns `Some`, at most 30 s.
async fn within_30s<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The frames of a run's replay, optionally after `Last-Event-ID: after`.
async fn replay(base: &str, run: &str, after: Option<u64>) -> Vec<crate::server::Frame> {
    let mut req = client().get(format!("{base}/v1/runs/{run}/events"));
    if let Some(a) = after {
        req = req.header("Last-Event-ID", a.to_string());
    }
    let resp = tokio::time::timeout(Duration::from_secs(20), req.send())
        .await
        .expect("replay answers")
        .unwrap();
    assert_eq!(resp.status(), 200);
    tokio::time::timeout(Duration::from_secs(20), all_frames(resp))
        .await
        .expect("the replay ends (a terminal frame closes it)")
}

/// The whole story on one store URL.
async fn crash_and_restart(url: &str, replica: Option<&str>) {
    let thread = "/v1/agents/reference/threads/crash-1/runs";
    let (mut first, base) = spawn_serve(url, replica);
    // A healthy run first, so the thread has a checkpoint to resume.
    let warm = start_run(&base, thread, json!({"prompt": "hello"})).await;
    assert_eq!(finished_state(&base, &run_id(&warm)).await["state"], "succeeded");

    // A run that waits for an approval; its approval is durable before the kill.
    let parked = start_run(
        &base,
        thread,
        json!({"prompt": "permission please", "approvals": {}}),
    )
    .await;
    let parked = run_id(&parked);
    let observer: std::sync::Arc<dyn ThreadStore> = store::open(url).await.expect("open the store");
    within_30s("the approval to be stored", || {
        let (observer, parked) = (observer.clone(), parked.clone());
        async move {
            let pending = observer.list_approvals("default", &parked, true).await.ok()?;
            (!pending.is_empty()).then_some(())
        }
    })
    .await;
    first.kill().expect("SIGKILL serve");
    first.wait().unwrap();
    let before = observer.get_run("default", &parked).await.unwrap().unwrap();
    assert!(before.state.is_live(), "the kill left it mid-flight: {before:?}");

    let (mut second, base) = spawn_serve(url, replica);
    let run = get_json(&base, &format!("/v1/runs/{parked}")).await;
    assert_eq!(run["state"], "interrupted", "{run}");
    assert_eq!(run["error"]["details"]["code"], "run_interrupted", "{run}");

    let frames = replay(&base, &parked, None).await;
    let last = frames.last().expect("frames");
    assert_eq!(last.event.as_deref(), Some("done"), "{frames:?}");
    let done: Value = serde_json::from_str(&last.data).unwrap();
    assert_eq!(done["error"]["reason"], "infrastructure_error", "{done}");
    // A client that saw more live than the log kept still gets the terminal, after its own cursor.
    let late = replay(&base, &parked, Some(100_000)).await;
    let end = late.last().expect("a terminal frame past the client's cursor");
    assert_eq!(end.event.as_deref(), Some("done"), "{late:?}");
    assert!(
        end.id.as_deref().unwrap().parse::<u64>().unwrap() > 100_000,
        "{end:?}"
    );

    let approvals = get_json(&base, &format!("/v1/runs/{parked}/approvals?pending=true")).await;
    assert_eq!(
        approvals["approvals"],
        json!([]),
        "no approval left pending: {approvals}"
    );
    let all = get_json(&base, &format!("/v1/runs/{parked}/approvals")).await;
    assert!(
        all["approvals"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["pending"] == false && a["outcome"] == "expired"),
        "every approval of the interrupted run shows it expired: {all}"
    );

    // The thread is free at once, and the next run on it succeeds.
    let next = start_run(&base, thread, json!({"prompt": "hello again"})).await;
    let state = finished_state(&base, &run_id(&next)).await;
    assert_eq!(state["state"], "succeeded", "{state}");

    second.kill().unwrap();
    second.wait().unwrap();
}

#[tokio::test]
async fn crash_sqlite_runs_of_a_killed_server_end_interrupted_at_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("crash.db").display());
    crash_and_restart(&url, None).await;
}

#[tokio::test]
async fn crash_postgres_runs_of_a_killed_replica_end_interrupted_when_it_restarts() {
    super::with_scratch_database("crash_postgres", "aa_crash", |url| async move {
        crash_and_restart(&url, Some("replica-crash-test")).await;
    })
    .await;
}

/// Issue #22: a crashed server's idle Standby kept its thread's lease until the lease's TTL, so after a
/// restart a run on the thread was admitted (201) and then failed `thread_busy`, and a new Standby ended
/// at once. The Standby's hold record lets recovery free the thread at start, like a run's.
async fn standby_crash_and_restart(url: &str) {
    let key = "sb-crash";
    let standby = format!("/v1/agents/reference/threads/{key}/standby");
    let (mut first, base) = spawn_serve(url, None);
    let opened = client().post(format!("{base}{standby}")).send().await.unwrap();
    assert_eq!(opened.status(), 201);
    // One execution, so the Standby surely owns the thread's lease; then it idles, holding it.
    let sent = client()
        .post(format!("{base}{standby}/messages"))
        .json(&json!({"text": "hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
    let run = within_30s("the Standby's execution", || {
        let (base, standby) = (base.clone(), standby.clone());
        async move {
            get_json(&base, &standby).await["last_run_id"]
                .as_str()
                .map(str::to_owned)
        }
    })
    .await;
    assert_eq!(finished_state(&base, &run).await["state"], "succeeded");
    first.kill().expect("SIGKILL serve");
    first.wait().unwrap();

    let (mut second, base) = spawn_serve(url, None);
    // At once: a run on the thread is admitted and succeeds (the dead Standby's lease is broken).
    let next = start_run(
        &base,
        &format!("/v1/agents/reference/threads/{key}/runs"),
        json!({"prompt": "hello again"}),
    )
    .await;
    let state = finished_state(&base, &run_id(&next)).await;
    assert_eq!(state["state"], "succeeded", "{state}");
    // And a new Standby on it owns the thread and answers.
    let reopened = client().post(format!("{base}{standby}")).send().await.unwrap();
    assert_eq!(reopened.status(), 201);
    let sent = client()
        .post(format!("{base}{standby}/messages"))
        .json(&json!({"text": "and again"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 202);
    let run = within_30s("the new Standby's execution", || {
        let (base, standby) = (base.clone(), standby.clone());
        async move {
            get_json(&base, &standby).await["last_run_id"]
                .as_str()
                .map(str::to_owned)
        }
    })
    .await;
    assert_eq!(finished_state(&base, &run).await["state"], "succeeded");
    assert_eq!(get_json(&base, &standby).await["live"], true);
    second.kill().unwrap();
    second.wait().unwrap();
}

#[tokio::test]
async fn crash_sqlite_a_killed_servers_standby_frees_its_thread_at_restart() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("crash-sb.db").display());
    standby_crash_and_restart(&url).await;
}
