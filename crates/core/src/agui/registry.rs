//! The bridge's run registry (spec §17): which execution is active on each AG-UI thread, so a user
//! message that arrives while one runs supplements it instead of starting a second run.
//!
//! - [`RunRegistry::send`] starts `Thread::send` when the thread is idle and uses `Stream::send` when an
//!   execution is active; its flag reports supplementation.
//! - [`RunRegistry::send_active`] never starts a run: no active execution is a [`MessageError`] of kind
//!   [`MessageErrorKind::RunFinished`] (`ErrRunFinished`).
//! - Supplements carry the input's latest user message id, a human author and `Soon` timing; their
//!   receipts stay on the original execution's events. Dropping a supplement's future before admission
//!   withdraws it (the future is the Go context); once admitted, the driver settles it.
//! - Only the creator of an execution drains its stream and calls [`RunRegistry::forget`] after
//!   completion; call options apply to newly started work only.
//!
//! The registry is concurrency-safe and `Default` is an empty, usable registry. Keys are thread keys
//! ([`super::thread_key`] of a client's `threadId`); a host serving several tenants or agents keeps one
//! registry per (tenant, agent).

use std::collections::HashMap;
use std::sync::Mutex;

use crate::driver::{Author, Timing};
use crate::runtime::{CallOptions, MessageError, MessageErrorKind, MessageOptions, Stream, Thread};

use super::RunAgentInput;

/// Why [`RunRegistry::send`] could not start or supplement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// The input carries no user message with text and no tool result to send.
    #[error("the input has no user message with text")]
    NoInput,
    /// The active execution refused the supplement.
    #[error(transparent)]
    Message(#[from] MessageError),
}

/// Active executions by thread key (see the module docs).
#[derive(Default)]
pub struct RunRegistry {
    active: Mutex<HashMap<String, Stream>>,
}

impl std::fmt::Debug for RunRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.active.lock().unwrap_or_else(|p| p.into_inner()).len();
        f.debug_struct("RunRegistry").field("threads", &n).finish()
    }
}

/// The text an input sends: the last user message's, or — when the input ends with a frontend tool's
/// result — that result, framed for the model.
pub fn input_text(input: &RunAgentInput) -> Option<String> {
    match input.tool_result() {
        Some((call, content)) => Some(format!("The result of tool call {call}: {content}")),
        None => input.prompt(),
    }
}

/// The message options of a supplement: the latest user id, a human author, `Soon`.
fn supplement_options(input: &RunAgentInput) -> MessageOptions {
    let mut opts = MessageOptions::new().from(Author::default()).when(Timing::Soon);
    if let Some(id) = input.last_user_id() {
        opts = opts.id(id);
    }
    opts
}

impl RunRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        RunRegistry::default()
    }

    /// The execution registered on `thread_key` while it has not finished.
    pub fn active(&self, thread_key: &str) -> Option<Stream> {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        let stream = active.get(thread_key)?;
        if stream.try_result().is_some() {
            active.remove(thread_key);
            return None;
        }
        Some(stream.clone())
    }

    /// Starts the input's turn on `thread` when it is idle (`false`), or supplements the active
    /// execution with it (`true`). `opts` apply to a started execution only.
    pub async fn send(
        &self,
        thread: &Thread,
        input: &RunAgentInput,
        opts: impl Into<CallOptions>,
    ) -> Result<(Stream, bool), SendError> {
        let text = input_text(input).ok_or(SendError::NoInput)?;
        let key = thread.key().to_owned();
        let active = {
            let mut map = self.active.lock().unwrap_or_else(|p| p.into_inner());
            match map.get(&key).filter(|s| s.try_result().is_none()) {
                Some(stream) => stream.clone(),
                None => {
                    let stream = thread.send(&text, opts);
                    map.insert(key, stream.clone());
                    return Ok((stream, false));
                }
            }
        };
        active.send(text, supplement_options(input)).await?;
        Ok((active, true))
    }

    /// Supplements the execution active on `thread_key` with the input; never starts one. No active
    /// execution is `ErrRunFinished`.
    pub async fn send_active(&self, thread_key: &str, input: &RunAgentInput) -> Result<Stream, MessageError> {
        let text = input_text(input).unwrap_or_default();
        let Some(active) = self.active(thread_key) else {
            return Err(MessageError {
                id: input.last_user_id().unwrap_or_default(),
                text,
                kind: MessageErrorKind::RunFinished,
            });
        };
        active.send(text, supplement_options(input)).await?;
        Ok(active)
    }

    /// Registers `stream`, started by the caller, as the execution active on `thread_key` (a host that
    /// starts its runs itself: the next [`RunRegistry::send`] or [`RunRegistry::send_active`] on the
    /// thread supplements it).
    pub fn track(&self, thread_key: &str, stream: &Stream) {
        self.active
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(thread_key.to_owned(), stream.clone());
    }

    /// Removes `stream` from `thread_key` (the creator, after draining it); a later execution
    /// registered on the thread stays.
    pub fn forget(&self, thread_key: &str, stream: &Stream) {
        let mut active = self.active.lock().unwrap_or_else(|p| p.into_inner());
        if active
            .get(thread_key)
            .is_some_and(|s| s.run_id() == stream.run_id())
        {
            active.remove(thread_key);
        }
    }
}
