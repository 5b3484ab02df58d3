//! ACP over HTTP (`/v1/agents/{agent}/acp`, `/v1/acp`) at the seams the SDK test in
//! `tests/acp-node/test/http.test.mjs` does not reach: tenant isolation of connections and sessions,
//! a stream resumed with `Last-Event-ID` with nothing missed, one receiver per stream, typed refusals
//! of bad requests, prompts counted against the tenant's run limit, DELETE and idle expiry ending a
//! connection (and releasing its session's thread), and a remote client refused stdio MCP servers.

use std::time::Duration;

use agent_adaptor::server::{Limits, ServerConfig, TenantSpec};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::tenancy::{KEY_A, KEY_B, keyed};
use super::{Frame, client, error_code, start_with};

const CONN: &str = "acp-connection-id";
const SESSION: &str = "acp-session-id";

/// One ACP connection driven by hand.
struct Acp {
    endpoint: String,
    key: Option<&'static str>,
    id: String,
}

fn request(method: reqwest::Method, url: &str, key: Option<&str>) -> reqwest::RequestBuilder {
    let r = client().request(method, url);
    match key {
        Some(k) => r.bearer_auth(k),
        None => r,
    }
}

fn initialize_msg(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": 1, "clientCapabilities": {}}})
}

impl Acp {
    /// Opens a connection (POSTs initialize); its initialize response.
    async fn open(endpoint: &str, key: Option<&'static str>) -> (Acp, Value) {
        let resp = request(reqwest::Method::POST, endpoint, key)
            .json(&initialize_msg(0))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        let id = resp.headers()[CONN].to_str().unwrap().to_owned();
        let body: Value = resp.json().await.unwrap();
        let acp = Acp {
            endpoint: endpoint.to_owned(),
            key,
            id,
        };
        (acp, body)
    }

    fn post_raw(&self, msg: &Value, session: Option<&str>) -> reqwest::RequestBuilder {
        let mut r = request(reqwest::Method::POST, &self.endpoint, self.key)
            .header(CONN, &self.id)
            .json(msg);
        if let Some(s) = session {
            r = r.header(SESSION, s);
        }
        r
    }

    async fn post(&self, msg: Value, session: Option<&str>) {
        let resp = self.post_raw(&msg, session).send().await.unwrap();
        assert_eq!(resp.status(), 202, "{msg}");
    }

    fn stream_req(&self, session: Option<&str>, last: Option<u64>) -> reqwest::RequestBuilder {
        let mut r = request(reqwest::Method::GET, &self.endpoint, self.key)
            .header(CONN, &self.id)
            .header("accept", "text/event-stream");
        if let Some(s) = session {
            r = r.header(SESSION, s);
        }
        if let Some(l) = last {
            r = r.header("last-event-id", l.to_string());
        }
        r
    }

    /// Attaches to a stream; its frames arrive on the returned channel until it is dropped.
    async fn tap(&self, session: Option<&str>, last: Option<u64>) -> Tap {
        let resp = self.stream_req(session, last).send().await.unwrap();
        assert_eq!(resp.status(), 200);
        assert_eq!(resp.headers()[CONN], self.id.as_str());
        Tap::new(resp)
    }

    /// Creates a session (`session/new`, answered on the connection stream `own`); its id.
    async fn new_session(&self, own: &mut Tap, id: u64, cwd: &str) -> String {
        self.post(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}}),
            None,
        )
        .await;
        let answer = own.response(id).await;
        answer["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_owned()
    }
}

/// The frames of one SSE response, read by a task.
struct Tap {
    rx: mpsc::UnboundedReceiver<Frame>,
    task: tokio::task::JoinHandle<()>,
}

impl Tap {
    fn new(resp: reqwest::Response) -> Tap {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut body = resp.bytes_stream();
            let mut buf = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buf.push_str(std::str::from_utf8(&chunk).unwrap());
                while let Some(end) = buf.find("\n\n") {
                    let raw: String = buf.drain(..end + 2).collect();
                    let mut f = Frame::default();
                    let mut data = Vec::new();
                    for line in raw.trim_end().split('\n') {
                        if let Some(v) = line.strip_prefix("id:") {
                            f.id = Some(v.trim().to_owned());
                        } else if let Some(v) = line.strip_prefix("data:") {
                            data.push(v.strip_prefix(' ').unwrap_or(v).to_owned());
                        }
                    }
                    if data.is_empty() {
                        continue;
                    }
                    f.data = data.join("\n");
                    if tx.send(f).is_err() {
                        return;
                    }
                }
            }
        });
        Tap { rx, task }
    }

    async fn next(&mut self) -> Option<Frame> {
        tokio::time::timeout(Duration::from_secs(20), self.rx.recv())
            .await
            .expect("a frame within 20 s")
    }

    /// Frames until the response with JSON-RPC id `id`; returns that response.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let f = self.next().await.expect("the stream ended before the response");
            let v = f.json();
            if v.get("method").is_none() && v["id"] == json!(id) {
                return v;
            }
        }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn prompt(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt", "params": {"prompt": [{"type": "text", "text": text}]}})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_connection_and_its_sessions_belong_to_the_tenant_that_opened_them() {
    let server = start_with(keyed()).await;
    let endpoint = format!("{}/v1/agents/reference/acp", server.url());
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();

    let unauthenticated = request(reqwest::Method::POST, &endpoint, None)
        .json(&initialize_msg(0))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthenticated.status(), 401);

    let (a, init) = Acp::open(&endpoint, Some(KEY_A)).await;
    assert_eq!(init["result"]["protocolVersion"], 1);
    let mut own = a.tap(None, None).await;
    let session = a.new_session(&mut own, 1, cwd).await;
    let mut events = a.tap(Some(&session), None).await;
    a.post(prompt(2, "hello from a"), Some(&session)).await;
    assert_eq!(events.response(2).await["result"]["stopReason"], "end_turn");

    // Tenant b cannot use, follow or end a's connection: it does not exist for b.
    let foreign = Acp {
        endpoint: endpoint.clone(),
        key: Some(KEY_B),
        id: a.id.clone(),
    };
    let (status, code, _) = error_code(
        foreign
            .post_raw(&prompt(3, "hijack"), Some(&session))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!((status, code.as_str()), (404, "not_found"));
    let (status, _, _) = error_code(foreign.stream_req(None, None).send().await.unwrap()).await;
    assert_eq!(status, 404);
    let deleted = request(reqwest::Method::DELETE, &endpoint, Some(KEY_B))
        .header(CONN, &a.id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 404);

    // b's own connection neither lists nor loads a's session.
    let (b, _) = Acp::open(&endpoint, Some(KEY_B)).await;
    let mut b_own = b.tap(None, None).await;
    b.post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}),
        None,
    )
    .await;
    assert_eq!(b_own.response(1).await["result"]["sessions"], json!([]));
    let mut b_session = b.tap(Some(&session), None).await;
    b.post(
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/load", "params": {"cwd": cwd, "mcpServers": []}}),
        Some(&session),
    )
    .await;
    assert_eq!(b_session.response(2).await["error"]["code"], -32002);

    // a still lists it, and its connection still works.
    a.post(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/list", "params": {}}),
        None,
    )
    .await;
    let listed = own.response(4).await;
    assert_eq!(listed["result"]["sessions"][0]["sessionId"], session.as_str());
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stream_resumed_with_last_event_id_misses_nothing_and_has_one_receiver() {
    let server = start_with(ServerConfig::for_tests()).await;
    // The default agent's endpoint.
    let endpoint = format!("{}/v1/acp", server.url());
    let dir = tempfile::tempdir().unwrap();
    let (acp, _) = Acp::open(&endpoint, None).await;
    let mut own = acp.tap(None, None).await;
    let session = acp.new_session(&mut own, 1, dir.path().to_str().unwrap()).await;

    let mut first = acp.tap(Some(&session), None).await;
    let (status, code, _) = error_code(acp.stream_req(Some(&session), None).send().await.unwrap()).await;
    assert_eq!(
        (status, code.as_str()),
        (409, "acp_stream_conflict"),
        "one receiver per stream"
    );

    acp.post(prompt(2, &format!("slow {}", "word ".repeat(30))), Some(&session))
        .await;
    let mut seen: Vec<Frame> = Vec::new();
    for _ in 0..3 {
        seen.push(first.next().await.expect("a frame"));
    }
    drop(first);
    let last = seen.last().unwrap().seq();
    // The reconnect names the last id it got; it gets the rest of the same stream, in order.
    let mut second = acp.tap(Some(&session), Some(last)).await;
    loop {
        let f = second.next().await.expect("the stream goes on");
        let done = f.json().get("method").is_none() && f.json()["id"] == json!(2);
        seen.push(f);
        if done {
            break;
        }
    }
    let ids: Vec<u64> = seen.iter().map(Frame::seq).collect();
    let expected: Vec<u64> = (ids[0]..ids[0] + ids.len() as u64).collect();
    assert_eq!(ids, expected, "no message lost or repeated across the reconnect");
    let text: String = seen
        .iter()
        .map(Frame::json)
        .filter(|v| v["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .map(|v| {
            v["params"]["update"]["content"]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(text.starts_with("Reference reply: slow word"), "{text}");
    assert_eq!(seen.last().unwrap().json()["result"]["stopReason"], "end_turn");

    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_get_typed_errors() {
    let server = start_with(ServerConfig::for_tests()).await;
    let endpoint = format!("{}/v1/agents/reference/acp", server.url());
    let send = |r: reqwest::RequestBuilder| async move { error_code(r.send().await.unwrap()).await };

    let plain = request(reqwest::Method::POST, &endpoint, None)
        .header("content-type", "text/plain")
        .body(initialize_msg(0).to_string());
    assert_eq!(send(plain).await.0, 415);
    let not_json = request(reqwest::Method::POST, &endpoint, None)
        .header("content-type", "application/json")
        .body("{nope");
    assert_eq!(send(not_json).await.1, "invalid_json");
    let batch = request(reqwest::Method::POST, &endpoint, None).json(&json!([initialize_msg(0)]));
    assert_eq!(send(batch).await.1, "invalid_json");
    let not_initialize = request(reqwest::Method::POST, &endpoint, None).json(&prompt(1, "hi"));
    assert_eq!(send(not_initialize).await.1, "malformed_request");
    let unknown_agent = request(
        reqwest::Method::POST,
        &format!("{}/v1/agents/nobody/acp", server.url()),
        None,
    )
    .json(&initialize_msg(0));
    assert_eq!(send(unknown_agent).await.0, 404);

    let (acp, _) = Acp::open(&endpoint, None).await;
    let (status, code, _) = send(acp.post_raw(&prompt(1, "no session"), None)).await;
    assert_eq!((status, code.as_str()), (400, "malformed_request"));
    let mismatched = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "acp-x", "prompt": []}});
    assert_eq!(
        send(acp.post_raw(&mismatched, Some("acp-y"))).await.1,
        "malformed_request"
    );
    let no_accept = request(reqwest::Method::GET, &endpoint, None).header(CONN, &acp.id);
    assert_eq!(send(no_accept).await.0, 406);
    let (status, code, _) = send(acp.stream_req(None, None).header("last-event-id", "+5")).await;
    assert_eq!(
        (status, code.as_str()),
        (422, "invalid_request"),
        "a sign is not a message number"
    );
    let unknown = Acp {
        endpoint: endpoint.clone(),
        key: None,
        id: "acpc-unknown".into(),
    };
    assert_eq!(
        send(unknown.post_raw(&prompt(3, "x"), Some("acp-x"))).await.0,
        404
    );

    // A remote client may not start a command on the server.
    let mut own = acp.tap(None, None).await;
    let dir = tempfile::tempdir().unwrap();
    acp.post(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/new", "params": {"cwd": dir.path(), "mcpServers": [
            {"name": "evil", "command": "/bin/sh", "args": ["-c", "touch pwned"], "env": []}
        ]}}),
        None,
    )
    .await;
    let refused = own.response(4).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["data"]["field"], "mcpServers[0]");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_count_against_the_tenants_run_limit() {
    let config = ServerConfig {
        tenants: vec![TenantSpec::new("a").key(KEY_A).unwrap().limits(Limits {
            max_concurrent_runs: Some(1),
            ..Limits::default()
        })],
        ..ServerConfig::for_tests()
    };
    let server = start_with(config).await;
    let endpoint = format!("{}/v1/agents/reference/acp", server.url());
    let dir = tempfile::tempdir().unwrap();
    let (acp, _) = Acp::open(&endpoint, Some(KEY_A)).await;
    let mut own = acp.tap(None, None).await;
    let one = acp.new_session(&mut own, 1, dir.path().to_str().unwrap()).await;
    let two = acp.new_session(&mut own, 2, dir.path().to_str().unwrap()).await;
    let mut first = acp.tap(Some(&one), None).await;
    let mut second = acp.tap(Some(&two), None).await;

    acp.post(prompt(3, &format!("slow {}", "word ".repeat(40))), Some(&one))
        .await;
    first.next().await.expect("the first prompt runs");
    acp.post(prompt(4, "a second at once"), Some(&two)).await;
    let refused = second.response(4).await;
    assert_eq!(refused["error"]["data"]["code"], "too_many_runs", "{refused}");
    assert_eq!(refused["error"]["data"]["status"], 429);
    assert_eq!(first.response(3).await["result"]["stopReason"], "end_turn");
    // The slot is free again once the first prompt ended.
    acp.post(prompt(5, "now it fits"), Some(&two)).await;
    assert_eq!(second.response(5).await["result"]["stopReason"], "end_turn");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_and_idleness_end_a_connection_and_free_its_sessions() {
    let server = start_with(ServerConfig {
        acp_idle: Some(Duration::from_millis(300)),
        ..ServerConfig::for_tests()
    })
    .await;
    let endpoint = format!("{}/v1/agents/reference/acp", server.url());
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_str().unwrap();
    let (acp, _) = Acp::open(&endpoint, None).await;
    let mut own = acp.tap(None, None).await;
    let session = acp.new_session(&mut own, 1, cwd).await;
    let mut events = acp.tap(Some(&session), None).await;
    acp.post(
        prompt(2, &format!("slow {}", "word ".repeat(100))),
        Some(&session),
    )
    .await;
    events.next().await.expect("the prompt runs");

    let deleted = request(reqwest::Method::DELETE, &endpoint, None)
        .header(CONN, &acp.id)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), 202);
    // Its streams end, and it is gone.
    while events.next().await.is_some() {}
    assert_eq!(
        error_code(
            acp.post_raw(&prompt(3, "x"), Some(&session))
                .send()
                .await
                .unwrap()
        )
        .await
        .0,
        404
    );

    // The cancelled prompt released the session's thread: a new connection continues it at once.
    let (next, _) = Acp::open(&endpoint, None).await;
    let mut next_events = next.tap(Some(&session), None).await;
    next.post(
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/resume", "params": {"cwd": cwd}}),
        Some(&session),
    )
    .await;
    assert!(next_events.response(1).await.get("result").is_some());
    next.post(prompt(2, "again"), Some(&session)).await;
    assert_eq!(next_events.response(2).await["result"]["stopReason"], "end_turn");

    // With no receiver and no request for the idle time, a connection ends by itself.
    drop(next_events);
    let (idle, _) = Acp::open(&endpoint, None).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        error_code(
            idle.post_raw(&prompt(1, "x"), Some(&session))
                .send()
                .await
                .unwrap()
        )
        .await
        .0,
        404
    );
    assert_eq!(
        error_code(
            next.post_raw(&prompt(3, "x"), Some(&session))
                .send()
                .await
                .unwrap()
        )
        .await
        .0,
        404
    );
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn session_close_ends_the_sessions_stream_after_its_answer() {
    let server = start_with(ServerConfig::for_tests()).await;
    let endpoint = format!("{}/v1/agents/reference/acp", server.url());
    let dir = tempfile::tempdir().unwrap();
    let (acp, init) = Acp::open(&endpoint, None).await;
    assert_eq!(
        init["result"]["agentCapabilities"]["sessionCapabilities"]["close"],
        json!({})
    );
    let mut own = acp.tap(None, None).await;
    let session = acp.new_session(&mut own, 1, dir.path().to_str().unwrap()).await;
    let mut events = acp.tap(Some(&session), None).await;
    acp.post(prompt(2, "hello"), Some(&session)).await;
    assert_eq!(events.response(2).await["result"]["stopReason"], "end_turn");
    acp.post(
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/close", "params": {}}),
        Some(&session),
    )
    .await;
    assert_eq!(events.response(3).await["result"], json!({}));
    assert!(
        events.next().await.is_none(),
        "the closed session's stream ends after the answer"
    );
    // The session can be attached again: a fresh stream, numbered from 1.
    let mut again = acp.tap(Some(&session), None).await;
    acp.post(
        json!({"jsonrpc": "2.0", "id": 4, "method": "session/resume", "params": {"cwd": dir.path()}}),
        Some(&session),
    )
    .await;
    let resumed = again.next().await.expect("the resume answer");
    assert_eq!(resumed.seq(), 1);
    assert_eq!(resumed.json()["id"], 4);
    server.shutdown().await.unwrap();
}
