//! Provider drivers, one module per coding-agent CLI, and the capability matrix rendered from their
//! descriptors.
//!
//! The provider registry (which providers exist, a name plus configuration → a driver) is the server
//! crate's (`agent_adaptor_server::providers::registry`, `agent_adaptor::providers::registry` in the
//! facade): it also builds the test kit's `reference` driver, and the test kit depends on this crate.

pub mod acp;
pub mod capabilities;
pub mod claude;
pub mod codebuddy;
pub mod codex;
pub mod cursor;
pub(crate) mod status;
pub mod stream_json;

// The core modules at this crate's root, so provider code keeps its `crate::driver::…` paths.
pub(crate) use agent_adaptor_core::{driver, skills, vocab};
