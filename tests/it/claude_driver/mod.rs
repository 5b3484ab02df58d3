//! The Claude driver end to end: the REAL CLI (`testkit::cli::require(Cli::Claude)`, skipped loudly when
//! absent) against the mock Anthropic Messages API, through the public runtime API, each test in its own
//! temp dir (`testkit::claude_env`). The mock's behaviour is the lab's keyword brain
//! (`claude_lab::brain`: `run touch`, `run sleep`, `ask me`, `make a plan`, `think first`, `slow`, echo)
//! plus `fail with <status>` here.
//!
//! * `basic.rs` — text, thinking, usage, resume and fork, rejection, structured output, errors, crash,
//!   cancellation with reaping.
//! * `decisions.rs` — permission approve/deny, questions, plan review.
//! * `messages.rs` — supplemental input (Soon folded into the turn, AfterTurn, Interrupt).
//! * `kept_cap.rs` — the cap on kept processes across threads (LRU eviction, native resume, RSS figure).
//! * `persistent.rs` — the persistent process per thread (reuse, eviction, restart, WithSpawn, crash,
//!   cancel, close).
//! * `skills.rs` — a run's skills through the per-run overlay.
//! * `kit.rs` — the conformance kit, Inspect.
//! * `services.rs` — a run service's MCP server reaching the CLI.
//! * `trace.rs` — the caller's W3C trace context in the CLI's environment.
//! * `timing.rs` — the per-delta timestamp file (`AGENT_ADAPTOR_CLAUDE_TIMING`) through `agent-adaptor run`.

mod basic;
mod decisions;
mod kept_cap;
mod kit;
mod messages;
mod persistent;
mod services;
mod skills;
mod sse_mcp;
mod timing;
mod trace;

pub use crate::driver_support::{code, delta_text, drain, run_error, transport};

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, Policy};
use agent_adaptor::providers::claude::{ClaudeDriver, Config};
use agent_adaptor::runtime::CallOptions;
use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Reply, RequestLog, Script};

use crate::claude_lab::brain;

/// The lab brain plus error injection: `fail with <status>` answers that HTTP error.
pub fn reply(req: &RequestLog) -> Reply {
    let texts = req.last_user_texts().join("\n");
    if req.tool_results().is_empty()
        && let Some(rest) = texts.split("fail with ").nth(1)
        && let Ok(status) = rest.trim().chars().take(3).collect::<String>().parse::<u16>()
    {
        return Reply::error(status);
    }
    brain::brain(req)
}

/// One isolated Claude setup: the mock, an offline environment and the driver.
pub struct Cl {
    /// The mock model server.
    pub mock: MockAnthropic,
    /// The driver (clones share its process registry).
    pub driver: ClaudeDriver,
    /// The environment (home, tmp, config dir, project).
    pub env: ClaudeEnv,
    _dir: tempfile::TempDir,
}

impl Cl {
    /// A setup with the default configuration, or `None` (after a loud SKIPPED line) without the CLI.
    pub async fn new() -> Option<Cl> {
        Cl::with(|_| {}).await
    }

    /// A setup whose configuration `tweak` adjusts.
    pub async fn with(tweak: impl FnOnce(&mut Config)) -> Option<Cl> {
        Cl::scripted(Script::from_fn(reply), tweak).await
    }

    /// A setup with its own model script.
    pub async fn scripted(script: Script, tweak: impl FnOnce(&mut Config)) -> Option<Cl> {
        let bin = require(Cli::Claude)?;
        let mock = MockAnthropic::start(script).await.unwrap();
        let dir = tempfile::Builder::new().prefix("cd").tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).unwrap();
        let mut config = Config {
            config_dir: Some(env.config_dir.clone()),
            ..Default::default()
        };
        config.common.command = Some(bin);
        config.common.grace_period = Some(Duration::from_secs(1));
        config.common.env = env.vars().clone();
        tweak(&mut config);
        Some(Cl {
            mock,
            driver: ClaudeDriver::new(config),
            env,
            _dir: dir,
        })
    }

    /// The project directory runs work in.
    pub fn ws(&self) -> PathBuf {
        self.env.cwd.clone()
    }

    /// Call options in the project (default policy: the bidirectional transport).
    pub fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(self.ws())
    }

    /// Call options that auto-approve (the one-shot transport).
    pub fn oneshot(&self) -> CallOptions {
        self.opts()
            .policy(Policy::default().with_approvals(ApprovalPolicy::auto_approve()))
    }

    /// The model requests (side requests excluded).
    pub fn requests(&self) -> Vec<RequestLog> {
        self.mock.message_requests()
    }

    /// Asserts that the CLI keeps its sessions in the profile `dir` (its `projects/`), not in the
    /// driver's own config dir.
    pub fn assert_session_in(&self, dir: &Path) {
        assert!(
            dir.join("projects").is_dir(),
            "the session lives in the profile {}",
            dir.display()
        );
        assert!(
            !self.env.config_dir.join("projects").exists(),
            "not in the driver's own dir"
        );
    }

    /// Asserts that no Claude process is left.
    pub fn assert_reaped(&self) {
        assert_eq!(self.driver.registry().live_count(), 0, "a Claude process is left");
    }
}
