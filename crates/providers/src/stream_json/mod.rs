//! What the stream-json family of drivers (Claude Code and CodeBuddy, whose CLIs speak the same
//! `--output-format stream-json` dialect and the same `can_use_tool` control protocol) share: the
//! content-block translation state, the `can_use_tool` decision mapping, reserved-flag filtering, the
//! process wrapper and the per-invocation plumbing.
//!
//! Each provider keeps its own wire types and its real differences (CodeBuddy's `allowed` answer shape,
//! its hold-until-result message rule, Claude's usage deduplication and native mid-run messages); the
//! pieces here take neutral inputs so neither provider's wire types leak into the other.

pub mod argv;
pub mod blocks;
pub mod config;
pub mod decision;
pub mod events;
pub mod proc;
pub mod run;
