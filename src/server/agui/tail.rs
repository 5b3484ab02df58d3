//! An AG-UI run's reader of its execution's exposed log: the same records REST SSE sends (exposed and
//! redacted once by the run's pump, in the run registry's in-memory mirror), decoded back into typed
//! events for the [`Translator`](crate::agui::Translator). No channel and no copy: the reader keeps a
//! position in the log, so a slow AG-UI client lags behind the run without holding events of its
//! own, and a parked AG-UI run leaves only its position for the run that resumes it.
//!
//! Notice items (a `store_error` placed before the terminal) are not run events and are skipped. A record
//! that does not decode under the agent's exposure policy is decoded under the default policy (which
//! keeps only the identity of a result), so the terminal always reaches the client.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::watch;

use crate::recorder::ExposurePolicy;
use crate::runtime::Event;
use crate::server::runs::{LogItem, RunEntry};

/// A position in one run's exposed log.
pub(super) struct LogTail {
    entry: Arc<RunEntry>,
    progress: watch::Receiver<(usize, bool)>,
    /// Log items taken from the log.
    index: usize,
    /// Items taken but not yet decoded.
    pending: VecDeque<Arc<LogItem>>,
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
    /// Reads `entry`'s log from item `index` on (0: from the start).
    pub(super) fn new(entry: Arc<RunEntry>, index: usize) -> Self {
        let progress = entry.watch();
        LogTail {
            entry,
            progress,
            index,
            pending: VecDeque::new(),
        }
    }

    /// The position after everything handed out (where a parked run resumes); only meaningful once
    /// [`LogTail::try_next`] returned `None`.
    pub(super) fn index(&self) -> usize {
        self.index - self.pending.len()
    }

    /// The next event already in the log, without waiting.
    pub(super) fn try_next(&mut self) -> Option<Event> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                match decode(&item) {
                    Some(ev) => return Some(ev),
                    None => continue,
                }
            }
            let len = self.progress.borrow_and_update().0;
            if len <= self.index {
                return None;
            }
            let items = self.entry.items_from(self.index, 0);
            self.index += items.len();
            self.pending.extend(items);
        }
    }

    /// The next event, waiting for it; `None` once the run's log is complete and read.
    pub(super) async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(ev) = self.try_next() {
                return Some(ev);
            }
            let (len, finished) = *self.progress.borrow_and_update();
            if len > self.index {
                continue;
            }
            if finished {
                return None;
            }
            if self.progress.changed().await.is_err() {
                return None;
            }
        }
    }
}
