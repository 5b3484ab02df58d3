//! A session's history in the thread's durable event log: every `session/update` this edge sends
//! (and the user's message, as `user_message_chunk`) is appended to the store's log under the
//! session's thread key with kind [`KIND`], and `session/load` replays them in log order. Each
//! prompt first records the session's working directory ([`META_KIND`]), which `session/list`
//! reports. With the embedded SQLite store (or Postgres) a session loads in a new process; with
//! `memory:` only in this one.

use std::sync::Arc;

use chrono::Utc;

use serde_json::{Value, json};

use super::wire::{ContentBlock, SessionUpdate};
use crate::store::{NewEvent, StoreError, ThreadStore};

/// The event kind of a recorded update.
pub const KIND: &str = "acp.session_update";
/// The event kind of a prompt's session facts (`{"cwd": …}`), recorded before its updates.
pub const META_KIND: &str = "acp.session_meta";
/// How many of a thread's first events [`summary`] reads.
const HEAD: u32 = 16;
const PAGE: u32 = 500;

/// One session's log writer for one run.
pub struct RunLog {
    store: Arc<dyn ThreadStore>,
    tenant: String,
    agent: String,
    key: String,
    run_id: String,
    seq: u64,
}

impl RunLog {
    /// A writer appending run `run_id`'s updates to thread `key` of agent `agent`.
    pub fn new(store: Arc<dyn ThreadStore>, tenant: &str, agent: &str, key: &str, run_id: &str) -> Self {
        RunLog {
            store,
            tenant: tenant.to_owned(),
            agent: agent.to_owned(),
            key: key.to_owned(),
            run_id: run_id.to_owned(),
            seq: 0,
        }
    }

    /// Appends `update`; a store failure is logged and the session goes on (history is best effort,
    /// the live stream is not).
    pub async fn append(&mut self, update: &SessionUpdate) {
        match serde_json::to_value(update) {
            Ok(v) => self.append_kind(KIND, v).await,
            Err(e) => tracing::error!(error = %e, "acp: cannot encode an update for the log"),
        }
    }

    /// Appends the session's facts for this prompt (its working directory).
    pub async fn append_meta(&mut self, cwd: &str) {
        self.append_kind(META_KIND, json!({ "cwd": cwd })).await;
    }

    async fn append_kind(&mut self, kind: &str, event: Value) {
        let record = NewEvent {
            tenant: self.tenant.clone(),
            agent: self.agent.clone(),
            thread_key: Some(self.key.clone()),
            run_id: self.run_id.clone(),
            seq: self.seq,
            kind: kind.into(),
            event,
            at: Utc::now(),
        };
        self.seq += 1;
        if let Err(e) = self.store.append_events(vec![record]).await {
            tracing::warn!(error = %e, session = %self.key, "acp: an update was not recorded");
        }
    }
}

/// Every recorded update of thread `key`, in log order (`None` when the thread has no ACP history;
/// empty for a session that was created and never prompted).
pub async fn replay(
    store: &dyn ThreadStore,
    tenant: &str,
    agent: &str,
    key: &str,
) -> Result<Option<Vec<SessionUpdate>>, StoreError> {
    let mut out = Vec::new();
    let mut seen = false;
    let mut after = None;
    loop {
        let page = store.read_thread(tenant, agent, key, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.cursor);
        let full = page.len() == PAGE as usize;
        for rec in page {
            // A session's facts alone (created, never prompted) make an empty history, not none.
            if rec.kind == META_KIND {
                seen = true;
            }
            if rec.kind != KIND {
                continue;
            }
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

/// True when thread `key` has any recorded ACP history.
pub async fn exists(
    store: &dyn ThreadStore,
    tenant: &str,
    agent: &str,
    key: &str,
) -> Result<bool, StoreError> {
    let head = store.read_thread(tenant, agent, key, None, HEAD).await?;
    Ok(head.iter().any(|r| r.kind == KIND || r.kind == META_KIND))
}

/// What `session/list` shows of a session, read from the start of its log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// The working directory of its first recorded prompt (`None` for sessions recorded before
    /// the directory was).
    pub cwd: Option<String>,
    /// The first non-empty line of its first prompt, at most [`TITLE_MAX`] characters.
    pub title: Option<String>,
}

/// The longest title, in characters.
pub const TITLE_MAX: usize = 80;

/// The [`Summary`] of thread `key` (`None` when it has no ACP history).
pub async fn summary(
    store: &dyn ThreadStore,
    tenant: &str,
    agent: &str,
    key: &str,
) -> Result<Option<Summary>, StoreError> {
    let head = store.read_thread(tenant, agent, key, None, HEAD).await?;
    let mut seen = false;
    let mut out = Summary::default();
    for rec in head {
        match rec.kind.as_str() {
            META_KIND => {
                seen = true;
                if out.cwd.is_none() {
                    out.cwd = rec.event.get("cwd").and_then(Value::as_str).map(str::to_owned);
                }
            }
            KIND => {
                seen = true;
                if out.title.is_none()
                    && let Ok(SessionUpdate::UserMessageChunk {
                        content: ContentBlock::Text { text },
                    }) = serde_json::from_value::<SessionUpdate>(rec.event)
                {
                    out.title = title(&text);
                }
            }
            _ => {}
        }
    }
    Ok(seen.then_some(out))
}

/// The first non-empty line of `prompt`, trimmed, cut to [`TITLE_MAX`] characters.
pub fn title(prompt: &str) -> Option<String> {
    let line = prompt.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(
        line.chars()
            .take(TITLE_MAX)
            .collect::<String>()
            .trim_end()
            .to_owned(),
    )
}

/// Copies thread `from`'s recorded updates to thread `to` (a fork) under a fresh run id, after a
/// [`META_KIND`] record with the fork's `cwd`; the parent's own session facts are not copied.
pub async fn copy(
    store: &dyn ThreadStore,
    tenant: &str,
    agent: &str,
    from: &str,
    to: &str,
    cwd: &str,
) -> Result<(), StoreError> {
    let run_id = format!("acp-fork-{}", uuid::Uuid::now_v7());
    let record = |seq: u64, kind: &str, event: Value| NewEvent {
        tenant: tenant.to_owned(),
        agent: agent.to_owned(),
        thread_key: Some(to.to_owned()),
        run_id: run_id.clone(),
        seq,
        kind: kind.into(),
        event,
        at: Utc::now(),
    };
    let mut seq = 0;
    store
        .append_events(vec![record(seq, META_KIND, json!({ "cwd": cwd }))])
        .await?;
    let mut after = None;
    loop {
        let page = store.read_thread(tenant, agent, from, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = Some(last.cursor);
        let full = page.len() == PAGE as usize;
        let batch: Vec<_> = page
            .into_iter()
            .filter(|r| r.kind == KIND)
            .map(|r| {
                seq += 1;
                record(seq, KIND, r.event)
            })
            .collect();
        if !batch.is_empty() {
            store.append_events(batch).await?;
        }
        if !full {
            break;
        }
    }
    Ok(())
}
