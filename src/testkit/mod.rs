//! The conformance kit, the reference driver, mock model servers and fake CLIs (feature `testkit`).

pub mod cli;
pub mod codebuddy_env;
pub mod fake_cursor;
pub mod mock;
