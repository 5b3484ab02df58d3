//! Provider drivers, one module per coding-agent CLI.

pub mod claude;
pub mod codebuddy;
pub mod codex;
pub mod cursor;
