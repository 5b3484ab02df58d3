//! Provider drivers, one module per coding-agent CLI.

pub mod codebuddy;
pub mod cursor;
