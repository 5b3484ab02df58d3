//! The axum side of the mock: one fallback handler that logs every request and answers the routes the
//! CLI calls (`POST /v1/messages[?beta=true]`, `POST /v1/messages/count_tokens`, the `HEAD /` and
//! `HEAD /api/hello` preflights), everything else with a logged 404. Also delivery details: latency,
//! paced SSE events, and cutting the connection mid-stream.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::log::RequestLog;
use super::script::{ReplyBody, Script};
use super::sse::{SseEvent, error_json, message_events, message_json, request_id};

/// Shared state of one running mock.
pub(crate) struct Inner {
    pub(crate) script: Script,
    pub(crate) log: Mutex<Vec<RequestLog>>,
    pub(crate) messages: AtomicUsize,
    pub(crate) started: Instant,
    /// Count of `/v1/messages` requests received, for waiters.
    pub(crate) arrived: watch::Sender<usize>,
    /// Cancelled on shutdown: open SSE streams end at once.
    pub(crate) cancel: CancellationToken,
}

impl Inner {
    fn push(&self, entry: RequestLog) -> usize {
        let Ok(mut log) = self.log.lock() else {
            return 0;
        };
        log.push(entry);
        log.len() - 1
    }

    fn set_status(&self, idx: usize, status: u16) {
        if let Ok(mut log) = self.log.lock()
            && let Some(e) = log.get_mut(idx)
        {
            e.status = status;
        }
    }
}

/// Pause before cutting a stream, so the events before the cut reach the client first.
const CUT_FLUSH: Duration = Duration::from_millis(50);

/// The single handler behind the router's fallback.
pub(crate) async fn handle(
    State(inner): State<std::sync::Arc<Inner>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let is_messages = method == Method::POST && path == "/v1/messages";
    let n = if is_messages {
        inner.messages.fetch_add(1, Ordering::SeqCst) + 1
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
    let reply = is_messages.then(|| inner.script.reply_for(&entry));
    let model = entry.model().unwrap_or("claude-mock").to_owned();
    let streaming = entry.is_streaming();
    let idx = inner.push(entry);
    if is_messages {
        inner.arrived.send_replace(n);
    }

    let Some(reply) = reply else {
        let (status, resp) = other_route(&method, &path, body.len());
        inner.set_status(idx, status);
        return resp;
    };
    if !reply.latency.is_zero() {
        tokio::time::sleep(reply.latency).await;
    }
    match reply.body {
        ReplyBody::Error(err) => {
            inner.set_status(idx, err.status);
            let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (status, axum::Json(error_json(&err, n))).into_response();
            add_request_id(&mut resp, n);
            resp
        }
        ReplyBody::Message(msg) if !streaming => {
            inner.set_status(idx, 200);
            let mut resp = axum::Json(message_json(&msg, n, &model)).into_response();
            add_request_id(&mut resp, n);
            resp
        }
        ReplyBody::Message(msg) => {
            inner.set_status(idx, 200);
            let events = message_events(&msg, n, &model);
            let body = sse_body(
                events,
                reply.event_delay,
                reply.cut_after_events,
                inner.cancel.clone(),
            );
            let mut resp = Response::new(body);
            let h = resp.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
            add_request_id(&mut resp, n);
            resp
        }
    }
}

fn add_request_id(resp: &mut Response, n: usize) {
    if let Ok(v) = HeaderValue::from_str(&request_id(n)) {
        resp.headers_mut().insert("request-id", v);
    }
}

/// Answers for everything that is not `POST /v1/messages`.
fn other_route(method: &Method, path: &str, body_len: usize) -> (u16, Response) {
    match (method.as_str(), path) {
        ("HEAD" | "GET", "/" | "/api/hello") => (200, StatusCode::OK.into_response()),
        ("POST", "/v1/messages/count_tokens") => {
            // A rough count: about four bytes per token, never zero.
            let tokens = (body_len / 4).max(1);
            (200, axum::Json(json!({"input_tokens": tokens})).into_response())
        }
        _ => {
            let body = json!({"type": "error", "error": {"type": "not_found_error",
                "message": format!("mock: no route for {method} {path}")}});
            (404, (StatusCode::NOT_FOUND, axum::Json(body)).into_response())
        }
    }
}

/// The SSE body: events paced by `delay`, aborted (connection cut, no terminating chunk) after `cut`
/// events, and ended early when the mock shuts down.
fn sse_body(events: Vec<SseEvent>, delay: Duration, cut: Option<usize>, cancel: CancellationToken) -> Body {
    let stream = futures::stream::iter(events.into_iter().enumerate()).then(move |(i, ev)| {
        let cancel = cancel.clone();
        async move {
            if cut.is_some_and(|c| i >= c) {
                // Let hyper flush what was sent so far (it writes while the body is pending), so the
                // client really sees a partial stream and then a reset.
                tokio::time::sleep(CUT_FLUSH).await;
                return Err(std::io::Error::other("mock: stream cut on purpose"));
            }
            if i > 0 && !delay.is_zero() {
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = cancel.cancelled() => {
                        return Err(std::io::Error::other("mock: shutting down"));
                    }
                }
            }
            Ok::<Bytes, std::io::Error>(ev.to_bytes())
        }
    });
    // Stop after the first error so the cut is final.
    let stream = stream.scan(false, |failed, item| {
        let out = if *failed {
            None
        } else {
            *failed = item.is_err();
            Some(item)
        };
        futures::future::ready(out)
    });
    Body::from_stream(stream)
}
