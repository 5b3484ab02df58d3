//! Per-IP limits of unauthenticated traffic: in dev mode every `/v1` request is charged to the client
//! address (429 `rate_limited` + `Retry-After` past the burst); with keys, only requests that fail
//! authentication are (429 instead of 401 past the burst), while a valid key is not limited by address.

use agent_adaptor::server::{IpLimits, ServerConfig, TenantSpec};

use super::{client, error_code, get, start_with};

fn limited(config: &mut ServerConfig) {
    config.ip_limits = IpLimits {
        requests_per_second: Some(0.2),
        burst: Some(2),
        max_clients: None,
    };
}

#[tokio::test]
async fn ip_limits_dev_mode_requests_are_limited_per_address() {
    let mut config = ServerConfig::for_tests();
    limited(&mut config);
    let server = start_with(config).await;
    let base = server.url();
    for _ in 0..2 {
        assert_eq!(get(&base, "/v1/agents").await.status(), 200);
    }
    let resp = get(&base, "/v1/agents").await;
    let retry: u64 = resp
        .headers()
        .get("retry-after")
        .expect("Retry-After")
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=5).contains(&retry), "retry after {retry}");
    let (status, code, _) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (429, "rate_limited"));
    // Health and metrics stay outside the limit; the refusal is counted.
    assert_eq!(get(&base, "/healthz").await.status(), 200);
    let metrics = get(&base, "/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("agent_adaptor_ip_rate_limited_total 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("agent_adaptor_ip_clients_tracked 1\n"),
        "{metrics}"
    );
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn ip_limits_failed_authentication_is_limited_valid_keys_are_not() {
    const KEY: &str = "ip-limit-test-key-0123";
    let mut config = ServerConfig::for_tests();
    limited(&mut config);
    config.tenants = vec![TenantSpec::new("acme").key(KEY).unwrap()];
    let server = start_with(config).await;
    let base = server.url();
    let bad = || {
        client()
            .get(format!("{base}/v1/agents"))
            .bearer_auth("a-wrong-key-of-enough-length")
            .send()
    };
    for _ in 0..2 {
        assert_eq!(error_code(bad().await.unwrap()).await.1, "unauthorized");
    }
    let (status, code, _) = error_code(bad().await.unwrap()).await;
    assert_eq!((status, code.as_str()), (429, "rate_limited"));
    // A missing key is unauthenticated too.
    assert_eq!(error_code(get(&base, "/v1/agents").await).await.1, "rate_limited");
    // The tenant's own requests from the same address are not charged to it.
    for _ in 0..5 {
        let ok = client()
            .get(format!("{base}/v1/agents"))
            .bearer_auth(KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(ok.status(), 200);
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn ip_limits_bad_settings_are_refused_at_start() {
    let mut config = ServerConfig::for_tests();
    config.ip_limits.requests_per_second = Some(-1.0);
    let err = agent_adaptor::server::Server::start(config).await.unwrap_err();
    assert!(err.to_string().contains("requests_per_second"), "{err}");
}
