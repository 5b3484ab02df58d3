//! SSE for run events: `id:` = the run's sequence, `event:` = the payload type, `data:` = the exposed event
//! JSON. Replay starts after the `Last-Event-ID` header or `?after=`; a run still in memory is followed live
//! from its in-memory log, a finished or evicted run is replayed from the durable log through the recorder.
//! Frames use LF only; the response carries `Cache-Control: no-cache` and `X-Accel-Buffering: no` and is
//! never compressed; a keep-alive comment goes out every `keep_alive`.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use super::runs::{LogItem, RunEntry};
use crate::recorder::{ExposurePolicy, Recorder};

/// An in-memory event log that SSE can follow: a run's, or a Standby's.
pub trait EventLog: Send + Sync + 'static {
    /// Subscribes to `(items in the log, finished)`.
    fn progress(&self) -> tokio::sync::watch::Receiver<(usize, bool)>;
    /// The items from index `from` on, with `seq > after`.
    fn items(&self, from: usize, after: u64) -> Vec<Arc<LogItem>>;
}

impl EventLog for RunEntry {
    fn progress(&self) -> tokio::sync::watch::Receiver<(usize, bool)> {
        self.watch()
    }

    fn items(&self, from: usize, after: u64) -> Vec<Arc<LogItem>> {
        self.items_from(from, after)
    }
}

/// Wraps a channel of SSE events as the streaming response with the service's headers.
pub fn response(rx: mpsc::Receiver<SseEvent>, keep_alive: Duration) -> Response {
    let stream = futures::StreamExt::map(ReceiverStream::new(rx), Ok::<_, Infallible>);
    let mut resp = Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(keep_alive).text("keep-alive"))
        .into_response();
    let h = resp.headers_mut();
    h.insert(
        HeaderName::from_static("x-accel-buffering"),
        HeaderValue::from_static("no"),
    );
    h.insert(
        axum::http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache"),
    );
    resp
}

/// The frame of one recorded event.
pub fn frame(seq: u64, kind: &str, data: &str) -> SseEvent {
    SseEvent::default().id(seq.to_string()).event(kind).data(data)
}

/// The terminal frame sent when the service shuts down under an open stream.
pub fn shutdown_frame() -> SseEvent {
    SseEvent::default()
        .event("shutdown")
        .data(r#"{"code":"shutting_down","message":"the service is shutting down"}"#)
}

/// Streams a live (in-memory) log from `after` until it finishes, a disconnect, or shutdown.
pub async fn follow<L: EventLog>(
    entry: Arc<L>,
    after: u64,
    tx: mpsc::Sender<SseEvent>,
    shutdown: CancellationToken,
) {
    let mut progress = entry.progress();
    let mut index = 0usize;
    let mut last = after;
    loop {
        let (len, finished) = *progress.borrow_and_update();
        if len > index {
            for item in entry.items(index, last) {
                last = item.seq;
                let sse = if item.notice {
                    SseEvent::default().event(&item.kind).data(&item.data)
                } else {
                    frame(item.seq, &item.kind, &item.data)
                };
                if tx.send(sse).await.is_err() {
                    return;
                }
            }
            index = len;
            continue;
        }
        if finished {
            return;
        }
        tokio::select! {
            changed = progress.changed() => if changed.is_err() { return },
            () = tx.closed() => return,
            () = shutdown.cancelled() => {
                let _ = tx.send(shutdown_frame()).await;
                return;
            }
        }
    }
}

/// Replays a run from the durable log after `after`, page by page.
pub async fn replay(
    recorder: Recorder,
    run_id: String,
    after: u64,
    view: ExposurePolicy,
    tx: mpsc::Sender<SseEvent>,
) {
    let mut last = after;
    loop {
        let page = match recorder.run(&run_id, Some(last), 500, &view).await {
            Ok(p) => p,
            Err(e) => {
                let _ = tx
                    .send(SseEvent::default().event("error").data(
                        serde_json::json!({"code": "store_error", "message": e.to_string()}).to_string(),
                    ))
                    .await;
                return;
            }
        };
        let short = page.len() < 500;
        for r in page {
            last = r.sequence;
            if tx
                .send(frame(r.sequence, &r.kind, &r.json.to_string()))
                .await
                .is_err()
            {
                return;
            }
        }
        if short {
            return;
        }
    }
}
