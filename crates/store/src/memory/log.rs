//! Receipts, continuity history and the run event log for the in-memory store.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, Utc};

use crate::rules::{self, micros};
use crate::{
    ContinuityEntry, EventRecord, NewEvent, RECEIPT_CAP, RECEIPT_MAX_AGE, RetentionPolicy, StoreError,
    StoreResult,
};

/// `(tenant, run id)`.
type Slot = (String, String);

/// A thread: `(tenant, agent, thread key)`.
type Scope = (String, String, String);

/// One thread's receipts: message id -> (delivered at, insertion order).
#[derive(Debug, Default)]
struct Receipts {
    ids: HashMap<String, (DateTime<Utc>, u64)>,
    next: u64,
}

/// Receipts, continuity and events with the indexes the reads need.
#[derive(Debug, Default)]
pub(super) struct Log {
    receipts: HashMap<Scope, Receipts>,
    continuity: HashMap<Scope, Vec<ContinuityEntry>>,
    events: BTreeMap<u64, EventRecord>,
    last_cursor: u64,
    by_run: HashMap<Slot, BTreeMap<u64, u64>>,
    by_thread: HashMap<Scope, BTreeSet<u64>>,
}

fn slot(tenant: &str, key: &str) -> Slot {
    (tenant.to_owned(), key.to_owned())
}

fn scope(tenant: &str, agent: &str, key: &str) -> Scope {
    (tenant.to_owned(), agent.to_owned(), key.to_owned())
}

impl Log {
    pub(super) fn record_receipts(
        &mut self,
        tenant: &str,
        agent: &str,
        key: &str,
        ids: &[String],
        at: DateTime<Utc>,
    ) -> StoreResult<usize> {
        rules::require("tenant", tenant)?;
        rules::no_nul("agent", agent)?;
        rules::require("thread key", key)?;
        let at = micros(at);
        let receipts = self.receipts.entry(scope(tenant, agent, key)).or_default();
        let mut added = 0;
        for id in ids {
            if !receipts.ids.contains_key(id) {
                receipts.next += 1;
                receipts.ids.insert(id.clone(), (at, receipts.next));
                added += 1;
            }
        }
        let cutoff = at - rules::age(RECEIPT_MAX_AGE);
        receipts.ids.retain(|_, (when, _)| *when >= cutoff);
        if receipts.ids.len() > RECEIPT_CAP {
            let mut order: Vec<u64> = receipts.ids.values().map(|(_, n)| *n).collect();
            order.sort_unstable();
            let keep_from = order[order.len() - RECEIPT_CAP];
            receipts.ids.retain(|_, (_, n)| *n >= keep_from);
        }
        Ok(added)
    }

    pub(super) fn has_receipts(&self, tenant: &str, agent: &str, key: &str, ids: &[String]) -> Vec<bool> {
        let receipts = self.receipts.get(&scope(tenant, agent, key));
        ids.iter()
            .map(|id| receipts.is_some_and(|r| r.ids.contains_key(id)))
            .collect()
    }

    pub(super) fn append_continuity(
        &mut self,
        tenant: &str,
        agent: &str,
        key: &str,
        entry: ContinuityEntry,
    ) -> StoreResult<()> {
        rules::require("tenant", tenant)?;
        rules::no_nul("agent", agent)?;
        rules::require("thread key", key)?;
        let history = self.continuity.entry(scope(tenant, agent, key)).or_default();
        history.push(ContinuityEntry {
            at: micros(entry.at),
            ..entry
        });
        let kept = rules::select_continuity(history);
        let old = std::mem::take(history);
        *history = kept
            .into_iter()
            .map(|(index, text)| ContinuityEntry {
                text,
                ..old[index].clone()
            })
            .collect();
        Ok(())
    }

    pub(super) fn continuity(&self, tenant: &str, agent: &str, key: &str) -> Vec<ContinuityEntry> {
        let Some(history) = self.continuity.get(&scope(tenant, agent, key)) else {
            return Vec::new();
        };
        rules::select_continuity(history)
            .into_iter()
            .map(|(index, text)| ContinuityEntry {
                text,
                ..history[index].clone()
            })
            .collect()
    }

    pub(super) fn append_events(&mut self, batch: Vec<NewEvent>) -> StoreResult<Vec<u64>> {
        let mut seen = HashSet::new();
        for event in &batch {
            rules::require("tenant", &event.tenant)?;
            rules::no_nul("agent", &event.agent)?;
            rules::require("run id", &event.run_id)?;
            rules::to_i64(event.seq, "seq")?;
            let run = slot(&event.tenant, &event.run_id);
            let stored = self
                .by_run
                .get(&run)
                .is_some_and(|seqs| seqs.contains_key(&event.seq));
            if stored || !seen.insert((run, event.seq)) {
                return Err(StoreError::conflict(format!(
                    "event seq {} of run {:?} is already in the log",
                    event.seq, event.run_id
                )));
            }
        }
        let mut cursors = Vec::with_capacity(batch.len());
        for event in batch {
            self.last_cursor += 1;
            let cursor = self.last_cursor;
            self.by_run
                .entry(slot(&event.tenant, &event.run_id))
                .or_default()
                .insert(event.seq, cursor);
            if let Some(key) = &event.thread_key {
                self.by_thread
                    .entry(scope(&event.tenant, &event.agent, key))
                    .or_default()
                    .insert(cursor);
            }
            let at = micros(event.at);
            self.events
                .insert(cursor, EventRecord::from_new(cursor, NewEvent { at, ..event }));
            cursors.push(cursor);
        }
        Ok(cursors)
    }

    pub(super) fn read_run(
        &self,
        tenant: &str,
        run_id: &str,
        after: Option<u64>,
        limit: u32,
    ) -> Vec<EventRecord> {
        let Some(seqs) = self.by_run.get(&slot(tenant, run_id)) else {
            return Vec::new();
        };
        let from = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        seqs.range((from, std::ops::Bound::Unbounded))
            .filter_map(|(_, cursor)| self.events.get(cursor).cloned())
            .take(rules::limit(limit) as usize)
            .collect()
    }

    pub(super) fn read_thread(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        after: Option<u64>,
        limit: u32,
    ) -> Vec<EventRecord> {
        let Some(cursors) = self.by_thread.get(&scope(tenant, agent, key)) else {
            return Vec::new();
        };
        let from = after.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        cursors
            .range((from, std::ops::Bound::Unbounded))
            .filter_map(|cursor| self.events.get(cursor).cloned())
            .take(rules::limit(limit) as usize)
            .collect()
    }

    pub(super) fn retention(&mut self, policy: &RetentionPolicy) -> u64 {
        let mut doomed = Vec::new();
        if let Some(max_age) = policy.max_age {
            let cutoff = rules::now() - rules::age(max_age);
            doomed.extend(self.events.values().filter(|e| e.at < cutoff).map(|e| e.cursor));
        }
        if let Some(cap) = policy.max_events_per_tenant {
            let old: HashSet<u64> = doomed.iter().copied().collect();
            let mut per_tenant: HashMap<&str, Vec<u64>> = HashMap::new();
            for event in self.events.values().filter(|e| !old.contains(&e.cursor)) {
                per_tenant.entry(&event.tenant).or_default().push(event.cursor);
            }
            for cursors in per_tenant.values() {
                let excess = cursors
                    .len()
                    .saturating_sub(usize::try_from(cap).unwrap_or(usize::MAX));
                doomed.extend(&cursors[..excess]);
            }
        }
        for cursor in &doomed {
            if let Some(event) = self.events.remove(cursor) {
                let run = slot(&event.tenant, &event.run_id);
                if let Some(seqs) = self.by_run.get_mut(&run) {
                    seqs.remove(&event.seq);
                    if seqs.is_empty() {
                        self.by_run.remove(&run);
                    }
                }
                if let Some(key) = &event.thread_key {
                    let thread = scope(&event.tenant, &event.agent, key);
                    if let Some(cursors) = self.by_thread.get_mut(&thread) {
                        cursors.remove(cursor);
                        if cursors.is_empty() {
                            self.by_thread.remove(&thread);
                        }
                    }
                }
            }
        }
        doomed.len() as u64
    }
}
