//! Capacity of one replica (`[processes]`): the admission limit `max_active` answers `503
//! capacity_exhausted` with `Retry-After: 5` across tenants (after a tenant's own `429`; open Standbys
//! count), `/readyz` is 503 while full, `/metrics` shows the gauges and counters, the `[processes]`
//! table is read and `0` refused; and SIGTERM drains `serve`: new runs and `/readyz` answer 503, a run
//! that finishes within `--drain-grace` succeeds, the rest end `interrupted` (`run_interrupted`).

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_adaptor::server::capacity::Processes;
use agent_adaptor::server::{FileConfig, Limits, Server, TenantSpec};
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key, keyed};
use super::{all_frames, client, error_code, eventually, listening_url, read_frames, sigterm};

fn post(url: String, key: &str, body: Value) -> reqwest::RequestBuilder {
    as_key(reqwest::Method::POST, url, key).json(&body)
}

/// The value of the unlabelled series `name` in `/metrics`.
async fn metric(base: &str, name: &str) -> Option<f64> {
    let text = client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{name} "))?.trim().parse().ok())
}

/// Starts a run of `key`'s tenant that parks on an approval (it stays active); its id.
async fn parked_run(base: &str, key: &str) -> String {
    let resp = post(
        format!("{base}/v1/agents/reference/runs"),
        key,
        json!({"prompt": "permission please"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 201);
    let run_id = resp.json::<Value>().await.unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = as_key(
        reqwest::Method::GET,
        format!("{base}/v1/runs/{run_id}/events"),
        key,
    )
    .send()
    .await
    .unwrap();
    read_frames(events, |f| f.event.as_deref() != Some("approval_request")).await;
    run_id
}

#[tokio::test]
async fn capacity_max_active_answers_503_across_tenants_and_readyz_is_not_ready_while_full() {
    let mut config = keyed();
    config.limits = Limits {
        max_concurrent_runs: Some(1),
        ..Default::default()
    };
    config.tenants[1] = TenantSpec::new("b").key(KEY_B).unwrap().limits(Limits {
        max_concurrent_runs: Some(10),
        ..Default::default()
    });
    config.processes = Processes {
        max_kept: Some(3),
        max_active: Some(2),
    };
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    assert_eq!(
        client()
            .get(format!("{base}/readyz"))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(metric(&base, "agent_adaptor_max_active_runs").await, Some(2.0));
    assert_eq!(metric(&base, "agent_adaptor_kept_processes_max").await, Some(3.0));
    assert_eq!(metric(&base, "agent_adaptor_kept_processes").await, Some(0.0));
    assert_eq!(
        metric(&base, "agent_adaptor_kept_evictions_total").await,
        Some(0.0)
    );

    let a = parked_run(&base, KEY_A).await;
    // An open Standby of B holds the second slot: the replica is full.
    let open = as_key(
        reqwest::Method::POST,
        format!("{base}/v1/agents/reference/threads/s/standby"),
        KEY_B,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(open.status(), 201);
    assert_eq!(metric(&base, "agent_adaptor_active_runs").await, Some(2.0));

    // A is at its own limit: its 429 comes first.
    let (status, code, _) = error_code(
        post(
            format!("{base}/v1/agents/reference/runs"),
            KEY_A,
            json!({"prompt": "hi"}),
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!((status, code.as_str()), (429, "too_many_runs"));
    // B is under its own limit: the replica's limit answers, on every way to start a run or open a
    // Standby.
    for (path, body) in [
        ("/v1/agents/reference/runs", json!({"prompt": "hi"})),
        ("/v1/agents/reference/threads/t/runs", json!({"prompt": "hi"})),
        (
            "/v1/agents/reference/agui",
            json!({"threadId": "x", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "hi"}]}),
        ),
        ("/v1/agents/reference/threads/s2/standby", json!({})),
    ] {
        let resp = post(format!("{base}{path}"), KEY_B, body).send().await.unwrap();
        let retry = resp
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let (status, code, body) = error_code(resp).await;
        assert_eq!(
            (status, code.as_str()),
            (503, "capacity_exhausted"),
            "{path}: {body}"
        );
        assert_eq!(retry.as_deref(), Some("5"), "{path}");
        // A refusal of a healthy replica, not a fault: its own words, no error id to look up.
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("max_active") && !message.contains("error id"),
            "{path}: {message}"
        );
    }
    let (status, code, _) = error_code(client().get(format!("{base}/readyz")).send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (503, "capacity_exhausted"));
    assert_eq!(
        metric(&base, "agent_adaptor_capacity_refused_total").await,
        Some(4.0)
    );

    // Ending A's run frees a slot: ready again, and B runs.
    let cancel = as_key(reqwest::Method::POST, format!("{base}/v1/runs/{a}/cancel"), KEY_A)
        .send()
        .await
        .unwrap();
    assert!(cancel.status().is_success());
    eventually(|| async {
        (client()
            .get(format!("{base}/readyz"))
            .send()
            .await
            .unwrap()
            .status()
            == 200)
            .then_some(())
    })
    .await;
    let resp = post(
        format!("{base}/v1/agents/reference/runs"),
        KEY_B,
        json!({"prompt": "hi"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 201);
    server.shutdown().await.unwrap();
}

#[test]
fn capacity_the_processes_table_is_read_and_zero_is_refused() {
    let parse = |text: &str| FileConfig::parse(text, Path::new("test.toml"));
    let config = parse("drain_grace = \"2s\"\n[processes]\nmax_kept = 3\nmax_active = 7")
        .unwrap()
        .apply(Default::default(), |_| None)
        .unwrap();
    assert_eq!(
        config.processes,
        Processes {
            max_kept: Some(3),
            max_active: Some(7)
        }
    );
    assert_eq!(config.drain_grace, Duration::from_secs(2));
    for (text, key) in [
        ("[processes]\nmax_active = 0", "processes.max_active"),
        ("[processes]\nmax_kept = 0", "processes.max_kept"),
    ] {
        let err = parse(text)
            .unwrap()
            .apply(Default::default(), |_| None)
            .unwrap_err()
            .to_string();
        assert!(err.contains(key) && err.contains("at least 1"), "{text}: {err}");
    }
    let err = parse("[processes]\nmax_procs = 1").unwrap_err().to_string();
    assert!(err.contains("max_procs"), "{err}");
}

/// `serve` on a SQLite file with a slow reference agent and `--drain-grace 3`.
fn serve(db: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"));
    cmd.args(["serve", "--bind", "127.0.0.1:0", "--no-discover"])
        .arg("--store")
        .arg(format!("sqlite://{}", db.display()))
        .args(["--reference-chunk-delay-ms", "200", "--drain-grace", "3"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    cmd
}

/// The `done` frame's data of a run's SSE stream read to its end, and the notices before it.
fn done_of(frames: &[super::Frame]) -> (String, String) {
    let done = frames
        .iter()
        .rev()
        .find(|f| f.event.as_deref() == Some("done"))
        .unwrap_or_else(|| panic!("a done frame in {frames:?}"))
        .data
        .clone();
    let notices = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("notice"))
        .map(|f| f.data.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (done, notices)
}

#[tokio::test]
async fn capacity_sigterm_drains_finishes_short_runs_and_interrupts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("drain.db");
    let mut child = serve(&db).spawn().unwrap();
    let base = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    // ~1 s of streaming: finishes within the grace; ~16 s: does not.
    let short = super::start_run(&base, "/v1/agents/reference/runs", json!({"prompt": words(5)})).await;
    let long = super::start_run(
        &base,
        "/v1/agents/reference/threads/drained/runs",
        json!({"prompt": words(80)}),
    )
    .await;
    let follow = |run: &Value| {
        let url = format!("{base}/v1/runs/{}/events", super::run_id(run));
        tokio::spawn(async move { all_frames(client().get(url).send().await.unwrap()).await })
    };
    let (short_sse, long_sse) = (follow(&short), follow(&long));
    tokio::time::sleep(Duration::from_millis(300)).await;

    sigterm(&child);
    eventually(|| async {
        (client()
            .get(format!("{base}/readyz"))
            .send()
            .await
            .unwrap()
            .status()
            == 503)
            .then_some(())
    })
    .await;
    let (status, code, _) =
        error_code(super::post_json(&base, "/v1/agents/reference/runs", json!({"prompt": "new"})).await)
            .await;
    assert_eq!((status, code.as_str()), (503, "shutting_down"));

    let (short_done, short_notices) = done_of(&short_sse.await.unwrap());
    assert!(
        !short_done.contains("error") && !short_notices.contains("run_interrupted"),
        "the short run finished: {short_done}"
    );
    let (long_done, long_notices) = done_of(&long_sse.await.unwrap());
    assert!(long_done.contains("infrastructure_error"), "{long_done}");
    assert!(
        long_notices.contains("run_interrupted"),
        "the log says the run was interrupted: {long_notices}"
    );
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0), "a drained shutdown is clean");

    // The store agrees after a restart: interrupted by the drain (its grace in the details, not the
    // crash recovery's), the short run succeeded, and the drained thread takes a new run.
    let mut child = serve(&db).spawn().unwrap();
    let base = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    let long_view = super::state(&base, &super::run_id(&long)).await;
    assert_eq!(long_view["state"], "interrupted", "{long_view}");
    assert_eq!(
        long_view["error"]["details"]["drain_grace_ms"], 3000,
        "{long_view}"
    );
    let short_view = super::state(&base, &super::run_id(&short)).await;
    assert_eq!(short_view["state"], "succeeded", "{short_view}");
    let next = super::start_run(
        &base,
        "/v1/agents/reference/threads/drained/runs",
        json!({"prompt": "again"}),
    )
    .await;
    assert_eq!(
        super::finished_state(&base, &super::run_id(&next)).await["state"],
        "succeeded"
    );
    sigterm(&child);
    tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
}
