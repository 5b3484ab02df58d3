//! The end of a Codex invocation, the same on both transports: what the run knows when it ends
//! ([`Finished`]) becomes the driver's [`Response`] — the checkpoint (valid only on success), the
//! `transport` / `turns` / `thread_id` / `turn_id` metadata and the structured output of a schema run.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::driver::{ExitInfo, Failure, RawStreams, Request, Response, TranscriptItem, Usage};

use super::super::DRIVER_TYPE;
use super::super::transport::Transport;

/// What an ended invocation hands over (the translator's and the process's parts, taken out).
pub(super) struct Finished<'a> {
    /// The run's request.
    pub req: &'a Request,
    /// The `CODEX_HOME` the run used.
    pub home: &'a Path,
    /// The transport the run used.
    pub transport: Transport,
    /// Whether the run succeeded (a clean terminal, a clean process, no failure).
    pub success: bool,
    /// Turns started.
    pub turns: u32,
    /// The Codex thread, when one started.
    pub thread_id: Option<String>,
    /// The last turn, when the transport names it.
    pub turn_id: Option<String>,
    /// The final text.
    pub text: String,
    /// The model.
    pub model: String,
    /// Usage, when reported.
    pub usage: Option<Usage>,
    /// The transcript.
    pub transcript: Vec<TranscriptItem>,
    /// The raw streams.
    pub raw: RawStreams,
    /// The failure, if any.
    pub failure: Option<Failure>,
    /// How the process ended.
    pub exit: Option<ExitInfo>,
}

impl Finished<'_> {
    /// The driver's response.
    pub(super) fn response(self) -> Response {
        let checkpoint = self
            .thread_id
            .as_deref()
            .map(|id| super::checkpoint(id, self.req, self.home, self.success));
        let mut metadata = BTreeMap::new();
        metadata.insert("transport".into(), self.transport.as_str().into());
        metadata.insert("turns".into(), self.turns.to_string());
        if let Some(t) = self.thread_id {
            metadata.insert("thread_id".into(), t);
        }
        if let Some(t) = self.turn_id {
            metadata.insert("turn_id".into(), t);
        }
        let structured = if self.success && self.req.output_schema.is_some() {
            serde_json::from_str::<Value>(&self.text).ok()
        } else {
            None
        };
        Response {
            text: self.text,
            summary: String::new(),
            model: self.model,
            provider: DRIVER_TYPE.into(),
            usage: self.usage,
            metadata,
            transcript: self.transcript,
            raw: self.raw,
            checkpoint,
            failure: self.failure,
            exit: self.exit,
            structured,
        }
    }
}
