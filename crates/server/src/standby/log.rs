//! A Standby's log: its executions in order (each a run of the registry, read through the run's own
//! log) and its own reports between them, and the SSE stream over all of them.
//!
//! Every execution keeps its own sequence, exactly like a REST run: the SSE `id:` is the cursor
//! `<execution>:<seq>`, where `<execution>` is the execution's run id (`GET /v1/runs/{run_id}` shows the
//! same run) and `<seq>` its sequence. A Standby report (input cancelled while no execution ran, a
//! `thread.ownership` notice) is its own entry with an id `report-…` and the report's sequence.
//! `Last-Event-ID` (or `?after=`) resumes after that event: the rest of that execution, then every later
//! one. A cursor that names no entry this Standby still lists (another Standby's, or one it no longer
//! keeps: it keeps the last [`STANDBY_PARTS_MAX`]) gets a `gap` frame and the stream starts from the first
//! entry it keeps. Within an execution, the run's reader applies: the live window, the durable log
//! behind it, a `lag` notice when the client fell out of the window.

use std::collections::VecDeque;
use std::sync::{Arc, RwLock};

use axum::response::sse::Event as SseEvent;
use serde_json::json;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::AppState;
use crate::auth::Tenant;
use crate::error::ApiError;
use crate::reader::LogReader;
use crate::rest::{EventsQuery, stored_reader};
use crate::runs::LogItem;
use crate::sse::{SubscriberGauge, item_frame, shutdown_frame};

/// Entries (executions and reports) a Standby lists for SSE replay, at most; older executions stay
/// readable as runs (`/v1/runs/{run_id}/events`) and in the thread's history.
pub const STANDBY_PARTS_MAX: usize = 10_000;

/// One entry of a Standby's log.
#[derive(Debug, Clone)]
pub enum Part {
    /// An execution: a run of the registry, by run id.
    Execution(String),
    /// Reports of the Standby outside any execution (exposed once), under their own id.
    Report {
        /// `report-<uuid>`.
        id: String,
        /// The reports, by their sequence.
        items: Arc<Vec<Arc<LogItem>>>,
    },
}

impl Part {
    /// The entry's id (the `<execution>` of a cursor).
    pub fn id(&self) -> &str {
        match self {
            Part::Execution(id) | Part::Report { id, .. } => id,
        }
    }
}

#[derive(Default)]
struct Parts {
    /// Entries dropped from the front (the absolute index of `list[0]`).
    first: usize,
    list: VecDeque<Part>,
}

/// The ordered entries of one Standby.
pub struct StandbyLog {
    parts: RwLock<Parts>,
    /// `(entries ever added, the Standby ended and its last execution finished)`.
    progress: watch::Sender<(usize, bool)>,
}

impl Default for StandbyLog {
    fn default() -> Self {
        StandbyLog {
            parts: RwLock::default(),
            progress: watch::Sender::new((0, false)),
        }
    }
}

impl StandbyLog {
    /// Adds an entry and wakes the followers.
    pub fn push(&self, part: Part) {
        {
            let mut p = self.parts.write().unwrap_or_else(|p| p.into_inner());
            p.list.push_back(part);
            while p.list.len() > STANDBY_PARTS_MAX {
                p.list.pop_front();
                p.first += 1;
            }
        }
        self.progress.send_modify(|p| p.0 += 1);
    }

    /// No entry will be added any more.
    pub fn finish(&self) {
        self.progress.send_modify(|p| p.1 = true);
    }

    /// How many executions it started (those it still lists).
    pub fn executions(&self) -> usize {
        let p = self.parts.read().unwrap_or_else(|p| p.into_inner());
        p.list.iter().filter(|x| matches!(x, Part::Execution(_))).count()
    }

    /// The latest execution's run id.
    pub fn last_execution(&self) -> Option<String> {
        let p = self.parts.read().unwrap_or_else(|p| p.into_inner());
        p.list.iter().rev().find_map(|x| match x {
            Part::Execution(id) => Some(id.clone()),
            Part::Report { .. } => None,
        })
    }

    /// The entry at absolute index `n`, or the index of the first entry kept when `n` is before it.
    fn at(&self, n: usize) -> Result<Option<Part>, usize> {
        let p = self.parts.read().unwrap_or_else(|p| p.into_inner());
        if n < p.first {
            return Err(p.first);
        }
        Ok(p.list.get(n - p.first).cloned())
    }

    /// The absolute index of the entry `id`.
    fn index_of(&self, id: &str) -> Option<usize> {
        let p = self.parts.read().unwrap_or_else(|p| p.into_inner());
        p.list.iter().position(|x| x.id() == id).map(|i| i + p.first)
    }

    fn first_kept(&self) -> usize {
        self.parts.read().unwrap_or_else(|p| p.into_inner()).first
    }
}

/// A Standby SSE cursor: the entry (execution run id or report id) and the sequence within it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// The execution's run id (or the report entry's id).
    pub part: String,
    /// The last sequence seen in it.
    pub seq: u64,
}

/// Parses `<execution>:<seq>`: a non-empty id of at most 512 visible ASCII bytes without `:`, a colon,
/// and a decimal sequence; else 422 naming `field`.
pub fn parse_cursor(field: &str, text: &str) -> Result<Cursor, ApiError> {
    let bad = || {
        ApiError::invalid(
            field,
            format!(
                "{field} must be a Standby cursor `<execution>:<seq>` (the `id:` of a Standby event: a run id, a colon and a decimal sequence)"
            ),
        )
    };
    let (part, seq) = text.rsplit_once(':').ok_or_else(bad)?;
    let visible = |b: u8| b.is_ascii_graphic() && b != b':';
    if part.is_empty() || part.len() > crate::extract::MAX_ID || !part.bytes().all(visible) {
        return Err(bad());
    }
    let seq = crate::ranges::decimal(field, seq).map_err(|_| bad())?;
    Ok(Cursor {
        part: part.to_owned(),
        seq,
    })
}

/// The cursor of a Standby events request: `Last-Event-ID` wins over `?after=`; none when neither is
/// given (an empty `Last-Event-ID` is as if absent). A header that is not visible ASCII is refused.
pub fn cursor_of(headers: &axum::http::HeaderMap, query: &EventsQuery) -> Result<Option<Cursor>, ApiError> {
    let from_header = match headers.get("last-event-id").map(|v| v.as_bytes()) {
        None | Some(b"") => None,
        Some(raw) => Some(std::str::from_utf8(raw).unwrap_or("\u{fffd}")),
    };
    match (from_header, query.after.as_deref()) {
        (Some(h), _) => parse_cursor("Last-Event-ID", h).map(Some),
        (None, Some(a)) => parse_cursor("after", a).map(Some),
        (None, None) => Ok(None),
    }
}

/// What a follower is reading now.
enum Reading {
    Execution {
        id: String,
        reader: LogReader,
    },
    Report {
        id: String,
        items: Arc<Vec<Arc<LogItem>>>,
        next: usize,
    },
}

/// One subscriber's stream over a Standby's entries.
struct Follow {
    state: Arc<AppState>,
    tenant: Tenant,
    log: Arc<super::StandbyEntry>,
    progress: watch::Receiver<(usize, bool)>,
    /// The absolute index of the entry read next (or being read).
    part: usize,
    /// The sequence to resume after in that entry.
    after: u64,
    reading: Option<Reading>,
    queued: VecDeque<SseEvent>,
    shutdown: CancellationToken,
    ended: bool,
    _gauge: SubscriberGauge,
}

fn gap_frame(code: &str, message: String) -> SseEvent {
    SseEvent::default()
        .event("gap")
        .data(json!({"code": code, "message": message}).to_string())
}

impl Follow {
    /// Opens entry `part` for reading (after `self.after`).
    async fn open(&mut self, part: Part) {
        let after = std::mem::take(&mut self.after);
        self.reading = Some(match part {
            Part::Report { id, items } => {
                let next = items.partition_point(|i| i.seq <= after);
                Reading::Report { id, items, next }
            }
            Part::Execution(id) => {
                let reader = match self.state.runs.get(self.tenant.as_str(), &id) {
                    Some(entry) => entry.reader(after),
                    None => {
                        match self.state.store.get_run(self.tenant.as_str(), &id).await {
                            Ok(Some(run)) => stored_reader(&self.state, &run, after),
                            Ok(None) | Err(_) => {
                                self.queued.push_back(gap_frame(
                                "execution_unavailable",
                                format!("the events of execution {id} cannot be read; the stream goes on after it"),
                            ));
                                self.part += 1;
                                self.reading = None;
                                return;
                            }
                        }
                    }
                };
                Reading::Execution { id, reader }
            }
        });
    }

    async fn next(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(frame) = self.queued.pop_front() {
                return Some(frame);
            }
            if self.ended {
                return None;
            }
            let shutdown = self.shutdown.clone();
            match &mut self.reading {
                Some(Reading::Report { id, items, next }) => {
                    if let Some(item) = items.get(*next) {
                        *next += 1;
                        return Some(item_frame(item, |seq| format!("{id}:{seq}")));
                    }
                    self.reading = None;
                    self.part += 1;
                }
                Some(Reading::Execution { id, reader }) => {
                    let item = tokio::select! {
                        item = reader.next() => item,
                        () = shutdown.cancelled() => {
                            self.ended = true;
                            return Some(shutdown_frame());
                        }
                    };
                    match item {
                        Some(item) => return Some(item_frame(&item, |seq| format!("{id}:{seq}"))),
                        None => {
                            self.reading = None;
                            self.part += 1;
                        }
                    }
                }
                None => {
                    let finished = self.progress.borrow_and_update().1;
                    match self.log.log.at(self.part) {
                        Ok(Some(part)) => {
                            self.open(part).await;
                            continue;
                        }
                        Err(first) => {
                            self.queued.push_back(gap_frame(
                                "gap",
                                "this stream fell behind the entries the Standby keeps; it goes on from the oldest kept"
                                    .into(),
                            ));
                            self.part = first;
                            self.after = 0;
                            continue;
                        }
                        Ok(None) if finished => return None,
                        Ok(None) => {}
                    }
                    tokio::select! {
                        changed = self.progress.changed() => if changed.is_err() { return None },
                        () = shutdown.cancelled() => {
                            self.ended = true;
                            return Some(shutdown_frame());
                        }
                    }
                }
            }
        }
    }
}

/// The SSE frames of a Standby from `cursor` on (none: from its first entry), until it ended and its
/// last execution is read, or the service shuts down (one `shutdown` frame).
pub fn follow(
    state: Arc<AppState>,
    tenant: Tenant,
    standby: Arc<super::StandbyEntry>,
    cursor: Option<Cursor>,
    gauge: SubscriberGauge,
) -> impl futures::Stream<Item = SseEvent> + Send + 'static {
    let mut queued = VecDeque::new();
    let (part, after) = match cursor {
        None => (standby.log.first_kept(), 0),
        Some(c) => match standby.log.index_of(&c.part) {
            Some(i) => (i, c.seq),
            None => {
                queued.push_back(gap_frame(
                    "unknown_cursor",
                    format!(
                        "Last-Event-ID names no execution this Standby still lists ({:?}); the stream starts from the oldest it keeps",
                        c.part
                    ),
                ));
                (standby.log.first_kept(), 0)
            }
        },
    };
    let state = Follow {
        shutdown: state.shutdown.clone(),
        progress: standby.log.progress.subscribe(),
        state,
        tenant,
        log: standby,
        part,
        after,
        reading: None,
        queued,
        ended: false,
        _gauge: gauge,
    };
    futures::stream::unfold(state, |mut s| async move {
        let frame = s.next().await?;
        Some((frame, s))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_is_an_execution_a_colon_and_a_decimal() {
        let c = parse_cursor("after", "run-0193:42").unwrap();
        assert_eq!((c.part.as_str(), c.seq), ("run-0193", 42));
        for bad in [
            "",
            "42",
            ":42",
            "run-1:",
            "run-1:+5",
            "run-1: 5",
            "run 1:5",
            "run-1:x",
            "run-1:18446744073709551616",
            "a:b:5\u{e9}",
        ] {
            let err = parse_cursor("after", bad).expect_err(bad);
            assert_eq!(err.status().as_u16(), 422, "{bad:?}");
        }
        let long = format!("{}:1", "r".repeat(513));
        assert!(parse_cursor("after", &long).is_err());
    }
}
