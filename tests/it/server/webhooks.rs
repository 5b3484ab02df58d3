//! Webhooks end to end against a real loopback receiver (an axum server on 127.0.0.1:0): a finished,
//! a failed and a parked run are each delivered once with a Standard Webhooks signature the test checks
//! with its own HMAC; a receiver that is down, then answers 503, then recovers gets the delivery after
//! retries and the delivery log shows every attempt; a pending delivery survives a restart (SQLite
//! file); tenants never receive or see each other's webhooks; bad bodies are 422 naming the field; the
//! same story on Postgres.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::server::webhooks::WebhookSettings;
use agent_adaptor::server::{RunningServer, Server, ServerConfig, TenantSpec};
use axum::http::HeaderMap;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use super::tenancy::{KEY_A, KEY_B, as_key};
use super::{all_frames, client, error_code, read_frames};

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Hit {
    id: String,
    timestamp: String,
    signature: String,
    body: String,
}

impl Hit {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// A loopback webhook receiver answering `status` and recording every request.
struct Receiver {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    status: Arc<AtomicU16>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    async fn start() -> Receiver {
        Receiver::on(SocketAddr::from(([127, 0, 0, 1], 0))).await
    }

    async fn on(addr: SocketAddr) -> Receiver {
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let status = Arc::new(AtomicU16::new(200));
        let (h, s) = (hits.clone(), status.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let (h, s) = (h.clone(), s.clone());
                async move {
                    let header = |n: &str| {
                        headers
                            .get(n)
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_owned()
                    };
                    h.lock().unwrap().push(Hit {
                        id: header("webhook-id"),
                        timestamp: header("webhook-timestamp"),
                        signature: header("webhook-signature"),
                        body,
                    });
                    axum::http::StatusCode::from_u16(s.load(Ordering::SeqCst)).unwrap()
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            addr,
            hits,
            status,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    /// The hits of event `kind`.
    fn of(&self, kind: &str) -> Vec<Hit> {
        self.hits()
            .into_iter()
            .filter(|h| h.json()["type"] == kind)
            .collect()
    }

    /// Waits (up to 10 s) until `n` hits of `kind` arrived.
    async fn wait_for(&self, kind: &str, n: usize) -> Vec<Hit> {
        for _ in 0..500 {
            let got = self.of(kind);
            if got.len() >= n {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no {n} {kind} delivery within 10 s: {:?}", self.hits());
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The signature a receiver expects, computed here from the spec (not with the service's code).
fn expected_signature(secret: &str, hit: &Hit) -> String {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").expect("a whsec_ secret"))
        .expect("the secret is base64");
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{}.{}.{}", hit.id, hit.timestamp, hit.body).as_bytes());
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// Asserts the hit is signed with `secret`, recently, under the body's own id.
fn assert_signed(secret: &str, hit: &Hit) {
    assert_eq!(hit.signature, expected_signature(secret, hit), "{hit:?}");
    let at: i64 = hit.timestamp.parse().expect("unix seconds");
    let now = chrono::Utc::now().timestamp();
    assert!((now - 300..=now + 5).contains(&at), "timestamp {at} vs now {now}");
    assert_eq!(hit.json()["id"], hit.id.as_str(), "webhook-id is the body's id");
}

/// Fast retries for tests.
fn fast() -> WebhookSettings {
    WebhookSettings {
        max_attempts: 20,
        backoff_initial: Duration::from_millis(40),
        backoff_max: Duration::from_millis(150),
        backoff_factor: 2,
        timeout: Duration::from_secs(2),
        poll_interval: Duration::from_millis(20),
        ..WebhookSettings::default()
    }
}

fn config() -> ServerConfig {
    ServerConfig {
        webhooks: fast(),
        ..ServerConfig::for_tests()
    }
}

/// Creates a webhook for `events` (201); its answer.
async fn subscribe(base: &str, key: Option<&str>, url: &str, events: &[&str]) -> Value {
    let body = json!({"url": url, "events": events, "description": "test"});
    let req = match key {
        Some(k) => as_key(reqwest::Method::POST, format!("{base}/v1/webhooks"), k),
        None => client().post(format!("{base}/v1/webhooks")),
    };
    let resp = req.json(&body).send().await.unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    let v: Value = resp.json().await.unwrap();
    assert_eq!(location, format!("/v1/webhooks/{}", v["id"].as_str().unwrap()));
    assert!(v["secret"].as_str().unwrap().starts_with("whsec_"), "{v}");
    v
}

/// Starts a run with `prompt` and reads its events to the end (or, with `until`, to that event).
async fn run(base: &str, key: Option<&str>, prompt: &str, until: Option<&str>) -> String {
    let body = json!({"prompt": prompt});
    let url = format!("{base}/v1/agents/reference/runs");
    let req = match key {
        Some(k) => as_key(reqwest::Method::POST, url, k),
        None => client().post(url),
    };
    let resp = req.json(&body).send().await.unwrap();
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let run_id = resp.json::<Value>().await.unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let url = format!("{base}/v1/runs/{run_id}/events");
    let req = match key {
        Some(k) => as_key(reqwest::Method::GET, url, k),
        None => client().get(url),
    };
    let events = req.send().await.unwrap();
    match until {
        Some(kind) => {
            read_frames(events, |f| f.event.as_deref() != Some(kind)).await;
        }
        None => {
            all_frames(events).await;
        }
    }
    run_id
}

async fn deliveries(base: &str, key: Option<&str>, id: &str) -> Value {
    let url = format!("{base}/v1/webhooks/{id}/deliveries");
    let req = match key {
        Some(k) => as_key(reqwest::Method::GET, url, k),
        None => client().get(url),
    };
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp.json().await.unwrap()
}

/// The finished, failed and approval stories on `server`.
async fn story(server: &RunningServer) {
    let base = server.url();
    let rx = Receiver::start().await;
    let hook = subscribe(
        &base,
        None,
        &rx.url(),
        &["run.finished", "run.failed", "approval.requested"],
    )
    .await;
    let secret = hook["secret"].as_str().unwrap();

    let ok_run = run(&base, None, "hello", None).await;
    let finished = rx.wait_for("run.finished", 1).await;
    assert_signed(secret, &finished[0]);
    let body = finished[0].json();
    assert_eq!(body["tenant"], "default");
    assert_eq!(body["data"]["run_id"], ok_run.as_str());
    assert_eq!(body["data"]["agent"], "reference");
    assert_eq!(body["data"]["state"], "succeeded");
    assert!(body["created_at"].as_str().is_some(), "{body}");

    let failed_run = run(&base, None, "please fail", None).await;
    let failed = rx.wait_for("run.failed", 1).await;
    assert_signed(secret, &failed[0]);
    assert_eq!(failed[0].json()["data"]["run_id"], failed_run.as_str());
    assert_eq!(failed[0].json()["data"]["state"], "failed");
    let error = &failed[0].json()["data"]["error"];
    assert!(
        error["code"].is_string() && error["message"].is_string(),
        "{error}"
    );
    assert!(
        error.get("details").is_none(),
        "never the error's details: {error}"
    );
    let finished = rx.wait_for("run.finished", 2).await;
    assert_eq!(finished[1].json()["data"]["state"], "failed");

    let parked = run(&base, None, "permission please", Some("approval_request")).await;
    let asked = rx.wait_for("approval.requested", 1).await;
    assert_signed(secret, &asked[0]);
    let data = &asked[0].json()["data"];
    assert_eq!(data["run_id"], parked.as_str());
    assert_eq!(data["approval"]["kind"], "permission");
    let cancel = client()
        .post(format!("{base}/v1/runs/{parked}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    rx.wait_for("run.finished", 3).await;

    // Exactly once each: nothing more arrives, and the log says delivered in one attempt.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.of("run.finished").len(), 3, "{:?}", rx.hits());
    assert_eq!(rx.of("run.failed").len(), 1);
    assert_eq!(rx.of("approval.requested").len(), 1);
    let log = deliveries(&base, None, hook["id"].as_str().unwrap()).await;
    let all = log["deliveries"].as_array().unwrap();
    assert_eq!(all.len(), 5, "{log}");
    for d in all {
        assert_eq!(d["state"], "delivered", "{d}");
        assert_eq!(d["attempts"], 1);
        assert_eq!(d["log"][0]["status"], 200);
    }
    let metrics = client()
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("agent_adaptor_webhook_attempts_total{outcome=\"delivered\"} 5"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_finished_failed_or_parked_run_is_delivered_once_and_signed() {
    let server = Server::start(config()).await.unwrap();
    story(&server).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn webhooks_are_delivered_on_postgres() {
    let Some(url) = crate::store::pg::database_url("webhooks_are_delivered_on_postgres") else {
        return;
    };
    let at = url.clone();
    crate::store::pg::with_schema(&url, |schema| async move {
        let store = crate::store::pg::store_in(&at, &schema).await;
        let server = Server::start_with_store(config(), Arc::new(store)).await.unwrap();
        story(&server).await;
        server.shutdown().await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_receiver_that_is_down_then_fails_then_recovers_gets_the_delivery_after_retries() {
    let server = Server::start(config()).await.unwrap();
    let base = server.url();
    // A port nothing listens on (yet).
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let hook = subscribe(&base, None, &format!("http://{port}/hook"), &["run.finished"]).await;
    let id = hook["id"].as_str().unwrap();
    run(&base, None, "hello", None).await;

    // Two refused connections, then the receiver comes up answering 503, then 200.
    let mut refused = 0;
    for _ in 0..500 {
        let log = deliveries(&base, None, id).await;
        refused = log["deliveries"][0]["log"].as_array().map_or(0, Vec::len);
        if refused >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused >= 2, "two failed attempts while the receiver is down");
    let rx = Receiver::on(port).await;
    rx.status.store(503, Ordering::SeqCst);
    rx.wait_for("run.finished", 1).await;
    rx.status.store(200, Ordering::SeqCst);
    let hits = rx.wait_for("run.finished", 2).await;
    let log = loop {
        let log = deliveries(&base, None, id).await;
        if log["deliveries"][0]["state"] == "delivered" {
            break log;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let d = &log["deliveries"][0];
    let attempts = d["log"].as_array().unwrap();
    let n = attempts.len();
    assert_eq!(d["attempts"], n as u64, "{d}");
    assert!(n >= 4, "refused, refused, 503, 200: {d}");
    for a in &attempts[..n - 2] {
        assert!(
            a["status"].is_null() && a["error"].as_str().is_some_and(|e| e.contains("connect")),
            "a refused connection is logged as an error: {a}"
        );
    }
    assert_eq!(attempts[n - 2]["status"], 503, "{d}");
    assert_eq!(attempts[n - 1]["status"], 200, "{d}");
    for (i, a) in attempts.iter().enumerate() {
        assert_eq!(a["attempt"], (i + 1) as u64);
    }
    assert!(d["next_attempt_at"].is_null(), "{d}");
    // Every attempt carried the same message id and body; all are signed alike.
    let secret = hook["secret"].as_str().unwrap();
    assert_eq!(hits[0].id, hits[1].id);
    assert_eq!(hits[0].body, hits[1].body);
    assert_eq!(d["event_id"], hits[0].id.as_str());
    for h in &hits {
        assert_signed(secret, h);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_delivery_gives_up_after_its_attempts_and_a_manual_retry_delivers_it() {
    let mut config = config();
    config.webhooks.max_attempts = 2;
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let rx = Receiver::start().await;
    rx.status.store(500, Ordering::SeqCst);
    let hook = subscribe(&base, None, &rx.url(), &["run.finished"]).await;
    let id = hook["id"].as_str().unwrap();
    run(&base, None, "hello", None).await;
    rx.wait_for("run.finished", 2).await;
    let d = loop {
        let log = deliveries(&base, None, id).await;
        if log["deliveries"][0]["state"] == "failed" {
            break log["deliveries"][0].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(d["attempts"], 2, "{d}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(rx.hits().len(), 2, "no attempt after giving up");
    rx.status.store(204, Ordering::SeqCst);
    let delivery = d["id"].as_str().unwrap();
    let resp = client()
        .post(format!("{base}/v1/webhooks/{id}/deliveries/{delivery}/retry"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 202);
    rx.wait_for("run.finished", 3).await;
    let d = loop {
        let log = deliveries(&base, None, id).await;
        if log["deliveries"][0]["state"] == "delivered" {
            break log["deliveries"][0].clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(d["attempts"], 3);
    assert_eq!(d["log"][2]["status"], 204);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_pending_delivery_is_delivered_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start().await;
    let mut config = config();
    config.store_url = format!("sqlite://{}", dir.path().join("store.db").display());
    // The first life enqueues but never delivers (as if it died before the worker got to it).
    config.webhooks.enabled = false;
    let first = Server::start(config.clone()).await.unwrap();
    let base = first.url();
    let hook = subscribe(&base, None, &rx.url(), &["run.finished"]).await;
    let run_id = run(&base, None, "hello", None).await;
    let mut pending = Value::Null;
    for _ in 0..200 {
        pending = deliveries(&base, None, hook["id"].as_str().unwrap()).await;
        if pending["deliveries"][0]["state"] == "pending" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(pending["deliveries"][0]["state"], "pending", "{pending}");
    first.shutdown().await.unwrap();
    assert!(rx.hits().is_empty());

    config.webhooks.enabled = true;
    let second = Server::start(config).await.unwrap();
    let hits = rx.wait_for("run.finished", 1).await;
    assert_eq!(hits[0].json()["data"]["run_id"], run_id.as_str());
    assert_signed(hook["secret"].as_str().unwrap(), &hits[0]);
    second.shutdown().await.unwrap();
}

fn keyed() -> ServerConfig {
    ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_B).unwrap(),
        ],
        webhooks: WebhookSettings {
            allow_private_targets: Some(true),
            ..fast()
        },
        ..ServerConfig::for_tests()
    }
}

#[tokio::test]
async fn tenants_never_receive_nor_see_each_others_webhooks() {
    let server = Server::start(keyed()).await.unwrap();
    let base = server.url();
    let (rx_a, rx_b) = (Receiver::start().await, Receiver::start().await);
    let a = subscribe(&base, Some(KEY_A), &rx_a.url(), &["run.finished"]).await;
    let b = subscribe(&base, Some(KEY_B), &rx_b.url(), &["run.finished"]).await;
    let (a_id, b_id) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
    let run_b = run(&base, Some(KEY_B), "hello", None).await;
    let got = rx_b.wait_for("run.finished", 1).await;
    assert_eq!(got[0].json()["tenant"], "b");
    assert_eq!(got[0].json()["data"]["run_id"], run_b.as_str());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        rx_a.hits().is_empty(),
        "tenant a got b's event: {:?}",
        rx_a.hits()
    );

    let get =
        |path: String, key: &'static str| as_key(reqwest::Method::GET, format!("{base}{path}"), key).send();
    let listed: Value = get("/v1/webhooks".into(), KEY_B)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = listed["webhooks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [b_id]);
    assert!(
        listed["webhooks"][0].get("secret").is_none(),
        "a listing never shows the secret"
    );
    for path in [
        format!("/v1/webhooks/{a_id}"),
        format!("/v1/webhooks/{a_id}/deliveries"),
    ] {
        let (status, code, _) = error_code(get(path.clone(), KEY_B).await.unwrap()).await;
        assert_eq!((status, code.as_str()), (404, "not_found"), "{path}");
    }
    let del = as_key(
        reqwest::Method::DELETE,
        format!("{base}/v1/webhooks/{a_id}"),
        KEY_B,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(del.status(), 404);
    assert_eq!(
        get(format!("/v1/webhooks/{a_id}"), KEY_A).await.unwrap().status(),
        200
    );
    let del = as_key(
        reqwest::Method::DELETE,
        format!("{base}/v1/webhooks/{a_id}"),
        KEY_A,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(del.status(), 200);
    assert_eq!(
        get(format!("/v1/webhooks/{a_id}"), KEY_A).await.unwrap().status(),
        404
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn bad_subscriptions_are_422_naming_the_field() {
    let server = Server::start(config()).await.unwrap();
    let base = server.url();
    for (body, field) in [
        (
            json!({"url": "ftp://example.com/x", "events": ["run.finished"]}),
            "url",
        ),
        (json!({"url": "not a url", "events": ["run.finished"]}), "url"),
        (
            json!({"url": "http://u:p@example.com/", "events": ["run.finished"]}),
            "url",
        ),
        (
            json!({"url": "http://example.com/", "events": ["run.exploded"]}),
            "events[0]",
        ),
        (
            json!({"url": "http://example.com/", "events": ["run.finished", "nope"]}),
            "events[1]",
        ),
        (json!({"url": "http://example.com/", "events": []}), "events"),
    ] {
        let resp = client()
            .post(format!("{base}/v1/webhooks"))
            .json(&body)
            .send()
            .await
            .unwrap();
        let (status, code, detail) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (422, "invalid_request"), "{body}");
        assert_eq!(detail["error"]["field"], field, "{body}: {detail}");
    }
    server.shutdown().await.unwrap();

    // With API keys and no explicit policy, private targets are refused.
    let mut config = keyed();
    config.webhooks.allow_private_targets = None;
    let server = Server::start(config).await.unwrap();
    let resp = as_key(
        reqwest::Method::POST,
        format!("{}/v1/webhooks", server.url()),
        KEY_A,
    )
    .json(&json!({"url": "http://127.0.0.1:9/hook", "events": ["run.finished"]}))
    .send()
    .await
    .unwrap();
    let (status, _, detail) = error_code(resp).await;
    assert_eq!(
        (status, detail["error"]["field"].as_str()),
        (422, Some("url")),
        "{detail}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_message_that_will_not_be_delivered_is_announced() {
    let server = Server::start(config()).await.unwrap();
    let base = server.url();
    let rx = Receiver::start().await;
    subscribe(&base, None, &rx.url(), &["message.failed"]).await;
    let slow = json!({"prompt": "slow ".to_owned() + &"story ".repeat(200)});
    let resp = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .json(&slow)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 201);
    let run_id = resp.json::<Value>().await.unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Queued for the next turn boundary, which never comes: the run is cancelled first.
    let msg = client()
        .post(format!("{base}/v1/runs/{run_id}/messages"))
        .json(&json!({"text": "secret words", "id": "msg-late", "timing": "after_turn"}))
        .send()
        .await
        .unwrap();
    assert_eq!(msg.status(), 202, "{:?}", msg.text().await);
    let cancel = client()
        .post(format!("{base}/v1/runs/{run_id}/cancel"))
        .send()
        .await
        .unwrap();
    assert_eq!(cancel.status(), 202);
    let hits = rx.wait_for("message.failed", 1).await;
    let body = hits[0].json();
    assert_eq!(body["data"]["run_id"], run_id.as_str());
    assert_eq!(body["data"]["message_id"], "msg-late");
    assert!(body["data"]["reason"].is_string(), "{body}");
    assert!(!hits[0].body.contains("secret words"), "never the message's text");
    server.shutdown().await.unwrap();
}
