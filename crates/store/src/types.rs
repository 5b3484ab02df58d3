//! The data the store keeps: thread records and leases, receipts, continuity history, the run event log,
//! runs and pending approvals.
//!
//! These are plain values (serde, no I/O). Enumerations that are stored as text have `as_str` / `parse`
//! pairs so every backend spells them the same way; `parse` returns `None` for an unknown spelling and the
//! backend turns that into [`StoreError::Corrupt`](super::StoreError::Corrupt).

use std::collections::BTreeMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Whether a thread record is the live one for its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThreadStatus {
    /// The record the key currently resolves to (at most one per tenant, agent and key).
    Active,
    /// A superseded or archived record; visible only with `include_archived`.
    Archived,
}

/// Who ran a thread: the agent identity recorded with its checkpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentIdentity {
    /// The agent's id.
    pub id: String,
    /// The tenant the agent belongs to.
    pub tenant: String,
    /// The profile the agent ran with.
    pub profile: String,
    /// A display name.
    pub name: String,
}

/// Provider resume state, as produced by a driver's session codec.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionState {
    /// The provider session id used to resume.
    pub resume_id: String,
    /// The id shown to people (often the same as `resume_id`).
    pub display_id: String,
    /// Guard keys and driver extras (working directory, workspace, fingerprints, ...).
    pub data: BTreeMap<String, String>,
}

/// One thread checkpoint record: what a host thread key resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The internal session id (unique across the store).
    pub id: String,
    /// The host's thread key, stored and compared verbatim.
    pub key: String,
    /// The tenant that owns the thread.
    pub tenant: String,
    /// The agent (host) name the thread belongs to: with `tenant` and `key` the thread's identity (a
    /// service agent's configured name, `""` for a library Agent built without one).
    #[serde(default)]
    pub host_agent: String,
    /// Active or archived.
    pub status: ThreadStatus,
    /// The driver that produced the checkpoint.
    pub driver_type: String,
    /// The agent identity the checkpoint belongs to.
    pub agent: AgentIdentity,
    /// The full fingerprint of the run configuration.
    pub fingerprint: String,
    /// The fingerprint that decides whether the session may be resumed.
    pub compatibility_fingerprint: String,
    /// The name of the session codec that wrote `state`.
    pub codec: String,
    /// The provider resume state, if the driver produced one.
    pub state: Option<SessionState>,
    /// When the record was first saved (kept across later saves of the same id).
    pub created_at: DateTime<Utc>,
    /// When the record was last saved; set by the store.
    pub updated_at: DateTime<Utc>,
}

/// How a [`Query`] finds a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lookup {
    /// By internal session id.
    Id(String),
    /// By host thread key: the active record for the key among the agent's threads.
    Key {
        /// The agent (host) name the thread belongs to ([`Record::host_agent`]).
        agent: String,
        /// The thread key.
        key: String,
    },
}

/// A lookup of one thread record, always inside one tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// The tenant to search in; records of other tenants are never returned.
    pub tenant: String,
    /// By id or by key.
    pub by: Lookup,
    /// Whether an archived record may be returned (by id; a key only ever resolves to its active record).
    pub include_archived: bool,
}

impl Query {
    /// The active record for `key` among the threads of `agent`.
    pub fn key(tenant: impl Into<String>, agent: impl Into<String>, key: impl Into<String>) -> Self {
        Query {
            tenant: tenant.into(),
            by: Lookup::Key {
                agent: agent.into(),
                key: key.into(),
            },
            include_archived: false,
        }
    }

    /// The record with internal id `id`, if active.
    pub fn id(tenant: impl Into<String>, id: impl Into<String>) -> Self {
        Query {
            tenant: tenant.into(),
            by: Lookup::Id(id.into()),
            include_archived: false,
        }
    }

    /// Also return archived records.
    pub fn include_archived(mut self) -> Self {
        self.include_archived = true;
        self
    }
}

/// An exclusive, expiring claim on a target, with a fencing token.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Lease {
    /// What is leased. Targets are global strings, not tenant-scoped: embed the tenant
    /// (a thread's is [`thread_lease_target`](super::thread_lease_target)).
    pub target: String,
    /// Who holds it.
    pub owner: String,
    /// The fencing token: strictly increasing per target, across owners, releases and restarts.
    pub token: u64,
    /// When the lease lapses unless renewed (by the store's clock).
    pub expires_at: DateTime<Utc>,
}

/// The one atomic write that persists a run's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FinalizeRequest {
    /// The record to save (inserted, or updated when its id exists with the same tenant and key).
    pub record: Record,
    /// The record this one supersedes, if any.
    pub previous_id: Option<String>,
    /// Every lease the writer holds; each must still be current (owner, token, unexpired).
    pub held_leases: Vec<Lease>,
    /// Archive `previous_id`.
    pub archive_old: bool,
    /// Make `record` the active record for its key, archiving any other active record for the key.
    pub rebind_active: bool,
    /// Fail with `AlreadyExists` if an active record for the key exists (the fork compare-and-set).
    pub require_key_absent: bool,
}

/// A page request over an ordered listing: items strictly after `after`, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Exclusive lower bound on the listing's sort key (`None` starts at the beginning).
    pub after: Option<String>,
    /// The maximum number of items; clamped to [`MAX_PAGE`](super::MAX_PAGE).
    pub limit: u32,
}

impl Page {
    /// The first `limit` items.
    pub fn first(limit: u32) -> Self {
        Page { after: None, limit }
    }

    /// The `limit` items after `after`.
    pub fn after(after: impl Into<String>, limit: u32) -> Self {
        Page {
            after: Some(after.into()),
            limit,
        }
    }
}

/// What a continuity entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ContinuityKind {
    /// Supplemental guidance the user sent during a run.
    Guidance,
    /// The final text of one assistant turn.
    AssistantTurn,
}

/// One entry of a thread's recovery context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinuityEntry {
    /// Guidance or assistant turn.
    pub kind: ContinuityKind,
    /// The text.
    pub text: String,
    /// When it happened.
    pub at: DateTime<Utc>,
}

/// An event to append to the run event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewEvent {
    /// The tenant.
    pub tenant: String,
    /// The agent (host) name that ran it: with `thread_key` it names the thread ([`Record::host_agent`]).
    #[serde(default)]
    pub agent: String,
    /// The thread the run belongs to; `None` for a direct (thread-less) task.
    pub thread_key: Option<String>,
    /// The run.
    pub run_id: String,
    /// The run's own sequence number (assigned by the caller; unique per tenant and run).
    pub seq: u64,
    /// The event kind, for filtering without decoding `event`.
    pub kind: String,
    /// The event itself.
    pub event: Value,
    /// When it happened.
    pub at: DateTime<Utc>,
}

/// An event as stored, with its store-assigned cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Store-assigned, never reused; strictly increasing in commit order across all events of a thread.
    pub cursor: u64,
    /// The tenant.
    pub tenant: String,
    /// The agent (host) name that ran it.
    #[serde(default)]
    pub agent: String,
    /// The thread, if any.
    pub thread_key: Option<String>,
    /// The run.
    pub run_id: String,
    /// The run's sequence number.
    pub seq: u64,
    /// The event kind.
    pub kind: String,
    /// The event.
    pub event: Value,
    /// When it happened.
    pub at: DateTime<Utc>,
}

impl EventRecord {
    /// Pairs an appended event with the cursor the store gave it.
    pub fn from_new(cursor: u64, event: NewEvent) -> Self {
        EventRecord {
            cursor,
            tenant: event.tenant,
            agent: event.agent,
            thread_key: event.thread_key,
            run_id: event.run_id,
            seq: event.seq,
            kind: event.kind,
            event: event.event,
            at: event.at,
        }
    }
}

/// What [`retention`](super::ThreadStore::retention) deletes. Both bounds apply; `None` disables one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionPolicy {
    /// Delete events whose `at` is older than this (by the store's clock).
    pub max_age: Option<Duration>,
    /// Keep at most this many events per tenant, deleting the oldest (lowest cursor) first.
    pub max_events_per_tenant: Option<u64>,
}

/// The lifecycle state of a service run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// Admitted, not started.
    Queued,
    /// Executing on its owner replica.
    Running,
    /// Finished successfully.
    Succeeded,
    /// Finished with an error.
    Failed,
    /// Cancelled by request.
    Cancelled,
    /// Its owner replica went away mid-run.
    Interrupted,
    /// Waiting for an approval while the CLI stays parked.
    Parked,
}

/// A run as the service tracks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run id (unique across the store).
    pub run_id: String,
    /// The tenant.
    pub tenant: String,
    /// The agent that runs it.
    pub agent: String,
    /// The thread, if any.
    pub thread_key: Option<String>,
    /// The lifecycle state.
    pub state: RunState,
    /// The replica that owns the run.
    pub owner: String,
    /// The result, once there is one.
    pub result: Option<Value>,
    /// The error, once there is one.
    pub error: Option<Value>,
    /// When the run was created.
    pub created_at: DateTime<Utc>,
    /// When the run last changed; set by the store.
    pub updated_at: DateTime<Utc>,
}

/// Where a pending approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalState {
    /// Waiting for a decision.
    Pending,
    /// Decided (exactly once).
    Resolved,
    /// The deadline passed without a decision.
    Expired,
}

/// An approval request that outlives the HTTP connection that will answer it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// The tenant.
    pub tenant: String,
    /// The run that asked.
    pub run_id: String,
    /// The request id (unique per tenant).
    pub request_id: String,
    /// The approval kind (permission, plan review, question, ...).
    pub kind: String,
    /// What is being asked.
    pub payload: Value,
    /// Pending, resolved or expired.
    pub state: ApprovalState,
    /// The decision, once resolved.
    pub decision: Option<Value>,
    /// When the request was made.
    pub created_at: DateTime<Utc>,
    /// After this instant the request can no longer be resolved.
    pub deadline: DateTime<Utc>,
}

/// A thread a host declared before it ever ran (the service's create and fork): what its runs inherit.
/// Keyed by `(tenant, agent, key)`; it stays until the host deletes it (archive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Declaration {
    /// The tenant.
    pub tenant: String,
    /// The agent (host) name the thread belongs to.
    pub agent: String,
    /// The thread key.
    pub key: String,
    /// The host's run defaults, opaque to the store.
    pub defaults: Value,
    /// The parent thread of a fork.
    pub forked_from: Option<String>,
    /// When it was declared.
    pub created_at: DateTime<Utc>,
}

/// Implements `as_str` / `parse` for an enum stored as text.
macro_rules! text_enum {
    ($ty:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl $ty {
            /// The stored spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($ty::$variant => $text),+ }
            }

            /// Parses the stored spelling; `None` for anything else.
            pub fn parse(text: &str) -> Option<Self> {
                match text { $($text => Some($ty::$variant),)+ _ => None }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(ThreadStatus { Active => "active", Archived => "archived" });
text_enum!(ContinuityKind { Guidance => "guidance", AssistantTurn => "assistant_turn" });
text_enum!(ApprovalState { Pending => "pending", Resolved => "resolved", Expired => "expired" });
text_enum!(RunState {
    Queued => "queued",
    Running => "running",
    Succeeded => "succeeded",
    Failed => "failed",
    Cancelled => "cancelled",
    Interrupted => "interrupted",
    Parked => "parked",
});

impl RunState {
    /// Succeeded, failed, cancelled and interrupted are final: the store refuses to change them.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            RunState::Succeeded | RunState::Failed | RunState::Cancelled | RunState::Interrupted
        )
    }

    /// The states a crashed replica's runs can be in (and [`mark_interrupted`](super::ThreadStore::mark_interrupted) ends).
    pub fn is_live(self) -> bool {
        matches!(self, RunState::Queued | RunState::Running | RunState::Parked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_enums_round_trip_and_reject_unknown() {
        for state in [
            RunState::Queued,
            RunState::Running,
            RunState::Succeeded,
            RunState::Failed,
            RunState::Cancelled,
            RunState::Interrupted,
            RunState::Parked,
        ] {
            assert_eq!(RunState::parse(state.as_str()), Some(state));
            let json = serde_json::to_value(state).unwrap();
            assert_eq!(json, Value::String(state.as_str().to_owned()));
        }
        assert_eq!(ThreadStatus::parse("Active"), None);
        assert_eq!(
            ContinuityKind::parse("assistant_turn"),
            Some(ContinuityKind::AssistantTurn)
        );
        assert_eq!(ApprovalState::parse(""), None);
    }

    #[test]
    fn terminal_and_live_states_partition_run_states() {
        assert!(RunState::Interrupted.is_terminal());
        assert!(!RunState::Parked.is_terminal());
        assert!(RunState::Parked.is_live());
        assert!(!RunState::Succeeded.is_live());
    }
}
