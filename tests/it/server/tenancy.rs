//! Tenants and API keys: 401 with a Bearer challenge for a missing or unknown key, the open routes, dev
//! mode, and the cross-tenant matrix — another tenant's run or thread is 404 on every route, listings
//! never show another tenant's threads, and an AG-UI thread id is scoped to the caller's tenant.

use agent_adaptor::server::{RunningServer, Server, ServerConfig, ServerError, TenantSpec};
use serde_json::{Value, json};

use super::{all_frames, client, error_code, read_frames, start};

/// Tenant `a`'s key.
pub const KEY_A: &str = "tenant-a-key-0123456789";
/// Tenant `b`'s key.
pub const KEY_B: &str = "tenant-b-key-9876543210";

/// A test configuration with tenants `a` and `b`.
pub fn keyed() -> ServerConfig {
    ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_B).unwrap(),
        ],
        ..ServerConfig::for_tests()
    }
}

/// A request builder carrying `key` as a bearer token.
pub fn as_key(method: reqwest::Method, url: String, key: &str) -> reqwest::RequestBuilder {
    client().request(method, url).bearer_auth(key)
}

async fn get(url: String, key: &str) -> reqwest::Response {
    as_key(reqwest::Method::GET, url, key).send().await.unwrap()
}

async fn post(url: String, key: &str, body: Value) -> reqwest::Response {
    as_key(reqwest::Method::POST, url, key)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn start_run(base: &str, key: &str, path: &str, body: Value) -> String {
    let resp = post(format!("{base}{path}"), key, body).await;
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let v: Value = resp.json().await.unwrap();
    v["run_id"].as_str().unwrap().to_owned()
}

async fn wait_done(base: &str, key: &str, run_id: &str) {
    let resp = get(format!("{base}/v1/runs/{run_id}/events"), key).await;
    assert_eq!(resp.status(), 200);
    let frames = all_frames(resp).await;
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
}

async fn keyed_server() -> RunningServer {
    Server::start(keyed()).await.expect("the server starts")
}

#[tokio::test]
async fn tenancy_a_missing_or_unknown_key_is_401_with_a_challenge_and_the_json_error() {
    let server = keyed_server().await;
    let base = server.url();
    let http = client();

    let resp = http.get(format!("{base}/v1/agents")).send().await.unwrap();
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let (status, code, body) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (401, "unauthorized"), "{body}");
    assert_eq!(challenge, r#"Bearer realm="agent-adaptor""#);

    let resp = get(format!("{base}/v1/agents"), "not-a-configured-key-at-all").await;
    let challenge = resp.headers()["www-authenticate"].to_str().unwrap().to_owned();
    let (status, code, _) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (401, "unauthorized"));
    assert!(challenge.contains(r#"error="invalid_token""#), "{challenge}");

    // A key that differs from a real one only in its last byte is unknown too.
    let near = format!("{}x", &KEY_A[..KEY_A.len() - 1]);
    assert_eq!(get(format!("{base}/v1/agents"), &near).await.status(), 401);
    // Another scheme is not a key.
    let basic = http
        .get(format!("{base}/v1/agents"))
        .header("authorization", format!("Basic {KEY_A}"))
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);
    // Every /v1 route family is guarded, before its handler (even for unknown ids).
    for (m, p) in [
        (reqwest::Method::POST, "/v1/agents/reference/runs"),
        (reqwest::Method::GET, "/v1/runs/whatever"),
        (reqwest::Method::GET, "/v1/agents/reference/threads"),
        (reqwest::Method::POST, "/v1/agui"),
    ] {
        let resp = http
            .request(m.clone(), format!("{base}{p}"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 401, "{m} {p}");
    }

    // Bearer (any case of the scheme) and X-API-Key both work.
    assert_eq!(get(format!("{base}/v1/agents"), KEY_A).await.status(), 200);
    let lower = http
        .get(format!("{base}/v1/agents"))
        .header("authorization", format!("bearer {KEY_B}"))
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status(), 200);
    let x = http
        .get(format!("{base}/v1/agents"))
        .header("x-api-key", KEY_A)
        .send()
        .await
        .unwrap();
    assert_eq!(x.status(), 200);

    // Health, readiness, metrics and the API description stay open.
    for p in ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"] {
        let resp = http.get(format!("{base}{p}")).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{p} is open");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn tenancy_runs_are_recorded_under_the_key_s_tenant_and_dev_mode_is_tenant_default() {
    let server = keyed_server().await;
    let base = server.url();
    let run = start_run(&base, KEY_B, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    wait_done(&base, KEY_B, &run).await;
    let store = server.state().store.clone();
    assert!(store.get_run("b", &run).await.unwrap().is_some());
    assert!(store.get_run("a", &run).await.unwrap().is_none());
    assert!(store.get_run("default", &run).await.unwrap().is_none());
    server.shutdown().await.unwrap();

    // Dev mode: no keys, every request (whatever it presents) is tenant `default`.
    let dev = start().await;
    let base = dev.url();
    let run = start_run(
        &base,
        "anything-at-all-here",
        "/v1/agents/reference/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    wait_done(&base, "ignored", &run).await;
    assert!(
        dev.state()
            .store
            .get_run("default", &run)
            .await
            .unwrap()
            .is_some()
    );
    dev.shutdown().await.unwrap();
}

#[tokio::test]
async fn tenancy_with_keys_a_non_loopback_bind_is_allowed_and_bad_tenants_are_refused() {
    let config = ServerConfig {
        bind: "0.0.0.0:0".parse().unwrap(),
        ..keyed()
    };
    let server = Server::start(config)
        .await
        .expect("keys allow a non-loopback bind");
    let port = server.local_addr().port();
    let resp = get(format!("http://127.0.0.1:{port}/v1/agents"), KEY_A).await;
    assert_eq!(resp.status(), 200);
    server.shutdown().await.unwrap();

    // A tenant without keys does not leave dev mode.
    let config = ServerConfig {
        bind: "0.0.0.0:0".parse().unwrap(),
        tenants: vec![TenantSpec::new("a")],
        ..ServerConfig::for_tests()
    };
    assert!(matches!(
        Server::start(config).await,
        Err(ServerError::InsecureBind(_))
    ));

    let dup_key = ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_A).unwrap(),
        ],
        ..ServerConfig::for_tests()
    };
    let Err(err) = Server::start(dup_key).await else {
        panic!("a shared key is refused");
    };
    assert!(
        matches!(&err, ServerError::Config(m) if m.contains("already declared")),
        "{err}"
    );
    let dup_name = ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("a").key(KEY_B).unwrap(),
        ],
        ..ServerConfig::for_tests()
    };
    let Err(err) = Server::start(dup_name).await else {
        panic!("a duplicate tenant is refused");
    };
    assert!(err.to_string().contains("duplicate tenant"), "{err}");
    assert!(
        TenantSpec::new("a").key("short").is_err(),
        "short keys are refused"
    );
}

#[tokio::test]
async fn tenancy_matrix_another_tenant_s_runs_and_threads_are_404_on_every_route() {
    let server = keyed_server().await;
    let base = server.url();

    // Finished threads of both tenants, for the listings.
    let a_done = start_run(
        &base,
        KEY_A,
        "/v1/agents/reference/threads/a-done/runs",
        json!({"prompt": "hello"}),
    )
    .await;
    wait_done(&base, KEY_A, &a_done).await;
    let b_done = start_run(
        &base,
        KEY_B,
        "/v1/agents/reference/threads/b-done/runs",
        json!({"prompt": "hello"}),
    )
    .await;
    wait_done(&base, KEY_B, &b_done).await;

    // Tenant A parks a run on an approval, on the thread an AG-UI client calls "shared".
    let key = agent_adaptor::agui::thread_key("shared");
    let run = start_run(
        &base,
        KEY_A,
        &format!("/v1/agents/reference/threads/{key}/runs"),
        json!({"prompt": "permission please"}),
    )
    .await;
    let frames = read_frames(get(format!("{base}/v1/runs/{run}/events"), KEY_A).await, |f| {
        f.event.as_deref() != Some("approval_request")
    })
    .await;
    let approval = frames.last().unwrap().json()["id"].as_str().unwrap().to_owned();

    // A sees its own things.
    assert_eq!(get(format!("{base}/v1/runs/{run}"), KEY_A).await.status(), 200);
    assert_eq!(
        get(format!("{base}/v1/runs/{run}/approvals"), KEY_A)
            .await
            .status(),
        200
    );
    assert_eq!(
        get(format!("{base}/v1/agents/reference/threads/{key}"), KEY_A)
            .await
            .status(),
        200
    );
    assert_eq!(
        get(format!("{base}/v1/agents/reference/threads/{key}/events"), KEY_A)
            .await
            .status(),
        200
    );
    assert_eq!(
        get(format!("{base}/v1/agents/reference/threads/a-done"), KEY_A)
            .await
            .status(),
        200
    );

    // B: 404 on every run and thread route of A's (never 403: existence is not revealed).
    let checks: Vec<(&str, reqwest::Response)> = vec![
        ("get run", get(format!("{base}/v1/runs/{run}"), KEY_B).await),
        (
            "get finished run",
            get(format!("{base}/v1/runs/{a_done}"), KEY_B).await,
        ),
        ("events", get(format!("{base}/v1/runs/{run}/events"), KEY_B).await),
        (
            "finished run events",
            get(format!("{base}/v1/runs/{a_done}/events"), KEY_B).await,
        ),
        (
            "cancel",
            post(format!("{base}/v1/runs/{run}/cancel"), KEY_B, json!({})).await,
        ),
        (
            "message",
            post(
                format!("{base}/v1/runs/{run}/messages"),
                KEY_B,
                json!({"text": "psst"}),
            )
            .await,
        ),
        (
            "approvals",
            get(format!("{base}/v1/runs/{run}/approvals"), KEY_B).await,
        ),
        (
            "decide",
            post(
                format!("{base}/v1/runs/{run}/approvals/{approval}"),
                KEY_B,
                json!({"decision": "approve"}),
            )
            .await,
        ),
        (
            "thread get (active)",
            get(format!("{base}/v1/agents/reference/threads/{key}"), KEY_B).await,
        ),
        (
            "thread get (finished)",
            get(format!("{base}/v1/agents/reference/threads/a-done"), KEY_B).await,
        ),
        (
            "thread archive",
            post(
                format!("{base}/v1/agents/reference/threads/a-done/archive"),
                KEY_B,
                json!({}),
            )
            .await,
        ),
        (
            "thread history (active)",
            get(format!("{base}/v1/agents/reference/threads/{key}/events"), KEY_B).await,
        ),
        (
            "thread history (finished)",
            get(format!("{base}/v1/agents/reference/threads/a-done/events"), KEY_B).await,
        ),
    ];
    for (what, resp) in checks {
        let (status, code, body) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (404, "not_found"), "{what}: {body}");
    }

    // Listings: each tenant sees only its own threads.
    let list_a: Value = get(format!("{base}/v1/agents/reference/threads"), KEY_A)
        .await
        .json()
        .await
        .unwrap();
    let list_b: Value = get(format!("{base}/v1/agents/reference/threads"), KEY_B)
        .await
        .json()
        .await
        .unwrap();
    let keys = |v: &Value| -> Vec<String> {
        v["threads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(keys(&list_a).contains(&"a-done".to_owned()), "{list_a}");
    assert!(!keys(&list_a).contains(&"b-done".to_owned()), "{list_a}");
    assert!(keys(&list_b).contains(&"b-done".to_owned()), "{list_b}");
    assert!(!keys(&list_b).contains(&"a-done".to_owned()), "{list_b}");

    // AG-UI: A's threadId is busy for A (409), and a separate, fresh thread for B.
    let agui = |key: &'static str| {
        post(
            format!("{base}/v1/agents/reference/agui"),
            key,
            json!({"threadId": "shared", "runId": format!("r-{key}"), "messages": [{"id": "m1", "role": "user", "content": "hello from agui"}]}),
        )
    };
    let (status, code, _) = error_code(agui(KEY_A).await).await;
    assert_eq!((status, code.as_str()), (409, "thread_busy"));
    let resp = agui(KEY_B).await;
    assert_eq!(resp.status(), 200);
    let events: Vec<Value> = all_frames(resp).await.iter().map(|f| f.json()).collect();
    assert_eq!(events.first().unwrap()["type"], "RUN_STARTED");
    assert_eq!(events.last().unwrap()["type"], "RUN_FINISHED", "{events:?}");
    // B's AG-UI run became B's thread; A's history of that key holds only A's run.
    let hist_a: Value = get(format!("{base}/v1/agents/reference/threads/{key}/events"), KEY_A)
        .await
        .json()
        .await
        .unwrap();
    assert!(
        hist_a["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["run_id"] == run.as_str()),
        "{hist_a}"
    );
    assert_eq!(
        get(format!("{base}/v1/agents/reference/threads/{key}"), KEY_B)
            .await
            .status(),
        200
    );

    // B's attempts changed nothing: A's approval is still pending and A answers it.
    let resp = post(
        format!("{base}/v1/runs/{run}/approvals/{approval}"),
        KEY_A,
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(resp.status(), 200, "{:?}", resp.text().await);
    wait_done(&base, KEY_A, &run).await;
    let a_run: Value = get(format!("{base}/v1/runs/{run}"), KEY_A)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(a_run["state"], "succeeded", "{a_run}");
    server.shutdown().await.unwrap();
}
