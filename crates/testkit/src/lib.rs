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

// The core modules at this crate's root, so test-kit code keeps its `crate::driver::…` paths.
pub(crate) use agent_adaptor_core::driver;
pub(crate) use agent_adaptor_providers as providers;
