//! The map kept honest: every backticked repository path in `ARCHITECTURE.md`, `CONTRIBUTING.md` and
//! `docs/` exists, and every module the map's table names is a module of the workspace (under the facade's
//! path: `store::memory` is `crates/store/src/memory`).

use std::fs;
use std::path::Path;

use super::root;

/// Where the documents a newcomer reads first live, relative to the repository root.
fn documents(root: &Path) -> Vec<String> {
    let mut out = vec!["ARCHITECTURE.md".to_owned(), "CONTRIBUTING.md".to_owned()];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// Top-level entries a backticked path may start with to count as a repository path.
const PATH_PREFIXES: &[&str] = &[
    "src/",
    "crates/",
    "tests/",
    "docs/",
    "scripts/",
    "migrations/",
    "benches/",
    "web-demo/",
    "openapi/",
    ".ci/",
    "examples/",
    "docker/",
];
const ROOT_FILES: &[&str] = &[
    "README.md",
    "ARCHITECTURE.md",
    "CONTRIBUTING.md",
    "BENCHMARKS.md",
    "Cargo.toml",
    "Dockerfile",
    "docker-compose.yml",
];

/// `a/{b,c}/d` → `a/b/d`, `a/c/d` (every brace group, left to right).
fn expand_braces(s: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (s.find('{'), s.find('}')) else {
        return vec![s.to_owned()];
    };
    if close < open {
        return vec![s.to_owned()];
    }
    s[open + 1..close]
        .split(',')
        .flat_map(|alt| expand_braces(&format!("{}{alt}{}", &s[..open], &s[close + 1..])))
        .collect()
}

fn backticked(text: &str) -> impl Iterator<Item = &str> {
    text.split('`').skip(1).step_by(2).filter(|s| !s.contains('\n'))
}

/// The repository paths a document names that do not exist under `exists`. A span counts as a path when it
/// has no whitespace and starts with a top-level directory or is a root file; placeholders (`<name>`, `*`,
/// `$VAR`, `…`) are not paths; a test or item suffix (`::name`), an anchor (`#doctest`) or a line number is
/// cut off; brace groups are expanded.
fn missing_paths(text: &str, exists: &dyn Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    for span in backticked(text) {
        if span.chars().any(char::is_whitespace)
            || !(PATH_PREFIXES.iter().any(|p| span.starts_with(p)) || ROOT_FILES.contains(&span))
            || span.contains(['<', '>', '*', '$', '…'])
            || span.contains("...")
        {
            continue;
        }
        let path = span.split("::").next().unwrap_or(span);
        let path = path.split('#').next().unwrap_or(path);
        let path = match path.rsplit_once(':') {
            Some((p, line)) if line.chars().all(|c| c.is_ascii_digit()) => p,
            _ => path,
        };
        for p in expand_braces(path) {
            if !exists(&p) {
                out.push(format!("`{span}` ({p} does not exist)"));
            }
        }
    }
    out
}

/// The module paths in the first column of the `## Module map` table. A cell lists spans separated by
/// ` / `; a bare name after the first span is a sibling of the first (`runtime::pipeline` / `stream`).
fn module_map_entries(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let Some(start) = doc.find("## Module map") else {
        return out;
    };
    let section = &doc[start..];
    let section = section[3..]
        .find("\n## ")
        .map_or(section, |end| &section[..end + 3]);
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cell = line.split('|').nth(1).unwrap_or("");
        let spans: Vec<&str> = backticked(cell).collect();
        let parent = spans
            .first()
            .and_then(|s| s.rsplit_once("::"))
            .map(|(p, _)| format!("{p}::"))
            .unwrap_or_default();
        for (i, span) in spans.iter().enumerate() {
            let full = if i > 0 && !span.contains("::") && !span.contains('/') {
                format!("{parent}{span}")
            } else {
                (*span).to_owned()
            };
            out.extend(expand_braces(&full));
        }
    }
    out
}

/// Where the facade's top-level module `top` lives: the source directories that may hold its submodules.
fn module_roots(top: &str) -> Vec<String> {
    match top {
        "store" | "providers" | "testkit" | "server" => {
            let mut roots = vec![format!("crates/{top}/src")];
            if top == "providers" {
                roots.push("crates/server/src/providers".to_owned()); // the registry
            }
            roots
        }
        // The ACP server edge, and the protocol (`wire`, `rpc`) in core.
        "acp" => vec![
            "crates/server/src/acp".to_owned(),
            "crates/core/src/acp".to_owned(),
        ],
        "cli" => vec!["src/cli".to_owned()],
        other => vec![format!("crates/core/src/{other}")],
    }
}

/// Whether a module path (`server::runs`) or a source path (`src/bin`) is a file or directory of the
/// workspace, with module paths as the facade re-exports them.
fn module_exists(root: &Path, module: &str) -> bool {
    if module.contains('/') {
        return root.join(module).exists();
    }
    let (top, rest) = module.split_once("::").unwrap_or((module, ""));
    module_roots(top).iter().any(|dir| {
        let base = root.join(dir);
        if rest.is_empty() {
            return base.is_dir();
        }
        let base = base.join(rest.replace("::", "/"));
        base.with_extension("rs").exists() || base.join("mod.rs").exists() || base.is_dir()
    })
}

#[test]
fn every_backticked_repo_path_in_the_docs_exists() {
    let root = root();
    let exists = |p: &str| root.join(p).exists();
    let mut violations = Vec::new();
    for doc in documents(&root) {
        let text = fs::read_to_string(root.join(&doc)).unwrap();
        for m in missing_paths(&text, &exists) {
            violations.push(format!("{doc}: {m}"));
        }
    }
    assert!(violations.is_empty(), "stale paths:\n{}", violations.join("\n"));
}

#[test]
fn every_module_in_the_map_exists() {
    let root = root();
    let doc = fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap();
    let entries = module_map_entries(&doc);
    assert!(
        entries.len() > 40,
        "the module map lists every module: {entries:?}"
    );
    let missing: Vec<_> = entries.iter().filter(|m| !module_exists(&root, m)).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names modules that do not exist: {missing:?}"
    );
}

#[test]
fn the_doc_checks_catch_a_stale_path_and_a_stale_module() {
    // Negative control over synthetic text: what must be caught is caught, what is not a path is skipped.
    let exists = |p: &str| ["src/a.rs", "tests/it/x", "tests/it/x/b.rs", "tests/it/x/c.rs"].contains(&p);
    let text = "`src/a.rs` `src/gone.rs` `tests/it/x/{b,c,d}.rs` `src/a.rs::some_test` `src/a.rs#doctest` \
                `src/a.rs:12` `tests/it/<provider>.rs` `src/thing with space` `cargo test`";
    let missing = missing_paths(text, &exists);
    assert_eq!(
        missing,
        vec![
            "`src/gone.rs` (src/gone.rs does not exist)".to_owned(),
            "`tests/it/x/{b,c,d}.rs` (tests/it/x/d.rs does not exist)".to_owned(),
        ]
    );
    let map = "## Module map\n\n| module | owns |\n|---|---|\n| `runtime::pipeline` / `stream` | x |\n\
               | `driver::{sink,gone}` | y |\n| `src/bin` | z |\n\n## Invariants\n| `not::in_the_map` | w |\n";
    assert_eq!(
        module_map_entries(map),
        vec![
            "runtime::pipeline",
            "runtime::stream",
            "driver::sink",
            "driver::gone",
            "src/bin"
        ]
    );
    let root = super::root();
    assert!(module_exists(&root, "runtime::pipeline") && module_exists(&root, "src/bin"));
    assert!(module_exists(&root, "store::memory") && module_exists(&root, "providers::registry"));
    assert!(module_exists(&root, "acp::wire") && module_exists(&root, "acp::session"));
    assert!(!module_exists(&root, "driver::gone") && !module_exists(&root, "store::gone"));
}
