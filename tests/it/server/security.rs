//! Dev-mode safety: without authentication the service refuses to listen beyond loopback.

use agent_adaptor::server::{Server, ServerConfig, ServerError};

#[tokio::test]
async fn a_non_loopback_bind_without_auth_is_refused_before_listening() {
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let config = ServerConfig {
            bind: addr.parse().unwrap(),
            ..ServerConfig::for_tests()
        };
        let err = match Server::start(config).await {
            Ok(_) => panic!("{addr}: an unauthenticated service must not listen beyond loopback"),
            Err(e) => e,
        };
        assert!(
            matches!(err, ServerError::InsecureBind(a) if a.to_string() == addr),
            "{err}"
        );
        assert!(err.to_string().contains("--allow-remote-without-auth"), "{err}");
    }
}

#[tokio::test]
async fn loopback_binds_need_no_opt_in() {
    let server = Server::start(ServerConfig::for_tests()).await.unwrap();
    assert!(server.local_addr().ip().is_loopback());
    server.shutdown().await.unwrap();
}
