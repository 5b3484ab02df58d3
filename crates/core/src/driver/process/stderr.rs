//! A child's stderr: always drained (so a chatty child can never block on a full pipe), kept as a
//! bounded tail for error messages and as complete bytes (capped) for `Result.Raw`, and optionally
//! forwarded line by line to the driver.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use super::capture::{Captured, ChunkBuf};
use super::spec::StderrLineFn;

/// A forwarded "line" longer than this is cut and forwarded in pieces (the capture keeps it whole).
const MAX_FORWARDED_LINE: usize = 64 * 1024;

/// What has been read from a child's stderr. Cloneable handle; the reader task fills it.
#[derive(Clone)]
pub struct StderrCapture {
    inner: Arc<Mutex<State>>,
}

struct State {
    tail: VecDeque<u8>,
    tail_cap: usize,
    full: ChunkBuf,
    finished: bool,
}

impl std::fmt::Debug for StderrCapture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("StderrCapture")
            .field("tail_len", &s.tail.len())
            .field("finished", &s.finished)
            .finish_non_exhaustive()
    }
}

impl StderrCapture {
    pub(crate) fn new(tail_cap: usize, full_cap: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(State {
                tail: VecDeque::new(),
                tail_cap,
                full: ChunkBuf::new(full_cap),
                finished: false,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; recover the data if something ever did.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The last bytes written (at most the spec's `stderr_tail`).
    pub fn tail(&self) -> Bytes {
        let s = self.lock();
        let (a, b) = s.tail.as_slices();
        let mut out = BytesMut::with_capacity(a.len() + b.len());
        out.extend_from_slice(a);
        out.extend_from_slice(b);
        out.freeze()
    }

    /// [`tail`](Self::tail) as text, invalid UTF-8 replaced, trimmed: ready for an error message.
    pub fn tail_lossy(&self) -> String {
        String::from_utf8_lossy(&self.tail()).trim().to_owned()
    }

    /// The complete stderr of the current span (capped; see [`Captured::truncated`]).
    pub fn full(&self) -> Captured {
        self.lock().full.snapshot()
    }

    /// The complete stderr of the current span, and starts a new span (per run on a persistent child).
    pub fn take_full(&self) -> Captured {
        self.lock().full.take()
    }

    /// True once stderr reached EOF (all writers closed) or the reader gave up after the child was
    /// reaped; from then on nothing more arrives.
    pub fn is_finished(&self) -> bool {
        self.lock().finished
    }

    fn record(&self, data: &[u8]) {
        let mut s = self.lock();
        s.full.push_slice(data);
        let cap = s.tail_cap;
        if data.len() >= cap {
            s.tail.clear();
            s.tail.extend(&data[data.len() - cap..]);
        } else {
            s.tail.extend(data);
            let excess = s.tail.len().saturating_sub(cap);
            s.tail.drain(..excess);
        }
    }

    pub(crate) fn mark_finished(&self) {
        self.lock().finished = true;
    }
}

/// Reads `stderr` to EOF into `capture`, forwarding lines to `on_line`. Never fails: a read error
/// ends the capture like EOF does.
pub(crate) async fn drain<R: AsyncRead + Unpin>(
    mut stderr: R,
    capture: StderrCapture,
    on_line: Option<StderrLineFn>,
) {
    let mut buf = vec![0u8; 8 * 1024];
    let mut partial = BytesMut::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let data = &buf[..n];
        capture.record(data);
        if let Some(f) = &on_line {
            partial.extend_from_slice(data);
            while let Some(i) = partial.iter().position(|&b| b == b'\n') {
                let mut line = partial.split_to(i + 1);
                line.truncate(i);
                f(line.freeze());
            }
            while partial.len() > MAX_FORWARDED_LINE {
                f(partial.split_to(MAX_FORWARDED_LINE).freeze());
            }
        }
    }
    if let Some(f) = &on_line
        && !partial.is_empty()
    {
        f(partial.freeze());
    }
    capture.mark_finished();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tail_is_bounded_full_is_complete_and_lines_are_forwarded() {
        let input: Vec<u8> = (0..200)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let capture = StderrCapture::new(16, usize::MAX);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let f: StderrLineFn = Arc::new(move |l: Bytes| sink.lock().unwrap().push(l));
        drain(&input[..], capture.clone(), Some(f)).await;
        assert!(capture.is_finished());
        assert_eq!(&capture.full().bytes[..], &input[..]);
        assert_eq!(&capture.tail()[..], &b"line 198\nline 199\n"[2..]);
        assert_eq!(capture.tail_lossy(), "ne 198\nline 199");
        let lines = lines.lock().unwrap();
        assert_eq!(lines.len(), 200);
        assert_eq!(&lines[199][..], b"line 199");
    }

    #[tokio::test]
    async fn unterminated_last_line_is_forwarded_and_full_cap_truncates() {
        let capture = StderrCapture::new(4, 3);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        let f: StderrLineFn = Arc::new(move |l: Bytes| sink.lock().unwrap().push(l));
        drain(&b"fatal: boom"[..], capture.clone(), Some(f)).await;
        assert_eq!(
            lines.lock().unwrap().as_slice(),
            [Bytes::from_static(b"fatal: boom")]
        );
        let full = capture.take_full();
        assert_eq!(
            (&full.bytes[..], full.total, full.truncated),
            (&b"fat"[..], 11, true)
        );
        assert_eq!(&capture.tail()[..], b"boom");
    }
}
