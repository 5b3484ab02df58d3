//! The Codex CLI provider (`codex`, `@openai/codex` 0.171.0).
//!
//! The driver runs `codex app-server` (JSON-RPC over stdio: deltas, approvals as server requests,
//! threads, interrupt), and `codex exec --json` where the transport rule ([`transport`]) allows it. Verified
//! protocol facts: `docs/providers/codex-wire.md`; the driver's behaviour and what each capability
//! rests on: `docs/providers/codex-driver.md`.
//!
//! * [`wire`] — the exact serde mirror of both protocols.
//! * `config.rs` — [`CodexConfig`] and the custom [`ModelProvider`].
//! * `argv.rs` — the app-server command line and the `ExtraArgs` rule.
//! * `home.rs` — the SDK-owned `CODEX_HOME`, its `config.toml`, the child's environment.
//! * `transport.rs` — which transport carries a request (pure).
//! * `translate.rs` — notifications → events and transcript, fenced by thread and turn (pure);
//!   `translate/exec.rs` — exec events → events and transcript (pure).
//! * `decision.rs` — server requests ↔ decisions (pure).
//! * `classify.rs` — failure classification (pure).
//! * `inspect.rs` — version and `model/list`.
//! * `run/` — the process and the JSON-RPC conversation of one invocation.

pub mod argv;
pub mod classify;
pub mod config;
pub mod decision;
pub mod home;
mod inspect;
mod run;
pub mod skills;
pub mod translate;
pub mod transport;
pub mod wire;

use std::sync::Arc;

use crate::driver::process::{ProcessPool, ProcessRegistry};
use crate::driver::{
    Boundary, ConfigField, ConfigSchema, ContinueMode, DecisionMode, Descriptor, Driver, EnvironmentCheck,
    EnvironmentReport, InspectError, InvalidConfig, JsonSessionCodec, McpCaps, MessageCaps, ModelInfo,
    ProcessCaps, Request, Response, RunIo, RunPolicyCaps, SessionCaps, SessionCodec, StreamCaps,
    StructuredCaps, session,
};

pub use config::{CodexConfig, ModelProvider, ReasoningEffort};
pub use run::{PARAM_CODEX_HOME, TRANSPORT};
pub use transport::TransportPreference;

/// The driver type name.
pub const DRIVER_TYPE: &str = "codex";

/// The Codex descriptor. Each capability names the test that proves it in
/// `docs/providers/codex-driver.md`.
pub fn descriptor() -> Descriptor {
    Descriptor {
        driver_type: DRIVER_TYPE.into(),
        display_name: "Codex CLI".into(),
        sessions: SessionCaps {
            resume: true,
            fork: true,
        },
        run_policy: RunPolicyCaps {
            sandbox: true,
            // `-c web_search="live"|"disabled"` on both transports.
            web_search: true,
            browser: false,
            permission: vec![
                DecisionMode::Ask,
                DecisionMode::AutoApprove,
                DecisionMode::AutoDeny,
            ],
            plan_review: Vec::new(),
            // Codex asks only in Plan collaboration mode (`CodexConfig::plan_mode`).
            question: vec![DecisionMode::Ask, DecisionMode::AutoDeny],
            retry: false,
        },
        messages: MessageCaps {
            boundaries: vec![Boundary::InTurn, Boundary::TurnEnd],
            interrupt: true,
            continue_mode: ContinueMode::InRun,
            max_units: 0,
            unit: "bytes".into(),
            confirmed_delivery: true,
            persists_delivered: true,
            min_version: None,
        },
        structured: StructuredCaps {
            native: true,
            prompt_validate: true,
            native_with_hitl: false,
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
            sse: false,
        },
        skills: crate::driver::SkillCaps { supported: true },
        system_prompt_append: true,
    }
}

/// The Codex driver. A thread's runs share one persistent `codex app-server` (kept in the driver's
/// [`ProcessPool`] between runs, see `docs/providers/codex-driver.md`); direct runs and `WithSpawn`
/// runs start their own, stopped and reaped before `run` returns. Every process is registered in
/// the driver's [`ProcessRegistry`].
#[derive(Debug, Clone)]
pub struct CodexDriver {
    config: Arc<CodexConfig>,
    registry: ProcessRegistry,
    pool: ProcessPool<run::conn::Conn>,
}

impl CodexDriver {
    /// A driver with `config`.
    pub fn new(config: CodexConfig) -> CodexDriver {
        let pool = ProcessPool::new(config.idle_timeout(), config.common.grace());
        CodexDriver {
            config: Arc::new(config),
            registry: ProcessRegistry::new(),
            pool,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CodexConfig {
        &self.config
    }

    /// The registry of this driver's live processes (tests assert it is empty after each direct run).
    pub fn registry(&self) -> &ProcessRegistry {
        &self.registry
    }

    /// How many persistent app-servers are kept idle for their threads.
    pub fn idle_processes(&self) -> usize {
        self.pool.idle_count()
    }
}

#[async_trait::async_trait]
impl Driver for CodexDriver {
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

    /// On a forced `exec` transport, input is delivered only at turn ends (`exec resume`).
    fn resolve_messages(&self, request: &Request) -> MessageCaps {
        match run::select_transport(&self.config, request, true) {
            Ok(transport::Transport::Exec) => MessageCaps::turn_end_only(),
            _ => descriptor().messages,
        }
    }

    fn profile_dir(&self, profile: &str) -> Option<std::path::PathBuf> {
        Some(home::codex_home(&self.config, profile))
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }

    fn session_fingerprint(&self) -> Option<String> {
        let c = &*self.config;
        let provider = c
            .provider
            .as_ref()
            .map(|p| format!("{}\u{1f}{}\u{1f}{}", p.id, p.base_url, p.wire_api))
            .unwrap_or_default();
        let home = c
            .codex_home
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some(session::fingerprint(&[
            DRIVER_TYPE,
            c.model.as_deref().unwrap_or(""),
            c.reasoning_effort.map_or("", ReasoningEffort::as_str),
            if c.fast_mode { "fast" } else { "" },
            &provider,
            &home,
            c.common.instructions.as_deref().unwrap_or(""),
            &c.common.extra_args.join("\u{1f}"),
        ]))
    }

    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        let version = inspect::version(&self.config, &self.registry).await;
        let check = EnvironmentCheck::cli("Codex CLI", &version);
        Ok(EnvironmentReport::from_checks(
            DRIVER_TYPE,
            version.ok(),
            vec![check],
            descriptor().messages,
        ))
    }

    async fn models(&self) -> Result<Vec<ModelInfo>, InspectError> {
        inspect::models(&self.config, &self.registry)
            .await
            .map_err(|message| InspectError::Failed {
                what: "models",
                message,
            })
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
                    "The codex binary (default: AGENT_ADAPTOR_CODEX_BIN, else codex on PATH)",
                ),
                f("model", "string", "Model slug"),
                f("reasoning_effort", "string", "low|medium|high|xhigh"),
                f("fast_mode", "boolean", "service_tier = \"fast\""),
                f(
                    "plan_mode",
                    "boolean",
                    "Turns run in Codex's experimental Plan collaboration mode (questions via request_user_input)",
                ),
                f(
                    "provider",
                    "object",
                    "Custom model provider {id, name, base_url, env_key, wire_api: responses, request_max_retries, stream_max_retries, stream_idle_timeout_ms}",
                ),
                f("codex_home", "path", "The SDK-owned CODEX_HOME"),
                f(
                    "handshake_timeout",
                    "milliseconds",
                    "Wait for the initialize/thread/turn answers",
                ),
                f(
                    "idle_timeout",
                    "milliseconds",
                    "A thread's persistent app-server is stopped after this long without a run (default 5 min)",
                ),
                f(
                    "transport",
                    "string",
                    "auto|app_server|exec: auto runs exec only where it is indistinguishable from app-server",
                ),
                f(
                    "turn_timeout",
                    "milliseconds",
                    "Wall-clock bound of a turn (Codex retries an unreachable endpoint forever)",
                ),
            ],
        })
    }

    async fn close_processes(&self) -> Result<(), String> {
        self.pool.close().await;
        let report = self.registry.shutdown_all(self.config.common.grace()).await;
        if report.unreaped > 0 {
            return Err(format!("{} Codex processes could not be reaped", report.unreaped));
        }
        Ok(())
    }
}
