//! Postgres helpers for the store tests: `DATABASE_URL` (or a loud skip), a fresh schema per test that
//! is dropped afterwards, and a loopback TCP proxy the tests can cut and restore.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::panic::AssertUnwindSafe;

use agent_adaptor::store::postgres::{PostgresOptions, PostgresStore};
use futures::FutureExt;
use sqlx::{AssertSqlSafe, Connection, PgConnection};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// `DATABASE_URL`, or `None` after printing why the Postgres tier is skipped.
pub(crate) fn database_url(test: &str) -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!(
                "SKIPPED: {test}: DATABASE_URL is not set (CI sets postgres://postgres@127.0.0.1:5432/test)"
            );
            None
        }
    }
}

/// A uniquely named schema, so parallel and repeated runs never see each other's rows.
pub(crate) fn fresh_schema() -> String {
    format!("aa_test_{}", uuid::Uuid::new_v4().simple())
}

/// Options that put the store in `schema`.
pub(crate) fn options(schema: &str) -> PostgresOptions {
    PostgresOptions {
        schema: Some(schema.to_owned()),
        ..PostgresOptions::default()
    }
}

/// Opens a store in a fresh schema.
pub(crate) async fn store_in(url: &str, schema: &str) -> PostgresStore {
    PostgresStore::connect(url, options(schema))
        .await
        .expect("connect to Postgres in a fresh schema")
}

/// Runs `body` with a fresh schema name, then drops the schema whether the body passed or panicked.
pub(crate) async fn with_schema<F, Fut>(url: &str, body: F)
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = ()>,
{
    let schema = fresh_schema();
    let outcome = AssertUnwindSafe(body(schema.clone())).catch_unwind().await;
    drop_schema(url, &schema).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// Drops `schema` and everything in it.
pub(crate) async fn drop_schema(url: &str, schema: &str) {
    let mut conn = PgConnection::connect(url).await.expect("connect for cleanup");
    let sql = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
    sqlx::query(AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .expect("drop the test schema");
    conn.close().await.ok();
}

/// A raw connection whose `search_path` is `schema` (for tampering with rows).
pub(crate) async fn raw(url: &str, schema: &str) -> PgConnection {
    let mut conn = PgConnection::connect(url).await.expect("raw connect");
    let sql = format!("SET search_path TO \"{schema}\"");
    sqlx::query(AssertSqlSafe(sql))
        .execute(&mut conn)
        .await
        .expect("set search_path");
    conn
}

/// `url` with its `host:port` replaced by `addr`.
pub(crate) fn via(url: &str, addr: SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
    let (authority, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
    let userinfo = authority
        .rsplit_once('@')
        .map(|(user, _)| format!("{user}@"))
        .unwrap_or_default();
    format!("{scheme}://{userinfo}{addr}/{path}")
}

/// The upstream `host:port` of `url`.
fn upstream(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    }
}

/// A loopback TCP proxy in front of Postgres that can drop every connection and refuse new ones.
pub(crate) struct Proxy {
    /// Where clients connect.
    pub(crate) addr: SocketAddr,
    open: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<AbortHandle>>>,
    accept: AbortHandle,
}

impl Proxy {
    /// Starts forwarding `127.0.0.1:<random port>` to the server `url` names.
    pub(crate) async fn start(url: &str) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let upstream = upstream(url);
        let open = Arc::new(AtomicBool::new(true));
        let links: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let accept = {
            let (open, links) = (open.clone(), links.clone());
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if !open.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    let upstream = upstream.clone();
                    let link = tokio::spawn(async move {
                        let Ok(server) = TcpStream::connect(&upstream).await else {
                            return;
                        };
                        let (mut client, mut server) = (client, server);
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    });
                    let mut links = links.lock().expect("links");
                    links.retain(|l| !l.is_finished());
                    links.push(link.abort_handle());
                }
            })
            .abort_handle()
        };
        Proxy {
            addr,
            open,
            links,
            accept,
        }
    }

    /// Drops every open connection and refuses new ones until [`Proxy::restore`].
    pub(crate) async fn cut(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.drop_links();
        // A connection accepted just before the switch may register after the first sweep.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.drop_links();
    }

    fn drop_links(&self) {
        for link in self.links.lock().expect("links").drain(..) {
            link.abort();
        }
    }

    /// Accepts connections again.
    pub(crate) fn restore(&self) {
        self.open.store(true, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.drop_links();
    }
}

#[test]
fn via_replaces_only_the_authority() {
    let addr: SocketAddr = "127.0.0.1:4000".parse().unwrap();
    assert_eq!(
        via("postgres://postgres@127.0.0.1:5432/test", addr),
        "postgres://postgres@127.0.0.1:4000/test"
    );
    assert_eq!(
        via("postgresql://u:p@db/x?sslmode=disable", addr),
        "postgresql://u:p@127.0.0.1:4000/x?sslmode=disable"
    );
    assert_eq!(
        upstream("postgres://postgres@127.0.0.1:5432/test"),
        "127.0.0.1:5432"
    );
    assert_eq!(upstream("postgres://db/x"), "db:5432");
}
