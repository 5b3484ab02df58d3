//! The decision SPI: how a Driver asks the host for an approval, a plan review or an answer.
//!
//! The Driver describes the request; the core applies the policy (auto modes, timeout, reject
//! and retry fallbacks), talks to the host (handler or event form) and returns one final
//! [`DecisionOutcome`]. Dropping the future returned by [`DecisionSink::request`] withdraws the
//! request (the provider cancelled it): the host then sees it as expired.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::payload::JsonMap;

/// What is being decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// May a tool run?
    Permission,
    /// Is this plan accepted?
    PlanReview,
    /// The model asks the user a question.
    Question,
}

impl DecisionKind {
    /// The wire name.
    pub fn as_str(&self) -> &'static str {
        match self {
            DecisionKind::Permission => "permission",
            DecisionKind::PlanReview => "plan_review",
            DecisionKind::Question => "question",
        }
    }
}

/// A selectable answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DecisionChoice {
    /// Stable key the host answers with.
    pub key: String,
    /// Display label.
    pub label: String,
    /// Longer description.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A request for a human decision, as the Driver describes it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct DecisionRequest {
    /// What kind of decision.
    pub kind: Option<DecisionKind>,
    /// Short title (tool name and command, the plan headline, the question).
    pub title: String,
    /// Provider source label, e.g. `claude.can_use_tool`.
    pub source: String,
    /// The provider tool call this decision gates, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_call_id: String,
    /// Choices for questions (and optionally for the others).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<DecisionChoice>,
    /// Provider details (tool input, plan text, questions…).
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub details: JsonMap,
}

/// The final outcome handed back to the Driver.
#[derive(Debug, Clone, PartialEq)]
pub enum DecisionOutcome {
    /// Go ahead.
    Approved,
    /// The question was answered: a choice key or free text.
    Answered {
        /// The answer text (the choice label when a choice was picked).
        answer: String,
        /// The choice key, when the answer matched one.
        choice: Option<String>,
    },
    /// Refused (by a human, a policy or a timeout).
    Denied {
        /// Model-facing reason.
        reason: String,
        /// When true, the run is being aborted: stop the provider turn instead of letting the model
        /// continue (the reject/timeout fallback is Abort).
        interrupt: bool,
    },
}

/// What the core implements behind a [`DecisionSink`].
#[async_trait::async_trait]
pub trait DecisionBackend: Send + Sync {
    /// Resolves one request under the policy.
    async fn request(&self, request: DecisionRequest) -> DecisionOutcome;
}

/// The Driver's handle for asking decisions.
#[derive(Clone)]
pub struct DecisionSink {
    backend: Arc<dyn DecisionBackend>,
}

impl fmt::Debug for DecisionSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DecisionSink")
    }
}

impl DecisionSink {
    /// Wraps a backend.
    pub fn new(backend: Arc<dyn DecisionBackend>) -> Self {
        DecisionSink { backend }
    }

    /// Asks for a decision and waits for the final outcome under the run's policy.
    pub async fn request(&self, request: DecisionRequest) -> DecisionOutcome {
        self.backend.request(request).await
    }
}
