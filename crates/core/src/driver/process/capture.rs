//! Complete-output capture with a cap: [`Captured`] is what a driver puts in `Result.Raw`.
//!
//! [`ChunkBuf`] keeps the chunks it is given (refcounted [`Bytes`], so capturing a line that a
//! [`Line`](super::Line) also carries costs no copy) up to a byte cap; past the cap it keeps the
//! prefix, counts the rest, and says so.

use bytes::{Bytes, BytesMut};

/// Bytes a child wrote, as kept by the capture, and whether the cap cut them short.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    /// The bytes kept, exactly as written (the first `cap` bytes when truncated).
    pub bytes: Bytes,
    /// Total bytes the child wrote to this stream over the captured span, kept or not.
    pub total: u64,
    /// True when `total` exceeded the cap and the tail was not kept.
    pub truncated: bool,
}

/// Appends chunks up to a cap; see the module docs.
#[derive(Debug)]
pub(crate) struct ChunkBuf {
    chunks: Vec<Bytes>,
    kept: usize,
    total: u64,
    cap: usize,
}

impl ChunkBuf {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            chunks: Vec::new(),
            kept: 0,
            total: 0,
            cap,
        }
    }

    /// Records `chunk`, keeping what still fits under the cap.
    pub(crate) fn push(&mut self, chunk: Bytes) {
        self.total += chunk.len() as u64;
        let room = self.cap - self.kept;
        if room == 0 || chunk.is_empty() {
            return;
        }
        let chunk = if chunk.len() > room {
            chunk.slice(..room)
        } else {
            chunk
        };
        self.kept += chunk.len();
        self.chunks.push(chunk);
    }

    /// Copies a borrowed slice in (for callers that do not own a `Bytes`).
    pub(crate) fn push_slice(&mut self, data: &[u8]) {
        let room = self.cap - self.kept;
        let keep = data.len().min(room);
        if keep > 0 {
            self.chunks.push(Bytes::copy_from_slice(&data[..keep]));
            self.kept += keep;
        }
        self.total += data.len() as u64;
    }

    /// Everything captured so far, leaving the capture as it is.
    pub(crate) fn snapshot(&self) -> Captured {
        Captured {
            bytes: concat(&self.chunks, self.kept),
            total: self.total,
            truncated: self.is_truncated(),
        }
    }

    /// Everything captured so far, and starts a fresh span (the cap applies per span).
    pub(crate) fn take(&mut self) -> Captured {
        let out = self.snapshot();
        self.chunks.clear();
        self.kept = 0;
        self.total = 0;
        out
    }

    fn is_truncated(&self) -> bool {
        self.total > self.kept as u64
    }
}

fn concat(chunks: &[Bytes], len: usize) -> Bytes {
    match chunks {
        [] => Bytes::new(),
        [one] => one.clone(),
        many => {
            let mut out = BytesMut::with_capacity(len);
            for c in many {
                out.extend_from_slice(c);
            }
            out.freeze()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_prefix_up_to_cap_and_reports_truncation() {
        let mut buf = ChunkBuf::new(5);
        buf.push(Bytes::from_static(b"abc"));
        buf.push_slice(b"defg");
        buf.push(Bytes::from_static(b"h"));
        let got = buf.take();
        assert_eq!(got.bytes, Bytes::from_static(b"abcde"));
        assert_eq!(got.total, 8);
        assert!(got.truncated);
        buf.push(Bytes::from_static(b"xy"));
        let got = buf.snapshot();
        assert_eq!((&got.bytes[..], got.total, got.truncated), (&b"xy"[..], 2, false));
    }

    #[test]
    fn zero_cap_keeps_nothing() {
        let mut buf = ChunkBuf::new(0);
        buf.push(Bytes::from_static(b"abc"));
        let got = buf.take();
        assert!(got.bytes.is_empty() && got.truncated && got.total == 3);
    }
}
