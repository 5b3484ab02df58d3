//! JSON-lines framing of a child's stdout: [`JsonLines`] (a `Stream` of [`Line`]) over
//! [`JsonLinesCodec`].
//!
//! Why our own decoder instead of `LinesCodec`: `FramedRead` ends the stream after any decoder
//! `Err`, and `LinesCodec` returns `Err` both for an over-long line and for invalid UTF-8. Reading
//! must survive banners, garbage and huge lines while the child keeps writing, so here every one of
//! those is an ITEM and the decoder never returns `Err` (only a failed `read` on the pipe does).
//!
//! Every byte the child writes is accounted for exactly once in the raw capture
//! ([`JsonLines::take_raw`]), in order, at the moment its line is decoded: after a driver has
//! consumed a line, the capture holds everything up to and including that line. Blank lines are
//! not items but are captured.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use futures::Stream;
use tokio::io::AsyncRead;
use tokio_util::codec::{Decoder, FramedRead};

use super::capture::{Captured, ChunkBuf};

/// How many leading bytes of an over-long line [`Line::TooLong`] keeps for diagnostics.
pub const TOO_LONG_PREFIX: usize = 256;

/// One line of a child's stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A line that parsed as JSON. `raw` is the line without its `\n`.
    Json {
        /// The parsed value.
        value: serde_json::Value,
        /// The line's bytes, without the terminating `\n`.
        raw: Bytes,
    },
    /// A line that is not JSON (a banner, a log line, invalid UTF-8): reported, reading goes on.
    Invalid {
        /// The line's bytes, without the terminating `\n`.
        raw: Bytes,
        /// Why it did not parse.
        error: String,
    },
    /// A line longer than the limit: not parsed, not kept in full here (the raw capture has it).
    TooLong {
        /// The line's length in bytes, without the terminating `\n`.
        len: usize,
        /// Its first [`TOO_LONG_PREFIX`] bytes.
        prefix: Bytes,
    },
}

impl Line {
    /// The line's bytes when the item carries them whole (`Json`, `Invalid`).
    pub fn raw(&self) -> Option<&Bytes> {
        match self {
            Line::Json { raw, .. } | Line::Invalid { raw, .. } => Some(raw),
            Line::TooLong { .. } => None,
        }
    }
}

/// A tokio-util [`Decoder`] that splits on `\n` and never fails; see the module docs.
#[derive(Debug)]
pub struct JsonLinesCodec {
    max_len: usize,
    /// How far into the buffer we already looked for `\n` (avoids rescanning a partial line).
    scanned: usize,
    /// Set while skipping the rest of an over-long line.
    discarding: Option<Discard>,
    raw: ChunkBuf,
}

#[derive(Debug)]
struct Discard {
    len: usize,
    /// The line's first bytes, topped up to [`TOO_LONG_PREFIX`] as they arrive (however the pipe
    /// chunks them), never past the line's end.
    prefix: Vec<u8>,
}

impl JsonLinesCodec {
    /// A decoder for lines of at most `max_len` bytes that keeps up to `raw_cap` bytes of raw output.
    pub fn new(max_len: usize, raw_cap: usize) -> Self {
        Self {
            max_len: max_len.max(1),
            scanned: 0,
            discarding: None,
            raw: ChunkBuf::new(raw_cap),
        }
    }

    /// The raw bytes decoded since the last call, and starts a new span.
    pub fn take_raw(&mut self) -> Captured {
        self.raw.take()
    }

    /// The raw bytes decoded so far in this span, without resetting it.
    pub fn raw_snapshot(&self) -> Captured {
        self.raw.snapshot()
    }

    fn finish_line(&mut self, chunk: Bytes) -> Option<Line> {
        self.raw.push(chunk.clone());
        let mut end = chunk.len();
        if chunk.last() == Some(&b'\n') {
            end -= 1;
        }
        let line = chunk.slice(..end);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        Some(match serde_json::from_slice(&line) {
            Ok(value) => Line::Json { value, raw: line },
            Err(e) => Line::Invalid {
                raw: line,
                error: e.to_string(),
            },
        })
    }
}

fn find_newline(hay: &[u8]) -> Option<usize> {
    // A plain scan: swapping in `memchr` made no measurable difference (JSON parsing dominates).
    hay.iter().position(|&b| b == b'\n')
}

impl Decoder for JsonLinesCodec {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        loop {
            if let Some(mut discard) = self.discarding.take() {
                let newline = find_newline(buf);
                let line_end = newline.unwrap_or(buf.len());
                let want = TOO_LONG_PREFIX.saturating_sub(discard.prefix.len()).min(line_end);
                discard.prefix.extend_from_slice(&buf[..want]);
                let Some(i) = newline else {
                    discard.len += buf.len();
                    self.raw.push(buf.split().freeze());
                    self.discarding = Some(discard);
                    return Ok(None);
                };
                self.raw.push(buf.split_to(i + 1).freeze());
                self.scanned = 0;
                return Ok(Some(Line::TooLong {
                    len: discard.len + i,
                    prefix: Bytes::from(discard.prefix),
                }));
            }
            let limit = buf.len().min(self.max_len + 1);
            if let Some(off) = find_newline(&buf[self.scanned.min(limit)..limit]) {
                let at = self.scanned.min(limit) + off;
                let chunk = buf.split_to(at + 1).freeze();
                self.scanned = 0;
                match self.finish_line(chunk) {
                    Some(line) => return Ok(Some(line)),
                    None => continue,
                }
            }
            if buf.len() > self.max_len {
                // The line starts at `buf[0]`: the discarding branch collects its prefix.
                self.discarding = Some(Discard {
                    len: 0,
                    prefix: Vec::with_capacity(TOO_LONG_PREFIX),
                });
                self.scanned = 0;
                continue;
            }
            self.scanned = buf.len();
            return Ok(None);
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        if let Some(Discard { len, prefix }) = self.discarding.take() {
            return Ok(Some(Line::TooLong {
                len,
                prefix: Bytes::from(prefix),
            }));
        }
        if buf.is_empty() {
            return Ok(None);
        }
        self.scanned = 0;
        let chunk = buf.split().freeze();
        Ok(self.finish_line(chunk))
    }
}

/// A child's stdout as a `Stream` of [`Line`]s; ends at EOF. Cancel-safe: dropping a pending
/// `next()` loses nothing.
///
/// Items are `Err` only when reading the pipe itself fails; the stream ends after that.
#[derive(Debug)]
pub struct JsonLines<R> {
    inner: FramedRead<R, JsonLinesCodec>,
}

impl<R: AsyncRead> JsonLines<R> {
    /// Frames `reader` with lines of at most `max_line_len` bytes, keeping up to `raw_cap` raw bytes.
    /// Also used directly on recorded fixtures (any `AsyncRead`, e.g. `&[u8]` or a file).
    pub fn new(reader: R, max_line_len: usize, raw_cap: usize) -> Self {
        Self {
            inner: FramedRead::new(reader, JsonLinesCodec::new(max_line_len, raw_cap)),
        }
    }

    /// The complete stdout decoded since the last call (every line yielded so far, plus blank
    /// lines), and starts a new span: call it at the end of each run for `Result.Raw`.
    pub fn take_raw(&mut self) -> Captured {
        self.inner.decoder_mut().take_raw()
    }

    /// Like [`take_raw`](Self::take_raw) without starting a new span.
    pub fn raw_snapshot(&self) -> Captured {
        self.inner.decoder().raw_snapshot()
    }
}

impl<R: AsyncRead + Unpin> Stream for JsonLines<R> {
    type Item = io::Result<Line>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        Pin::new(&mut self.inner).poll_next(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;

    async fn collect(input: &[u8], max: usize) -> (Vec<Line>, Captured) {
        let mut lines = JsonLines::new(input, max, usize::MAX);
        let mut out = Vec::new();
        while let Some(item) = lines.next().await {
            out.push(item.unwrap());
        }
        (out, lines.take_raw())
    }

    fn kinds(lines: &[Line]) -> Vec<&'static str> {
        lines
            .iter()
            .map(|l| match l {
                Line::Json { .. } => "json",
                Line::Invalid { .. } => "invalid",
                Line::TooLong { .. } => "too_long",
            })
            .collect()
    }

    /// An over-long line's prefix is its own first bytes whatever the chunking: not the bytes of the
    /// chunk that crossed the limit (fuzz::codec found `prefix: b"\0\0"` for a 226-byte line fed 2
    /// bytes at a time), and never the next line's.
    #[test]
    fn an_over_long_lines_prefix_is_its_first_bytes_however_it_is_chunked() {
        let long: Vec<u8> = (0..300u32).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = long.clone();
        input.extend_from_slice(b"\n{}\n");
        for chunk in [1, 2, 7, 512] {
            let mut codec = JsonLinesCodec::new(4, usize::MAX);
            let mut buf = BytesMut::new();
            let mut out = Vec::new();
            for c in input.chunks(chunk) {
                buf.extend_from_slice(c);
                while let Some(line) = codec.decode(&mut buf).unwrap() {
                    out.push(line);
                }
            }
            let want = Line::TooLong {
                len: 300,
                prefix: Bytes::copy_from_slice(&long[..TOO_LONG_PREFIX]),
            };
            assert_eq!(out[0], want, "chunks of {chunk}");
            assert_eq!(kinds(&out), ["too_long", "json"], "chunks of {chunk}");
        }
        let mut codec = JsonLinesCodec::new(4, usize::MAX);
        let mut buf = BytesMut::from(&b"abcdefg\n{\"next\":1}\n"[..]);
        let first = codec.decode(&mut buf).unwrap().unwrap();
        assert_eq!(
            first,
            Line::TooLong {
                len: 7,
                prefix: Bytes::from_static(b"abcdefg")
            }
        );
    }

    #[tokio::test]
    async fn mixed_input_is_all_items_and_raw_is_exact() {
        let input = b"banner v1\n{\"a\":1}\r\n\n  \n\xff\xfe{}\n{\"long\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n[2]\n{\"tail\":true}";
        let (lines, raw) = collect(input, 16).await;
        assert_eq!(
            kinds(&lines),
            ["invalid", "json", "invalid", "too_long", "json", "json"]
        );
        assert_eq!(&raw.bytes[..], &input[..]);
        assert!(!raw.truncated);
        match &lines[1] {
            Line::Json { value, raw } => {
                assert_eq!(value["a"], 1);
                assert_eq!(&raw[..], b"{\"a\":1}\r");
            }
            other => panic!("{other:?}"),
        }
        match &lines[3] {
            Line::TooLong { len, prefix } => {
                assert_eq!(*len, 35);
                assert!(prefix.starts_with(b"{\"long\""));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            lines[5],
            Line::Json {
                value: serde_json::json!({"tail": true}),
                raw: Bytes::from_static(b"{\"tail\":true}")
            }
        );
    }

    #[tokio::test]
    async fn line_of_exactly_max_len_is_parsed() {
        let (lines, _) = collect(b"{\"k\":\"abcd\"}\n", 12).await;
        assert_eq!(kinds(&lines), ["json"]);
        let (lines, _) = collect(b"{\"k\":\"abcde\"}\n", 12).await;
        assert_eq!(kinds(&lines), ["too_long"]);
    }

    #[tokio::test]
    async fn unterminated_overlong_tail_is_reported() {
        let (lines, raw) = collect(b"{}\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 8).await;
        assert_eq!(kinds(&lines), ["json", "too_long"]);
        assert!(matches!(lines[1], Line::TooLong { len: 37, .. }));
        assert_eq!(raw.total, 40);
    }

    #[test]
    fn decoder_handles_bytes_arriving_one_at_a_time() {
        let input = b"{\"x\":1}\nnot json\n{\"y\":\"zzzzzzzzzzzzzzzzzzzzzzzzz\"}\n{\"z\":3}\n";
        let mut codec = JsonLinesCodec::new(12, usize::MAX);
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for b in input {
            buf.extend_from_slice(&[*b]);
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                got.push(line);
            }
        }
        while let Some(line) = codec.decode_eof(&mut buf).unwrap() {
            got.push(line);
        }
        assert_eq!(kinds(&got), ["json", "invalid", "too_long", "json"]);
        assert_eq!(&codec.take_raw().bytes[..], &input[..]);
    }

    #[tokio::test]
    async fn raw_spans_reset_on_take() {
        let mut lines = JsonLines::new(&b"{\"a\":1}\n{\"b\":2}\n"[..], 100, 100);
        lines.next().await.unwrap().unwrap();
        assert_eq!(&lines.take_raw().bytes[..], b"{\"a\":1}\n");
        lines.next().await.unwrap().unwrap();
        assert_eq!(&lines.raw_snapshot().bytes[..], b"{\"b\":2}\n");
        assert!(lines.next().await.is_none());
    }
}
