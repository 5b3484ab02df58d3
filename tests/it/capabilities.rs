//! The capability matrix `docs/capabilities.md`, generated from the drivers' descriptors. The test fails
//! when the committed file drifts; `UPDATE_CAPABILITIES=1` rewrites it. Adding a driver is one line in
//! [`drivers`].

use std::path::Path;

use agent_adaptor::driver::{Descriptor, Driver};
use agent_adaptor::providers::acp::{AgentCaps, caps};
use agent_adaptor::providers::capabilities::render;
use agent_adaptor::providers::{claude, codebuddy, codex, cursor};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

/// The `acp` driver's descriptor is what each agent declares in `initialize`: the column shows it for
/// `claude-agent-acp` 0.101.0 (its answer, checked live by `acp_driver::claude`; `codex-acp` 2.6.0 differs
/// only in `mcp.sse`).
fn acp_over_claude_agent_acp() -> Descriptor {
    let declared = AgentCaps {
        load: true,
        resume: true,
        fork: true,
        list: true,
        mcp_http: true,
        mcp_sse: true,
        ..Default::default()
    };
    caps::descriptor("acp", "ACP agent (claude-agent-acp 0.101.0)", &declared)
}

/// Every driver in the matrix, in column order (the reference first, then the CLIs, then Cursor's ACP
/// transport and the generic ACP driver).
fn drivers() -> Vec<Descriptor> {
    let mut cursor_acp = cursor::acp::descriptor();
    cursor_acp.driver_type = "cursor (acp)".into();
    vec![
        ReferenceDriver::new(ReferenceConfig::default()).descriptor(),
        claude::ClaudeDriver::new(Default::default()).descriptor(),
        codebuddy::CodeBuddyDriver::new(Default::default()).descriptor(),
        codex::CodexDriver::new(Default::default()).descriptor(),
        cursor::CursorDriver::new(Default::default()).descriptor(),
        cursor_acp,
        acp_over_claude_agent_acp(),
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
