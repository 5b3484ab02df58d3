//! The conformance kit, the reference driver, mock model servers and fake CLIs (feature `testkit`).

pub mod claude_env;
pub mod cli;
pub mod codebuddy_env;
pub mod codex_env;
pub mod conformance;
pub mod fake_acp;
pub mod fake_cursor;
pub mod mock;
pub mod reference;
pub mod store;
