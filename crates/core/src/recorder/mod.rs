//! Event recording with an exposure policy (spec §17): typed [`Event`]s become records that keep
//! only what the operator chose, always without secrets, and replay as typed events.
//!
//! - [`ExposurePolicy`] decides what a record keeps. By default `Done`/`TurnEnd` keep only the run
//!   id, turns, text, summary and error identity; opt-in flags add metadata, usage, raw streams,
//!   the provider's terminal payload, the transcript and services. Other events keep their
//!   payload, and raw stdout/stderr chunks are dropped unless raw streams are opted in.
//! - [`redact`] removes secret-bearing fields (env values, bearer tokens, API keys) from every
//!   record, always, whatever the policy.
//! - [`Recorder`] appends records with a host-owned cursor that strictly increases across the runs
//!   of a thread (distinct from the per-run sequence) and answers `since`, `range` and `tail`;
//!   it is backed by the store's durable event log (any [`ThreadStore`]).
//! - Replay restores coordinates (`Event::with_meta`) but never reconstructs private result fields
//!   or live approval responders: a replayed approval request answers `Unavailable`; pending ones
//!   are answered through the service's approval endpoint.

mod exposure;
pub mod redact;

use std::sync::Arc;

use chrono::Utc;
use serde_json::Value;

pub use exposure::ExposurePolicy;

use crate::runtime::Event;
use crate::store::{EventRecord, NewEvent, StoreError, ThreadStore};

/// A recorded event as stored: the host cursor plus the exposed JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// Host-owned cursor, strictly increasing across the runs of a thread.
    pub cursor: u64,
    /// Run id.
    pub run_id: String,
    /// Per-run sequence.
    pub sequence: u64,
    /// Payload type (`text_delta`, `done`, …).
    pub kind: String,
    /// The exposed, redacted event JSON.
    pub json: Value,
}

impl Record {
    /// Replays the record as a typed event (coordinates restored, no live responder).
    pub fn replay(&self) -> Result<Event, serde_json::Error> {
        serde_json::from_value(self.json.clone())
    }

    fn from_store(r: EventRecord) -> Record {
        Record {
            cursor: r.cursor,
            run_id: r.run_id,
            sequence: r.seq,
            kind: r.kind,
            json: r.event,
        }
    }
}

/// Turns an event into its exposed, redacted JSON under `policy`.
pub fn expose(event: &Event, policy: &ExposurePolicy) -> Value {
    let mut json = serde_json::to_value(event).unwrap_or(Value::Null);
    policy.apply(&mut json);
    redact::redact(&mut json);
    json
}

/// Records the events of the runs of a tenant's agent into a store's event log.
#[derive(Clone)]
pub struct Recorder {
    store: Arc<dyn ThreadStore>,
    tenant: String,
    agent: String,
    policy: ExposurePolicy,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("tenant", &self.tenant)
            .field("agent", &self.agent)
            .field("policy", &self.policy)
            .finish()
    }
}

impl Recorder {
    /// A recorder for the runs of `agent` (the Agent's name, [`crate::runtime::Agent::name`]) of `tenant`
    /// under `policy`; a thread's history is that of its `(tenant, agent, key)`.
    pub fn new(
        store: Arc<dyn ThreadStore>,
        tenant: impl Into<String>,
        agent: impl Into<String>,
        policy: ExposurePolicy,
    ) -> Self {
        Recorder {
            store,
            tenant: tenant.into(),
            agent: agent.into(),
            policy,
        }
    }

    /// The exposure policy applied when recording.
    pub fn policy(&self) -> &ExposurePolicy {
        &self.policy
    }

    /// Records a batch of events (in order, all-or-nothing); returns their cursors.
    pub async fn record(&self, events: &[Event]) -> Result<Vec<u64>, StoreError> {
        self.append(self.prepare(events)).await
    }

    /// The records of a batch of events as [`Recorder::append`] stores them (exposed and redacted
    /// once, so a caller can publish the same JSON before it is durable).
    pub fn prepare(&self, events: &[Event]) -> Vec<NewEvent> {
        events
            .iter()
            .map(|e| NewEvent {
                tenant: self.tenant.clone(),
                agent: self.agent.clone(),
                thread_key: (!e.meta.thread_key.is_empty()).then(|| e.meta.thread_key.clone()),
                run_id: e.meta.run_id.clone(),
                seq: e.meta.sequence,
                kind: e.payload.type_name().to_owned(),
                event: expose(e, &self.policy),
                at: Utc::now(),
            })
            .collect()
    }

    /// Appends prepared records (in order, all-or-nothing); returns their cursors.
    pub async fn append(&self, batch: Vec<NewEvent>) -> Result<Vec<u64>, StoreError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        self.store.append_events(batch).await
    }

    /// A thread's records after `cursor` (across runs), at most `limit`, re-exposed under
    /// `view` (a reader may see less than what was stored, never more).
    pub async fn since(
        &self,
        key: &str,
        cursor: Option<u64>,
        limit: u32,
        view: &ExposurePolicy,
    ) -> Result<Vec<Record>, StoreError> {
        let rows = self
            .store
            .read_thread(&self.tenant, &self.agent, key, cursor, limit)
            .await?;
        Ok(rows
            .into_iter()
            .map(|r| self.view(Record::from_store(r), view))
            .collect())
    }

    /// A thread's records with `from < cursor <= to`.
    pub async fn range(
        &self,
        key: &str,
        from: u64,
        to: u64,
        view: &ExposurePolicy,
    ) -> Result<Vec<Record>, StoreError> {
        let mut out = Vec::new();
        let mut after = Some(from);
        loop {
            let page = self.since(key, after, 500, view).await?;
            let Some(last) = page.last().map(|r| r.cursor) else {
                break;
            };
            let done = last >= to || page.len() < 500;
            out.extend(page.into_iter().filter(|r| r.cursor <= to));
            if done {
                break;
            }
            after = Some(last);
        }
        Ok(out)
    }

    /// The last `n` records of a thread.
    pub async fn tail(&self, key: &str, n: usize, view: &ExposurePolicy) -> Result<Vec<Record>, StoreError> {
        let mut all: std::collections::VecDeque<Record> = std::collections::VecDeque::new();
        let mut after = None;
        loop {
            let page = self.since(key, after, 500, view).await?;
            let Some(last) = page.last().map(|r| r.cursor) else {
                break;
            };
            let short = page.len() < 500;
            for r in page {
                all.push_back(r);
                if all.len() > n {
                    all.pop_front();
                }
            }
            if short {
                break;
            }
            after = Some(last);
        }
        Ok(all.into())
    }

    /// One run's records after `sequence`.
    pub async fn run(
        &self,
        run_id: &str,
        after: Option<u64>,
        limit: u32,
        view: &ExposurePolicy,
    ) -> Result<Vec<Record>, StoreError> {
        let rows = self.store.read_run(&self.tenant, run_id, after, limit).await?;
        Ok(rows
            .into_iter()
            .map(|r| self.view(Record::from_store(r), view))
            .collect())
    }

    fn view(&self, mut r: Record, view: &ExposurePolicy) -> Record {
        view.apply(&mut r.json);
        redact::redact(&mut r.json);
        r
    }
}
