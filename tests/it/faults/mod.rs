//! Faults and hostile input (issue #22): a panicking run ends `failed` and frees what it held, request
//! values far out of range never panic the runtime, a crashed server's runs end visibly, one request
//! cannot flood the log, NUL and overlong identifiers are refused alike on every store, and store
//! errors never reach a client as their text.

mod crash;
mod flood;
mod nul;
mod panics;
mod store_errors;
mod tripwire;
