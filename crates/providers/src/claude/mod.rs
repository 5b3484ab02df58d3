//! The Claude Code driver (`claude`).
//!
//! Facts about the protocol, verified against Claude Code 2.1.332: `docs/providers/claude-wire.md`; the
//! driver's behaviour and what each capability rests on: `docs/providers/claude-driver.md`.
//!
//! * [`wire`] — the exact serde mirror of the CLI's stream-json protocol, both directions.
//! * `config.rs` — [`Config`].
//! * `argv.rs` — transport selection and flags.
//! * `env.rs` — the child's environment and the SDK-owned config dir.
//! * `translate.rs` — frames → events and transcript (pure).
//! * `decision.rs` — `can_use_tool` ↔ decisions (pure).
//! * `inspect.rs` — version, models and the config schema.
//! * `run/` — processes, turns, supplemental input, the response.

pub mod argv;
pub mod config;
pub mod decision;
pub mod env;
mod inspect;
mod run;
pub mod timing;
pub mod translate;
pub mod wire;

use std::sync::Arc;

use crate::driver::process::{ProcessPool, ProcessRegistry};
use crate::driver::{
    Boundary, ConfigSchema, ContinueMode, DecisionMode, Descriptor, Driver as DriverSpi, EnvironmentReport,
    InspectError, InvalidConfig, JsonSessionCodec, McpCaps, MessageCaps, ModelInfo, ProcessCaps, Request,
    Response, RunIo, RunPolicyCaps, SessionCaps, SessionCodec, StreamCaps, StructuredCaps, session,
};

pub use config::{Config, Effort, PermissionMode};
pub use run::PARAM_CONFIG_DIR;

/// The driver type name.
pub const DRIVER_TYPE: &str = "claude";

/// The oldest CLI whose mid-run message protocol (`uuid`, `priority`, `command_lifecycle`) was verified.
pub const MESSAGES_MIN_VERSION: &str = "2.1.332";

/// Message capabilities of the bidirectional transport (the descriptor's declaration).
fn bidi_messages() -> MessageCaps {
    MessageCaps {
        boundaries: vec![Boundary::InTurn, Boundary::TurnEnd, Boundary::Interrupt],
        interrupt: true,
        continue_mode: ContinueMode::InRun,
        max_units: 0,
        unit: "bytes".into(),
        confirmed_delivery: true,
        persists_delivered: true,
        min_version: Some(MESSAGES_MIN_VERSION.into()),
    }
}

/// Message capabilities of the one-shot transport: queued input continues the session in a new process.
fn oneshot_messages() -> MessageCaps {
    MessageCaps::turn_end_only()
}

/// The Claude descriptor. Each capability names the test that proves it in
/// `docs/providers/claude-driver.md`.
pub fn descriptor() -> Descriptor {
    let all = vec![
        DecisionMode::Ask,
        DecisionMode::AutoApprove,
        DecisionMode::AutoDeny,
    ];
    Descriptor {
        driver_type: DRIVER_TYPE.into(),
        display_name: "Claude Code".into(),
        sessions: SessionCaps {
            resume: true,
            fork: true,
        },
        run_policy: RunPolicyCaps {
            sandbox: false,
            web_search: false,
            browser: false,
            permission: all.clone(),
            plan_review: all,
            question: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            retry: false,
        },
        messages: bidi_messages(),
        structured: StructuredCaps {
            native: true,
            prompt_validate: true,
            native_with_hitl: true,
        },
        stream: StreamCaps {
            token_level: true,
            reasoning: true,
            tool_call_args: true,
            hitl: true,
        },
        process: ProcessCaps { persistent: true },
        mcp: McpCaps {
            stdio: true,
            http: true,
            sse: true,
        },
        skills: crate::driver::SkillCaps { supported: true },
        system_prompt_append: true,
    }
}

/// The Claude Code driver. A thread's runs on the bidirectional transport share one persistent
/// `claude` process (kept in the driver's [`ProcessPool`] between runs, see
/// `docs/providers/claude-driver.md`); every other process is stopped and reaped before `run`
/// returns. Every process is registered in the driver's [`ProcessRegistry`].
#[derive(Debug, Clone)]
pub struct ClaudeDriver {
    config: Arc<Config>,
    registry: ProcessRegistry,
    pool: run::Pool,
}

/// The spec's name for the driver (`claude::Driver::new(Config::default())`).
pub type Driver = ClaudeDriver;

impl ClaudeDriver {
    /// A driver with `config` (a snapshot: later changes to the caller's copy do not apply).
    pub fn new(config: Config) -> ClaudeDriver {
        let pool = ProcessPool::new(config.idle_timeout(), config.common.grace());
        ClaudeDriver {
            config: Arc::new(config),
            registry: ProcessRegistry::new(),
            pool,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The registry of this driver's live processes (tests assert it is empty after each direct run).
    pub fn registry(&self) -> &ProcessRegistry {
        &self.registry
    }

    /// How many persistent processes are kept idle for their threads.
    pub fn idle_processes(&self) -> usize {
        self.pool.idle_count()
    }
}

#[async_trait::async_trait]
impl DriverSpi for ClaudeDriver {
    fn descriptor(&self) -> Descriptor {
        descriptor()
    }

    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.config.validate()
    }

    fn common_config(&self) -> Option<&crate::driver::CommonConfig> {
        Some(&self.config.common)
    }

    async fn run(&self, request: Request, io: RunIo) -> Response {
        run::run(&self.config, &self.registry, &self.pool, request, io).await
    }

    fn profile_dir(&self, profile: &str) -> Option<std::path::PathBuf> {
        Some(env::config_dir(&self.config, profile))
    }

    fn resolve_messages(&self, request: &Request) -> MessageCaps {
        match argv::select_transport(&request.policy) {
            argv::Transport::Bidi => bidi_messages(),
            argv::Transport::OneShot => oneshot_messages(),
        }
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }

    fn session_fingerprint(&self) -> Option<String> {
        let c = &*self.config;
        let max_turns = c.max_turns_per_run.map(|n| n.to_string()).unwrap_or_default();
        let dir = c
            .config_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some(session::fingerprint(&[
            DRIVER_TYPE,
            c.model.as_deref().unwrap_or(""),
            c.effort.map_or("", Effort::as_str),
            c.permission_mode.map_or("", PermissionMode::as_str),
            &max_turns,
            &dir,
            c.common.instructions.as_deref().unwrap_or(""),
            &c.common.extra_args.join("\u{1f}"),
        ]))
    }

    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        Ok(inspect::environment(&self.config, &self.registry).await)
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, InspectError> {
        inspect::models(&self.config, &self.registry).await
    }

    fn config_schema(&self) -> Option<ConfigSchema> {
        Some(inspect::config_schema())
    }

    async fn close_processes(&self) -> Result<(), String> {
        self.pool.close().await;
        let report = self.registry.shutdown_all(self.config.common.grace()).await;
        if report.unreaped > 0 {
            return Err(format!(
                "{} Claude processes could not be reaped",
                report.unreaped
            ));
        }
        Ok(())
    }
}
