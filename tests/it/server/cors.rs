//! CORS for browser clients: a preflight from a configured origin is allowed every header the API
//! accepts by name — `Authorization` and `X-API-Key` (tenant keys), `Last-Event-ID` (SSE resumption),
//! `Content-Type`, `traceparent` — never `*`, which the Fetch standard does not extend to `Authorization`.

use agent_adaptor::server::ServerConfig;

use super::{client, start_with};

#[tokio::test]
async fn a_preflight_allows_the_authorization_and_resumption_headers_by_name() {
    let mut config = ServerConfig::for_tests();
    config.cors_origins = vec!["http://localhost:3000".into()];
    let server = start_with(config).await;
    let asked = [
        "authorization",
        "x-api-key",
        "last-event-id",
        "content-type",
        "traceparent",
    ];
    let pre = client()
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/runs/r/events", server.url()),
        )
        .header("origin", "http://localhost:3000")
        .header("access-control-request-method", "GET")
        .header("access-control-request-headers", asked.join(", "))
        .send()
        .await
        .unwrap();
    assert!(pre.status().is_success(), "{}", pre.status());
    let allowed = pre
        .headers()
        .get("access-control-allow-headers")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let names: Vec<&str> = allowed.split(',').map(str::trim).collect();
    for h in asked {
        assert!(names.contains(&h), "{h} is not allowed by name: {allowed:?}");
    }
    assert!(
        !names.contains(&"*"),
        "a wildcard does not cover Authorization: {allowed:?}"
    );
    server.shutdown().await.unwrap();
}
