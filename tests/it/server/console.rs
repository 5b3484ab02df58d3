//! The console: `GET /` and its assets under `/console/` are served with the right content types and a
//! strict Content-Security-Policy, in dev mode and with API keys (the page loads without a key, its API
//! calls need one); every route its `ROUTES` table names is a real, documented route of the service
//! (renaming one fails this test), and no script builds HTML from strings.

use std::collections::BTreeSet;

use agent_adaptor::server::{console, openapi};
use serde_json::Value;

use super::tenancy::{KEY_A, as_key, keyed};
use super::{client, get, start, start_with};

/// The `["METHOD", "/path"]` pairs of the `ROUTES` table in `api.js`.
fn page_routes(js: &str) -> Vec<(String, String)> {
    let table = js
        .split("export const ROUTES = {")
        .nth(1)
        .and_then(|rest| rest.split("};").next())
        .expect("api.js has a ROUTES table");
    table
        .lines()
        .filter_map(|line| {
            let inner = line.split_once('[')?.1.split_once(']')?.0;
            let mut parts = inner.split(',').map(|p| p.trim().trim_matches('"'));
            Some((parts.next()?.to_lowercase(), parts.next()?.to_owned()))
        })
        .collect()
}

/// Every console path with the content type it must be served with.
fn console_paths() -> Vec<(String, &'static str)> {
    let mut out = vec![("/".to_owned(), "text/html; charset=utf-8")];
    for (name, ctype, _) in console::ASSETS {
        out.push((format!("/console/{name}"), *ctype));
    }
    out
}

/// Asserts every console path is served, with no key, with its content type, the CSP and `nosniff`.
async fn assert_served(base: &str) {
    for (path, ctype) in console_paths() {
        let resp = get(base, &path).await;
        assert_eq!(resp.status(), 200, "GET {path} needs no key");
        let headers = resp.headers();
        assert_eq!(headers["content-type"], ctype, "{path}");
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert_eq!(csp, console::CSP, "{path}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        let body = resp.text().await.unwrap();
        let expected = if path == "/" {
            console::PAGE
        } else {
            console::asset(path.trim_start_matches("/console/")).unwrap()
        };
        assert_eq!(body, expected, "{path}");
    }
    assert_eq!(get(base, "/console/nope.js").await.status(), 404);
    assert_eq!(get(base, "/console/..%2Fmod.rs").await.status(), 404);
}

#[test]
fn the_csp_allows_only_this_origin_and_no_inline_code() {
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "frame-ancestors 'none'",
    ] {
        assert!(console::CSP.contains(directive), "the CSP has {directive}");
    }
    assert!(!console::CSP.contains("unsafe"), "no unsafe-inline / unsafe-eval");
    // The page references only its own assets: no inline script or style, nothing from the network.
    assert!(!console::PAGE.contains("<style"), "no inline style");
    assert_eq!(console::PAGE.matches("<script").count(), 1);
    assert!(console::PAGE.contains(r#"<script type="module" src="/console/app.js"></script>"#));
    assert!(!console::PAGE.contains("http://") && !console::PAGE.contains("https://"));
    for (name, _, body) in console::ASSETS {
        assert!(!body.contains("innerHTML"), "{name} builds no HTML from strings");
        assert!(!body.contains("insertAdjacentHTML"), "{name}");
        assert!(
            !body.contains("localStorage"),
            "{name} keeps the key in sessionStorage only"
        );
        assert!(
            !body.contains("new EventSource"),
            "{name} streams with fetch (the key is sent)"
        );
        assert!(
            !body.contains("https://"),
            "{name} loads nothing from the network"
        );
    }
}

#[tokio::test]
async fn the_console_is_served_with_its_csp_and_uses_only_documented_routes() {
    let server = start().await;
    let base = server.url();
    assert_served(&base).await;

    let api = console::asset("api.js").unwrap();
    let routes = page_routes(api);
    let used: BTreeSet<&str> = routes.iter().map(|(_, p)| p.as_str()).collect();
    for needed in [
        "/v1/agents",
        "/v1/runs",
        "/v1/agents/{agent}/threads",
        "/v1/agents/{agent}/threads/{key}/runs",
        "/v1/agents/{agent}/runs",
        "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}",
        "/v1/runs/{run_id}/approvals/{id}",
    ] {
        assert!(used.contains(needed), "the console uses {needed}");
    }
    // No route is hard-coded outside the table.
    let all: usize = console::ASSETS
        .iter()
        .map(|(_, _, b)| b.matches("\"/v1/").count())
        .sum();
    assert_eq!(all, routes.len(), "every /v1/ path of the console is in ROUTES");
    let doc: Value = serde_json::from_str(&openapi::pretty_json()).unwrap();
    let documented = super::openapi::operations(&doc);
    for (method, path) in &routes {
        assert!(
            documented.contains(&(method.clone(), path.clone())),
            "the console's {method} {path} is a documented route"
        );
    }
    // The console works against the reference agent: the agent list it loads names it.
    let agents: Value = get(&base, "/v1/agents").await.json().await.unwrap();
    assert_eq!(agents["default"], "reference");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn with_api_keys_the_console_loads_without_a_key_and_its_api_calls_need_one() {
    let server = start_with(keyed()).await;
    let base = server.url();
    assert_served(&base).await;
    // What the page calls first: refused without a key, answered with one.
    let bare = client().get(format!("{base}/v1/agents")).send().await.unwrap();
    assert_eq!(bare.status(), 401);
    let keyed = as_key(reqwest::Method::GET, format!("{base}/v1/runs"), KEY_A)
        .send()
        .await
        .unwrap();
    assert_eq!(keyed.status(), 200);
    server.shutdown().await.unwrap();
}
