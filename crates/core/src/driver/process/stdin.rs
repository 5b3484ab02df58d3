//! [`StdinWriter`]: the one way frames reach a child's stdin.
//!
//! Every clone sends to a single writer task, which writes each frame completely before taking the
//! next, so frames from concurrent senders never interleave. The writer counts every byte that
//! reached the pipe, so a driver can tell "nothing of the prompt was delivered, safe to retry"
//! from "something was delivered, never replay" ([`StdinWriter::wrote_anything`]).
//!
//! After the first write error the pipe is dropped and every later frame fails with the same
//! error; after [`StdinWriter::close`] every later frame fails with [`StdinError::Closed`].

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::Serialize;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Frames queued ahead of the writer before `send` waits (backpressure).
const QUEUE: usize = 64;

/// Why a frame could not be written to the child's stdin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StdinError {
    /// Stdin was closed by [`StdinWriter::close`] (or was never piped).
    #[error("stdin is closed")]
    Closed,
    /// The child no longer reads stdin (it exited or closed it): EPIPE.
    #[error("the child's stdin is gone (broken pipe)")]
    BrokenPipe,
    /// Another write error.
    #[error("writing to the child's stdin failed ({kind:?}): {message}")]
    Io {
        /// The I/O error kind.
        kind: io::ErrorKind,
        /// The error text.
        message: String,
    },
    /// A raw line contained `\n`, which would split it into two frames.
    #[error("a stdin frame must be one line; it contains a newline at byte {at}")]
    EmbeddedNewline {
        /// Offset of the first newline.
        at: usize,
    },
    /// The value could not be serialized to JSON.
    #[error("could not serialize the stdin frame: {0}")]
    Serialize(String),
}

impl StdinError {
    fn from_io(e: &io::Error) -> Self {
        match e.kind() {
            io::ErrorKind::BrokenPipe | io::ErrorKind::WriteZero => StdinError::BrokenPipe,
            kind => StdinError::Io {
                kind,
                message: e.to_string(),
            },
        }
    }
}

enum Msg {
    Frame(Vec<u8>, oneshot::Sender<Result<(), StdinError>>),
    Close(oneshot::Sender<()>),
}

struct Shared {
    written: AtomicU64,
    closed: AtomicBool,
}

/// Cloneable handle to a child's stdin; see the module docs.
#[derive(Clone)]
pub struct StdinWriter {
    tx: mpsc::Sender<Msg>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for StdinWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdinWriter")
            .field("bytes_written", &self.bytes_written())
            .field("closed", &self.is_closed())
            .finish()
    }
}

impl StdinWriter {
    /// Starts the writer task for `pipe` (a child's stdin) and returns the first handle.
    pub(crate) fn start<W: AsyncWrite + Unpin + Send + 'static>(pipe: W) -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        let shared = Arc::new(Shared {
            written: AtomicU64::new(0),
            closed: AtomicBool::new(false),
        });
        tokio::spawn(write_loop(pipe, rx, Arc::clone(&shared)));
        Self { tx, shared }
    }

    /// Writes `value` as one compact JSON line. Returns once the whole frame is in the pipe.
    ///
    /// Cancel-safety: once queued, a frame is written whole even if this future is dropped.
    pub async fn send_json<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), StdinError> {
        let mut frame = serde_json::to_vec(value).map_err(|e| StdinError::Serialize(e.to_string()))?;
        frame.push(b'\n');
        self.send_frame(frame).await
    }

    /// Writes `line` plus `\n`. A single trailing `\n` in `line` is accepted; any other newline
    /// is refused with [`StdinError::EmbeddedNewline`].
    pub async fn send_line(&self, line: impl Into<Vec<u8>>) -> Result<(), StdinError> {
        let mut frame = line.into();
        if frame.last() == Some(&b'\n') {
            frame.pop();
        }
        if let Some(at) = frame.iter().position(|&b| b == b'\n') {
            return Err(StdinError::EmbeddedNewline { at });
        }
        frame.push(b'\n');
        self.send_frame(frame).await
    }

    /// Writes `bytes` exactly as given (input read to EOF rather than a line protocol, e.g. a
    /// prompt with newlines). Returns once all of it is in the pipe.
    pub async fn send_raw(&self, bytes: impl Into<Vec<u8>>) -> Result<(), StdinError> {
        self.send_frame(bytes.into()).await
    }

    async fn send_frame(&self, frame: Vec<u8>) -> Result<(), StdinError> {
        let (ack, done) = oneshot::channel();
        self.tx
            .send(Msg::Frame(frame, ack))
            .await
            .map_err(|_| StdinError::Closed)?;
        done.await.unwrap_or(Err(StdinError::Closed))
    }

    /// Lets every frame queued before this call drain, then closes stdin (EOF for the child).
    /// Idempotent: the pipe is closed exactly once; later calls return at once.
    pub async fn close(&self) {
        if self.is_closed() {
            return;
        }
        let (ack, done) = oneshot::channel();
        if self.tx.send(Msg::Close(ack)).await.is_ok() {
            let _ = done.await;
        }
    }

    /// Bytes that reached the pipe so far, across all clones (partial frames included).
    pub fn bytes_written(&self) -> u64 {
        self.shared.written.load(Ordering::Acquire)
    }

    /// True once any byte reached the pipe: a prompt may have been delivered and must not be replayed.
    pub fn wrote_anything(&self) -> bool {
        self.bytes_written() > 0
    }

    /// True once stdin was closed (by `close`, or after a write error).
    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(Ordering::Acquire)
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(pipe: W, mut rx: mpsc::Receiver<Msg>, shared: Arc<Shared>) {
    let mut pipe = Some(pipe);
    let mut failure: Option<StdinError> = None;
    while let Some(msg) = rx.recv().await {
        match msg {
            Msg::Frame(frame, ack) => {
                let result = match (&mut pipe, &failure) {
                    (_, Some(err)) => Err(err.clone()),
                    (None, None) => Err(StdinError::Closed),
                    (Some(w), None) => write_counted(w, &frame, &shared).await,
                };
                if let Err(err) = &result
                    && failure.is_none()
                    && pipe.is_some()
                {
                    failure = Some(err.clone());
                    pipe = None;
                    shared.closed.store(true, Ordering::Release);
                }
                let _ = ack.send(result);
            }
            Msg::Close(ack) => {
                if let Some(mut w) = pipe.take() {
                    let _ = w.shutdown().await;
                }
                shared.closed.store(true, Ordering::Release);
                let _ = ack.send(());
            }
        }
    }
}

async fn write_counted<W: AsyncWrite + Unpin>(
    w: &mut W,
    frame: &[u8],
    shared: &Shared,
) -> Result<(), StdinError> {
    let mut off = 0;
    while off < frame.len() {
        match w.write(&frame[off..]).await {
            Ok(0) => return Err(StdinError::BrokenPipe),
            Ok(n) => {
                off += n;
                shared.written.fetch_add(n as u64, Ordering::AcqRel);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(StdinError::from_io(&e)),
        }
    }
    w.flush().await.map_err(|e| StdinError::from_io(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn frames_are_lines_and_close_drains_first() {
        let (client, mut server) = tokio::io::duplex(1 << 16);
        let w = StdinWriter::start(client);
        assert!(!w.wrote_anything());
        w.send_json(&serde_json::json!({"type": "user"})).await.unwrap();
        w.send_line("raw line\n").await.unwrap();
        assert_eq!(
            w.send_line("a\nb").await,
            Err(StdinError::EmbeddedNewline { at: 1 })
        );
        w.close().await;
        w.close().await;
        assert_eq!(w.send_line("late").await, Err(StdinError::Closed));
        let mut got = String::new();
        server.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "{\"type\":\"user\"}\nraw line\n");
        assert_eq!(w.bytes_written(), got.len() as u64);
    }

    #[tokio::test]
    async fn write_error_is_typed_and_sticky() {
        let (client, server) = tokio::io::duplex(8);
        drop(server);
        let w = StdinWriter::start(client);
        assert_eq!(w.send_line("hello").await, Err(StdinError::BrokenPipe));
        assert_eq!(w.send_line("again").await, Err(StdinError::BrokenPipe));
        assert!(w.is_closed());
        assert!(!w.wrote_anything());
    }
}
