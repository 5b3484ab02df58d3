//! The one integration-test binary: each module is one area of the system.
mod codex_lab;
