//! The message SPI: supplemental input that a Driver claims at the boundaries it declared and
//! acknowledges exactly once.
//!
//! The core owns admission, ordering, framing and accounting; the Driver owns actual delivery.
//! A [`ClaimedMessage`] must be settled with [`ClaimedMessage::ack`] exactly once: `ack` consumes
//! it, and dropping it unsettled requeues it and records a protocol violation that the
//! conformance kit reports.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::sync::watch;

/// When a supplemental message should reach the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Timing {
    /// The earliest declared boundary, with turn-end continuation as fallback (the default).
    #[default]
    Soon = 0,
    /// Abort the current provider turn and continue with the input. Needs interrupt support.
    Interrupt = 1,
    /// Only at turn end, within this execution.
    AfterTurn = 2,
}

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum AuthorKind {
    /// A person (the default).
    #[default]
    Human = 1,
    /// Another agent (a peer).
    Agent = 2,
    /// The system or host itself.
    System = 3,
}

/// The author of a message: a kind plus optional id and display name.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Author {
    /// Authority class.
    pub kind: AuthorKind,
    /// Opaque author id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

impl Author {
    /// A human author with an id.
    pub fn human(id: impl Into<String>) -> Self {
        Author {
            kind: AuthorKind::Human,
            id: id.into(),
            name: String::new(),
        }
    }
}

/// A point where a Driver can hand input to the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Boundary {
    /// Inside a running turn (the provider folds input in at its next model request or tool boundary).
    InTurn,
    /// Between provider turns of one execution.
    TurnEnd,
    /// After aborting the current turn.
    Interrupt,
}

impl Boundary {
    /// The wire name (`in_turn`, `turn_end`, `interrupt`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Boundary::InTurn => "in_turn",
            Boundary::TurnEnd => "turn_end",
            Boundary::Interrupt => "interrupt",
        }
    }

    /// Whether a message of `timing` may be claimed at this boundary.
    pub fn admits(&self, timing: Timing) -> bool {
        match (self, timing) {
            (Boundary::InTurn, Timing::Soon) => true,
            (Boundary::InTurn, _) => false,
            (Boundary::TurnEnd, _) => true,
            (Boundary::Interrupt, _) => true,
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a message was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageFailure {
    /// The execution or the message was cancelled.
    Cancelled,
    /// The provider refused it.
    ProviderRejected,
    /// It was not delivered in time.
    Timeout,
    /// The turn limit was reached first.
    LimitExceeded,
    /// The execution failed before delivering it.
    RunFailed,
}

impl MessageFailure {
    /// The wire name.
    pub fn as_str(&self) -> &'static str {
        match self {
            MessageFailure::Cancelled => "cancelled",
            MessageFailure::ProviderRejected => "provider_rejected",
            MessageFailure::Timeout => "timeout",
            MessageFailure::LimitExceeded => "limit_exceeded",
            MessageFailure::RunFailed => "run_failed",
        }
    }
}

/// How a Driver settles a claimed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ack {
    /// The provider accepted the input at the claimed boundary (not: followed the instruction).
    Delivered {
        /// The transport mechanism (`stdin`, `steer`, `turn_start`, …).
        mechanism: String,
    },
    /// The input could not be delivered and will not be retried.
    Failed(MessageFailure),
    /// Put the input back for a later boundary (e.g. turn-end continuation). When the attempt may
    /// have reached the provider, set `possible_duplicate`.
    Requeue {
        /// The provider may already have seen it.
        possible_duplicate: bool,
    },
}

/// A message handed to the Driver. Settle it with [`ClaimedMessage::ack`].
pub struct ClaimedMessage {
    /// Thread-scoped idempotency id.
    pub id: String,
    /// The framed text to send to the provider.
    pub text: String,
    /// The original text as the host sent it.
    pub original: String,
    /// Author.
    pub from: Author,
    /// Requested timing.
    pub timing: Timing,
    /// The boundary it was claimed at.
    pub boundary: Boundary,
    /// True when an earlier attempt may already have reached the provider.
    pub possible_duplicate: bool,
    settle: Option<Arc<dyn MessageBackend>>,
}

impl fmt::Debug for ClaimedMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClaimedMessage")
            .field("id", &self.id)
            .field("timing", &self.timing)
            .field("boundary", &self.boundary)
            .finish_non_exhaustive()
    }
}

impl ClaimedMessage {
    /// Builds a claim bound to a backend (used by message-queue implementations).
    pub fn new(fields: ClaimFields, backend: Arc<dyn MessageBackend>) -> Self {
        ClaimedMessage {
            id: fields.id,
            text: fields.text,
            original: fields.original,
            from: fields.from,
            timing: fields.timing,
            boundary: fields.boundary,
            possible_duplicate: fields.possible_duplicate,
            settle: Some(backend),
        }
    }

    /// Settles the claim exactly once.
    pub fn ack(mut self, ack: Ack) {
        if let Some(backend) = self.settle.take() {
            backend.settle(&self.id, self.boundary, ack);
        }
    }
}

impl Drop for ClaimedMessage {
    fn drop(&mut self) {
        if let Some(backend) = self.settle.take() {
            backend.unsettled(&self.id, self.boundary);
        }
    }
}

/// The data of a claim, as a queue implementation produces it.
#[derive(Debug, Clone)]
pub struct ClaimFields {
    /// Message id.
    pub id: String,
    /// Framed text.
    pub text: String,
    /// Original text.
    pub original: String,
    /// Author.
    pub from: Author,
    /// Timing.
    pub timing: Timing,
    /// Boundary claimed at.
    pub boundary: Boundary,
    /// Possible duplicate flag.
    pub possible_duplicate: bool,
}

/// Counts of unclaimed messages by timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pending {
    /// Soon messages.
    pub soon: usize,
    /// AfterTurn messages.
    pub after_turn: usize,
    /// Interrupt messages.
    pub interrupt: usize,
}

impl Pending {
    /// Total pending.
    pub fn total(&self) -> usize {
        self.soon + self.after_turn + self.interrupt
    }
}

/// What the core implements behind a [`MessagePort`].
pub trait MessageBackend: Send + Sync {
    /// Unclaimed counts.
    fn pending(&self) -> Pending;
    /// Claims every message admissible at `boundary`, in admission order. Returns nothing when the
    /// turn limit forbids another turn and `boundary` would start one.
    fn claim(self: Arc<Self>, boundary: Boundary) -> Vec<ClaimedMessage>;
    /// Settles a claim.
    fn settle(&self, id: &str, boundary: Boundary, ack: Ack);
    /// A claim was dropped without being settled (a Driver bug): requeue and record it.
    fn unsettled(&self, id: &str, boundary: Boundary);
}

/// The Driver's view of the supplemental-message queue of one execution.
#[derive(Clone)]
pub struct MessagePort {
    backend: Arc<dyn MessageBackend>,
    changes: watch::Receiver<u64>,
}

impl fmt::Debug for MessagePort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessagePort")
            .field("pending", &self.backend.pending())
            .finish()
    }
}

impl MessagePort {
    /// Wraps a backend; `changes` ticks whenever a message is admitted or requeued.
    pub fn new(backend: Arc<dyn MessageBackend>, changes: watch::Receiver<u64>) -> Self {
        MessagePort { backend, changes }
    }

    /// Unclaimed counts by timing.
    pub fn pending(&self) -> Pending {
        self.backend.pending()
    }

    /// Claims the messages admissible at `boundary`.
    pub fn claim(&self, boundary: Boundary) -> Vec<ClaimedMessage> {
        self.backend.clone().claim(boundary)
    }

    /// Waits until the queue changes (a new admission or a requeue). Returns immediately when
    /// something changed since the last call on this port clone.
    pub async fn changed(&mut self) {
        if self.changes.changed().await.is_err() {
            // The execution ended; park forever so a select! on this branch never spins.
            std::future::pending::<()>().await;
        }
    }
}
