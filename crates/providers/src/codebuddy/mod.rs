//! The CodeBuddy Code driver (`codebuddy`).
//!
//! Facts about the protocol, verified against CodeBuddy Code 2.117.0: `docs/providers/codebuddy-wire.md`;
//! the driver's behaviour and what each capability rests on: `docs/providers/codebuddy-driver.md`.
//!
//! * [`wire`] — the exact serde mirror of the CLI's stream-json protocol, both directions.
//! * `config.rs` — [`CodeBuddyConfig`].
//! * `argv.rs` — transport selection and flags.
//! * `env.rs` — the child's environment and the SDK-owned config dir.
//! * `translate.rs` — frames → events and transcript (pure).
//! * `decision.rs` — `can_use_tool` ↔ decisions (pure).
//! * `run/` — processes, turns, supplemental input, the response.

pub mod argv;
pub mod config;
pub mod decision;
pub mod env;
mod run;
pub mod translate;
pub mod wire;

use std::sync::Arc;
use std::time::Duration;

use crate::driver::process::{ProcessPool, ProcessRegistry, ProcessSpec, probe_stdout};
use crate::driver::{
    ConfigField, ConfigSchema, DecisionMode, Descriptor, Driver, EnvironmentCheck, EnvironmentReport,
    InspectError, InvalidConfig, JsonSessionCodec, McpCaps, MessageCaps, ProcessCaps, Request, Response,
    RunIo, RunPolicyCaps, SessionCaps, SessionCodec, StreamCaps, StructuredCaps, session,
};

pub use config::{CodeBuddyConfig, Effort, PermissionMode};
pub use run::PARAM_CONFIG_DIR;

/// The driver type name.
pub const DRIVER_TYPE: &str = "codebuddy";

/// The CodeBuddy descriptor. Each capability names the test that proves it in
/// `docs/providers/codebuddy-driver.md`.
pub fn descriptor() -> Descriptor {
    let binary = vec![
        DecisionMode::Ask,
        DecisionMode::AutoApprove,
        DecisionMode::AutoDeny,
    ];
    Descriptor {
        driver_type: DRIVER_TYPE.into(),
        display_name: "CodeBuddy Code".into(),
        sessions: SessionCaps {
            resume: true,
            fork: true,
        },
        run_policy: RunPolicyCaps {
            sandbox: false,
            web_search: false,
            browser: false,
            permission: binary.clone(),
            plan_review: binary,
            question: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            retry: false,
        },
        // Input at turn ends; the control transport also interrupts.
        messages: MessageCaps {
            interrupt: true,
            ..MessageCaps::turn_end_only()
        },
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
        // A thread's control-transport runs share one process (`run/persist.rs`).
        process: ProcessCaps { persistent: true },
        mcp: McpCaps {
            stdio: true,
            http: true,
            sse: true,
        },
        // Per-run overlay through `CODEBUDDY_SESSION_SKILL_DIRS` (`env.rs`).
        skills: crate::driver::SkillCaps { supported: true },
        system_prompt_append: true,
    }
}

/// The CodeBuddy Code driver. A thread's runs on the control transport share one persistent
/// `codebuddy` process (kept in the driver's [`ProcessPool`] between runs, see `run/persist.rs`); every
/// other process is registered in the driver's [`ProcessRegistry`] and stopped and reaped before `run`
/// returns. Clones share the registry and the pool.
#[derive(Debug, Clone)]
pub struct CodeBuddyDriver {
    config: Arc<CodeBuddyConfig>,
    registry: ProcessRegistry,
    pool: run::Pool,
}

impl CodeBuddyDriver {
    /// A driver with `config`.
    pub fn new(config: CodeBuddyConfig) -> CodeBuddyDriver {
        let pool = ProcessPool::new(config.idle_timeout(), config.common.grace());
        CodeBuddyDriver {
            config: Arc::new(config),
            registry: ProcessRegistry::new(),
            pool,
        }
    }

    /// How many persistent processes are kept idle for their threads.
    pub fn idle_processes(&self) -> usize {
        self.pool.idle_count()
    }

    /// The configuration.
    pub fn config(&self) -> &CodeBuddyConfig {
        &self.config
    }

    /// The registry of this driver's live processes (tests assert it is empty after each run).
    pub fn registry(&self) -> &ProcessRegistry {
        &self.registry
    }

    /// Runs `codebuddy --version` (never a model task).
    async fn version(&self) -> Result<String, String> {
        let spec = ProcessSpec::new(self.config.program())
            .arg("--version")
            .inherit_base_env()
            .envs(env::FIXED.iter().map(|(k, v, _)| (*k, *v)))
            .label("codebuddy --version");
        let what = "codebuddy --version";
        let text = probe_stdout(&self.registry, spec, Duration::from_secs(60), what).await?;
        text.split_whitespace()
            .next()
            .map(str::to_owned)
            .ok_or_else(|| format!("{what} printed nothing"))
    }
}

#[async_trait::async_trait]
impl Driver for CodeBuddyDriver {
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
        let version = self.version().await;
        let check = EnvironmentCheck::cli("CodeBuddy Code", &version);
        Ok(EnvironmentReport::from_checks(
            DRIVER_TYPE,
            version.ok(),
            vec![check],
            descriptor().messages,
        ))
    }

    fn config_schema(&self) -> Option<ConfigSchema> {
        let f = |name: &str, kind: &str, description: &str| ConfigField {
            name: name.into(),
            kind: kind.into(),
            required: false,
            description: description.into(),
        };
        Some(ConfigSchema {
            driver_type: DRIVER_TYPE.into(),
            fields: vec![
                f(
                    "command",
                    "path",
                    "The codebuddy binary (default: codebuddy on PATH)",
                ),
                f("model", "string", "--model"),
                f("effort", "string", "minimal|low|medium|high|xhigh|max"),
                f(
                    "permission_mode",
                    "string",
                    "default|acceptEdits|plan|auto|dontAsk|bypassPermissions (default: from the approval policy)",
                ),
                f("max_turns_per_run", "integer", "--max-turns"),
                f("config_dir", "path", "The SDK-owned CODEBUDDY_CONFIG_DIR"),
                f(
                    "handshake_timeout",
                    "milliseconds",
                    "Wait for the initialize answer",
                ),
                f(
                    "settle_timeout",
                    "milliseconds",
                    "Wait for a result CodeBuddy may never send",
                ),
                f(
                    "idle_timeout",
                    "milliseconds",
                    "Stop a thread's persistent process after this long idle",
                ),
            ],
        })
    }

    async fn close_processes(&self) -> Result<(), String> {
        self.pool.close().await;
        let report = self.registry.shutdown_all(self.config.common.grace()).await;
        if report.unreaped > 0 {
            return Err(format!(
                "{} CodeBuddy processes could not be reaped",
                report.unreaped
            ));
        }
        Ok(())
    }
}
