//! Tool errors: a [`Rejection`] (minted only by [`reject`], shown to the model) and internal failures,
//! which the model only ever sees as a sanitized message.

use std::fmt;

/// A model-visible, expected tool failure: a stable code and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// A short machine code, e.g. `not_found`.
    pub code: String,
    /// The message the model reads.
    pub message: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// Why a tool call failed.
///
/// Any `std::error::Error` converts into [`ToolError::Internal`] (so `?` works in handlers); only
/// [`reject`] makes a [`ToolError::Rejected`]. This type deliberately does not implement
/// `std::error::Error`, so a rejection can never be laundered into an internal error or back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// An expected failure the model sees verbatim.
    Rejected(Rejection),
    /// Anything else; the model sees only a sanitized message, the host's logs see this text.
    Internal(String),
}

impl ToolError {
    /// An internal failure with a host-side description.
    pub fn internal(cause: impl fmt::Display) -> ToolError {
        ToolError::Internal(cause.to_string())
    }

    /// The rejection, when this is one minted by [`reject`].
    pub fn as_rejection(&self) -> Option<&Rejection> {
        match self {
            ToolError::Rejected(r) => Some(r),
            ToolError::Internal(_) => None,
        }
    }

    /// The text the model sees: the rejection, or a fixed sanitized sentence.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            ToolError::Rejected(r) => r.to_string(),
            ToolError::Internal(_) => format!("internal_error: the tool {tool:?} failed"),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::Rejected(r) => write!(f, "rejected: {r}"),
            ToolError::Internal(m) => write!(f, "internal: {m}"),
        }
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::Internal(e.to_string())
    }
}

/// A model-visible expected failure (`code: message`). The only way to make a [`ToolError::Rejected`].
pub fn reject(code: impl Into<String>, message: impl Into<String>) -> ToolError {
    ToolError::Rejected(Rejection {
        code: code.into(),
        message: message.into(),
    })
}

/// A tool definition that cannot be offered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolDefinitionError {
    /// The name is not 1–64 characters of `[A-Za-z0-9_-]`.
    #[error("invalid tool name {0:?}: use 1-64 characters of [A-Za-z0-9_-]")]
    InvalidName(String),
    /// Two tools share a name.
    #[error("duplicate tool name {0:?}")]
    DuplicateName(String),
    /// A schema is not a JSON Schema object of type `object`.
    #[error("tool {tool:?}: {which} schema must be a JSON object schema of type \"object\": {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// Why.
        reason: String,
    },
    /// A Thread uses a tool without a semantic revision.
    #[error("tool {0:?} has no revision; tools used by a Thread need one (Tool::revision)")]
    MissingRevision(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reject_makes_a_rejection_and_other_errors_are_sanitized() {
        let r = reject("not_found", "no such city");
        assert_eq!(r.as_rejection().unwrap().code, "not_found");
        assert_eq!(r.model_text("weather"), "not_found: no such city");
        let io: ToolError = std::io::Error::other("secret path /etc/x").into();
        assert!(io.as_rejection().is_none());
        let text = io.model_text("weather");
        assert!(!text.contains("secret"), "{text}");
        assert!(text.contains("internal_error"));
    }
}
