//! The CodeBuddy Code driver's provider module. So far only [`wire`]: the exact serde mirror of the CLI's
//! stream-json protocol, both directions. The driver itself (process, transport, translation) builds on it.
//!
//! Facts about the protocol, verified against CodeBuddy Code 2.117.0: `docs/providers/codebuddy-wire.md`.

pub mod wire;
