//! [`SkillError`]: the spec's skill errors (§8), each with the key it concerns.

/// Why a skill could not be resolved or materialized. Any of these stops the launch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkillError {
    /// A bare key the provider does not know (`ErrSkillNotFound`).
    #[error("skill not found: {0:?}")]
    NotFound(String),
    /// Two skills share a key with different content (`ErrSkillKeyConflict`).
    #[error("conflicting skills for key {0:?}")]
    KeyConflict(String),
    /// The source exists but could not be materialized (`ErrSkillMaterializationFailed`).
    #[error("skill {key:?} could not be materialized: {reason}")]
    MaterializationFailed {
        /// The skill key.
        key: String,
        /// Why.
        reason: String,
    },
    /// The source (directory, archive, `SKILL.md`) does not exist (`ErrSkillSourceMissing`).
    #[error("skill {key:?}: source missing: {what}")]
    SourceMissing {
        /// The skill key.
        key: String,
        /// What is missing.
        what: String,
    },
    /// A skill without a usable key (`ErrSkillKeyMissing`).
    #[error("skill key missing or invalid: {0:?}")]
    KeyMissing(String),
}

impl SkillError {
    /// The stable code (matches the runtime's error codes).
    pub fn code(&self) -> &'static str {
        match self {
            SkillError::NotFound(_) => "skill_not_found",
            SkillError::KeyConflict(_) => "skill_key_conflict",
            SkillError::MaterializationFailed { .. } => "skill_materialization_failed",
            SkillError::SourceMissing { .. } => "skill_source_missing",
            SkillError::KeyMissing(_) => "skill_key_missing",
        }
    }
}
