//! The `agent-adaptor` command line.

fn main() {}
