//! The capability matrix `docs/capabilities.md`, generated from the drivers' descriptors. The test fails
//! when the committed file drifts; `UPDATE_CAPABILITIES=1` rewrites it. Adding a driver is one line in
//! [`drivers`].

use std::path::Path;

use agent_adaptor::driver::{Descriptor, Driver};
use agent_adaptor::providers::capabilities::render;
use agent_adaptor::providers::{claude, codebuddy, codex, cursor};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

/// Every driver in the matrix, in column order (the reference first, then the CLIs).
fn drivers() -> Vec<Descriptor> {
    vec![
        ReferenceDriver::new(ReferenceConfig::default()).descriptor(),
        claude::ClaudeDriver::new(Default::default()).descriptor(),
        codebuddy::CodeBuddyDriver::new(Default::default()).descriptor(),
        codex::CodexDriver::new(Default::default()).descriptor(),
        cursor::CursorDriver::new(Default::default()).descriptor(),
    ]
}

#[test]
fn capabilities_md_matches_the_descriptors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/capabilities.md");
    let want = render(&drivers());
    if std::env::var("UPDATE_CAPABILITIES").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/capabilities.md is out of date; run UPDATE_CAPABILITIES=1 cargo nextest run -E 'test(capabilities)'"
    );
    for d in drivers() {
        assert!(
            have.contains(&format!(" {} |", d.driver_type)),
            "{} has a column",
            d.driver_type
        );
    }
}
