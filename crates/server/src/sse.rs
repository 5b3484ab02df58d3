//! SSE for run events: `id:` = the run's sequence, `event:` = the payload type, `data:` = the exposed event
//! JSON. Replay starts after the `Last-Event-ID` header or `?after=`; the frames come from the run's
//! [`LogReader`] (its live window while the run is in memory, the durable log for the rest), so the live
//! tail and the replay are one code path; notices (`error`, `lag`, `gap`) carry no `id:`.
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
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::CancellationToken;

use super::reader::LogReader;
use super::runs::{LogItem, RunRegistry};

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

/// The frame of a log item: a run event with `id` as its `id:`, or a notice (no `id:`).
pub fn item_frame(item: &LogItem, id: impl FnOnce(u64) -> String) -> SseEvent {
    if item.notice {
        SseEvent::default().event(&item.kind).data(&item.data)
    } else {
        SseEvent::default()
            .id(id(item.seq))
            .event(&item.kind)
            .data(&item.data)
    }
}

/// One subscriber's stream of a run's log.
struct Follow {
    reader: LogReader,
    shutdown: CancellationToken,
    ended: bool,
    _gauge: Option<SubscriberGauge>,
}

impl Follow {
    async fn next(&mut self) -> Option<SseEvent> {
        if self.ended {
            return None;
        }
        tokio::select! {
            item = self.reader.next() => item.map(|i| item_frame(&i, |seq| seq.to_string())),
            () = self.shutdown.cancelled() => {
                self.ended = true;
                Some(shutdown_frame())
            }
        }
    }
}

/// A run's log from `reader`'s position as a stream of frames (`id:` = the run's sequence), until the
/// log is complete or the service shuts down (then one `shutdown` frame). Live and replayed runs alike:
/// the reader takes the window while the run is in memory and the durable log for the rest. The
/// response body polls it directly: no task and no channel between the log and the socket, and a
/// client that goes away drops it (and `gauge` with it).
pub fn follow(
    reader: LogReader,
    shutdown: CancellationToken,
    gauge: Option<SubscriberGauge>,
) -> impl Stream<Item = SseEvent> + Send + 'static {
    let state = Follow {
        reader,
        shutdown,
        ended: false,
        _gauge: gauge,
    };
    futures::stream::unfold(state, |mut s| async move {
        let event = s.next().await?;
        Some((event, s))
    })
}
