//! agent-adaptor: drive coding-agent CLIs (Claude Code, Codex, Cursor agent, CodeBuddy Code) through one
//! contract — Agent, Thread, Stream, Event, Result, Driver — as a library and as an HTTP/SSE/AG-UI service.
//!
//! # The contract, from the crate root
//!
//! - [`Agent`]: one configured driver. `send` starts a run and returns its [`Stream`] at once; `thread(key)`
//!   names a durable conversation.
//! - [`Thread`]: runs on one key, one at a time, each resuming the last checkpoint (leases, receipts).
//! - [`Stream`]: one run. [`Event`]s in strictly increasing sequence, `RunStarted` first and [`Done`] last;
//!   `send` adds a message mid-run; `result()` is the verdict.
//! - [`Event`]: a sequence number, metadata and a [`Payload`] (text, reasoning, tool calls, approvals, notices).
//! - [`RunResult`]: the contract's Result (named so it does not shadow `std::result::Result`): text, turns,
//!   usage, transcript; [`Error`] is the one failure type, keeping the partial result.
//! - [`Driver`]: the SPI a CLI adapter implements; the four built-in ones live in [`providers`], the
//!   conformance kit that checks a third-party one in `testkit`.
//!
//! ```no_run
//! use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
//! use agent_adaptor::{Agent, CallOptions, Payload};
//! use futures::StreamExt;
//!
//! # async fn demo() -> Result<(), agent_adaptor::Error> {
//! let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
//! let stream = agent.send("Review the diff", CallOptions::new());
//! let mut events = stream.events();
//! while let Some(ev) = events.next().await {
//!     if let Payload::TextDelta(t) = &ev.payload {
//!         print!("{}", t.text);
//!     }
//! }
//! let result = stream.result().await?;
//! println!("\n{} turn(s)", result.turns);
//! # Ok(()) }
//! ```
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
//! Each layer is a crate of the workspace (`docs/workspace.md`); this crate is the facade that re-exports
//! them under these paths, plus the binaries. A library that needs only the runtime and the SPI depends
//! on `agent-adaptor-core` (no sqlx, no HTTP server). See `ARCHITECTURE.md` for the invariants each layer
//! keeps.

pub use agent_adaptor_core::{agui, driver, profile, recorder, runtime, skills, tools, vocab, workspace};
/// The HTTP/SSE/AG-UI service (`agent-adaptor-server`).
pub use agent_adaptor_server as server;
pub use agent_adaptor_server::{acp, providers};
pub use agent_adaptor_store as store;
/// The conformance kit, the reference driver, mock model servers and fake CLIs (`agent-adaptor-testkit`).
#[cfg(feature = "testkit")]
pub use agent_adaptor_testkit as testkit;

pub use driver::Driver;
pub use runtime::{Agent, CallOptions, Done, Error, Event, Payload, RunResult, Stream, Thread};
