//! Per-execution skill materialization: resolve and write the resolved skills under a private per-run
//! directory before launch (any failure refuses the launch with the spec's skill error) and remove it
//! when the execution ends.

use std::path::PathBuf;

use super::error::ConfigError;
use crate::skills::{MaterializedSkill, SkillError, SkillMaterializer, SkillProvider, materialize_all};
use crate::vocab::SkillRef;

/// The skills of one execution; dropping it removes their directory.
#[derive(Debug)]
pub(crate) struct RunSkills {
    pub root: PathBuf,
    pub skills: Vec<MaterializedSkill>,
}

impl Drop for RunSkills {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl From<SkillError> for ConfigError {
    fn from(e: SkillError) -> Self {
        let text = e.to_string();
        match e {
            SkillError::NotFound(k) => ConfigError::SkillNotFound(k),
            SkillError::KeyConflict(k) => ConfigError::SkillKeyConflict(k),
            SkillError::MaterializationFailed { .. } => ConfigError::SkillMaterializationFailed(text),
            SkillError::SourceMissing { .. } => ConfigError::SkillSourceMissing(text),
            SkillError::KeyMissing(k) => ConfigError::SkillKeyMissing(k),
        }
    }
}

/// Materializes `skills` for `run_id` under the system temp dir (`None` when there are none).
pub(crate) fn materialize(
    skills: &[SkillRef],
    provider: Option<&dyn SkillProvider>,
    materializer: &dyn SkillMaterializer,
    run_id: &str,
) -> Result<Option<RunSkills>, ConfigError> {
    if skills.is_empty() {
        return Ok(None);
    }
    let root = std::env::temp_dir().join("agent-adaptor-skills").join(run_id);
    // From here on the guard removes the directory whatever happens.
    let mut run = RunSkills {
        root,
        skills: Vec::new(),
    };
    let done = materialize_all(skills, provider, materializer, &run.root)?;
    for w in &done.warnings {
        tracing::warn!(run_id, "{w}");
    }
    run.skills = done.skills;
    Ok(Some(run))
}
