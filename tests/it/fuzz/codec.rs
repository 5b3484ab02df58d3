//! Fuzz target for the JSON-lines codec of `driver::process` (every CLI's stdout goes through it):
//! lines of every kind (JSON from the fixtures, not-JSON noise, invalid UTF-8, whitespace, CRLF, lines
//! longer than the limit) joined and cut into arbitrary chunks, with a small line limit so the
//! over-long path is hit often. The decoder must never fail or panic, and its items must equal a
//! simple model: one item per line that is not blank, `TooLong` (length and the line's first
//! `TOO_LONG_PREFIX` bytes) beyond the limit, else `Json` when the line parses, else `Invalid`; the raw
//! capture is the input, byte for byte.

use agent_adaptor::driver::process::{JsonLinesCodec, Line, TOO_LONG_PREFIX};
use bytes::BytesMut;
use proptest::prelude::*;
use tokio_util::codec::Decoder;

use super::{fixture_files, fixtures, fuzz};

/// What the decoder should yield for `input` with lines of at most `max_len` bytes.
fn model(input: &[u8], max_len: usize) -> Vec<Line> {
    let mut out = Vec::new();
    let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    if input.last() == Some(&b'\n') || input.is_empty() {
        pieces.pop();
    }
    for line in pieces {
        if line.len() > max_len {
            out.push(Line::TooLong {
                len: line.len(),
                prefix: bytes::Bytes::copy_from_slice(&line[..TOO_LONG_PREFIX.min(line.len())]),
            });
        } else if line.iter().all(u8::is_ascii_whitespace) {
        } else {
            let raw = bytes::Bytes::copy_from_slice(line);
            out.push(match serde_json::from_slice(line) {
                Ok(value) => Line::Json { value, raw },
                Err(e) => Line::Invalid {
                    raw,
                    error: e.to_string(),
                },
            });
        }
    }
    out
}

/// Decodes `chunks` as they would arrive from a pipe, then the end of the stream.
fn decode(chunks: &[Vec<u8>], max_len: usize) -> Result<(Vec<Line>, Vec<u8>), std::io::Error> {
    let mut codec = JsonLinesCodec::new(max_len, usize::MAX);
    let mut buf = BytesMut::new();
    let mut out = Vec::new();
    for c in chunks {
        buf.extend_from_slice(c);
        while let Some(line) = codec.decode(&mut buf)? {
            out.push(line);
        }
    }
    while let Some(line) = codec.decode_eof(&mut buf)? {
        out.push(line);
    }
    Ok((out, codec.take_raw().bytes.to_vec()))
}

/// One line of input.
fn line(fixture_lines: Vec<String>) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        4 => (0..fixture_lines.len()).prop_map(move |i| fixture_lines[i].clone().into_bytes()),
        2 => any::<String>().prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>(), 0..64),
        1 => prop::sample::select(vec![&b""[..], b" ", b"\t\r", b"\r", b"{}\r", b"[1,2]", b"\"s\"", b"null"])
            .prop_map(<[u8]>::to_vec),
        1 => (any::<u8>(), 0..700usize).prop_map(|(b, n)| vec![b; n]),
    ]
    .boxed()
}

#[test]
fn fuzz_json_lines_codec_matches_its_model_under_any_chunking() {
    let files = fixture_files(&fixtures("claude"), ".jsonl", &[".stdin.jsonl"]);
    // Short lines, so the limits in play (up to 600 bytes) cut some of them.
    let lines: Vec<String> = files.into_iter().flatten().filter(|l| l.len() < 2000).collect();
    let strategy = (
        prop::collection::vec((line(lines), any::<bool>()), 0..12),
        any::<bool>(),
        1..600usize,
        prop::collection::vec(1..300usize, 1..24),
    );
    fuzz("json lines", strategy, |(lines, trailing, max_len, cuts)| {
        let mut input = Vec::new();
        for (i, (l, crlf)) in lines.iter().enumerate() {
            input.extend_from_slice(l);
            if i + 1 < lines.len() || trailing {
                input.extend_from_slice(if *crlf { b"\r\n" } else { b"\n" });
            }
        }
        let mut chunks = Vec::new();
        let mut rest = &input[..];
        for n in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (a, b) = rest.split_at((*n).min(rest.len()));
            chunks.push(a.to_vec());
            rest = b;
        }
        let (got, raw) =
            decode(&chunks, max_len).map_err(|e| TestCaseError::fail(format!("decoder failed: {e}")))?;
        prop_assert_eq!(raw, input.clone(), "the raw capture is the input");
        prop_assert_eq!(
            got,
            model(&input, max_len),
            "input {:?}",
            String::from_utf8_lossy(&input)
        );
        Ok(())
    });
}
