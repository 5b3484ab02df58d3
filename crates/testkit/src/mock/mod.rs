//! Scriptable mock model servers on 127.0.0.1 that the real CLIs talk to in tests.

pub mod anthropic;
pub mod chat;
pub mod responses;
pub mod sse_mcp;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Serves `app` on `listener` until `cancel` fires; a serve error is logged with `what` (the mock's name),
/// never swallowed. Every mock server here starts this way.
pub(crate) fn serve(
    listener: TcpListener,
    app: axum::Router,
    cancel: CancellationToken,
    what: &'static str,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let serve =
            axum::serve(listener, app).with_graceful_shutdown(async move { cancel.cancelled().await });
        if let Err(e) = serve.await {
            tracing::warn!(error = %e, mock = what, "mock server stopped with an error");
        }
    })
}
