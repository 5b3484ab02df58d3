//! A session's history in the thread's durable event log: every `session/update` this edge sends
//! (and the user's message, as `user_message_chunk`) is appended to the store's log under the
//! session's thread key with kind [`KIND`], and `session/load` replays them in log order. With the
//! embedded SQLite store (or Postgres) a session loads in a new process; with `memory:` only in this
//! one.

use std::sync::Arc;

use chrono::Utc;

use super::wire::SessionUpdate;
use crate::store::{NewEvent, StoreError, ThreadStore};

/// The event kind of a recorded update.
pub const KIND: &str = "acp.session_update";
const PAGE: u32 = 500;

/// One session's log writer for one run.
pub struct RunLog {
    store: Arc<dyn ThreadStore>,
    tenant: String,
    key: String,
    run_id: String,
    seq: u64,
}

impl RunLog {
    /// A writer appending run `run_id`'s updates to thread `key`.
    pub fn new(store: Arc<dyn ThreadStore>, tenant: &str, key: &str, run_id: &str) -> Self {
        RunLog {
            store,
            tenant: tenant.to_owned(),
            key: key.to_owned(),
            run_id: run_id.to_owned(),
            seq: 0,
        }
    }

    /// Appends `update`; a store failure is logged and the session goes on (history is best effort,
    /// the live stream is not).
    pub async fn append(&mut self, update: &SessionUpdate) {
        let event = match serde_json::to_value(update) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(error = %e, "acp: cannot encode an update for the log");
                return;
            }
        };
        let record = NewEvent {
            tenant: self.tenant.clone(),
            thread_key: Some(self.key.clone()),
            run_id: self.run_id.clone(),
            seq: self.seq,
            kind: KIND.into(),
            event,
            at: Utc::now(),
        };
        self.seq += 1;
        if let Err(e) = self.store.append_events(vec![record]).await {
            tracing::warn!(error = %e, session = %self.key, "acp: an update was not recorded");
        }
    }
}

/// Every recorded update of thread `key`, in log order (`None` when the thread has no ACP history).
pub async fn replay(
    store: &dyn ThreadStore,
    tenant: &str,
    key: &str,
) -> Result<Option<Vec<SessionUpdate>>, StoreError> {
    let mut out = Vec::new();
    let mut seen = false;
    let mut after = None;
    loop {
        let page = store.read_thread(tenant, key, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.cursor);
        let full = page.len() == PAGE as usize;
        for rec in page.into_iter().filter(|r| r.kind == KIND) {
            seen = true;
            match serde_json::from_value::<SessionUpdate>(rec.event) {
                Ok(u) => out.push(u),
                Err(e) => tracing::warn!(error = %e, cursor = rec.cursor, "acp: unreadable recorded update"),
            }
        }
        if !full {
            break;
        }
    }
    Ok(seen.then_some(out))
}
