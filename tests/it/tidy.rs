//! Tidy checks: the layering of DESIGN.md §2 and the documentation rules, enforced by grepping
//! the sources. A failure names the file and the rule it breaks.

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn code_lines(src: &str) -> impl Iterator<Item = &str> {
    src.lines().map(str::trim_start).filter(|l| !l.starts_with("//"))
}

/// (layer directory, forbidden path prefixes, why)
const RULES: &[(&str, &[&str], &str)] = &[
    (
        "src/runtime",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::providers",
            "crate::store::memory",
            "crate::store::sqlite",
            "crate::store::postgres",
            "crate::server",
            "crate::testkit",
            "reqwest",
        ],
        "runtime must not import a web framework, a database or a concrete driver/store (the ThreadStore trait is fine)",
    ),
    (
        "src/driver",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
        ],
        "the driver SPI knows nothing about HTTP, stores, the runtime or concrete providers",
    ),
    (
        "src/store",
        &[
            "axum",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::providers",
        ],
        "stores stay below the runtime",
    ),
    (
        "src/providers",
        &["axum", "sqlx", "utoipa", "crate::server", "crate::store"],
        "providers know nothing about HTTP or stores",
    ),
    (
        "src/vocab",
        &["axum", "sqlx", "crate::runtime", "crate::server"],
        "the vocabulary is plain data",
    ),
];

#[test]
fn layering_holds() {
    let mut violations = Vec::new();
    for (dir, forbidden, why) in RULES {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        for f in files {
            let src = fs::read_to_string(&f).unwrap();
            for line in code_lines(&src) {
                for bad in *forbidden {
                    let hit = line.contains(&format!("use {bad}"))
                        || line.contains(&format!("{bad}::"))
                        || (bad.starts_with("crate::") && line.contains(bad));
                    if hit {
                        violations.push(format!(
                            "{}: `{}` ({why})",
                            f.strip_prefix(root()).unwrap().display(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations.join("\n")
    );
}

#[test]
fn nothing_imports_the_server() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let offenders: Vec<_> = files
        .iter()
        .filter(|f| {
            !f.starts_with(root().join("src/server"))
                && !f.ends_with("main.rs")
                && !f.starts_with(root().join("src/cli"))
        })
        .filter(|f| code_lines(&fs::read_to_string(f).unwrap()).any(|l| l.contains("crate::server")))
        .collect();
    assert!(
        offenders.is_empty(),
        "only the binary may use the server: {offenders:?}"
    );
}

#[test]
fn every_module_has_a_doc_comment() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    let missing: Vec<_> = files
        .iter()
        .filter(|f| !fs::read_to_string(f).unwrap().trim_start().starts_with("//!"))
        .map(|f| f.strip_prefix(root()).unwrap().display().to_string())
        .collect();
    assert!(missing.is_empty(), "files without a //! module doc: {missing:?}");
}

#[test]
fn the_tidy_rules_catch_a_violation() {
    // Negative control: a line that breaks the runtime rule is recognised.
    let line = "use axum::Router;";
    let (_, forbidden, _) = RULES[0];
    assert!(forbidden.iter().any(|bad| line.contains(&format!("use {bad}"))));
}
