//! The conformance kit, the reference driver, mock model servers and fake CLIs (feature `testkit`).

pub mod claude_env;
pub mod cli;
pub mod conformance;
pub mod mock;
pub mod reference;
pub mod store;
