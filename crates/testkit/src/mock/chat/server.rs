//! The axum side of the mock: one fallback handler that logs every request, answers
//! `POST …/chat/completions` from the script, `GET …/models` with a one-model list, and everything else
//! with a logged 404. Also the delivery details: first-byte delay, paced frames, cut or hanging streams.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use super::log::RequestLog;
use super::script::{Cut, CutKind, Reply, Script};
use super::sse::{completion, frames};

/// Shared state of one running mock.
pub(crate) struct Inner {
    pub(crate) script: Script,
    pub(crate) log: Mutex<Vec<RequestLog>>,
    pub(crate) completions: AtomicUsize,
    pub(crate) started: Instant,
    /// Count of completion requests received, for waiters.
    pub(crate) arrived: watch::Sender<usize>,
    /// Cancelled on shutdown: open streams end at once.
    pub(crate) cancel: CancellationToken,
}

impl Inner {
    fn push(&self, entry: RequestLog) -> (usize, Vec<RequestLog>) {
        let Ok(mut log) = self.log.lock() else {
            return (0, vec![entry]);
        };
        log.push(entry);
        (log.len() - 1, log.clone())
    }

    fn set_status(&self, idx: usize, status: u16) {
        if let Ok(mut log) = self.log.lock()
            && let Some(e) = log.get_mut(idx)
        {
            e.status = status;
        }
    }
}

/// Pause before aborting a stream, so the frames before the cut reach the client first.
const CUT_FLUSH: Duration = Duration::from_millis(50);

/// The single handler behind the router's fallback.
pub(crate) async fn handle(
    State(inner): State<Arc<Inner>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let is_completion = method == Method::POST && path.ends_with("/chat/completions");
    let n = if is_completion {
        inner.completions.fetch_add(1, Ordering::SeqCst) + 1
    } else {
        0
    };
    let mut hmap: BTreeMap<String, String> = BTreeMap::new();
    for (k, v) in &headers {
        let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
        hmap.entry(k.as_str().to_owned())
            .and_modify(|e| {
                e.push_str(", ");
                e.push_str(&v);
            })
            .or_insert(v);
    }
    let entry = RequestLog {
        n,
        method: method.as_str().to_owned(),
        path: path.clone(),
        query: uri.query().map(str::to_owned),
        headers: hmap,
        body: serde_json::from_slice::<Value>(&body).ok(),
        body_len: body.len(),
        at: inner.started.elapsed(),
        status: 0,
    };
    let streaming = entry.is_streaming();
    let (idx, snapshot) = inner.push(entry);
    if !is_completion {
        let (status, resp) = other_route(&method, &path);
        inner.set_status(idx, status);
        return resp;
    }
    inner.arrived.send_replace(n);
    let reply = match snapshot.last() {
        Some(current) => inner.script.reply_for(current, &snapshot),
        None => Reply::server_error(),
    };
    match reply {
        Reply::Error(err) => {
            sleep_or_cancel(err.delay, &inner.cancel).await;
            inner.set_status(idx, err.status);
            let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (status, axum::Json(err.body)).into_response();
            if let Some(secs) = err.retry_after
                && let Ok(v) = HeaderValue::from_str(&secs.to_string())
            {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            resp
        }
        Reply::Stream(reply) if !streaming => {
            sleep_or_cancel(reply.first_byte_delay, &inner.cancel).await;
            inner.set_status(idx, 200);
            axum::Json(completion(&reply, n)).into_response()
        }
        Reply::Stream(reply) => {
            sleep_or_cancel(reply.first_byte_delay, &inner.cancel).await;
            inner.set_status(idx, 200);
            let body = sse_body(
                frames(&reply, n),
                reply.chunk_delay,
                reply.cut,
                inner.cancel.clone(),
            );
            let mut resp = Response::new(body);
            let h = resp.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            resp
        }
    }
}

async fn sleep_or_cancel(d: Duration, cancel: &CancellationToken) {
    if !d.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(d) => {}
            () = cancel.cancelled() => {}
        }
    }
}

/// Answers for everything that is not a completion request.
fn other_route(method: &Method, path: &str) -> (u16, Response) {
    if method == Method::GET && path.ends_with("/models") {
        let body = json!({"object": "list", "data": [
            {"id": "default-model", "object": "model", "created": super::sse::CREATED, "owned_by": "mock"}]});
        return (200, axum::Json(body).into_response());
    }
    let body = json!({"error": {"message": format!("mock: no route for {method} {path}"),
        "type": "not_found_error", "code": "404"}});
    (404, (StatusCode::NOT_FOUND, axum::Json(body)).into_response())
}

type Frame = Result<Bytes, std::io::Error>;

/// The SSE body: frames paced by `delay`, stopped as `cut` says, and ended (aborted) when the mock shuts
/// down. A task feeds a small channel so a hanging stream costs nothing and stops when the client leaves.
fn sse_body(frames: Vec<String>, delay: Duration, cut: Option<Cut>, cancel: CancellationToken) -> Body {
    let (tx, rx) = mpsc::channel::<Frame>(4);
    tokio::spawn(async move {
        let total = frames.len();
        let mut frames = frames.into_iter();
        for i in 0..=total {
            if let Some(c) = cut
                && i >= c.after
            {
                finish_cut(c.kind, &tx, &cancel).await;
                return;
            }
            let Some(frame) = frames.next() else { return };
            if i > 0 && !delay.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => {
                        let _ = tx.send(Err(std::io::Error::other("mock: shutting down"))).await;
                        return;
                    }
                    () = tx.closed() => return,
                }
            }
            if tx.send(Ok(Bytes::from(frame))).await.is_err() {
                return;
            }
        }
    });
    Body::from_stream(ReceiverStream::new(rx))
}

async fn finish_cut(kind: CutKind, tx: &mpsc::Sender<Frame>, cancel: &CancellationToken) {
    match kind {
        CutKind::Eof => {}
        CutKind::Abort => {
            // Let hyper flush what was sent so far, so the client sees a partial stream, then a reset.
            tokio::time::sleep(CUT_FLUSH).await;
            let _ = tx
                .send(Err(std::io::Error::other("mock: stream cut on purpose")))
                .await;
        }
        CutKind::Hang => {
            tokio::select! {
                () = cancel.cancelled() => {
                    let _ = tx.send(Err(std::io::Error::other("mock: shutting down"))).await;
                }
                () = tx.closed() => {}
            }
        }
    }
}
