//! Metering through the real router: every run's usage (tokens, estimated cost from `[[prices]]`, CLI
//! wall and CPU seconds) in its `RunView.result` whatever the exposure policy, stored per run, and
//! `GET /v1/usage` aggregating per tenant, agent and thread over a time range, cursor-paged, on the
//! memory store, SQLite and Postgres; tenant-scoped in the three identity shapes (dev mode, a tenant
//! key, an operator key).

use agent_adaptor::server::metering::Price;
use agent_adaptor::server::{Server, ServerConfig, TenantSpec};
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key};
use super::{error_code, finished_state, get, get_json, run_id, start_run, start_with};

/// The reference agent priced at $2 per million input tokens and $10 per million output tokens.
pub fn priced(mut config: ServerConfig) -> ServerConfig {
    config.prices = vec![Price {
        agent: Some("reference".into()),
        model: None,
        input_per_mtok: 2.0,
        output_per_mtok: 10.0,
        cached_input_per_mtok: None,
    }];
    config
}

/// The cost in dollars of `input` and `output` tokens at [`priced`]'s prices.
fn cost(input: u64, output: u64) -> f64 {
    (input * 2 + output * 10) as f64 / 1_000_000.0
}

fn close(a: &Value, b: f64) -> bool {
    a.as_f64().is_some_and(|a| (a - b).abs() < 1e-9)
}

/// A stateless run, a thread run that streams its usage and a failed run, metered and aggregated.
async fn walk(base: &str) {
    // The reference agent's default exposure withholds usage from events: metering shows it anyway.
    let ok = start_run(base, "/v1/agents/reference/runs", json!({"prompt": "hello"})).await;
    let ok = finished_state(base, &run_id(&ok)).await;
    assert_eq!(ok["state"], "succeeded", "{ok}");
    let u = &ok["result"]["usage"];
    assert_eq!(
        (u["input_tokens"].as_u64(), u["output_tokens"].as_u64()),
        (Some(12), Some(34)),
        "{ok}"
    );
    assert_eq!(u["cost_source"], "price_table", "{u}");
    assert!(close(&u["cost_usd"], cost(12, 34)), "{u}");
    assert!(u["wall_seconds"].as_f64().is_some_and(|s| s > 0.0), "{u}");
    assert!(u["cpu_seconds"].as_f64().is_some_and(|s| s >= 0.0), "{u}");
    assert_eq!(u["observed"], true, "{u}");

    let path = "/v1/agents/reference/threads/t-1/runs";
    let on_thread = start_run(base, path, json!({"prompt": "count usage:100"})).await;
    let on_thread = finished_state(base, &run_id(&on_thread)).await;
    assert_eq!(on_thread["result"]["usage"]["input_tokens"], 100, "{on_thread}");

    // A failed run is metered too, its partial result kept.
    let failed = start_run(base, path, json!({"prompt": "please fail"})).await;
    let failed = finished_state(base, &run_id(&failed)).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    assert!(failed["result"]["usage"]["observed"].is_boolean(), "{failed}");

    let all = get_json(base, "/v1/usage").await;
    let rows = all["usage"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "one row per (tenant, agent, thread): {all}");
    assert_eq!(rows[0]["thread_key"], Value::Null, "{all}");
    assert_eq!(rows[0]["runs"], 1, "{all}");
    assert_eq!(rows[0]["input_tokens"], 12, "{all}");
    assert_eq!(rows[1]["thread_key"], "t-1", "{all}");
    assert_eq!(rows[1]["runs"], 2, "{all}");
    let failed_in = failed["result"]["usage"]["input_tokens"].as_u64().unwrap();
    assert_eq!(rows[1]["input_tokens"].as_u64(), Some(100 + failed_in), "{all}");
    assert_eq!(all["totals"]["runs"], 3, "{all}");
    let failed_out = failed["result"]["usage"]["output_tokens"].as_u64().unwrap();
    assert!(
        close(&all["totals"]["cost_usd"], cost(112 + failed_in, 68 + failed_out)),
        "{all}"
    );
    assert_eq!(all["next"], Value::Null, "{all}");

    // Cursor-paged: one row a page, then the rest.
    let first = get_json(base, "/v1/usage?limit=1").await;
    assert_eq!(first["usage"].as_array().unwrap().len(), 1, "{first}");
    let next = first["next"].as_str().expect("a next cursor");
    let second = get_json(base, &format!("/v1/usage?limit=1&after={next}")).await;
    assert_eq!(second["usage"][0]["thread_key"], "t-1", "{second}");
    let next = second["next"].as_str().expect("a full page has a next cursor");
    let third = get_json(base, &format!("/v1/usage?limit=1&after={next}")).await;
    assert_eq!(third["usage"], json!([]), "{third}");

    // Filters: thread, agent, time range.
    let t = get_json(base, "/v1/usage?thread_key=t-1").await;
    assert_eq!(t["totals"]["runs"], 2, "{t}");
    let none = get_json(base, "/v1/usage?agent=nobody").await;
    assert_eq!(none["usage"], json!([]), "{none}");
    let future = get_json(base, "/v1/usage?from=2999-01-01T00:00:00Z").await;
    assert_eq!(future["usage"], json!([]), "{future}");
    let past = get_json(base, "/v1/usage?to=2000-01-01T00:00:00Z").await;
    assert_eq!(past["usage"], json!([]), "{past}");
    let now = get_json(
        base,
        "/v1/usage?from=2000-01-01T00:00:00Z&to=2999-01-01T00:00:00Z",
    )
    .await;
    assert_eq!(now["totals"]["runs"], 3, "{now}");

    // Bad input is a typed 422.
    for bad in [
        "limit=0",
        "limit=1001",
        "after=zz",
        "from=2999-01-01T00:00:00Z&to=2000-01-01T00:00:00Z",
    ] {
        let (status, code, body) = error_code(get(base, &format!("/v1/usage?{bad}")).await).await;
        assert_eq!((status, code.as_str()), (422, "invalid_request"), "{bad}: {body}");
    }
    // A malformed query string is a typed 400.
    for bad in ["from=yesterday", "colour=red", "limit=-1"] {
        let (status, code, body) = error_code(get(base, &format!("/v1/usage?{bad}")).await).await;
        assert_eq!((status, code.as_str()), (400, "invalid_query"), "{bad}: {body}");
    }
}

#[tokio::test]
async fn runs_are_metered_and_usage_aggregates_on_memory() {
    let server = start_with(priced(ServerConfig::for_tests())).await;
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn runs_are_metered_and_usage_aggregates_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = priced(ServerConfig::for_tests());
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = start_with(config).await;
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn runs_are_metered_and_usage_aggregates_on_postgres() {
    let Some(url) = crate::store::pg::database_url("runs_are_metered_and_usage_aggregates_on_postgres")
    else {
        return;
    };
    let at = url.clone();
    crate::store::pg::with_schema(&url, |schema| async move {
        let store = crate::store::pg::store_in(&at, &schema).await;
        let server = Server::start_with_store(priced(ServerConfig::for_tests()), std::sync::Arc::new(store))
            .await
            .unwrap();
        walk(&server.url()).await;
        server.shutdown().await.unwrap();
    })
    .await;
}

/// The operator's key.
const KEY_OPS: &str = "operator-key-0123456789ab";

#[tokio::test]
async fn a_tenant_reads_its_own_usage_and_the_operator_key_reads_every_tenant() {
    let config = ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_B).unwrap(),
            TenantSpec::new("ops").key(KEY_OPS).unwrap().admin(true),
        ],
        ..ServerConfig::for_tests()
    };
    let server = start_with(priced(config)).await;
    let base = server.url();
    let run = |key: &'static str, prompt: &'static str| {
        let base = base.clone();
        async move {
            let resp = as_key(
                reqwest::Method::POST,
                format!("{base}/v1/agents/reference/runs"),
                key,
            )
            .json(&json!({ "prompt": prompt }))
            .send()
            .await
            .unwrap();
            assert_eq!(resp.status(), 201);
            let v: Value = resp.json().await.unwrap();
            let id = run_id(&v);
            super::eventually(|| {
                let (base, id) = (base.clone(), id.clone());
                async move {
                    let v: Value = as_key(reqwest::Method::GET, format!("{base}/v1/runs/{id}"), key)
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    (v["state"] == "succeeded").then_some(v)
                }
            })
            .await
        }
    };
    run(KEY_A, "hello usage:100").await;
    run(KEY_B, "hello usage:200").await;
    let usage = |key: &'static str, query: &'static str| {
        let base = base.clone();
        async move {
            as_key(reqwest::Method::GET, format!("{base}/v1/usage{query}"), key)
                .send()
                .await
                .unwrap()
        }
    };
    let tenants = |v: &Value| -> Vec<(String, u64)> {
        v["usage"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["tenant"].as_str().unwrap().to_owned(),
                    r["input_tokens"].as_u64().unwrap(),
                )
            })
            .collect()
    };

    // A tenant key: its own rows only; naming itself is fine, naming another tenant is 403.
    let a: Value = usage(KEY_A, "").await.json().await.unwrap();
    assert_eq!(tenants(&a), [("a".to_owned(), 100)], "{a}");
    let a_named: Value = usage(KEY_A, "?tenant=a").await.json().await.unwrap();
    assert_eq!(tenants(&a_named), [("a".to_owned(), 100)], "{a_named}");
    let (status, code, _) = error_code(usage(KEY_A, "?tenant=b").await).await;
    assert_eq!((status, code.as_str()), (403, "forbidden"));

    // The operator key: every tenant, or one.
    let all: Value = usage(KEY_OPS, "").await.json().await.unwrap();
    assert_eq!(
        tenants(&all),
        [("a".to_owned(), 100), ("b".to_owned(), 200)],
        "{all}"
    );
    let b: Value = usage(KEY_OPS, "?tenant=b").await.json().await.unwrap();
    assert_eq!(tenants(&b), [("b".to_owned(), 200)], "{b}");

    // No key, or an unknown one: 401.
    let (status, code, _) = error_code(get(&base, "/v1/usage").await).await;
    assert_eq!((status, code.as_str()), (401, "unauthorized"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn dev_mode_reads_the_default_tenant_usage_and_no_other() {
    let server = start_with(priced(ServerConfig::for_tests())).await;
    let base = server.url();
    let run = start_run(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    finished_state(&base, &run_id(&run)).await;
    let mine = get_json(&base, "/v1/usage?tenant=default").await;
    assert_eq!(mine["usage"][0]["tenant"], "default", "{mine}");
    let (status, code, _) = error_code(get(&base, "/v1/usage?tenant=a").await).await;
    assert_eq!((status, code.as_str()), (403, "forbidden"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn the_operator_flag_reloads_with_the_tenants() {
    let tenants = |admin: bool| {
        vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("ops").key(KEY_OPS).unwrap().admin(admin),
        ]
    };
    let config = ServerConfig {
        tenants: tenants(false),
        ..ServerConfig::for_tests()
    };
    let server = start_with(priced(config)).await;
    let base = server.url();
    let status = |admin_query: &'static str| {
        let base = base.clone();
        async move {
            as_key(
                reqwest::Method::GET,
                format!("{base}/v1/usage{admin_query}"),
                KEY_OPS,
            )
            .send()
            .await
            .unwrap()
            .status()
            .as_u16()
        }
    };
    assert_eq!(status("?tenant=a").await, 403);
    server.reload_tenants(&tenants(true)).unwrap();
    assert_eq!(status("?tenant=a").await, 200);
    server.reload_tenants(&tenants(false)).unwrap();
    assert_eq!(status("?tenant=a").await, 403);
    server.shutdown().await.unwrap();
}
