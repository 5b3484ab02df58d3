//! `session/list`: the sessions this edge created (thread keys prefixed [`PREFIX`]) that have a
//! thread record, i.e. at least one prompt that ended with a checkpoint, in key order (session ids
//! are UUIDv7, so oldest first), [`PAGE`] per page. The cursor is the last key of the previous page:
//! opaque to clients, checked to carry the prefix. Title and working directory come from the start
//! of each session's recorded history ([`history::summary`]), `updatedAt` from the thread record.

use chrono::SecondsFormat;

use super::history;
use super::rpc::{INTERNAL_ERROR, RpcError};
use super::wire::{ListSessionsParams, ListSessionsResponse, SessionInfo};
use crate::store::{Page, StoreError, ThreadStore};

/// The prefix of every session id this edge creates.
pub const PREFIX: &str = "acp-";
/// Sessions per page.
pub const PAGE: usize = 50;
/// The working directory reported for a session recorded before its directory was (no cwd filter
/// matches it).
pub const UNKNOWN_CWD: &str = "/";

fn store_error(e: StoreError) -> RpcError {
    RpcError::new(INTERNAL_ERROR, format!("cannot list sessions: {e}"))
}

/// One page of the sessions of `tenant` with agent `agent` per `params`.
pub async fn list(
    store: &dyn ThreadStore,
    tenant: &str,
    agent: &str,
    params: &ListSessionsParams,
) -> Result<ListSessionsResponse, RpcError> {
    if let Some(cwd) = &params.cwd
        && !std::path::Path::new(cwd).is_absolute()
    {
        return Err(RpcError::invalid_params("cwd must be an absolute path"));
    }
    let mut after = match &params.cursor {
        None => PREFIX.to_owned(),
        Some(c) if c.starts_with(PREFIX) && c.len() <= 512 && !c.contains('\0') => c.clone(),
        Some(_) => return Err(RpcError::invalid_params("cursor is not one this agent gave")),
    };
    let mut sessions = Vec::with_capacity(PAGE);
    let mut more = false;
    'pages: loop {
        let page = store
            .list_threads(tenant, agent, &Page::after(after.clone(), PAGE as u32))
            .await
            .map_err(store_error)?;
        let full = page.len() == PAGE;
        for record in page {
            // Keys are ordered bytewise, so the prefix's keys are contiguous.
            if !record.key.starts_with(PREFIX) {
                break 'pages;
            }
            after.clone_from(&record.key);
            let Some(summary) = history::summary(store, tenant, agent, &record.key)
                .await
                .map_err(store_error)?
            else {
                continue;
            };
            if params.cwd.is_some() && summary.cwd != params.cwd {
                continue;
            }
            if sessions.len() == PAGE {
                more = true;
                break 'pages;
            }
            sessions.push(SessionInfo {
                session_id: record.key,
                cwd: summary.cwd.unwrap_or_else(|| UNKNOWN_CWD.to_owned()),
                title: summary.title,
                updated_at: Some(record.updated_at.to_rfc3339_opts(SecondsFormat::Millis, true)),
            });
        }
        if !full {
            break;
        }
    }
    let next_cursor = more
        .then(|| sessions.last().map(|s| s.session_id.clone()))
        .flatten();
    Ok(ListSessionsResponse {
        sessions,
        next_cursor,
    })
}
