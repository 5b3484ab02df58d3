//! [`SkillProvider`]: resolves bare keys ([`SkillRef::key`]) to concrete skill sources, with an optional
//! catalogue; [`SkillSet`] is the static implementation.

use std::collections::BTreeMap;

use crate::vocab::{SkillRef, SkillSource};

/// Resolves bare skill keys.
pub trait SkillProvider: Send + Sync {
    /// The concrete skill for `key`, or `None` when unknown.
    fn resolve(&self, key: &str) -> Option<SkillRef>;

    /// The keys this provider offers, when it can list them (`None`: no catalogue).
    fn catalog(&self) -> Option<Vec<String>> {
        None
    }
}

/// A static set of skills, keyed by their keys; its catalogue lists them.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    skills: BTreeMap<String, SkillRef>,
}

impl SkillSet {
    /// A set of concrete skills (bare-key refs are ignored: a set resolves keys, it cannot defer them).
    pub fn new(skills: impl IntoIterator<Item = SkillRef>) -> SkillSet {
        SkillSet {
            skills: skills
                .into_iter()
                .filter(|s| s.source != SkillSource::Key)
                .map(|s| (s.key.clone(), s))
                .collect(),
        }
    }
}

impl SkillProvider for SkillSet {
    fn resolve(&self, key: &str) -> Option<SkillRef> {
        self.skills.get(key).cloned()
    }

    fn catalog(&self) -> Option<Vec<String>> {
        Some(self.skills.keys().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_resolves_its_keys_and_lists_them() {
        let set = SkillSet::new([
            SkillRef::inline("b", "# B"),
            SkillRef::inline("a", "# A"),
            SkillRef::key("deferred"),
        ]);
        assert_eq!(set.catalog().unwrap(), ["a", "b"]);
        assert_eq!(set.resolve("a").unwrap().key, "a");
        assert!(set.resolve("deferred").is_none());
        assert!(set.resolve("zzz").is_none());
    }
}
