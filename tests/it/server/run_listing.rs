//! Run listing through the real router: `GET /v1/runs` and `GET /v1/agents/{agent}/threads/{key}/runs`,
//! newest first, filtered by state, agent and a creation-time window, cursor-paged (a cursor of another query or tenant is 422),
//! on the memory store, SQLite and Postgres; tenant-scoped in the three identity shapes (dev mode, a
//! tenant key, an operator key).

use agent_adaptor::server::{Server, ServerConfig, TenantSpec};
use serde_json::{Value, json};

use super::tenancy::{KEY_A, KEY_B, as_key};
use super::{error_code, finished_state, get, get_json, run_id, start_run, start_with};

/// The run ids of a page.
fn ids(page: &Value) -> Vec<String> {
    page["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("a page of runs: {page}"))
        .iter()
        .map(run_id)
        .collect()
}

/// Three finished runs (one stateless, two on thread `t-1`, one of them failed), then every listing.
async fn walk(base: &str) {
    let first = start_run(base, "/v1/agents/reference/runs", json!({"prompt": "hello"})).await;
    let first = finished_state(base, &run_id(&first)).await;
    let path = "/v1/agents/reference/threads/t-1/runs";
    let failed = start_run(base, path, json!({"prompt": "please fail"})).await;
    let failed = finished_state(base, &run_id(&failed)).await;
    assert_eq!(failed["state"], "failed", "{failed}");
    let last = start_run(base, path, json!({"prompt": "hello again"})).await;
    let last = finished_state(base, &run_id(&last)).await;
    assert_eq!(last["state"], "succeeded", "{last}");
    let newest_first = [run_id(&last), run_id(&failed), run_id(&first)];

    let all = get_json(base, "/v1/runs").await;
    assert_eq!(ids(&all), newest_first, "{all}");
    assert_eq!(all["next_cursor"], Value::Null, "{all}");
    let top = &all["runs"][0];
    assert_eq!(top["agent"], "reference", "{top}");
    assert_eq!(top["thread_key"], "t-1", "{top}");
    assert_eq!(top["state"], "succeeded", "{top}");
    assert_eq!(top["tenant"], agent_adaptor::runtime::DEFAULT_TENANT, "{top}");
    assert!(
        top["created_at"].is_string() && top["ended_at"].is_string(),
        "{top}"
    );
    assert_eq!(
        top["usage"]["input_tokens"], last["result"]["usage"]["input_tokens"],
        "{top}"
    );
    assert_eq!(all["runs"][2]["thread_key"], Value::Null, "{all}");

    // Filters.
    let failed_only = get_json(base, "/v1/runs?state=failed").await;
    assert_eq!(ids(&failed_only), [run_id(&failed)], "{failed_only}");
    let none = get_json(base, "/v1/runs?agent=nobody").await;
    assert_eq!(ids(&none), Vec::<String>::new(), "{none}");
    let on_thread = get_json(base, path).await;
    assert_eq!(ids(&on_thread), newest_first[..2], "{on_thread}");
    let ok_on_thread = get_json(base, &format!("{path}?state=succeeded")).await;
    assert_eq!(ids(&ok_on_thread), [run_id(&last)], "{ok_on_thread}");
    let other_thread = get_json(base, "/v1/agents/reference/threads/t-2/runs").await;
    assert_eq!(ids(&other_thread), Vec::<String>::new(), "{other_thread}");

    // A creation-time window: `since` inclusive, `until` exclusive (times as the listing gives them).
    let at = |i: usize| all["runs"][i]["created_at"].as_str().unwrap().to_owned();
    let (first_at, failed_at, last_at) = (at(2), at(1), at(0));
    let since = get_json(base, &format!("/v1/runs?since={failed_at}")).await;
    assert_eq!(ids(&since), newest_first[..2], "{since}");
    let until = get_json(base, &format!("/v1/runs?until={failed_at}")).await;
    assert_eq!(ids(&until), [run_id(&first)], "{until}");
    let window = get_json(base, &format!("/v1/runs?since={first_at}&until={last_at}")).await;
    assert_eq!(ids(&window), newest_first[1..], "{window}");
    let on_thread_since = get_json(base, &format!("{path}?since={last_at}")).await;
    assert_eq!(ids(&on_thread_since), [run_id(&last)], "{on_thread_since}");
    let windowed = get_json(base, &format!("/v1/runs?since={first_at}&limit=1")).await;
    let windowed_cursor = windowed["next_cursor"].as_str().expect("a next page").to_owned();
    let (status, code, _) =
        error_code(get(base, &format!("/v1/runs?limit=1&cursor={windowed_cursor}")).await).await;
    assert_eq!(
        (status, code.as_str()),
        (422, "invalid_request"),
        "a window's cursor outside the window"
    );
    let (status, code, body) =
        error_code(get(base, &format!("/v1/runs?since={last_at}&until={first_at}")).await).await;
    assert_eq!((status, code.as_str()), (422, "invalid_request"), "{body}");
    assert_eq!(body["error"]["field"], "until", "{body}");
    let (status, code, _) = error_code(get(base, "/v1/runs?since=yesterday").await).await;
    assert_eq!((status, code.as_str()), (400, "invalid_query"));

    // Paging: one run a page, in order, then an empty page without a cursor.
    let mut paged = Vec::new();
    let mut query = "/v1/runs?limit=1".to_owned();
    let mut cursors = Vec::new();
    loop {
        let page = get_json(base, &query).await;
        paged.extend(ids(&page));
        let Some(next) = page["next_cursor"].as_str() else {
            break;
        };
        cursors.push(next.to_owned());
        query = format!("/v1/runs?limit=1&cursor={next}");
        assert!(cursors.len() <= 4, "paging ends: {paged:?}");
    }
    assert_eq!(paged, newest_first, "pages joined");

    // A cursor of another query is refused, like a forged one.
    for bad in [
        format!("/v1/runs?state=failed&cursor={}", cursors[0]),
        format!("{path}?cursor={}", cursors[0]),
        "/v1/runs?cursor=zz".to_owned(),
        "/v1/runs?limit=0".to_owned(),
        "/v1/runs?limit=501".to_owned(),
    ] {
        let (status, code, body) = error_code(get(base, &bad).await).await;
        assert_eq!((status, code.as_str()), (422, "invalid_request"), "{bad}: {body}");
    }
    let max = get_json(base, "/v1/runs?limit=500").await;
    assert_eq!(ids(&max).len(), 3, "{max}");
    // A malformed query (an unknown state or parameter) is a typed 400.
    for bad in [
        "/v1/runs?state=exploded",
        "/v1/runs?colour=red",
        "/v1/agents/reference/threads/t-1/runs?agent=reference",
    ] {
        let (status, code, body) = error_code(get(base, bad).await).await;
        assert_eq!((status, code.as_str()), (400, "invalid_query"), "{bad}: {body}");
    }
    let (status, code, _) = error_code(get(base, "/v1/agents/nobody/threads/t-1/runs").await).await;
    assert_eq!((status, code.as_str()), (404, "not_found"));
}

#[tokio::test]
async fn run_listing_pages_and_filters_on_memory() {
    let server = start_with(ServerConfig::for_tests()).await;
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn run_listing_pages_and_filters_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    let server = start_with(config).await;
    walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn run_listing_pages_and_filters_on_postgres() {
    let Some(url) = crate::store::pg::database_url("run_listing_pages_and_filters_on_postgres") else {
        return;
    };
    let at = url.clone();
    crate::store::pg::with_schema(&url, |schema| async move {
        let store = crate::store::pg::store_in(&at, &schema).await;
        let server = Server::start_with_store(ServerConfig::for_tests(), std::sync::Arc::new(store))
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
async fn run_listing_a_tenant_sees_its_own_runs_and_the_operator_key_sees_every_tenant() {
    let config = ServerConfig {
        tenants: vec![
            TenantSpec::new("a").key(KEY_A).unwrap(),
            TenantSpec::new("b").key(KEY_B).unwrap(),
            TenantSpec::new("ops").key(KEY_OPS).unwrap().admin(true),
        ],
        ..ServerConfig::for_tests()
    };
    let server = start_with(config).await;
    let base = server.url();
    let call = |method: reqwest::Method, path: String, key: &'static str| {
        let base = base.clone();
        async move { as_key(method, format!("{base}{path}"), key) }
    };
    let mut started = Vec::new();
    for (key, thread) in [(KEY_A, "shared"), (KEY_B, "shared"), (KEY_A, "only-a")] {
        let resp = call(
            reqwest::Method::POST,
            format!("/v1/agents/reference/threads/{thread}/runs"),
            key,
        )
        .await
        .json(&json!({"prompt": "hello"}))
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), 201);
        let v: Value = resp.json().await.unwrap();
        started.push(run_id(&v));
    }
    let list = |key: &'static str, path: &'static str| async move {
        let resp = call(reqwest::Method::GET, path.to_owned(), key)
            .await
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "GET {path}");
        resp.json::<Value>().await.unwrap()
    };
    let tenants = |v: &Value| -> Vec<String> {
        v["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["tenant"].as_str().unwrap().to_owned())
            .collect()
    };

    let a = list(KEY_A, "/v1/runs").await;
    assert_eq!(ids(&a), [started[2].clone(), started[0].clone()], "{a}");
    assert_eq!(tenants(&a), ["a", "a"], "{a}");
    let b = list(KEY_B, "/v1/runs").await;
    assert_eq!(ids(&b), [started[1].clone()], "{b}");
    let b_thread = list(KEY_B, "/v1/agents/reference/threads/shared/runs").await;
    assert_eq!(ids(&b_thread), [started[1].clone()], "{b_thread}");
    let b_none = list(KEY_B, "/v1/agents/reference/threads/only-a/runs").await;
    assert_eq!(ids(&b_none), Vec::<String>::new(), "{b_none}");

    let ops = list(KEY_OPS, "/v1/runs").await;
    assert_eq!(
        ids(&ops),
        [started[2].clone(), started[1].clone(), started[0].clone()],
        "{ops}"
    );
    assert_eq!(tenants(&ops), ["a", "b", "a"], "{ops}");
    let ops_thread = list(KEY_OPS, "/v1/agents/reference/threads/shared/runs").await;
    assert_eq!(tenants(&ops_thread), ["b", "a"], "{ops_thread}");

    // A's cursor is A's: B (and the operator) get 422 for it.
    let page = list(KEY_A, "/v1/runs?limit=1").await;
    let cursor = page["next_cursor"]
        .as_str()
        .expect("a full page has a cursor")
        .to_owned();
    for key in [KEY_B, KEY_OPS] {
        let resp = call(
            reqwest::Method::GET,
            format!("/v1/runs?limit=1&cursor={cursor}"),
            key,
        )
        .await
        .send()
        .await
        .unwrap();
        let (status, code, body) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (422, "invalid_request"), "{body}");
    }
    let resp = call(
        reqwest::Method::GET,
        format!("/v1/runs?limit=1&cursor={cursor}"),
        KEY_A,
    )
    .await
    .send()
    .await
    .unwrap();
    let second: Value = resp.json().await.unwrap();
    assert_eq!(ids(&second), [started[0].clone()], "{second}");

    // No key: 401.
    let (status, code, _) = error_code(get(&base, "/v1/runs").await).await;
    assert_eq!((status, code.as_str()), (401, "unauthorized"));
    server.shutdown().await.unwrap();
}
