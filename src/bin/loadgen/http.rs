//! A minimal HTTP/1.1 client over `tokio::net::TcpStream`: one-shot JSON requests and an incremental SSE
//! reader (chunked transfer decoding, LF-framed events). Written by hand rather than with a client crate so
//! that ten thousand idle subscribers cost the load generator a socket and a few small buffers each, and so
//! the receipt time of every frame is taken right after the `read` that delivered its bytes.

use std::net::SocketAddr;

use agent_adaptor::testkit::fake_cursor::stream::now_nanos;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::LoadError;

/// Sends one request (`Connection: close`) and returns the status and the (de-chunked) body.
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> Result<(u16, String), LoadError> {
    let mut stream = TcpStream::connect(addr).await?;
    let body = body.unwrap_or("");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await?;
    let end = find(&raw, b"\r\n\r\n").ok_or_else(|| LoadError::Http("no header end".into()))?;
    let (status, chunked) = parse_head(&raw[..end])?;
    let rest = &raw[end + 4..];
    let body = if chunked {
        let mut d = Dechunker::default();
        let mut out = Vec::new();
        let mut input = rest.to_vec();
        d.feed(&mut input, &mut out)?;
        out
    } else {
        rest.to_vec()
    };
    Ok((status, String::from_utf8_lossy(&body).into_owned()))
}

/// POSTs JSON and returns the parsed body when the status is `expect`.
pub async fn post_json(
    addr: SocketAddr,
    path: &str,
    body: &serde_json::Value,
    expect: u16,
) -> Result<serde_json::Value, LoadError> {
    let (status, text) = request(addr, "POST", path, Some(&body.to_string())).await?;
    if status != expect {
        return Err(LoadError::Status {
            path: path.to_owned(),
            status,
            body: text,
        });
    }
    serde_json::from_str(&text).map_err(|e| LoadError::Http(format!("{path}: bad JSON: {e}")))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// The status and whether the body is chunked.
fn parse_head(head: &[u8]) -> Result<(u16, bool), LoadError> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| LoadError::Http(format!("bad status line in {text:?}")))?;
    let chunked = lines.any(|l| {
        l.split_once(':').is_some_and(|(k, v)| {
            k.trim().eq_ignore_ascii_case("transfer-encoding") && v.trim().eq_ignore_ascii_case("chunked")
        })
    });
    Ok((status, chunked))
}

/// Incremental `Transfer-Encoding: chunked` decoder.
#[derive(Debug, Default)]
struct Dechunker {
    /// Bytes left in the current chunk.
    left: usize,
    /// The CRLF after a chunk's data is still to come.
    need_crlf: bool,
    /// The last (empty) chunk was seen.
    done: bool,
}

impl Dechunker {
    /// Moves the decoded bytes of `input` to `out`, keeping an incomplete tail in `input`.
    fn feed(&mut self, input: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), LoadError> {
        let mut pos = 0;
        while !self.done && pos < input.len() {
            if self.left > 0 {
                let n = self.left.min(input.len() - pos);
                out.extend_from_slice(&input[pos..pos + n]);
                pos += n;
                self.left -= n;
                self.need_crlf = self.left == 0;
            } else if self.need_crlf {
                if input.len() - pos < 2 {
                    break;
                }
                if &input[pos..pos + 2] != b"\r\n" {
                    return Err(LoadError::Http("chunk not followed by CRLF".into()));
                }
                pos += 2;
                self.need_crlf = false;
            } else {
                let Some(eol) = find(&input[pos..], b"\r\n") else {
                    break;
                };
                let line = String::from_utf8_lossy(&input[pos..pos + eol]);
                let size = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| LoadError::Http(format!("bad chunk size {line:?}")))?;
                pos += eol + 2;
                if size == 0 {
                    self.done = true;
                } else {
                    self.left = size;
                }
            }
        }
        input.drain(..pos);
        Ok(())
    }
}

/// One SSE event.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// `id:` as a number (the run's sequence; of a Standby's `<execution>:<seq>`, the sequence), if present
    /// and numeric.
    pub id: Option<u64>,
    /// `event:`.
    pub event: String,
    /// `data:` lines joined by `\n`.
    pub data: String,
    /// `CLOCK_REALTIME` nanoseconds right after the read that completed this frame.
    pub received: u128,
}

/// An open SSE response, read frame by frame.
#[derive(Debug)]
pub struct Sse {
    stream: TcpStream,
    raw: Vec<u8>,
    text: Vec<u8>,
    chunked: Option<Dechunker>,
    eof: bool,
    last_read: u128,
}

impl Sse {
    /// `GET path` with `Accept: text/event-stream`; fails unless the status is 200.
    pub async fn connect(addr: SocketAddr, path: &str) -> Result<Sse, LoadError> {
        Sse::open(addr, "GET", path, None).await
    }

    /// `POST path` with a JSON body, answered by an event stream (AG-UI); fails unless the status is 200.
    pub async fn post(addr: SocketAddr, path: &str, body: &serde_json::Value) -> Result<Sse, LoadError> {
        Sse::open(addr, "POST", path, Some(&body.to_string())).await
    }

    async fn open(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> Result<Sse, LoadError> {
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let body = body.unwrap_or("");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nCache-Control: no-cache\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).await?;
        let mut raw = Vec::with_capacity(1024);
        let end = loop {
            if let Some(end) = find(&raw, b"\r\n\r\n") {
                break end;
            }
            if stream.read_buf(&mut raw).await? == 0 {
                return Err(LoadError::Http(format!("{path}: closed before the headers")));
            }
        };
        let (status, chunked) = parse_head(&raw[..end])?;
        if status != 200 {
            return Err(LoadError::Status {
                path: path.to_owned(),
                status,
                body: String::from_utf8_lossy(&raw[end + 4..]).into_owned(),
            });
        }
        raw.drain(..end + 4);
        let mut sse = Sse {
            stream,
            raw,
            text: Vec::new(),
            chunked: chunked.then(Dechunker::default),
            eof: false,
            last_read: now_nanos(),
        };
        sse.decode()?;
        Ok(sse)
    }

    fn decode(&mut self) -> Result<(), LoadError> {
        match &mut self.chunked {
            Some(d) => {
                d.feed(&mut self.raw, &mut self.text)?;
                if d.done {
                    self.eof = true;
                }
            }
            None => self.text.append(&mut self.raw),
        }
        Ok(())
    }

    /// The next non-comment frame, or `None` at the end of the stream.
    pub async fn next(&mut self) -> Result<Option<Frame>, LoadError> {
        loop {
            while let Some(end) = find(&self.text, b"\n\n") {
                let raw: Vec<u8> = self.text.drain(..end + 2).collect();
                if let Some(f) = parse_frame(&raw[..end], self.last_read) {
                    return Ok(Some(f));
                }
            }
            if self.eof {
                return Ok(None);
            }
            if self.raw.capacity() - self.raw.len() < 512 {
                self.raw.reserve(4096);
            }
            let n = self.stream.read_buf(&mut self.raw).await?;
            self.last_read = now_nanos();
            if n == 0 {
                self.eof = true;
            }
            self.decode()?;
        }
    }

    /// Releases buffer capacity an idle subscriber does not need.
    pub fn shrink(&mut self) {
        self.raw.shrink_to(256);
        self.text.shrink_to(256);
    }
}

/// Parses one frame; `None` for a comment-only frame.
fn parse_frame(raw: &[u8], received: u128) -> Option<Frame> {
    let text = String::from_utf8_lossy(raw);
    let mut f = Frame {
        received,
        ..Frame::default()
    };
    let mut any = false;
    let mut data: Vec<&str> = Vec::new();
    for line in text.split('\n') {
        if line.starts_with(':') {
            continue;
        }
        any = true;
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match name {
            "id" => f.id = value.rsplit(':').next().and_then(|s| s.parse().ok()),
            "event" => f.event = value.to_owned(),
            "data" => data.push(value),
            _ => {}
        }
    }
    f.data = data.join("\n");
    any.then_some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_decode_across_arbitrary_splits() {
        let wire = b"5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n";
        for split in 0..wire.len() {
            let mut d = Dechunker::default();
            let mut out = Vec::new();
            let mut input = wire[..split].to_vec();
            d.feed(&mut input, &mut out).unwrap();
            input.extend_from_slice(&wire[split..]);
            d.feed(&mut input, &mut out).unwrap();
            assert_eq!(out, b"hello, world", "split at {split}");
            assert!(d.done);
        }
        let mut bad = b"zz\r\n".to_vec();
        assert!(Dechunker::default().feed(&mut bad, &mut Vec::new()).is_err());
    }

    #[test]
    fn frames_parse_and_comments_are_skipped() {
        let f = parse_frame(b"id: 7\nevent: text_delta\ndata: {\"a\":1}", 5).unwrap();
        assert_eq!(
            (f.id, f.event.as_str(), f.data.as_str(), f.received),
            (Some(7), "text_delta", "{\"a\":1}", 5)
        );
        let standby = parse_frame(b"id: run-0193-ab:12\nevent: done\ndata: {}", 0).unwrap();
        assert_eq!(standby.id, Some(12), "a Standby cursor's sequence");
        assert!(parse_frame(b":keep-alive", 0).is_none());
    }
}
