//! The Cursor agent driver's provider module. So far only [`wire`]: serde types for the documented
//! `cursor-agent -p --output-format stream-json` protocol and a strict validator of its rules. The real CLI
//! cannot be installed here; `testkit::fake_cursor` speaks the same frames. Sources: `docs/providers/cursor.md`.

pub mod wire;
