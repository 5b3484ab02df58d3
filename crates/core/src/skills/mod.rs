//! Skills: resolving [`SkillRef`](crate::vocab::SkillRef)s (directory, embedded files, inline `SKILL.md`,
//! archive, or a bare key resolved by a [`SkillProvider`]) and materializing them as plain directories a
//! driver can hand its CLI.
//!
//! * [`archive`] — the safe zip / tar / tgz extractor: total-size, per-file-size and entry-count limits,
//!   no path traversal, no links or special files (property-tested).
//! * [`materialize`] — [`SkillMaterializer`] and the default implementation, plus [`materialize_all`],
//!   which stops at the first failure with a [`SkillError`] (the spec's skill errors).
//! * [`overlay`] — a run's skills as a per-run overlay directory of links (what the built-in drivers hand
//!   their CLI), and the content [`fingerprint`] of a skill set.
//! * [`provider`] — [`SkillProvider`], the static [`SkillSet`] and its optional catalogue.

pub mod archive;
mod error;
pub mod materialize;
pub mod overlay;
pub mod provider;

pub use archive::{ArchiveError, ArchiveFormat, Limits};
pub use error::SkillError;
pub use materialize::{
    DefaultSkillMaterializer, Materialization, MaterializedSkill, SkillMaterializer, materialize_all,
};
pub use overlay::{SkillOverlay, fingerprint};
pub use provider::{SkillProvider, SkillSet};
