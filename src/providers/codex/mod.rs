//! The Codex CLI provider (`@openai/codex` 0.171.0).
//!
//! Two transports: `codex exec --json` (one JSONL event stream per run, no deltas, no approvals)
//! and `codex app-server` (JSON-RPC over stdio: deltas, approvals as server requests, steer,
//! interrupt, resume and fork). [`wire`] mirrors both protocols exactly; the driver and the
//! translation into runtime events build on it. Verified facts: `docs/providers/codex-wire.md`.

pub mod wire;
