//! The conformance kit, the reference driver, mock model servers and fake CLIs (feature `testkit`).

pub mod mock;
