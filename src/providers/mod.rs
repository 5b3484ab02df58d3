//! Provider drivers, one module per coding-agent CLI.

pub mod codex;
