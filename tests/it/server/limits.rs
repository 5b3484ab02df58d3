//! Per-tenant limits over HTTP: concurrent active runs and the request rate answer 429 with
//! `Retry-After` and the JSON error shape, per tenant, and free up again.

use agent_adaptor::server::{Limits, Server, ServerConfig, TenantSpec};
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key, keyed};
use super::{all_frames, error_code, eventually, read_frames};

fn post(url: String, key: &str, body: Value) -> reqwest::RequestBuilder {
    as_key(reqwest::Method::POST, url, key).json(&body)
}

#[tokio::test]
async fn limits_concurrent_runs_per_tenant_answer_429_until_a_run_ends() {
    let mut config = keyed();
    config.limits = Limits {
        max_concurrent_runs: Some(1),
        ..Default::default()
    };
    config.tenants[1] = TenantSpec::new("b").key(KEY_B).unwrap().limits(Limits {
        max_concurrent_runs: Some(2),
        ..Default::default()
    });
    let server = Server::start(config).await.unwrap();
    let base = server.url();

    // A parks one run on an approval: it stays active.
    let resp = post(
        format!("{base}/v1/agents/reference/runs"),
        KEY_A,
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
        KEY_A,
    )
    .send()
    .await
    .unwrap();
    let frames = read_frames(events, |f| f.event.as_deref() != Some("approval_request")).await;
    let approval = frames.last().unwrap().json()["id"].as_str().unwrap().to_owned();

    // A second run of A — REST stateless, on a thread, or AG-UI — is refused.
    for (path, body) in [
        ("/v1/agents/reference/runs", json!({"prompt": "again"})),
        ("/v1/agents/reference/threads/t/runs", json!({"prompt": "again"})),
        (
            "/v1/agents/reference/agui",
            json!({"threadId": "x", "runId": "r", "messages": [{"id": "m", "role": "user", "content": "again"}]}),
        ),
    ] {
        let resp = post(format!("{base}{path}"), KEY_A, body).send().await.unwrap();
        let retry = resp
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_owned());
        let (status, code, body) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (429, "too_many_runs"), "{path}: {body}");
        assert_eq!(retry.as_deref(), Some("1"), "{path}");
    }
    // B has its own budget (2, its override).
    for _ in 0..2 {
        let resp = post(
            format!("{base}/v1/agents/reference/runs"),
            KEY_B,
            json!({"prompt": "permission please"}),
        )
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), 201);
    }
    let resp = post(
        format!("{base}/v1/agents/reference/runs"),
        KEY_B,
        json!({"prompt": "third"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 429);

    // A's run ends: A may start again.
    let resp = post(
        format!("{base}/v1/runs/{run_id}/approvals/{approval}"),
        KEY_A,
        json!({"decision": "approve"}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    let started = eventually(|| {
        let base = base.clone();
        async move {
            let resp = post(
                format!("{base}/v1/agents/reference/runs"),
                KEY_A,
                json!({"prompt": "hello"}),
            )
            .send()
            .await
            .unwrap();
            (resp.status() == 201).then_some(resp)
        }
    })
    .await;
    let id = started.json::<Value>().await.unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let frames = all_frames(
        as_key(reqwest::Method::GET, format!("{base}/v1/runs/{id}/events"), KEY_A)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
    // Shutdown cancels B's parked runs.
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn limits_request_rate_per_tenant_answers_429_with_retry_after() {
    let mut config = keyed();
    config.limits = Limits {
        requests_per_second: Some(0.5),
        burst: Some(3),
        ..Default::default()
    };
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let get = |key: &str| as_key(reqwest::Method::GET, format!("{base}/v1/agents"), key).send();
    for i in 0..3 {
        assert_eq!(
            get(KEY_A).await.unwrap().status(),
            200,
            "request {i} is within the burst"
        );
    }
    let resp = get(KEY_A).await.unwrap();
    let retry = resp.headers()["retry-after"].to_str().unwrap().to_owned();
    let (status, code, _) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (429, "rate_limited"));
    assert_eq!(retry, "2", "one token every 2 s");
    // Per tenant: B is unaffected; open routes are not limited; unauthenticated requests are 401.
    assert_eq!(get(KEY_B).await.unwrap().status(), 200);
    let health = super::client()
        .get(format!("{base}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let anon = super::client()
        .get(format!("{base}/v1/agents"))
        .send()
        .await
        .unwrap();
    assert_eq!(anon.status(), 401);
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn limits_bad_values_are_refused_at_start() {
    for limits in [
        Limits {
            requests_per_second: Some(0.0),
            ..Default::default()
        },
        Limits {
            requests_per_second: Some(f64::NAN),
            ..Default::default()
        },
        Limits {
            requests_per_second: Some(1.0),
            burst: Some(0),
            ..Default::default()
        },
    ] {
        let config = ServerConfig {
            limits,
            ..ServerConfig::for_tests()
        };
        assert!(Server::start(config).await.is_err(), "{limits:?}");
    }
}

/// Issue #22 item 6: an open Standby is a worker with a CLI process, so it holds one of its tenant's
/// `max_concurrent_runs` while open, and `max_standbys` bounds how many a tenant opens; releasing one
/// frees its slot at once. Both tenants' shapes: A capped by runs, B by Standbys.
#[tokio::test]
async fn limits_open_standbys_hold_a_run_slot_and_are_capped_per_tenant() {
    let mut config = keyed();
    config.limits = Limits {
        max_concurrent_runs: Some(2),
        ..Default::default()
    };
    config.tenants[1] = TenantSpec::new("b").key(KEY_B).unwrap().limits(Limits {
        max_standbys: Some(1),
        ..Default::default()
    });
    let server = Server::start(config).await.unwrap();
    let base = server.url();
    let standby = |key: &'static str, tenant_key: &'static str, method: reqwest::Method| {
        as_key(
            method,
            format!("{base}/v1/agents/reference/threads/{key}/standby"),
            tenant_key,
        )
        .send()
    };
    for key in ["s1", "s2"] {
        assert_eq!(
            standby(key, KEY_A, reqwest::Method::POST).await.unwrap().status(),
            201
        );
    }
    // A's two slots are held by its Standbys: a third Standby and a REST run are refused.
    let (status, code, _) = error_code(standby("s3", KEY_A, reqwest::Method::POST).await.unwrap()).await;
    assert_eq!((status, code.as_str()), (429, "too_many_runs"));
    let run = post(
        format!("{base}/v1/agents/reference/runs"),
        KEY_A,
        json!({"prompt": "hi"}),
    );
    let (status, code, _) = error_code(run.send().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (429, "too_many_runs"));
    // Releasing one frees its slot.
    assert_eq!(
        standby("s1", KEY_A, reqwest::Method::DELETE)
            .await
            .unwrap()
            .status(),
        200
    );
    eventually(|| async {
        post(
            format!("{base}/v1/agents/reference/runs"),
            KEY_A,
            json!({"prompt": "hi"}),
        )
        .send()
        .await
        .unwrap()
        .status()
        .eq(&201)
        .then_some(())
    })
    .await;
    // B has no run cap but may hold one Standby.
    assert_eq!(
        standby("b1", KEY_B, reqwest::Method::POST)
            .await
            .unwrap()
            .status(),
        201
    );
    let (status, code, _) = error_code(standby("b2", KEY_B, reqwest::Method::POST).await.unwrap()).await;
    assert_eq!((status, code.as_str()), (429, "too_many_standbys"));
    server.shutdown().await.unwrap();
}
