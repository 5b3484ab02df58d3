//! What one connection's timeouts watch: [`Activity`] (requests in flight, when the connection went
//! quiet, when the next request head began), the socket wrapper [`Watched`] that reports received
//! bytes to it, the request body [`DeadlineBody`] that fails `body_timeout` past its deadline, and the
//! response body [`InFlight`] that holds its request "in flight" until hyper has written it.
//!
//! The rules (Go `net/http` semantics; hyper 1's own header timer starts when a connection waits for a
//! head, so it cannot tell a keep-alive connection's idle time from a slow head):
//! - no request in flight and no byte received since the last response (or the accept): the
//!   connection is closed `idle_timeout` after it went quiet;
//! - no request in flight, a head begun (a byte received): closed `header_read_timeout` after that byte;
//! - a request in flight: its body must be complete within `body_read_timeout` of its head.

use std::future::Future as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use super::connections::Connections;

#[derive(Debug)]
struct State {
    in_flight: usize,
    quiet_since: Instant,
    head_from: Option<Instant>,
}

/// The request and byte activity of one connection, shared by its socket, its service and its
/// watchdog.
#[derive(Debug, Clone)]
pub(crate) struct Activity(Arc<(Mutex<State>, Notify)>);

/// Which timeout closed a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expiry {
    /// No request for `idle_timeout`.
    Idle,
    /// A request head not complete within `header_read_timeout`.
    Header,
}

impl Activity {
    /// A connection accepted now: quiet, no head begun.
    pub(crate) fn new() -> Self {
        Activity(Arc::new((
            Mutex::new(State {
                in_flight: 0,
                quiet_since: Instant::now(),
                head_from: None,
            }),
            Notify::new(),
        )))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes arrived: while no request is in flight they begin the next head.
    fn received(&self) {
        let mut s = self.state();
        if s.in_flight == 0 && s.head_from.is_none() {
            s.head_from = Some(Instant::now());
            drop(s);
            // The deadline moved (an idle one is usually later than a header one): wake the watchdog.
            self.0.1.notify_one();
        }
    }

    /// A request head was parsed: the request is in flight until its response body is dropped.
    pub(crate) fn begin(&self) -> InFlightGuard {
        let mut s = self.state();
        s.in_flight += 1;
        s.head_from = None;
        InFlightGuard(self.clone())
    }

    /// Resolves when a request head began (the deadline changed).
    pub(crate) async fn head_began(&self) {
        self.0.1.notified().await
    }

    /// When the connection expires if nothing changes, and why; `None` while a request is in flight.
    pub(crate) fn deadline(&self, limits: &Connections) -> Option<(Instant, Expiry)> {
        let s = self.state();
        if s.in_flight > 0 {
            return None;
        }
        Some(match s.head_from {
            Some(t) => (t + limits.header_read_timeout, Expiry::Header),
            None => (s.quiet_since + limits.idle_timeout, Expiry::Idle),
        })
    }
}

/// Holds one request in flight; dropping it makes the connection quiet again (when it was the last).
#[derive(Debug)]
pub(crate) struct InFlightGuard(Activity);

impl Drop for InFlightGuard {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.in_flight = s.in_flight.saturating_sub(1);
        if s.in_flight == 0 {
            s.quiet_since = Instant::now();
            s.head_from = None;
        }
    }
}

/// A socket that reports received bytes to its connection's [`Activity`], and writes hyper's own
/// bodiless parse-error answers in the service's JSON error shape ([`super::hyper_errors`]).
#[derive(Debug)]
pub(crate) struct Watched<S> {
    inner: S,
    activity: Activity,
    /// The JSON answer written in place of hyper's own, and how much of it is written. hyper closes
    /// the connection after such an answer, so whatever it writes afterwards is dropped.
    replaced: Option<(Vec<u8>, usize)>,
}

impl<S> Watched<S> {
    /// `inner`, reporting to `activity`.
    pub(crate) fn new(inner: S, activity: Activity) -> Self {
        Watched {
            inner,
            activity,
            replaced: None,
        }
    }
}

impl<S: AsyncWrite + Unpin> Watched<S> {
    /// Writes the replacement answer, if one is due: `Some(poll)` answers a write of `claimed` bytes
    /// (all of them, once the replacement is out); `None` lets the write through.
    fn replace(
        &mut self,
        cx: &mut Context<'_>,
        first: &[u8],
        claimed: usize,
    ) -> Option<Poll<std::io::Result<usize>>> {
        if self.replaced.is_none() {
            self.replaced = Some((super::hyper_errors::rewrite(first)?, 0));
        }
        let (bytes, written) = self.replaced.as_mut()?;
        while *written < bytes.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &bytes[*written..]) {
                Poll::Ready(Ok(0)) => return Some(Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()))),
                Poll::Ready(Ok(n)) => *written += n,
                other => return Some(other),
            }
        }
        Some(Poll::Ready(Ok(claimed)))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.received();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        if let Some(poll) = this.replace(cx, buf, buf.len()) {
            return poll;
        }
        Pin::new(&mut this.inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let first = bufs.iter().find(|b| !b.is_empty()).map_or(&[][..], |b| &b[..]);
        let total = bufs.iter().map(|b| b.len()).sum();
        if let Some(poll) = this.replace(cx, first, total) {
            return poll;
        }
        Pin::new(&mut this.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// The error a [`DeadlineBody`] fails with past its deadline (`408 body_timeout` at the extractor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request body did not arrive within {0:?} (body_read_timeout)")]
pub struct BodyTimedOut(pub Duration);

/// A request body that must be complete before its deadline.
#[derive(Debug)]
pub(crate) struct DeadlineBody<B> {
    inner: B,
    sleep: Pin<Box<Sleep>>,
    limit: Duration,
}

impl<B> DeadlineBody<B> {
    /// `inner`, due within `limit` from now.
    pub(crate) fn new(inner: B, limit: Duration) -> Self {
        DeadlineBody {
            inner,
            sleep: Box::pin(tokio::time::sleep(limit)),
            limit,
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<B> Body for DeadlineBody<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match this.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimedOut(this.limit))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body that keeps its request in flight until hyper dropped it (written or abandoned).
#[derive(Debug)]
pub(crate) struct InFlight<B> {
    inner: B,
    _guard: InFlightGuard,
}

impl<B> InFlight<B> {
    /// `inner`, holding `guard`.
    pub(crate) fn new(inner: B, guard: InFlightGuard) -> Self {
        InFlight { inner, _guard: guard }
    }
}

impl<B: Body + Unpin> Body for InFlight<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
