//! Invariant check: only `crates/core/src/driver/process/` may start processes (the workspace's crates and the
//! facade's `src/` are walked).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_driver_process_spawns_processes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed = root.join("crates/core/src/driver/process");
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    assert!(files.len() > 5, "walked {} files", files.len());
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| !f.starts_with(&allowed))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            [
                "process::Command",
                "tokio::process",
                "pre_exec",
                "libc::fork",
                "posix_spawn",
            ]
            .iter()
            .any(|needle| text.contains(needle))
        })
        .map(|f| f.strip_prefix(root).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "only crates/core/src/driver/process may spawn processes (use driver::process::spawn): {offenders:?}"
    );
}
