//! The runtime: the public nouns — Agent, Stream, Event, Result — and their orchestration.
//!
//! This layer depends on the Driver SPI ([`crate::driver`]) and never on a concrete driver,
//! store, HTTP framework or database (a tidy test checks it).

mod admission;
mod agent;
pub mod approval;
mod broker;
mod decide;
pub mod error;
pub mod event;
mod execution;
mod identity;
mod inspector;
mod messages;
pub mod options;
mod pipeline;
mod profile;
mod release;
mod rescue;
pub mod result;
mod services;
pub mod settings;
mod skills;
mod standby;
mod stream;
pub mod structured;
mod thread;
mod verdict;
mod workspace;

pub use agent::{Agent, AgentBuilder, Runner, run_as};
pub use approval::{ApprovalHandler, ApprovalKind, ApprovalRequest, Origin, approve_all, deny_all};
pub use broker::{DEFAULT_EVENT_BUFFER, Events};
pub use error::{
    ApprovalError, ConfigError, Error, ErrorInfo, ErrorKind, FailureReason, MessageError, MessageErrorKind,
    RunError, ThreadErrorKind,
};
pub use event::{Done, Dropped, Event, EventMeta, MessageUpdate, Payload, RunFinished, RunStarted, TurnEnd};
pub use identity::identity_from_context;
pub use inspector::{InspectedSkill, Inspector, SkillProbeError, SkillReport, SkillSourceKind};
pub use options::{CallOptions, MessageOptions, message_attributes};
pub use profile::{SkillInfo, SkillSnapshot};
pub use result::{
    DecodeError, MessageOutcome, MessageState, RunResult, ServiceReport, SubagentResult, compose_results,
};
pub use services::{
    RunAttachment, RunEventSource, RunResults, RunServiceProvider, ServiceError, ServiceManager,
    ServiceRequest,
};
pub use standby::{STANDBY_EVENT_BUFFER, Standby};
pub use stream::{RunOutcome, Stream};
pub use structured::SchemaOptions;
/// The store lease target of a thread (the service frees a crashed replica's thread leases by it).
#[doc(hidden)]
pub use thread::lease_target;
pub use thread::{CheckpointInfo, DEFAULT_TENANT, LEASE_RENEW, LEASE_TTL, Thread};
