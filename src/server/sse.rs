//! SSE for run events: `id:` = the run's sequence, `event:` = the payload type, `data:` = the exposed event
//! JSON. Replay starts after the `Last-Event-ID` header or `?after=`; a run still in memory is followed live
//! from its in-memory log, a finished or evicted run is replayed from the durable log through the recorder.
//! Frames use LF only; the response carries `Cache-Control: no-cache` and `X-Accel-Buffering: no` and is
//! never compressed; a keep-alive comment goes out every `keep_alive`.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use super::runs::{LogItem, RunEntry, RunRegistry};
use crate::recorder::{ExposurePolicy, Recorder};

/// An in-memory event log that SSE can follow: a run's, or a Standby's.
pub trait EventLog: Send + Sync + 'static {
    /// Subscribes to `(items in the log, finished)`.
    fn progress(&self) -> watch::Receiver<(usize, bool)>;
    /// The items from index `from` on, with `seq > after`.
    fn items(&self, from: usize, after: u64) -> Vec<Arc<LogItem>>;
}

impl EventLog for RunEntry {
    fn progress(&self) -> watch::Receiver<(usize, bool)> {
        self.watch()
    }

    fn items(&self, from: usize, after: u64) -> Vec<Arc<LogItem>> {
        self.items_from(from, after)
    }
}

/// Wraps a channel of SSE events as the streaming response with the service's headers.
pub fn response(rx: mpsc::Receiver<SseEvent>, keep_alive: Duration) -> Response {
    stream_response(ReceiverStream::new(rx), keep_alive)
}

/// Serves a stream of SSE events as the streaming response with the service's headers.
pub fn stream_response<S>(events: S, keep_alive: Duration) -> Response
where
    S: Stream<Item = SseEvent> + Send + 'static,
{
    let stream = futures::StreamExt::map(events, Ok::<_, Infallible>);
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

/// Decrements the open-subscriber gauge when the stream that holds it is dropped (the response ended or
/// the client went away).
pub struct SubscriberGauge(Arc<RunRegistry>);

impl SubscriberGauge {
    /// Counts one more open SSE stream until the gauge is dropped.
    pub fn open(runs: Arc<RunRegistry>) -> Self {
        runs.metrics.subscribers.fetch_add(1, Ordering::Relaxed);
        SubscriberGauge(runs)
    }
}

impl Drop for SubscriberGauge {
    fn drop(&mut self) {
        self.0.metrics.subscribers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The state of one subscriber following a live log.
struct Follow<L> {
    entry: Arc<L>,
    progress: watch::Receiver<(usize, bool)>,
    /// Log items already taken from the log.
    index: usize,
    /// The last sequence sent.
    last: u64,
    /// Items taken but not yet sent.
    pending: std::vec::IntoIter<Arc<LogItem>>,
    shutdown: CancellationToken,
    ended: bool,
    _gauge: Option<SubscriberGauge>,
}

impl<L: EventLog> Follow<L> {
    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if self.ended {
                return None;
            }
            if let Some(item) = self.pending.next() {
                self.last = item.seq;
                return Some(if item.notice {
                    SseEvent::default().event(&item.kind).data(&item.data)
                } else {
                    frame(item.seq, &item.kind, &item.data)
                });
            }
            let (len, finished) = *self.progress.borrow_and_update();
            if len > self.index {
                self.pending = self.entry.items(self.index, self.last).into_iter();
                self.index = len;
                continue;
            }
            if finished {
                return None;
            }
            tokio::select! {
                changed = self.progress.changed() => if changed.is_err() { return None },
                () = self.shutdown.cancelled() => {
                    self.ended = true;
                    return Some(shutdown_frame());
                }
            }
        }
    }
}

/// A live (in-memory) log from `after` as a stream of frames, until it finishes or the service shuts
/// down (then one `shutdown` frame). The response body polls it directly: no task and no channel between
/// the log and the socket, and a client that goes away drops it (and `gauge` with it).
pub fn follow<L: EventLog>(
    entry: Arc<L>,
    after: u64,
    shutdown: CancellationToken,
    gauge: Option<SubscriberGauge>,
) -> impl Stream<Item = SseEvent> + Send + 'static {
    let progress = entry.progress();
    let state = Follow {
        entry,
        progress,
        index: 0,
        last: after,
        pending: Vec::new().into_iter(),
        shutdown,
        ended: false,
        _gauge: gauge,
    };
    futures::stream::unfold(state, |mut s| async move {
        let event = s.next().await?;
        Some((event, s))
    })
}

/// Replays a run from the durable log after `after`, page by page.
///
/// `interrupted` is the `last_recorded_seq` of a run crash recovery ended (`server::recovery`): its
/// terminal sequence follows that seq in the log. A client whose cursor is already past it (it saw
/// events live that the crash lost) is sent that terminal numbered after its own cursor, so it ends
/// instead of reconnecting forever, and never sees an id it already had reused.
pub async fn replay(
    recorder: Recorder,
    run_id: String,
    after: u64,
    view: ExposurePolicy,
    interrupted: Option<u64>,
    tx: mpsc::Sender<SseEvent>,
) {
    let mut last = after;
    let mut ended = false;
    loop {
        let page = match recorder.run(&run_id, Some(last), 500, &view).await {
            Ok(p) => p,
            Err(e) => {
                let id = super::error::log_store_failure("a run's durable log could not be read", &e);
                let message = format!("the run's log could not be read; see the service log (error id {id})");
                let body = serde_json::json!({"code": "store_error", "message": message});
                let _ = tx
                    .send(SseEvent::default().event("error").data(body.to_string()))
                    .await;
                return;
            }
        };
        let short = page.len() < 500;
        for r in page {
            last = r.sequence;
            ended = r.kind == "done";
            if tx
                .send(frame(r.sequence, &r.kind, &r.json.to_string()))
                .await
                .is_err()
            {
                return;
            }
        }
        if short {
            break;
        }
    }
    let Some(recorded) = interrupted.filter(|_| !ended) else {
        return;
    };
    let Ok(terminal) = recorder.run(&run_id, Some(recorded), 2, &view).await else {
        return;
    };
    for r in terminal {
        last += 1;
        if tx.send(frame(last, &r.kind, &r.json.to_string())).await.is_err() {
            return;
        }
    }
}
