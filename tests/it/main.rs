//! The one integration-test binary: each module is one area of the system.

mod claude_lab;
mod conformance;
mod process;
mod runtime;
mod store;
mod tidy;
