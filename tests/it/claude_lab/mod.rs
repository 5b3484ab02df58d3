//! Real Claude Code CLI against the mock Anthropic server: each test runs one scenario, asserts what
//! it must show, and (with `RECORD_FIXTURES=1`) rewrites `tests/fixtures/claude/<scenario>.jsonl`.

mod bidi;
pub mod brain;
mod errors;
mod frames;
mod midrun;
mod print;
mod runner;
