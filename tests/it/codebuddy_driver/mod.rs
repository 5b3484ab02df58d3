//! The CodeBuddy driver end to end: the REAL CLI (`testkit::cli::require(Cli::CodeBuddy)`, skipped loudly
//! when absent) against the mock Chat Completions server, through the public runtime API. The mock's
//! behaviour is the lab's trigger-word brain (`codebuddy_lab::brain`): `zzbash`, `zzslow`, `zzask`,
//! `zzplan`, `zzschema`, `zzerr<status>`, `zzabort`, …
//!
//! * `basic.rs` — text, resume, model errors, cancellation, aborted streams, instructions, schema.
//! * `decisions.rs` — permission approve/deny, questions, plan review over the control transport.
//! * `messages.rs` — supplemental input held until the turn's result, in both transports.
//! * `mcp.rs` — SSE MCP servers and host tools over streamable HTTP.
//! * `skills.rs` — per-run skills through the overlay.
//! * `persistent.rs` — a thread's persistent process (control transport).
//! * `kit.rs` — the conformance kit.

mod basic;
mod decisions;
mod kit;
mod mcp;
mod messages;
mod persistent;
mod skills;

pub use crate::driver_support::{code, delta_text, drain, run_error, transport};

use std::path::PathBuf;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, Policy};
use agent_adaptor::providers::codebuddy::{CodeBuddyConfig, CodeBuddyDriver};
use agent_adaptor::runtime::CallOptions;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::codebuddy_env::DUMMY_API_KEY;
use agent_adaptor::testkit::mock::chat::MockChat;

use crate::codebuddy_lab::brain;

/// One isolated CodeBuddy setup: the mock, a home, a config dir and a workspace.
pub struct Cb {
    /// The mock model server.
    pub mock: MockChat,
    /// The driver (clones share its process registry).
    pub driver: CodeBuddyDriver,
    /// The workspace.
    pub ws: PathBuf,
    /// The SDK-owned config dir.
    pub config_dir: PathBuf,
    _dir: tempfile::TempDir,
}

impl Cb {
    /// A setup with the default configuration, or `None` (after a loud SKIPPED line) without the CLI.
    pub async fn new() -> Option<Cb> {
        Cb::with(|_| {}).await
    }

    /// A setup whose configuration `tweak` adjusts.
    pub async fn with(tweak: impl FnOnce(&mut CodeBuddyConfig)) -> Option<Cb> {
        let bin = require(Cli::CodeBuddy)?;
        let mock = MockChat::start(brain::script()).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let home = dir.path().join("home");
        let tmp = dir.path().join("tmp");
        for d in [&ws, &home, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        let config_dir = dir.path().join("cfg");
        let mut config = CodeBuddyConfig {
            config_dir: Some(config_dir.clone()),
            settle_timeout: Some(Duration::from_secs(4)),
            ..Default::default()
        };
        config.common.command = Some(bin);
        config.common.grace_period = Some(Duration::from_secs(1));
        for (k, v) in [
            ("HOME", home.to_string_lossy().into_owned()),
            ("TMPDIR", tmp.to_string_lossy().into_owned()),
            ("CODEBUDDY_BASE_URL", mock.base_url()),
            ("CODEBUDDY_API_KEY", DUMMY_API_KEY.to_owned()),
            ("SHELL", "/bin/bash".to_owned()),
        ] {
            config.common.env.insert(k.into(), v);
        }
        tweak(&mut config);
        Some(Cb {
            mock,
            driver: CodeBuddyDriver::new(config),
            ws,
            config_dir,
            _dir: dir,
        })
    }

    /// Call options in the workspace.
    pub fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(&self.ws)
    }

    /// Call options that auto-approve (the headless transport).
    pub fn headless(&self) -> CallOptions {
        self.opts()
            .policy(Policy::default().with_approvals(ApprovalPolicy::auto_approve()))
    }

    /// Asserts that no CodeBuddy process is left.
    pub fn assert_reaped(&self) {
        assert_eq!(
            self.driver.registry().live_count(),
            0,
            "a CodeBuddy process is left"
        );
    }
}
