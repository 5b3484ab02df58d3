//! The Claude Code driver: `wire` mirrors the CLI's stream-json protocol exactly; the driver itself
//! (process, translation to runtime events) builds on it.

pub mod wire;
