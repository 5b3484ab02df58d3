//! Tidy checks: the layering of ARCHITECTURE.md ("Invariants") and the documentation rules, enforced by grepping
//! the sources, and the crate graph of the workspace (`docs/workspace.md`), enforced by reading the manifests.
//! A failure names the file and the rule it breaks.

use std::fs;
use std::path::{Path, PathBuf};

mod docs;

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
        "crates/core/src/runtime",
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
            "agent_adaptor_providers",
            "agent_adaptor_server",
            "agent_adaptor_testkit",
            "agent_adaptor_store::memory",
            "agent_adaptor_store::sqlite",
            "agent_adaptor_store::postgres",
        ],
        "runtime must not import a web framework, a database or a concrete driver/store (the ThreadStore trait is fine)",
    ),
    (
        "crates/core/src/driver",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
            "agent_adaptor_store",
        ],
        "the driver SPI knows nothing about HTTP, stores, the runtime or concrete providers",
    ),
    (
        "crates/store/src",
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
        "crates/providers/src",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::server",
            "crate::store",
            "agent_adaptor_store",
            "agent_adaptor_core::store",
            "agent_adaptor_server",
        ],
        "providers know nothing about HTTP or stores",
    ),
    (
        "crates/core/src/vocab",
        &["axum", "sqlx", "crate::runtime", "crate::server"],
        "the vocabulary is plain data",
    ),
    (
        "crates/core/src/agui",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::server",
            "crate::store",
            "crate::providers",
            "agent_adaptor_store",
        ],
        "the AG-UI protocol is HTTP-free and store-free: it translates runtime events",
    ),
    (
        "crates/core/src/recorder",
        &["axum", "utoipa", "crate::server", "crate::providers"],
        "the recorder sits between the runtime and the stores, below every output",
    ),
    (
        "crates/core/src/skills",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
        ],
        "resources are plain building blocks the runtime uses",
    ),
    (
        "crates/core/src/profile",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
        ],
        "resources are plain building blocks the runtime uses",
    ),
    (
        "crates/core/src/workspace",
        &[
            "axum",
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
        ],
        "resources are plain building blocks the runtime uses",
    ),
    (
        "crates/core/src/tools",
        &[
            "sqlx",
            "utoipa",
            "crate::runtime",
            "crate::server",
            "crate::store",
            "crate::providers",
        ],
        "host tools are an MCP server of their own (axum is allowed: rmcp mounts in a router)",
    ),
];

/// The providers whose wire types are their own: no other provider (nor the shared `stream_json`) imports them.
const PROVIDERS: &[&str] = &["claude", "codex", "codebuddy", "cursor", "stream_json"];

/// The lines of a file of `crates/providers/src/<p>/` that name another provider's `wire` module (as
/// `crate::<other>::wire`, `super::<other>::wire` or `providers::<other>::wire`).
fn cross_wire_imports(provider: &str, src: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code_lines(src) {
        for other in PROVIDERS.iter().filter(|o| **o != provider) {
            let needle = format!("::{other}::wire");
            if line.contains(&needle) || line.contains(&format!("use {other}::wire")) {
                out.push(line.trim().to_owned());
            }
        }
    }
    out
}

#[test]
fn no_provider_imports_another_providers_wire() {
    let mut violations = Vec::new();
    for p in PROVIDERS {
        let mut files = Vec::new();
        rust_files(&root().join("crates/providers/src").join(p), &mut files);
        for f in files {
            for line in cross_wire_imports(p, &fs::read_to_string(&f).unwrap()) {
                violations.push(format!("{}: `{line}`", f.strip_prefix(root()).unwrap().display()));
            }
        }
    }
    assert!(
        violations.is_empty(),
        "a provider's wire types are its own:\n{}",
        violations.join("\n")
    );
    // Negative control: the rule sees a cross import and allows a provider's own.
    assert_eq!(
        cross_wire_imports(
            "codebuddy",
            "use crate::claude::wire::Frame;\nuse crate::codebuddy::wire::X;\nuse super::super::cursor::wire::Y;"
        ),
        vec![
            "use crate::claude::wire::Frame;".to_owned(),
            "use super::super::cursor::wire::Y;".to_owned()
        ]
    );
}

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
    // Only the facade (`src/`: the binary and its re-exports) may use the server crate.
    let mut files = Vec::new();
    for c in ["store", "core", "providers", "testkit"] {
        rust_files(&root().join("crates").join(c).join("src"), &mut files);
    }
    assert!(files.len() > 100, "walked {} files", files.len());
    let offenders: Vec<_> = files
        .iter()
        .filter(|f| {
            code_lines(&fs::read_to_string(f).unwrap())
                .any(|l| l.contains("crate::server") || l.contains("agent_adaptor_server"))
        })
        .collect();
    assert!(
        offenders.is_empty(),
        "only the binary may use the server: {offenders:?}"
    );
}

/// The workspace's crates and the sibling crates each may depend on (`[dependencies]`, optional ones
/// included): the layering, enforced by the compiler once the manifests say so (`docs/workspace.md`).
const CRATE_EDGES: &[(&str, &[&str])] = &[
    ("store", &[]),
    ("core", &["store"]),
    ("providers", &["core"]),
    ("testkit", &["core", "store", "providers"]),
    ("server", &["core", "store", "providers", "testkit"]),
];

/// The `agent-adaptor-*` crates a manifest's `[dependencies]` section names, and whether it turns on a
/// feature of `agent-adaptor-store` (the SQL backends).
fn sibling_dependencies(manifest: &str) -> (Vec<String>, bool) {
    let mut deps = Vec::new();
    let mut store_features = false;
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line == "[dependencies]";
            continue;
        }
        if !in_deps {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or("");
        if let Some(sibling) = name.strip_prefix("agent-adaptor-") {
            deps.push(sibling.to_owned());
            store_features |= sibling == "store" && line.contains("features");
        }
    }
    (deps, store_features)
}

#[test]
fn the_crate_graph_follows_the_layers() {
    let mut violations = Vec::new();
    for (krate, allowed) in CRATE_EDGES {
        let path = format!("crates/{krate}/Cargo.toml");
        let manifest = fs::read_to_string(root().join(&path)).unwrap();
        let (deps, store_features) = sibling_dependencies(&manifest);
        for d in deps.iter().filter(|d| !allowed.contains(&d.as_str())) {
            violations.push(format!("{path}: depends on agent-adaptor-{d}"));
        }
        if *krate == "core" && store_features {
            violations.push(format!(
                "{path}: core takes the store without its SQL backends (no sqlx for a library user)"
            ));
        }
    }
    assert!(
        violations.is_empty(),
        "crate graph violations:\n{}",
        violations.join("\n")
    );
    // Negative control: an upward edge and core turning on the SQL backends are seen.
    let bad = "[package]\nname = \"x\"\n[dependencies]\nagent-adaptor-server.workspace = true\n\
               agent-adaptor-store = { workspace = true, features = [\"sqlite\"] }\n[dev-dependencies]\n\
               agent-adaptor-testkit.workspace = true\n";
    assert_eq!(
        sibling_dependencies(bad),
        (vec!["server".to_owned(), "store".to_owned()], true)
    );
}

#[test]
fn every_module_has_a_doc_comment() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("crates"), &mut files);
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

/// The test names each source file defines: `#[test]` / `#[tokio::test]` functions, the first argument of
/// every invocation of a test-generating macro (a `macro_rules!` whose body holds a test attribute, such
/// as `shapes!`), and whether the file has doc tests (a fenced block in a doc comment).
#[derive(Default)]
struct TestIndex {
    tests: std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
    doctests: std::collections::BTreeSet<String>,
}

fn is_test_attribute(line: &str) -> bool {
    line.starts_with("#[test]") || line.starts_with("#[tokio::test")
}

/// The name of the function a line declares (`fn name(`, with `pub`, `pub(crate)`, `async` before it).
fn declared_fn(line: &str) -> Option<&str> {
    let mut rest = line;
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "async "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("async ").unwrap_or(rest);
    let name = rest.strip_prefix("fn ")?;
    let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
    Some(&name[..end])
}

/// The identifier after `name!(` at each invocation of macro `name` in `src`.
fn macro_first_args<'a>(src: &'a str, name: &str) -> Vec<&'a str> {
    let needle = format!("{name}!(");
    src.match_indices(&needle)
        .filter(|(at, _)| !src[..*at].ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        .filter_map(|(at, _)| {
            let after = src[at + needle.len()..].trim_start();
            let end = after.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            (end > 0).then(|| &after[..end])
        })
        .collect()
}

impl TestIndex {
    /// Indexes every `.rs` file under `tests/`, `src/` and `crates/`, keyed by its path from the repository root.
    fn build() -> TestIndex {
        let mut files = Vec::new();
        rust_files(&root().join("tests"), &mut files);
        rust_files(&root().join("src"), &mut files);
        rust_files(&root().join("crates"), &mut files);
        let sources: Vec<(String, String)> = files
            .iter()
            .map(|f| {
                let rel = f.strip_prefix(root()).unwrap().display().to_string();
                (rel, fs::read_to_string(f).unwrap())
            })
            .collect();
        TestIndex::of(&sources)
    }

    /// Indexes `(path, source)` pairs.
    fn of(sources: &[(String, String)]) -> TestIndex {
        let mut index = TestIndex::default();
        let mut generators = Vec::new();
        for (_, src) in sources {
            for (at, _) in src.match_indices("macro_rules! ") {
                let rest = &src[at + "macro_rules! ".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let body = rest.split("macro_rules! ").next().unwrap_or(rest);
                if body.contains("#[tokio::test") || body.contains("#[test]") {
                    generators.push(name);
                }
            }
        }
        for (path, src) in sources {
            let names = index.tests.entry(path.clone()).or_default();
            let mut pending = false;
            for line in src.lines().map(str::trim_start) {
                if is_test_attribute(line) {
                    pending = true;
                } else if let Some(name) = declared_fn(line) {
                    if pending {
                        names.insert(name.to_owned());
                    }
                    pending = false;
                }
            }
            for g in &generators {
                names.extend(macro_first_args(src, g).into_iter().map(str::to_owned));
            }
            let doc_fence = src
                .lines()
                .map(str::trim_start)
                .any(|l| (l.starts_with("//! ```") || l.starts_with("/// ```")) && !l.contains("ignore"));
            if doc_fence {
                index.doctests.insert(path.clone());
            }
        }
        index
    }

    fn has(&self, proof: &str) -> bool {
        match proof.split_once("#") {
            Some((path, "doctest")) => self.doctests.contains(path),
            Some(_) => false,
            None => proof
                .split_once("::")
                .is_some_and(|(path, name)| self.tests.get(path).is_some_and(|n| n.contains(name))),
        }
    }
}

/// What is wrong with a `docs/contract.md` table: a listed test that does not exist, a row without a
/// valid status, a proved/partial row without a test, a gap row that names one, a section of §1–§17
/// without any row.
fn contract_violations(doc: &str, index: &TestIndex) -> Vec<String> {
    let mut out = Vec::new();
    let mut sections = std::collections::BTreeSet::new();
    for (n, line) in doc.lines().enumerate() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // `| § | element | status | proved by | note |` → ["", §, element, status, proofs, note, ""]
        let Some(section) = cells.get(1) else { continue };
        let Some(top) = section.split('.').next().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        sections.insert(top);
        let row = n + 1;
        if cells.len() != 7 {
            out.push(format!(
                "line {row}: expected 5 cells, got {}",
                cells.len().saturating_sub(2)
            ));
            continue;
        }
        let (status, proofs) = (cells[3], cells[4]);
        let proofs: Vec<&str> = proofs
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|p| p.contains(".rs"))
            .collect();
        for p in &proofs {
            if !index.has(p) {
                out.push(format!("line {row}: `{p}` names no existing test"));
            }
        }
        match status {
            "proved" | "partial" if proofs.is_empty() => {
                out.push(format!("line {row}: a {status} row names no test"));
            }
            "gap" if !proofs.is_empty() => out.push(format!("line {row}: a gap row names a test")),
            "proved" | "partial" | "gap" => {}
            other => out.push(format!(
                "line {row}: status {other:?} is not proved, partial or gap"
            )),
        }
    }
    for s in 1..=17 {
        if !sections.contains(&s) {
            out.push(format!("§{s} has no row"));
        }
    }
    out
}

#[test]
fn contract_md_names_only_tests_that_exist() {
    let doc = fs::read_to_string(root().join("docs/contract.md")).unwrap();
    let violations = contract_violations(&doc, &TestIndex::build());
    assert!(
        violations.is_empty(),
        "docs/contract.md:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_contract_check_catches_a_missing_test_and_finds_every_kind_of_test() {
    // Negative control over a synthetic tree: each way a test can exist is found, and each way a row
    // can be wrong is reported.
    let sources = vec![
        (
            "tests/a.rs".to_owned(),
            "//! A.\n#[tokio::test(flavor = \"multi_thread\")]\n#[allow(unused)]\nasync fn real() {}\n\
             fn helper() {}\n#[test]\npub(crate) fn also() {}\nmacro_rules! gen {\n    ($n:ident) => { \
             #[tokio::test] async fn x() {} };\n}\ngen!(\n    generated,\n    1\n);\n"
                .to_owned(),
        ),
        (
            "src/b.rs".to_owned(),
            "//! B.\n//! ```\n//! assert!(true);\n//! ```\n".to_owned(),
        ),
    ];
    let index = TestIndex::of(&sources);
    for found in [
        "tests/a.rs::real",
        "tests/a.rs::also",
        "tests/a.rs::generated",
        "src/b.rs#doctest",
    ] {
        assert!(index.has(found), "{found} must be found");
    }
    for missing in [
        "tests/a.rs::helper",
        "tests/a.rs::gone",
        "tests/other.rs::real",
        "tests/a.rs#doctest",
    ] {
        assert!(!index.has(missing), "{missing} must not be found");
    }
    let mut doc = String::from("| § | element | status | proved by | note |\n|---|---|---|---|---|\n");
    doc.push_str("| 1 | ok | proved | `tests/a.rs::real` |  |\n");
    doc.push_str("| 2 | renamed | proved | `tests/a.rs::real`<br>`tests/a.rs::renamed_away` |  |\n");
    doc.push_str("| 3 | no proof | partial |  |  |\n");
    doc.push_str("| 4 | bad status | done | `tests/a.rs::real` |  |\n");
    doc.push_str("| 5 | gap with a test | gap | `tests/a.rs::real` |  |\n");
    let v = contract_violations(&doc, &index);
    let has = |needle: &str| v.iter().any(|m| m.contains(needle));
    assert!(has("`tests/a.rs::renamed_away` names no existing test"), "{v:?}");
    assert!(has("a partial row names no test"), "{v:?}");
    assert!(has("status \"done\""), "{v:?}");
    assert!(has("a gap row names a test"), "{v:?}");
    assert!(has("§6 has no row") && !has("§1 has no row"), "{v:?}");
    assert!(
        !v.iter().any(|m| m.starts_with("line 3:")),
        "the good row is fine: {v:?}"
    );
}
