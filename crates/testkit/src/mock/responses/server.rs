//! The axum side of the Responses mock: one catch-all handler that logs every request, streams a
//! scripted reply for `POST …/responses`, and answers anything else 404 with an OpenAI error body.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::log::{RecordedRequest, StreamOutcome};
use super::reply::Failure;
use super::script::Script;
use super::sse::{self, Frame};

/// State shared by the handler and the [`super::MockResponses`] handle.
pub(crate) struct Shared {
    pub(crate) script: Mutex<Script>,
    pub(crate) log: Mutex<Vec<RecordedRequest>>,
    pub(crate) started: Instant,
}

impl Shared {
    /// Locks the log, recovering from a poisoned lock (a panicking test closure must not hide
    /// the log from the assertions that follow).
    pub(crate) fn log(&self) -> MutexGuard<'_, Vec<RecordedRequest>> {
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_outcome(&self, index: usize, outcome: StreamOutcome) {
        if let Some(r) = self.log().get_mut(index) {
            r.outcome = outcome;
        }
    }
}

/// The catch-all handler.
pub(crate) async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let is_responses = method == Method::POST && uri.path().ends_with("/responses");
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rec = RecordedRequest {
        index: 0,
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_else(|| uri.path().to_owned()),
        headers: headers_map(&headers),
        body: parsed,
        raw_body: String::from_utf8_lossy(&body).into_owned(),
        at_ms: u64::try_from(shared.started.elapsed().as_millis()).unwrap_or(u64::MAX),
        outcome: if is_responses {
            StreamOutcome::Pending
        } else {
            StreamOutcome::NotFound
        },
    };
    let (index, snapshot) = {
        let mut log = shared.log();
        let mut rec = rec;
        rec.index = log.len();
        log.push(rec);
        (log.len() - 1, log.clone())
    };
    if !is_responses {
        tracing::warn!(path = %uri, "responses mock: unknown endpoint");
        let body = json!({ "error": { "message": format!("mock: no route for {method} {uri}"), "type": "invalid_request_error", "param": null, "code": "not_found" } });
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
    }
    let reply = shared
        .script
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .next_reply(&snapshot);
    // Request numbers are 1-based and count only `responses` calls, so ids read msg_mock_0001_0.
    let n = snapshot
        .iter()
        .filter(|r| r.outcome != StreamOutcome::NotFound)
        .count();
    let request_id = format!("req_mock_{n:04}");
    if !reply.first_byte_delay.is_zero() {
        tokio::time::sleep(reply.first_byte_delay).await;
    }
    if let Some(Failure::Http {
        status,
        body,
        retry_after,
    }) = &reply.failure
    {
        shared.set_outcome(index, StreamOutcome::HttpError(*status));
        let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
        if let Some(secs) = retry_after {
            resp.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*secs));
        }
        insert_request_id(&mut resp, &request_id);
        return resp;
    }
    let model = snapshot
        .last()
        .and_then(RecordedRequest::model)
        .unwrap_or("gpt-5.5")
        .to_owned();
    let frames = sse::render(&reply, n, &model);
    let drop_after = match reply.failure {
        Some(Failure::DropStream { after_events }) => Some(after_events),
        _ => None,
    };
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(32);
    let task_shared = shared.clone();
    tokio::spawn(async move {
        let outcome = play(frames, drop_after, &tx).await;
        task_shared.set_outcome(index, outcome);
    });
    let mut resp = Response::new(Body::from_stream(ReceiverStream::new(rx)));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    insert_request_id(&mut resp, &request_id);
    resp
}

/// Writes the frames into the body channel; returns how the stream ended.
async fn play(
    frames: Vec<Frame>,
    drop_after: Option<usize>,
    tx: &mpsc::Sender<Result<Bytes, std::io::Error>>,
) -> StreamOutcome {
    let mut sent = 0usize;
    for f in frames {
        match f {
            Frame::Sleep(d) => {
                tokio::select! {
                    () = tokio::time::sleep(d) => {}
                    () = tx.closed() => return StreamOutcome::ClientGone,
                }
            }
            Frame::Event(_) => {
                if drop_after == Some(sent) {
                    let err =
                        std::io::Error::new(std::io::ErrorKind::ConnectionAborted, "mock: dropped stream");
                    let _ = tx.send(Err(err)).await;
                    return StreamOutcome::Dropped;
                }
                if tx.send(Ok(Bytes::from(f.to_sse()))).await.is_err() {
                    return StreamOutcome::ClientGone;
                }
                sent += 1;
            }
        }
    }
    StreamOutcome::Completed
}

fn insert_request_id(resp: &mut Response, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert("x-request-id", v);
    }
}

fn headers_map(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect()
}
