//! An AG-UI run's reader of its execution's exposed log: the same records REST SSE sends (exposed and
//! redacted once by the run's pump), through the same [`LogReader`] (the live window, then the durable
//! log), decoded back into typed events for the [`Translator`](agent_adaptor_core::agui::Translator). No channel and
//! no copy: the reader keeps a position in the log, so a slow AG-UI client lags behind the run without
//! holding events of its own (and catches up from the store), and a parked AG-UI run leaves only its
//! position for the run that resumes it.
//!
//! Notice items (a `store_error` placed before the terminal, `lag`, `gap`) are not run events and are
//! skipped. A record
//! that does not decode under the agent's exposure policy is decoded under the default policy (which
//! keeps only the identity of a result), so the terminal always reaches the client.

use std::sync::Arc;

use serde_json::Value;

use crate::reader::LogReader;
use crate::recorder::ExposurePolicy;
use crate::runs::{LogItem, RunEntry};
use crate::runtime::Event;

/// A position in one run's exposed log.
pub(super) struct LogTail {
    reader: LogReader,
}

/// The typed event of a log item, if it is one.
fn decode(item: &LogItem) -> Option<Event> {
    if item.notice {
        return None;
    }
    let mut json: Value = serde_json::from_str(&item.data).ok()?;
    match serde_json::from_value::<Event>(json.clone()) {
        Ok(ev) => Some(ev),
        Err(first) => {
            ExposurePolicy::default().apply(&mut json);
            serde_json::from_value(json)
                .inspect_err(|_| {
                    tracing::warn!(seq = item.seq, kind = %item.kind, error = %first, "an exposed record does not decode; AG-UI skips it");
                })
                .ok()
        }
    }
}

impl LogTail {
    /// Reads `entry`'s log after sequence `after` (0: from the start).
    pub(super) fn new(entry: Arc<RunEntry>, after: u64) -> Self {
        LogTail {
            reader: entry.reader(after),
        }
    }

    /// The last sequence handed out (where a parked run resumes).
    pub(super) fn position(&self) -> u64 {
        self.reader.position()
    }

    /// The next event already in memory, without waiting.
    pub(super) fn try_next(&mut self) -> Option<Event> {
        while let Some(item) = self.reader.try_next() {
            if let Some(ev) = decode(&item) {
                return Some(ev);
            }
        }
        None
    }

    /// The next event, waiting for it; `None` once the run's log is complete and read.
    pub(super) async fn next(&mut self) -> Option<Event> {
        while let Some(item) = self.reader.next().await {
            if let Some(ev) = decode(&item) {
                return Some(ev);
            }
        }
        None
    }
}
