//! Per-delta timestamps for attribution, off unless `AGENT_ADAPTOR_CLAUDE_TIMING` names a file.
//!
//! When on, every text delta the driver reads from a Claude Code process appends one line to that file:
//! `<read> <parsed> <emitted> <text as JSON>` — `CLOCK_REALTIME` nanoseconds when the line came out of
//! the stdout reader, after it was decoded into a frame, and after its events were handed to the run's
//! sink — so a client that stamps the same deltas (the numbered ones of `mock-model-server --deltas`)
//! can say where the time between the CLI and itself goes (`benches/peers`, BENCHMARKS.md). The file is
//! flushed at every `result`. When off, [`stamp`] is one load of an initialized `OnceLock` and nothing
//! else runs.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::{Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::wire::{Delta, Frame, StreamEvent};

/// The variable naming the timestamp file.
pub const TIMING_VAR: &str = "AGENT_ADAPTOR_CLAUDE_TIMING";

type Sink = Mutex<BufWriter<File>>;

static SINK: OnceLock<Option<Sink>> = OnceLock::new();

fn sink() -> Option<&'static Sink> {
    SINK.get_or_init(|| {
        let path = std::env::var_os(TIMING_VAR).filter(|p| !p.is_empty())?;
        match std::fs::OpenOptions::new().create(true).append(true).open(&path) {
            Ok(f) => Some(Mutex::new(BufWriter::new(f))),
            Err(e) => {
                tracing::warn!(path = %std::path::Path::new(&path).display(), error = %e,
                    "{TIMING_VAR}: cannot open the timestamp file; timing stays off");
                None
            }
        }
    })
    .as_ref()
}

/// `CLOCK_REALTIME` in nanoseconds when timing is on, else `None` (and no clock read).
pub fn stamp() -> Option<u64> {
    sink()?;
    Some(now_ns())
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The text of a `text_delta` stream event.
fn text_delta(frame: &Frame) -> Option<&str> {
    match frame {
        Frame::StreamEvent(s) => match &s.event {
            StreamEvent::ContentBlockDelta {
                delta: Delta::Text(t),
                ..
            } => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The line of one delta (see the module docs), or `None` for a frame that is not a text delta.
fn line(read: u64, parsed: u64, emitted: u64, frame: &Frame) -> Option<String> {
    let text = text_delta(frame)?;
    let text = serde_json::to_string(text).unwrap_or_default();
    Some(format!("{read} {parsed} {emitted} {text}\n"))
}

/// Records `frame` when it is a text delta and timing is on (`read`/`parsed` from [`stamp`]); flushes
/// at a `result`.
pub fn record(read: Option<u64>, parsed: Option<u64>, frame: &Frame) {
    let (Some(read), Some(parsed), Some(sink)) = (read, parsed, sink()) else {
        return;
    };
    let Ok(mut w) = sink.lock() else { return };
    if let Some(l) = line(read, parsed, now_ns(), frame) {
        let _ = w.write_all(l.as_bytes());
    }
    if matches!(frame, Frame::Result(_)) {
        let _ = w.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claude::wire::parse_line;

    #[test]
    fn a_text_delta_becomes_one_line_with_three_stamps_and_other_frames_none() {
        let delta = parse_line(
            br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"d0001 \"q\""}},"session_id":"s","uuid":"u"}"#,
        )
        .unwrap();
        assert_eq!(
            line(1, 2, 3, &delta).as_deref(),
            Some("1 2 3 \"d0001 \\\"q\\\"\"\n")
        );
        let stop = parse_line(
            br#"{"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":"s","uuid":"u"}"#,
        )
        .unwrap();
        assert_eq!(line(1, 2, 3, &stop), None);
        assert!(now_ns() > 1_600_000_000_000_000_000, "a realtime clock in ns");
    }
}
