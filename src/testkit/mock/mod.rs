//! Scriptable mock model servers on 127.0.0.1 that the real CLIs talk to in tests.

pub mod anthropic;
pub mod chat;
pub mod responses;
pub mod sse_mcp;
