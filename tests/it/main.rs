//! The one integration-test binary: each module is one area of the system.

mod capabilities;
mod claude_driver;
mod claude_lab;
mod cli;
mod codebuddy_driver;
mod codebuddy_lab;
mod codex_driver;
mod codex_lab;
mod conformance;
mod cursor_driver;
mod cursor_fake;
mod cursor_skills;
mod driver_support;
mod host_identity;
mod loadgen;
mod process;
mod profile;
mod recorder;
mod runtime;
mod server;
mod skills;
mod store;
mod threads;
mod tidy;
mod tools;
mod workspace;
