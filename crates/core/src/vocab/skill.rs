//! Skill references: where a skill comes from and the key it is known by.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where a skill's content comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum SkillSource {
    /// A directory containing `SKILL.md`.
    Dir {
        /// The directory.
        path: PathBuf,
    },
    /// An inline `SKILL.md` body.
    Inline {
        /// The content.
        content: String,
    },
    /// A key resolved by the Agent's skill provider.
    Key,
    /// Embedded files (relative path → content), e.g. from `include_str!`; must hold `SKILL.md`.
    Files {
        /// The files.
        files: std::collections::BTreeMap<String, String>,
    },
    /// A zip, tar or tgz archive holding `SKILL.md` at its root or in one top-level directory;
    /// extracted under the materializer's limits.
    Archive {
        /// The archive file.
        path: PathBuf,
    },
}

/// A skill to materialize for a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SkillRef {
    /// The skill key (unique per run).
    pub key: String,
    /// Its source.
    pub source: SkillSource,
    /// Fail the launch when it cannot be materialized.
    #[serde(default)]
    pub required: bool,
}

impl SkillRef {
    /// A skill from a directory.
    pub fn dir(key: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        SkillRef {
            key: key.into(),
            source: SkillSource::Dir { path: path.into() },
            required: false,
        }
    }

    /// An inline skill.
    pub fn inline(key: impl Into<String>, content: impl Into<String>) -> Self {
        SkillRef {
            key: key.into(),
            source: SkillSource::Inline {
                content: content.into(),
            },
            required: false,
        }
    }

    /// A skill from embedded files (relative path → content).
    pub fn files<K: Into<String>, V: Into<String>>(
        key: impl Into<String>,
        files: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        SkillRef {
            key: key.into(),
            source: SkillSource::Files {
                files: files.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            },
            required: false,
        }
    }

    /// A skill from a zip / tar / tgz archive.
    pub fn archive(key: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        SkillRef {
            key: key.into(),
            source: SkillSource::Archive { path: path.into() },
            required: false,
        }
    }

    /// A skill resolved by key.
    pub fn key(key: impl Into<String>) -> Self {
        SkillRef {
            key: key.into(),
            source: SkillSource::Key,
            required: false,
        }
    }

    /// Marks the skill required.
    pub fn require(mut self) -> Self {
        self.required = true;
        self
    }
}
