//! Provider drivers, one module per coding-agent CLI, and the capability matrix rendered from their
//! descriptors.

pub mod acp;
pub mod capabilities;
pub mod claude;
pub mod codebuddy;
pub mod codex;
pub mod cursor;
pub mod registry;
pub(crate) mod status;
pub mod stream_json;
