//! Profiles: selections resolved and prepared on a real file tree under a temp HOME (clones copy and
//! link what they should, the native dir is never touched), resources synced and reported truthfully,
//! the skill selection, and — against the real CLIs — runs on a dedicated / cloned / native profile that see the
//! profile's resources and keep their sessions there, with the `profile_fingerprint` thread guard.

mod clis;
mod hooks;
mod per_call;
mod tree;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every file under `root` (relative path → bytes; symlinks recorded by target), for before/after
/// comparisons.
pub fn snapshot_tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(root).unwrap().to_owned();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.insert(rel, format!("-> {}", target.display()).into_bytes());
            } else if meta.is_dir() {
                out.insert(rel.clone(), b"<dir>".to_vec());
                walk(root, &p, out);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// Asserts that `err` is the profile thread guard: a resume refused because the profile resources changed.
pub fn assert_profile_guard(err: &agent_adaptor::runtime::Error) {
    use agent_adaptor::runtime::{ErrorKind, ThreadErrorKind};
    assert_eq!(
        err.kind(),
        ErrorKind::Thread(ThreadErrorKind::Incompatible),
        "{err}"
    );
    assert!(err.to_string().contains("profile resources changed"), "{err}");
}

/// A skill with a marker description.
pub use crate::driver_support::marked_skill;
