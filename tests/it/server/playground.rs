//! `GET /`: the playground page is served as HTML, and every route its `ROUTES` table names is a real,
//! documented route of the service (renaming one fails this test).

use std::collections::BTreeSet;

use agent_adaptor::server::{openapi, playground};
use serde_json::Value;

use super::{get, start};

/// The `["METHOD", "/path"]` pairs of the page's `ROUTES` table.
fn page_routes(html: &str) -> Vec<(String, String)> {
    let table = html
        .split("const ROUTES = {")
        .nth(1)
        .and_then(|rest| rest.split("};").next())
        .expect("the page has a ROUTES table");
    table
        .lines()
        .filter_map(|line| {
            let inner = line.split_once('[')?.1.split_once(']')?.0;
            let mut parts = inner.split(',').map(|p| p.trim().trim_matches('"'));
            Some((parts.next()?.to_lowercase(), parts.next()?.to_owned()))
        })
        .collect()
}

#[tokio::test]
async fn the_playground_is_html_and_uses_only_documented_routes() {
    let server = start().await;
    let base = server.url();
    let resp = get(&base, "/").await;
    assert_eq!(resp.status(), 200);
    let ctype = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert_eq!(ctype, "text/html; charset=utf-8");
    let html = resp.text().await.unwrap();
    assert_eq!(html, playground::PAGE);
    assert!(
        html.contains("new EventSource("),
        "follows events with EventSource"
    );

    let routes = page_routes(&html);
    let used: BTreeSet<&str> = routes.iter().map(|(_, p)| p.as_str()).collect();
    for needed in [
        "/v1/agents",
        "/v1/agents/{agent}/runs",
        "/v1/runs/{run_id}/events",
        "/v1/runs/{run_id}",
    ] {
        assert!(used.contains(needed), "the page uses {needed}");
    }
    // No route is hard-coded outside the table.
    assert_eq!(
        html.matches("\"/v1/").count(),
        routes.len(),
        "every /v1/ path of the page is in ROUTES"
    );
    let doc: Value = serde_json::from_str(&openapi::pretty_json()).unwrap();
    let documented = super::openapi::operations(&doc);
    for (method, path) in &routes {
        assert!(
            documented.contains(&(method.clone(), path.clone())),
            "the page's {method} {path} is a documented route"
        );
    }
    // The page works against the reference agent: the agent list it loads names it.
    let agents: Value = get(&base, "/v1/agents").await.json().await.unwrap();
    assert_eq!(agents["default"], "reference");
    server.shutdown().await.unwrap();
}
