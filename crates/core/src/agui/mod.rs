//! The AG-UI protocol (1.0, and the subset CopilotKit's pinned 0.0.59 client accepts): event
//! types, the translation of runtime [`Event`](crate::runtime::Event)s into AG-UI events, and the
//! `RunAgentInput` request, approvals as interrupts or decision tool calls ([`interrupts`]), and the
//! bridge's [`RunRegistry`] of active executions per thread (spec §17). Pure
//! protocol: no HTTP here — the server mounts it.
//!
//! The translation keeps the client's verifier happy by construction: `RUN_STARTED` first, exactly
//! one terminal (`RUN_FINISHED` or `RUN_ERROR` with the failure reason as `code`), every text,
//! reasoning and tool-call lifecycle opened before use and closed before the terminal, a fresh
//! message id per text segment (a tool call closes the open text), reasoning with role
//! `reasoning`, tool results as strings, and only event types both clients know. Every minted id
//! (message, reasoning, tool call) is unique across the runs of a thread and the same on replay.

pub mod events;
pub mod input;
pub mod interrupts;
pub mod registry;
mod translate;

pub use events::{AguiEvent, Interrupt, Outcome};
pub use input::{InputMessage, RunAgentInput, thread_key};
pub use interrupts::{Answer, AnswerError, ApprovalMode};
pub use registry::{RunRegistry, SendError, input_text};
pub use translate::{Translator, tool_call_id};
