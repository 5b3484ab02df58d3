//! The conformance kit, the reference driver, mock model servers and fake CLIs (feature `testkit`).

pub mod cli;
pub mod codex_env;
pub mod mock;
