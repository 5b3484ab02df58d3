//! The listener: the accept loop and each connection's task (hyper's HTTP/1 server under the
//! connection timeouts of [`Connections`]).
//!
//! - A connection past `max_connections` or `max_connections_per_ip` ([`ConnectionTable`]) gets a
//!   best-effort `503 too_many_connections` and is closed at once; the ones already open go on.
//! - An accept error other than a per-connection one (`EMFILE`, `ENFILE`, `ENOBUFS`, ...) never ends
//!   the loop: it is logged once per episode and the loop backs off (10 ms doubling to 1 s), so the
//!   service answers again as soon as descriptors are free.
//! - Each connection is watched by its task ([`super::conn_io`]): closed `idle_timeout` after it went
//!   quiet, `header_read_timeout` after a request head began; each request body is due within
//!   `body_read_timeout`.
//! - On shutdown the loop stops accepting, every connection finishes its request in flight and closes,
//!   and the loop returns when the last one did.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::conn_io::{Activity, DeadlineBody, InFlight, Watched};
use super::connections::{ConnectionTable, Connections, Permit, Refusal};
use super::error::{ApiError, ErrorCode};
use super::views::{ErrorBody, ErrorDetail};

/// The first back-off after an accept error.
const BACKOFF_MIN: Duration = Duration::from_millis(10);
/// The longest back-off after repeated accept errors.
const BACKOFF_MAX: Duration = Duration::from_secs(1);

/// Accepts on `listener` and serves `app` until `shutdown`, then waits for the open connections.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Connections,
    table: Arc<ConnectionTable>,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let (open_tx, open_rx) = watch::channel(());
    let mut backoff = BACKOFF_MIN;
    let mut failing = false;
    loop {
        let accepted = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            r = listener.accept() => r,
        };
        let (stream, remote) = match accepted {
            Ok(a) => a,
            Err(e) if per_connection(&e) => continue,
            Err(e) => {
                if !failing {
                    tracing::error!(error = %e, "accept failed; backing off until descriptors are free");
                    failing = true;
                }
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_MAX);
                continue;
            }
        };
        if failing {
            tracing::info!("accepting again");
            failing = false;
        }
        backoff = BACKOFF_MIN;
        match table.admit(remote.ip()) {
            Ok(permit) => {
                tokio::spawn(connection(
                    stream,
                    remote,
                    app.clone(),
                    limits,
                    (permit, table.clone()),
                    shutdown.clone(),
                    open_rx.clone(),
                ));
            }
            Err(why) => refuse(stream, why),
        }
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// An error about one connection (it went away before it was accepted), not about the listener.
fn per_connection(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}

/// Answers `503 too_many_connections` if the socket takes it at once, and closes it.
fn refuse(stream: TcpStream, why: Refusal) {
    let message = match why {
        Refusal::Global => "the service has max_connections connections open",
        Refusal::PerIp => "this address has max_connections_per_ip connections open",
    };
    let response = raw_error(ErrorCode::TooManyConnections, message, true);
    let _ = stream.try_write(&response);
    drop(stream);
}

/// A complete HTTP/1.1 response carrying the JSON error shape with `code` (and its status), closing the
/// connection. A 5xx `message` is the cause: logged under an error id, never sent ([`ApiError::new`]).
pub(crate) fn raw_error(code: ErrorCode, message: &str, retry: bool) -> Vec<u8> {
    let error = ApiError::new(code, message);
    let status = code.status();
    let reason = status.canonical_reason().unwrap_or_default();
    let status = status.as_u16();
    let body = serde_json::to_string(&ErrorBody {
        error: ErrorDetail {
            code,
            message: error.message,
            field: None,
        },
    })
    .unwrap_or_default();
    let retry = if retry { "retry-after: 1\r\n" } else { "" };
    format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry}connection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serves one admitted connection until it closes, times out or the service shuts down.
async fn connection(
    stream: TcpStream,
    remote: SocketAddr,
    app: Router,
    limits: Connections,
    (permit, table): (Permit, Arc<ConnectionTable>),
    shutdown: CancellationToken,
    _open: watch::Receiver<()>,
) {
    let _ = stream.set_nodelay(true);
    let activity = Activity::new();
    let io = TokioIo::new(Watched::new(stream, activity.clone()));
    let service = {
        let activity = activity.clone();
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let guard = activity.begin();
            let mut req = req.map(|b| axum::body::Body::new(DeadlineBody::new(b, limits.body_read_timeout)));
            req.extensions_mut().insert(ConnectInfo(remote));
            let app = app.clone();
            async move {
                let response = match app.oneshot(req).await {
                    Ok(r) => r,
                    Err(never) => match never {},
                };
                Ok::<_, Infallible>(response.map(|b| InFlight::new(b, guard)))
            }
        })
    };
    let conn = hyper::server::conn::http1::Builder::new()
        .header_read_timeout(None)
        .serve_connection(io, service);
    let mut conn = std::pin::pin!(conn);
    let mut closing = false;
    let period = limits.header_read_timeout.min(limits.idle_timeout);
    loop {
        let wake = activity
            .deadline(&limits)
            .map_or_else(|| Instant::now() + period, |(at, _)| at);
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::debug!(error = %e, %remote, "connection ended with an error");
                }
                break;
            }
            _ = shutdown.cancelled(), if !closing => {
                conn.as_mut().graceful_shutdown();
                closing = true;
            }
            _ = activity.head_began() => {}
            _ = tokio::time::sleep_until(wake) => {
                if let Some((at, why)) = activity.deadline(&limits)
                    && at <= Instant::now()
                {
                    table.count_timeout();
                    tracing::debug!(?why, %remote, "closing a connection past its timeout");
                    break;
                }
            }
        }
    }
    drop(permit);
}
