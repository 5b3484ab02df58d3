//! The Codex lab: drives the real Codex CLI 0.171.0 offline against the Responses mock, asserts
//! what it does, and records the transcripts under `tests/fixtures/codex/`.
//!
//! Run: `cargo nextest run --test it codex_lab` (replays: live run + skeleton check against the
//! committed fixtures). Re-record: `RECORD_FIXTURES=1 cargo nextest run --test it codex_lab`.
//! Needs `AGENT_ADAPTOR_CODEX_BIN` (see `scripts/install-clis.sh`); prints SKIPPED otherwise.

mod as_approvals;
mod as_basic;
mod as_pending;
mod as_steer;
mod client;
mod exec;
mod fixture;
mod harness;
