//! A run's live log: the exposed, redacted records of its events as subscribers read them, numbered by
//! the run's sequence, in a bounded in-memory window over the durable log.
//!
//! The run's pump appends each batch here before the writer commits it ([`super::record`]); the writer
//! reports each commit ([`RunLog::committed`]) and the window then drops its oldest committed items
//! beyond [`LIVE_WINDOW`]. Uncommitted items are never dropped (at most `record_backlog` of them wait
//! for the store), so the window plus the durable log always hold every event of the run, and memory
//! per run is bounded by the window and the backlog, never by the run's length or by its readers.
//! A reader behind the window ([`super::reader::LogReader`]) reads the trimmed part from the store.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock};

use serde_json::json;
use tokio::sync::watch;

use crate::store::{NewEvent, StoreError};

/// Committed items a run's window keeps in memory (besides those still waiting for the store).
pub const LIVE_WINDOW: usize = 1024;

/// One recorded event as subscribers see it.
#[derive(Debug)]
pub struct LogItem {
    /// The run's sequence (the SSE `id:`).
    pub seq: u64,
    /// Payload type (the SSE `event:`).
    pub kind: String,
    /// The exposed, redacted event JSON, serialized once.
    pub data: String,
    /// A notice about the run rather than one of its events (sent without an `id:`).
    pub notice: bool,
}

impl LogItem {
    /// The item of a recorded event.
    pub fn of(record: &NewEvent) -> LogItem {
        LogItem {
            seq: record.seq,
            kind: record.kind.clone(),
            data: record.event.to_string(),
            notice: false,
        }
    }

    /// A notice (no `id:`) of kind `kind` with `data`, placed at `seq`.
    pub fn notice(seq: u64, kind: &str, data: serde_json::Value) -> LogItem {
        LogItem {
            seq,
            kind: kind.into(),
            data: data.to_string(),
            notice: true,
        }
    }

    /// The `error` notice (code `store_error`, as the durable replay sends it) placed before the event
    /// `seq` when the run's events could not all be recorded.
    /// The store's text goes to the log under an error id; the notice names the id.
    pub fn store_error(seq: u64, err: &StoreError) -> LogItem {
        let id = super::error::log_internal_error("the run's events could not all be recorded", err);
        LogItem::notice(
            seq,
            "error",
            json!({
                "code": "store_error",
                "message": format!("the run's events could not all be recorded; see the service log (error id {id})"),
            }),
        )
    }
}

/// The items in memory and what was trimmed before them.
#[derive(Default)]
struct Window {
    items: VecDeque<Arc<LogItem>>,
    /// The sequence of the last item dropped from the front (0: none).
    trimmed: u64,
    /// The highest sequence the store holds (every item up to it is durable).
    committed: u64,
}

/// What a reader finds in the window after its cursor.
pub enum Slice {
    /// The items after the cursor (possibly none yet).
    Items(Vec<Arc<LogItem>>),
    /// The cursor is before the window: the items up to and including `trimmed` are only in the
    /// store.
    Behind {
        /// The sequence of the last item no longer in memory.
        trimmed: u64,
    },
}

/// A run's live log (see the module docs).
pub struct RunLog {
    window: RwLock<Window>,
    /// `(items ever appended, finished)`.
    progress: watch::Sender<(u64, bool)>,
    keep: usize,
}

impl std::fmt::Debug for RunLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLog").finish_non_exhaustive()
    }
}

impl Default for RunLog {
    fn default() -> Self {
        RunLog::new(LIVE_WINDOW)
    }
}

impl RunLog {
    /// An empty log keeping `keep` committed items in memory (at least one).
    pub fn new(keep: usize) -> Self {
        RunLog {
            window: RwLock::default(),
            progress: watch::Sender::new((0, false)),
            keep: keep.max(1),
        }
    }

    /// Subscribes to `(items ever appended, finished)`.
    pub fn watch(&self) -> watch::Receiver<(u64, bool)> {
        self.progress.subscribe()
    }

    /// True once the run's terminal was published (or its pump ended).
    pub fn is_finished(&self) -> bool {
        self.progress.borrow().1
    }

    /// Appends items (in sequence order) and wakes the readers; `terminal` marks the log complete.
    pub fn publish(&self, items: Vec<Arc<LogItem>>, terminal: bool) {
        if items.is_empty() && !terminal {
            return;
        }
        let n = items.len() as u64;
        {
            let mut w = self.window.write().unwrap_or_else(|p| p.into_inner());
            w.items.extend(items);
            self.trim(&mut w);
        }
        self.progress.send_modify(|p| {
            p.0 += n;
            p.1 |= terminal;
        });
    }

    /// Marks the log complete without appending.
    pub fn finish(&self) {
        self.progress.send_modify(|p| p.1 = true);
    }

    /// The store holds every item up to `seq`: the window may drop them beyond its size.
    pub fn committed(&self, seq: u64) {
        let mut w = self.window.write().unwrap_or_else(|p| p.into_inner());
        w.committed = w.committed.max(seq);
        self.trim(&mut w);
    }

    fn trim(&self, w: &mut Window) {
        while w.items.len() > self.keep {
            match w.items.front() {
                Some(first) if !first.notice && first.seq <= w.committed => {
                    w.trimmed = first.seq;
                    w.items.pop_front();
                }
                _ => break,
            }
        }
    }

    /// The items with a sequence above `after` (notices placed at a later sequence included), or
    /// [`Slice::Behind`] when some of them are no longer in memory.
    pub fn after(&self, after: u64) -> Slice {
        let w = self.window.read().unwrap_or_else(|p| p.into_inner());
        if after < w.trimmed {
            return Slice::Behind { trimmed: w.trimmed };
        }
        let start = w.items.partition_point(|i| i.seq <= after);
        Slice::Items(w.items.range(start..).cloned().collect())
    }

    /// The sequence of the last item published (0: none).
    pub fn last_seq(&self) -> u64 {
        let w = self.window.read().unwrap_or_else(|p| p.into_inner());
        w.items.back().map_or(w.trimmed, |i| i.seq)
    }

    /// Items in memory now.
    pub fn in_memory(&self) -> usize {
        self.window.read().unwrap_or_else(|p| p.into_inner()).items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(seq: u64) -> Arc<LogItem> {
        Arc::new(LogItem {
            seq,
            kind: "text_delta".into(),
            data: "{}".into(),
            notice: false,
        })
    }

    fn seqs(slice: Slice) -> Vec<u64> {
        match slice {
            Slice::Items(items) => items.iter().map(|i| i.seq).collect(),
            Slice::Behind { trimmed } => panic!("behind the window (trimmed through {trimmed})"),
        }
    }

    #[test]
    fn the_window_keeps_uncommitted_items_and_trims_committed_ones_beyond_its_size() {
        let log = RunLog::new(3);
        log.publish((1..=10).map(item).collect(), false);
        assert_eq!(log.in_memory(), 10, "nothing committed: nothing dropped");
        log.committed(6);
        assert_eq!(
            log.in_memory(),
            4,
            "items 1-6 committed, the window keeps 3 + uncommitted"
        );
        assert_eq!(seqs(log.after(6)), vec![7, 8, 9, 10]);
        assert!(matches!(log.after(5), Slice::Behind { trimmed: 6 }));
        assert!(matches!(log.after(0), Slice::Behind { trimmed: 6 }));
        log.committed(10);
        assert_eq!(log.in_memory(), 3);
        assert_eq!(seqs(log.after(7)), vec![8, 9, 10]);
        assert_eq!(log.last_seq(), 10);
    }

    #[test]
    fn a_notice_before_the_terminal_is_read_with_it_and_never_trimmed() {
        let log = RunLog::new(1);
        log.publish(vec![item(1), item(2)], false);
        let notice = Arc::new(LogItem::notice(3, "error", json!({"code": "store_error"})));
        log.publish(vec![notice, item(3)], true);
        log.committed(3);
        let after = match log.after(2) {
            Slice::Items(items) => items,
            Slice::Behind { .. } => panic!("the notice stays"),
        };
        assert_eq!(after.len(), 2);
        assert!(after[0].notice && !after[1].notice);
        assert!(log.is_finished());
    }
}
