//! Store errors reach clients as a code and an error id (in the message), never their text (issue #22, item 5): with the
//! `runs` table gone under a running service (SQLite file, Postgres database of the test's own), a run
//! lookup answers 500 `store_error` whose body names no table, SQL or database message.

use serde_json::Value;
use sqlx::{Connection, PgConnection, SqliteConnection};

use crate::server::{get, start_with};

async fn story(url: &str, drop_runs: impl std::future::Future<Output = ()>) {
    let mut config = agent_adaptor::server::ServerConfig::for_tests();
    config.store_url = url.to_owned();
    let server = start_with(config).await;
    drop_runs.await;
    let resp = get(&server.url(), "/v1/runs/run-x").await;
    assert_eq!(resp.status(), 500);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "store_error", "{body}");
    let text = body.to_string();
    for leak in ["runs", "relation", "table", "SELECT", "42P01", "sqlite"] {
        assert!(
            !text.contains(leak),
            "the store's text reached the client ({leak}): {text}"
        );
    }
    let message = body["error"]["message"].as_str().unwrap_or_default();
    let id = message.split("error id ").nth(1).unwrap_or_default();
    assert!(id.len() >= 32, "an error id to find the logged cause: {text}");
    server.shutdown().await.ok();
}

#[tokio::test]
async fn store_errors_reach_clients_as_a_code_and_an_id_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.db");
    let url = format!("sqlite://{}", path.display());
    let drop = async {
        let mut conn = SqliteConnection::connect(&url).await.unwrap();
        sqlx::query("DROP TABLE runs").execute(&mut conn).await.unwrap();
    };
    story(&url, drop).await;
}

#[tokio::test]
async fn store_errors_reach_clients_as_a_code_and_an_id_on_postgres() {
    super::with_scratch_database("store_errors_postgres", "aa_err", |url| async move {
        let drop = async {
            let mut c = PgConnection::connect(&url).await.unwrap();
            sqlx::query("DROP TABLE runs").execute(&mut c).await.unwrap();
        };
        story(&url, drop).await;
    })
    .await;
}
