//! Faults and hostile input (issue #22): a panicking run ends `failed` and frees what it held, request
//! values far out of range never panic the runtime, a crashed server's runs end visibly, one request
//! cannot flood the log, NUL and overlong identifiers are refused alike on every store, and store
//! errors never reach a client as their text.

mod agent_threads;
mod chaos;
mod crash;
mod final_commit;
mod flood;
mod lease;
mod nul;
mod panics;
mod race;
mod store_errors;
pub(crate) mod tripwire;

/// Runs `body` with the URL of a Postgres database created for it from `DATABASE_URL` and dropped
/// afterwards, also when `body` panics (the panic is resumed after the drop). Without `DATABASE_URL` it
/// prints `SKIPPED: <test>` and returns.
pub(crate) async fn with_scratch_database<F, Fut>(test: &str, prefix: &str, body: F)
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    use sqlx::{AssertSqlSafe, Connection, PgConnection};
    let Ok(admin) = std::env::var("DATABASE_URL") else {
        eprintln!("SKIPPED: {test}: DATABASE_URL is not set");
        return;
    };
    let db = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
    let mut conn = PgConnection::connect(&admin).await.expect("connect");
    sqlx::query(AssertSqlSafe(format!("CREATE DATABASE \"{db}\"")))
        .execute(&mut conn)
        .await
        .unwrap();
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or(&admin);
    let outcome =
        futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(body(format!("{base}/{db}")))).await;
    let _ = sqlx::query(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
