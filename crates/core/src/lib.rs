//! agent-adaptor-core: the contract of agent-adaptor without a concrete provider, store backend or
//! HTTP server. A library that drives its own [`Driver`] (or one from `agent-adaptor-providers`)
//! depends on this crate alone; the facade crate `agent-adaptor` re-exports every module here under
//! the same path (`agent_adaptor::runtime::…` is `agent_adaptor_core::runtime::…`).
//!
//! | module | owns |
//! |---|---|
//! | [`vocab`] | the shared nouns: MCP servers, skills, service descriptors |
//! | [`driver`] | the Driver SPI, descriptors, process supervision, JSON-lines framing |
//! | [`runtime`] | Agent, Thread, Stream, Event, Result, options, policy, approvals, messages |
//! | [`recorder`] | recording a run's events into the store's log, redaction, exposure |
//! | [`skills`], [`profile`], [`workspace`] | skills, profile selections and working directories materialized for a run |
//! | [`tools`] | host tools over an authenticated loopback MCP server (axum + rmcp) |
//! | [`agui`] | contract events ↔ AG-UI events, the AG-UI run registry |
//! | [`acp`] | the Agent Client Protocol's wire types and JSON-RPC framing (no client, no server) |
//!
//! The store trait and its memory backend come from `agent-adaptor-store` (re-exported as [`store`]),
//! built here without its SQL backends: depending on this crate compiles no sqlx.

pub mod acp;
pub mod agui;
pub mod driver;
pub mod profile;
pub mod recorder;
pub mod runtime;
pub mod skills;
pub mod tools;
pub mod vocab;
pub mod workspace;

/// The store trait, its data types and the memory backend (`agent-adaptor-store`).
pub use agent_adaptor_store as store;

pub use driver::Driver;
pub use runtime::{Agent, CallOptions, Done, Error, Event, Payload, RunResult, Stream, Thread};
