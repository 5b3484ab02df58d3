//! `serve --log-format json`: the real binary on port 0 writes only JSON lines to stderr, with a `request`
//! span (matched route, status, tenant) for a request the test made and a `run` span (run id, agent) on
//! the events of a run it started; API keys and prompt text never appear in the logs. Text logs to a pipe
//! carry no ANSI colour codes.

use std::io::{BufReader, Read};

use serde_json::{Value, json};

use super::{client, listening_url, serve_command, sigterm};

const KEY: &str = "logs-test-key-0123456789";
const PROMPT: &str = "a prompt that must not be logged";

#[tokio::test]
async fn logs_json_lines_carry_request_and_run_spans() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("serve.toml");
    std::fs::write(
        &config,
        format!("[[tenants]]\nname = \"acme\"\nkeys = [\"{KEY}\"]\n"),
    )
    .unwrap();
    let mut child = serve_command()
        .arg("--config")
        .arg(&config)
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    let base = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));

    let resp = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .bearer_auth(KEY)
        .json(&json!({"prompt": PROMPT}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let run: Value = resp.json().await.unwrap();
    let run_id = run["run_id"].as_str().unwrap().to_owned();
    super::eventually(|| {
        let (base, run_id) = (base.clone(), run_id.clone());
        async move {
            let v: Value = client()
                .get(format!("{base}/v1/runs/{run_id}"))
                .bearer_auth(KEY)
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            (v["state"] == "succeeded").then_some(())
        }
    })
    .await;
    let unauthorized = client()
        .get(format!("{base}/v1/agents"))
        .bearer_auth("not-the-key-but-long-enough")
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status(), 401);

    sigterm(&child);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let logs = reader.join().unwrap();

    let lines: Vec<Value> = logs
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l:?}")))
        .collect();
    assert!(!lines.is_empty(), "the service logged nothing");
    assert!(!logs.contains(KEY), "an API key reached the logs");
    assert!(
        !logs.contains("not-the-key-but-long-enough"),
        "a presented key reached the logs"
    );
    assert!(!logs.contains(PROMPT), "prompt text reached the logs");

    let response_of = |route: &str, status: u64| {
        lines.iter().find(|l| {
            l["fields"]["message"] == "response"
                && l["span"]["name"] == "request"
                && l["span"]["route"] == route
                && l["fields"]["status"] == status
        })
    };
    let started = response_of("/v1/agents/{agent}/runs", 201)
        .unwrap_or_else(|| panic!("no request span for the run start in {logs}"));
    assert_eq!(started["span"]["method"], "POST");
    assert_eq!(started["span"]["tenant"], "acme");
    assert!(started["fields"]["latency_ms"].as_f64().is_some(), "{started}");
    assert!(
        response_of("/v1/agents", 401).is_some(),
        "a refused request is logged with its status: {logs}"
    );

    let in_run: Vec<&Value> = lines
        .iter()
        .filter(|l| l["span"]["name"] == "run" && l["span"]["run_id"] == run_id.as_str())
        .collect();
    assert!(
        in_run.iter().any(|l| l["fields"]["message"] == "run finished"),
        "no run-span event for run {run_id} in {logs}"
    );
    let span = &in_run[0]["span"];
    assert_eq!(span["agent"], "reference");
    assert_eq!(span["tenant"], "acme");
}

/// Text logs written to a pipe (not a terminal) are plain: no ANSI escape sequences. Before, every line
/// of `serve`'s default text log to a redirected stderr carried colour codes.
#[tokio::test]
async fn text_logs_to_a_pipe_carry_no_colour_codes() {
    let mut child = serve_command()
        .env("RUST_LOG", "info")
        .env_remove("NO_COLOR")
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let url = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    let resp = client().get(format!("{url}/v1/agents")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    sigterm(&child);
    let mut logs = String::new();
    stderr.read_to_string(&mut logs).unwrap();
    child.wait().unwrap();
    assert!(logs.contains("request"), "the request was logged: {logs}");
    assert!(!logs.contains('\u{1b}'), "ANSI codes in piped logs: {logs:?}");
}

/// Every response carries an `x-request-id`: a fresh one per request (also on errors and unknown routes),
/// or the client's own echoed back; the JSON log's `request` span records it.
#[tokio::test]
async fn every_response_carries_a_request_id_and_the_span_records_it() {
    let mut child = serve_command()
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let url = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    let mut seen = std::collections::BTreeSet::new();
    for path in ["/healthz", "/v1/agents", "/v1/runs/nope", "/no/such/route"] {
        let resp = client().get(format!("{url}{path}")).send().await.unwrap();
        let id = resp
            .headers()
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("{path} ({}) has no x-request-id", resp.status()))
            .to_owned();
        assert!(seen.insert(id.clone()), "{path}: the id {id} repeats");
    }
    let mine = "client-chosen-id-42";
    let resp = client()
        .get(format!("{url}/v1/agents"))
        .header("x-request-id", mine)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.headers()["x-request-id"], mine, "the client's id is echoed");
    sigterm(&child);
    let mut logs = String::new();
    stderr.read_to_string(&mut logs).unwrap();
    child.wait().unwrap();
    let recorded = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|v| v["span"]["request_id"] == mine);
    assert!(recorded, "the request span records the id: {logs}");
}
