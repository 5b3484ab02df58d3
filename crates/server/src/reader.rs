//! The one reader of a run's log, by cursor: REST SSE, Standby SSE and the AG-UI translation all read
//! through it, live and replayed alike.
//!
//! A reader holds a position (the last sequence it handed out) and nothing else of its own: it takes
//! the items after that position from the run's in-memory window ([`super::runlog::RunLog`]) while the
//! run is in this process, waits for more while it is live, and reads from the durable log (the
//! recorder, page by page) what the window no longer holds or, for a run no longer (or never) in
//! memory, everything. So a reader that falls behind costs no memory: it lags, is told so with a `lag`
//! notice (no `id:`) each time it falls out of the window after reading from it, catches up from the
//! store and rejoins the window, with no gap and no duplicate. If the store cannot give back what the
//! window dropped, a `gap` notice says which sequences are missing and the reader goes on after them —
//! the only way a reader skips anything.
//!
//! Notices (`error`, `lag`, `gap`) do not move the position. A stored run that crash recovery ended
//! (`interrupted`: its `last_recorded_seq`) and whose log the reader has already read past gets its
//! terminal numbered after the reader's own position, so the stream ends instead of reconnecting
//! forever and never reuses an id (see [`super::recovery`]).

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::watch;

use super::runlog::{LogItem, Slice};
use super::runs::RunEntry;
use crate::recorder::{ExposurePolicy, Recorder};

/// Records read from the store per page.
const PAGE: u32 = 500;

/// Where a reader reads a run from.
pub struct Source {
    /// The run id.
    pub run_id: String,
    /// The run while it is in this process's memory (its window, its progress).
    pub live: Option<Arc<RunEntry>>,
    /// The run's tenant's recorder (the durable log).
    pub recorder: Recorder,
    /// The view the durable records are read under (the agent's exposure: a view only narrows).
    pub view: ExposurePolicy,
    /// For a stored run crash recovery ended: the `last_recorded_seq` after which its terminal sits.
    pub interrupted: Option<u64>,
}

/// A position in one run's log (see the module docs).
pub struct LogReader {
    source: Source,
    progress: Option<watch::Receiver<(u64, bool)>>,
    /// The last sequence handed out.
    last: u64,
    /// Items taken but not handed out yet.
    pending: VecDeque<Arc<LogItem>>,
    /// The reader took items from the live window (falling out of it later is a lag).
    was_live: bool,
    /// Nothing more will come once `pending` is empty.
    complete: bool,
    /// The `done` of the run was handed out.
    saw_done: bool,
}

impl LogReader {
    /// A reader of `source` after sequence `after` (0: from the start).
    pub fn new(source: Source, after: u64) -> Self {
        let progress = source.live.as_ref().map(|e| e.log.watch());
        LogReader {
            source,
            progress,
            last: after,
            pending: VecDeque::new(),
            was_live: false,
            complete: false,
            saw_done: false,
        }
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.source.run_id
    }

    /// The last sequence handed out (the position a later reader resumes after).
    pub fn position(&self) -> u64 {
        self.last
    }

    fn hand_out(&mut self, item: Arc<LogItem>) -> Arc<LogItem> {
        if !item.notice {
            self.last = item.seq;
            self.saw_done |= item.kind == "done";
        }
        item
    }

    /// The next item already in memory, without waiting and without the store.
    pub fn try_next(&mut self) -> Option<Arc<LogItem>> {
        if self.pending.is_empty()
            && let Some(entry) = &self.source.live
            && let Slice::Items(items) = entry.log.after(self.last)
        {
            self.was_live |= !items.is_empty();
            self.pending.extend(items);
        }
        let item = self.pending.pop_front()?;
        Some(self.hand_out(item))
    }

    /// The next item, waiting for it while the run is live; `None` once the log is complete and read.
    pub async fn next(&mut self) -> Option<Arc<LogItem>> {
        loop {
            if let Some(item) = self.pending.pop_front() {
                return Some(self.hand_out(item));
            }
            if self.complete {
                return None;
            }
            match self.source.live.clone() {
                Some(entry) => self.fill_live(&entry).await,
                None => self.fill_stored().await,
            }
        }
    }

    /// Takes what the window has after the position, reads what it dropped from the store, or waits.
    async fn fill_live(&mut self, entry: &RunEntry) {
        let Some(progress) = self.progress.as_mut() else {
            self.complete = true;
            return;
        };
        let finished = progress.borrow_and_update().1;
        match entry.log.after(self.last) {
            Slice::Items(items) if !items.is_empty() => {
                self.was_live = true;
                self.pending.extend(items);
            }
            Slice::Items(_) if finished => self.complete = true,
            Slice::Items(_) => {
                if progress.changed().await.is_err() {
                    self.complete = true;
                }
            }
            Slice::Behind { trimmed } => self.catch_up(trimmed).await,
        }
    }

    /// Reads the items up to `trimmed` that the window dropped, from the store.
    async fn catch_up(&mut self, trimmed: u64) {
        if std::mem::take(&mut self.was_live) {
            self.pending.push_back(Arc::new(LogItem::notice(
                self.last + 1,
                "lag",
                json!({
                    "code": "lagged",
                    "message": "this stream fell behind the run's live window; the events it missed follow from the durable log",
                    "after": self.last,
                    "through": trimmed,
                }),
            )));
        }
        let page = self
            .source
            .recorder
            .run(&self.source.run_id, Some(self.last), PAGE, &self.source.view)
            .await;
        let items = match page {
            Ok(page) if !page.is_empty() => page,
            Ok(_) => return self.gap(trimmed, "the durable log no longer holds them".into()),
            Err(e) => {
                let id = super::error::log_internal_error("a run's durable log could not be read", &e);
                return self.gap(
                    trimmed,
                    format!("the durable log could not be read; see the service log (error id {id})"),
                );
            }
        };
        // Only what the window does not hold: the rest comes from the window (the same records).
        for r in items.into_iter().take_while(|r| r.sequence <= trimmed) {
            self.pending.push_back(Arc::new(LogItem {
                seq: r.sequence,
                kind: r.kind,
                data: r.json.to_string(),
                notice: false,
            }));
        }
        if self.pending.is_empty() {
            // The page starts past the window's trimmed part: those sequences are gone.
            self.gap(trimmed, "the durable log no longer holds them".into());
        }
    }

    /// Skips the sequences up to `through` that cannot be read, with a `gap` notice.
    fn gap(&mut self, through: u64, why: String) {
        self.pending.push_back(Arc::new(LogItem::notice(
            self.last + 1,
            "gap",
            json!({
                "code": "gap",
                "message": format!("events {} to {through} of the run cannot be sent: {why}", self.last + 1),
                "after": self.last,
                "through": through,
            }),
        )));
        self.last = self.last.max(through);
    }

    /// Reads the next page of a run that is not in memory; the last page completes the log.
    async fn fill_stored(&mut self) {
        let page = self
            .source
            .recorder
            .run(&self.source.run_id, Some(self.last), PAGE, &self.source.view)
            .await;
        let page = match page {
            Ok(p) => p,
            Err(e) => {
                let id = super::error::log_internal_error("a run's durable log could not be read", &e);
                let message = format!("the run's log could not be read; see the service log (error id {id})");
                self.pending.push_back(Arc::new(LogItem::notice(
                    self.last + 1,
                    "error",
                    json!({"code": "store_error", "message": message}),
                )));
                self.complete = true;
                return;
            }
        };
        let short = page.len() < PAGE as usize;
        for r in page {
            self.pending.push_back(Arc::new(LogItem {
                seq: r.sequence,
                kind: r.kind,
                data: r.json.to_string(),
                notice: false,
            }));
        }
        if !short {
            return;
        }
        self.complete = true;
        let ended = self.saw_done || self.pending.back().is_some_and(|i| i.kind == "done");
        if let Some(recorded) = self.source.interrupted.filter(|_| !ended) {
            self.interrupted_terminal(recorded).await;
        }
    }

    /// The terminal crash recovery appended after `recorded`, numbered after the reader's position
    /// (it saw events live that the crash lost).
    async fn interrupted_terminal(&mut self, recorded: u64) {
        let Ok(terminal) = self
            .source
            .recorder
            .run(&self.source.run_id, Some(recorded), 2, &self.source.view)
            .await
        else {
            return;
        };
        let after = self.pending.back().map_or(self.last, |i| i.seq);
        for (seq, r) in (after + 1..).zip(terminal) {
            self.pending.push_back(Arc::new(LogItem {
                seq,
                kind: r.kind,
                data: r.json.to_string(),
                notice: false,
            }));
        }
    }
}
