//! The Codex driver end to end: the REAL CLI (`testkit::cli::require(Cli::Codex)`, skipped loudly when
//! absent) over `codex app-server`, against the scriptable mock Responses API, through the public
//! runtime API. Every test has its own temp dir (home, `CODEX_HOME`, workspace) and mock.
//!
//! * `basic.rs` — text with reasoning, a command round trip, model errors, a crashing CLI, cancel with
//!   reaping, instructions and native structured output, inspection.
//! * `decisions.rs` — command and file-change approvals approved and denied.
//! * `exec.rs` — the `codex exec --json` transport, the transport rule, web search on both transports.
//! * `persistent.rs` — the persistent app-server per thread: reuse, idle eviction, signature restart,
//!   cancel, close.
//! * `threads.rs` — resume in a new process, resume rejection with the fresh retry, fork, AfterTurn input.
//! * `messages.rs` — Soon input steered into the running turn, Interrupt input starting the next turn.
//! * `pending.rs` — Soon, AfterTurn and Interrupt input while a command approval waits for the host.
//! * `mcp.rs` — tools of a declared stdio MCP server under Ask, deny and the auto modes (MCP elicitation).
//! * `questions.rs` — `request_user_input` in Plan collaboration mode through the question policy.
//! * `skills.rs` — a run's skills through the per-run overlay (`skills/extraRoots/set`).
//! * `kit.rs` — the conformance kit.

mod basic;
mod decisions;
mod exec;
mod kit;
mod mcp;
mod messages;
mod pending;
mod persistent;
mod questions;
mod skills;
mod threads;

use std::path::PathBuf;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, Policy};
use agent_adaptor::providers::codex::{CodexConfig, CodexDriver, ModelProvider};
use agent_adaptor::runtime::CallOptions;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::codex_env::{API_KEY, API_KEY_ENV};

pub use crate::driver_support::{code, delta_text, drain, run_error, tool_call, tool_result};
use agent_adaptor::testkit::mock::responses::{MockResponses, Script};

/// One isolated Codex setup: the mock, a home, a `CODEX_HOME` and a workspace.
pub struct Cx {
    /// The mock Responses API.
    pub mock: MockResponses,
    /// The driver (clones share its process registry).
    pub driver: CodexDriver,
    /// The workspace.
    pub ws: PathBuf,
    /// The SDK-owned `CODEX_HOME`.
    pub codex_home: PathBuf,
    _dir: tempfile::TempDir,
}

/// The driver configuration for a mock at `base_url` under `root`.
pub fn config(bin: PathBuf, base_url: &str, root: &std::path::Path) -> CodexConfig {
    let home = root.join("home");
    let tmp = root.join("tmp");
    for d in [&home, &tmp] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut provider = ModelProvider::responses("mock", base_url, Some(API_KEY_ENV));
    provider.request_max_retries = Some(1);
    provider.stream_max_retries = Some(1);
    provider.stream_idle_timeout_ms = Some(20_000);
    let mut c = CodexConfig {
        model: Some("gpt-5.5".into()),
        provider: Some(provider),
        codex_home: Some(root.join("codex-home")),
        turn_timeout: Some(Duration::from_secs(90)),
        ..Default::default()
    };
    c.common.command = Some(bin);
    c.common.grace_period = Some(Duration::from_secs(1));
    for (k, v) in [
        ("HOME", home.to_string_lossy().into_owned()),
        ("TMPDIR", tmp.to_string_lossy().into_owned()),
        (API_KEY_ENV, API_KEY.to_owned()),
        ("SHELL", "/bin/bash".to_owned()),
    ] {
        c.common.env.insert(k.into(), v);
    }
    c
}

impl Cx {
    /// A setup answering with `script`, or `None` (after a loud SKIPPED line) without the CLI.
    pub async fn new(script: Script) -> Option<Cx> {
        Cx::with(script, |_| {}).await
    }

    /// A setup whose configuration `tweak` adjusts.
    pub async fn with(script: Script, tweak: impl FnOnce(&mut CodexConfig)) -> Option<Cx> {
        let bin = require(Cli::Codex)?;
        let mock = MockResponses::start(script).await.unwrap();
        let dir = tempfile::Builder::new().prefix("codex-drv-").tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let mut c = config(bin, &mock.base_url(), dir.path());
        tweak(&mut c);
        Some(Cx {
            mock,
            codex_home: c.codex_home.clone().unwrap(),
            driver: CodexDriver::new(c),
            ws,
            _dir: dir,
        })
    }

    /// Call options in the workspace (default policy: permissions are asked).
    pub fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(&self.ws)
    }

    /// Call options that auto-approve, in a workspace-write sandbox.
    pub fn auto(&self) -> CallOptions {
        self.opts()
            .policy(Policy::workspace_write().with_approvals(auto_approve()))
    }

    /// Asserts that no Codex process is left.
    pub fn assert_reaped(&self) {
        assert_eq!(self.driver.registry().live_count(), 0, "a Codex process is left");
    }
}

/// Permissions auto-approved (Codex has no plan review to set).
pub fn auto_approve() -> ApprovalPolicy {
    ApprovalPolicy {
        permission: ApprovalMode::AutoApprove,
        ..Default::default()
    }
}
