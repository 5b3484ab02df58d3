//! agent-adaptor: drive coding-agent CLIs (Claude Code, Codex, Cursor agent, CodeBuddy Code) through one
//! contract — Agent, Thread, Stream, Event, Result, Driver — as a library and as an HTTP/SSE/AG-UI service.
//!
//! # Layout
//!
//! | module | owns | must not |
//! |---|---|---|
//! | [`runtime`] | Agent, Thread, Stream, Event, Result, options, policy, approvals, messages | import axum, sqlx or a concrete driver/store |
//! | [`driver`] | the Driver SPI, descriptors, process supervision, JSON-lines framing | know about HTTP or AG-UI |
//! | [`providers`] | one driver per CLI, each with its own wire types | share wire types across providers |
//! | [`profile`] | profile selections, resources and their materialization into a config dir | spawn processes |
//! | [`store`] | the `ThreadStore` trait and its memory / SQLite / Postgres backends | leak sqlx types through the trait |
//! | `testkit` | reference driver, conformance kit, mock model servers, fake CLIs | ship without the `testkit` feature |
//!
//! See `ARCHITECTURE.md` for the invariants each layer keeps.

pub mod acp;
pub mod agui;
pub mod driver;
pub mod profile;
pub mod providers;
pub mod recorder;
pub mod runtime;
pub mod server;
pub mod skills;
pub mod store;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tools;
pub mod vocab;
pub mod workspace;
