//! The HTTP/SSE/AG-UI service, in process on port 0 with the reference driver: AG-UI streams, runs and
//! their SSE replay, approvals, messages, errors, shutdown, the `serve` command line and its TOML file,
//! tenants and API keys, per-tenant and per-IP limits, connection limits and timeouts, the retention
//! task, JSON errors for every rejection, JSON logs with request and run spans, durable thread
//! declarations, recording off the live path (a stalled or dead store), the inspect route (also on the
//! real Claude CLI), the Docker files, metering (`GET /v1/usage`) and budgets.

mod acp_http;
mod agui;
mod approvals;
mod budgets;
mod capacity;
mod cli;
mod config_file;
mod connections;
mod console;
mod cors;
mod docker;
mod durable;
mod error_codes;
mod histograms;
mod idempotency;
mod inspect;
mod inspect_cli;
mod ip_limits;
mod limits;
mod live_window;
mod location;
mod logs;
mod memory_bound;
mod openapi;
mod openapi_errors;
mod openapi_examples;
mod otel;
mod parity;
mod proxies;
mod readme;
mod recording;
mod rejections;
mod reload;
mod resources;
mod retention;
mod run_listing;
mod runs;
mod schemas;
mod security;
mod services;
mod standby;
mod standby_log;
pub(crate) mod tenancy;
mod threads;
mod usage;
mod webhooks;

use std::time::Duration;

use agent_adaptor::server::{RunningServer, Server, ServerConfig};
use futures::StreamExt;
use serde_json::Value;

/// Starts a test server (memory store, reference agent only).
pub async fn start() -> RunningServer {
    start_with(ServerConfig::for_tests()).await
}

/// A test configuration whose `reference` agent records result metadata and the model (so a test can see
/// which model ran and how long the conversation was).
pub fn with_metadata() -> ServerConfig {
    let mut config = ServerConfig::for_tests();
    config.agents[0].exposure = agent_adaptor::recorder::ExposurePolicy {
        include_metadata: true,
        ..Default::default()
    };
    config
}

/// Starts a server with `config`.
pub async fn start_with(config: ServerConfig) -> RunningServer {
    Server::start(config).await.expect("the server starts")
}

/// A client without proxies (all traffic stays on 127.0.0.1).
pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// One SSE frame.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// `id:`.
    pub id: Option<String>,
    /// `event:`.
    pub event: Option<String>,
    /// `data:` lines joined by `\n`.
    pub data: String,
    /// True for a comment-only frame.
    pub comment: bool,
}

impl Frame {
    /// The data as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("frame data is JSON ({e}): {:?}", self.data))
    }

    /// The id as a sequence.
    pub fn seq(&self) -> u64 {
        self.id.as_deref().expect("an id").parse().expect("a numeric id")
    }
}

fn parse_frame(raw: &str) -> Frame {
    assert!(!raw.contains('\r'), "LF framing only: {raw:?}");
    let mut f = Frame::default();
    let mut data = Vec::new();
    let mut any_field = false;
    for line in raw.split('\n') {
        if line.starts_with(':') {
            continue;
        }
        any_field = true;
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "id" => f.id = Some(value.to_owned()),
            "event" => f.event = Some(value.to_owned()),
            "data" => data.push(value.to_owned()),
            _ => {}
        }
    }
    f.comment = !any_field;
    f.data = data.join("\n");
    f
}

/// Reads SSE frames from a response, handing each non-comment frame to `each`; stops when `each` returns
/// false or the body ends. Returns the frames seen.
pub async fn read_frames(resp: reqwest::Response, mut each: impl FnMut(&Frame) -> bool) -> Vec<Frame> {
    let mut body = resp.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .expect("the SSE stream makes progress within 30 s");
        let Some(chunk) = chunk else { break };
        buf.push_str(std::str::from_utf8(&chunk.expect("body chunk")).expect("UTF-8"));
        while let Some(end) = buf.find("\n\n") {
            let raw: String = buf.drain(..end + 2).collect();
            let f = parse_frame(raw.trim_end_matches('\n'));
            if f.comment {
                continue;
            }
            let go_on = each(&f);
            out.push(f);
            if !go_on {
                return out;
            }
        }
    }
    assert!(buf.trim().is_empty(), "no partial frame at the end: {buf:?}");
    out
}

/// Reads every frame until the body ends.
pub async fn all_frames(resp: reqwest::Response) -> Vec<Frame> {
    read_frames(resp, |_| true).await
}

/// The JSON error body's code.
pub async fn error_code(resp: reqwest::Response) -> (u16, String, Value) {
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.expect("a JSON error body");
    let code = body["error"]["code"].as_str().expect("error.code").to_owned();
    (status, code, body)
}

/// `POST {base}{path}` with a JSON body; the response, whatever its status.
pub async fn post_json(base: &str, path: &str, body: Value) -> reqwest::Response {
    client()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// `GET {base}{path}`; the response, whatever its status.
pub async fn get(base: &str, path: &str) -> reqwest::Response {
    client().get(format!("{base}{path}")).send().await.unwrap()
}

/// `GET {base}{path}`, asserting 200; the JSON body.
pub async fn get_json(base: &str, path: &str) -> Value {
    let resp = get(base, path).await;
    assert_eq!(resp.status(), 200, "GET {path}");
    resp.json().await.unwrap()
}

/// Starts a run (`path` is `/v1/agents/{agent}/runs` or `…/threads/{key}/runs`), asserting 201; the run.
pub async fn start_run(base: &str, path: &str, body: Value) -> Value {
    let resp = post_json(base, path, body).await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    resp.json().await.unwrap()
}

/// `POST /v1/runs/{run_id}/cancel`; the response.
pub async fn cancel(base: &str, run_id: &str) -> reqwest::Response {
    client()
        .post(format!("{base}/v1/runs/{run_id}/cancel"))
        .send()
        .await
        .unwrap()
}

/// `GET /v1/runs/{run_id}`: the run's current view.
pub async fn state(base: &str, run_id: &str) -> Value {
    get_json(base, &format!("/v1/runs/{run_id}")).await
}

/// Polls the run until it left `running`/`parked`; its final view.
pub async fn finished_state(base: &str, run_id: &str) -> Value {
    eventually(|| async move {
        let v = state(base, run_id).await;
        (v["state"] != "running" && v["state"] != "parked").then_some(v)
    })
    .await
}

/// The run id of a run view.
pub fn run_id(run: &Value) -> String {
    run["run_id"].as_str().expect("run_id").to_owned()
}

/// Polls `f` until it returns `Some`, at most 10 s.
pub async fn eventually<T, F, Fut>(mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "condition not met within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `agent-adaptor serve` on 127.0.0.1:0 with the memory store and no CLI discovery, stdout piped (the
/// listening line) and stderr piped; add arguments and spawn.
pub fn serve_command() -> std::process::Command {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_agent-adaptor"));
    cmd.args([
        "serve",
        "--bind",
        "127.0.0.1:0",
        "--store",
        "memory",
        "--no-discover",
    ])
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    cmd
}

/// Reads `serve`'s first stdout line and returns the base URL it announces (panics on anything else).
pub fn listening_url(stdout: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let port = line
        .trim_end()
        .strip_prefix("agent-adaptor listening on http://127.0.0.1:")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    format!("http://127.0.0.1:{port}")
}

/// Sends SIGTERM to a child process.
pub fn sigterm(child: &std::process::Child) {
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
}
