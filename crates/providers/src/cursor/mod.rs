//! The Cursor agent driver (`cursor`): one `cursor-agent -p --output-format stream-json` process per
//! invocation, resume by chat id, strict protocol checks.
//!
//! The real CLI cannot be installed here; everything is tested against `testkit::fake_cursor`, which
//! follows the documented protocol. Which fact comes from which source and Cursor version:
//! `docs/providers/cursor.md`; the driver's behaviour and what each capability rests on:
//! `docs/providers/cursor-driver.md`.
//!
//! * [`wire`] — serde types of the stream-json protocol and the strict validator.
//! * `config.rs` — [`CursorConfig`] and the command line.
//! * `translate.rs` — lines → events and transcript (pure).
//! * `profile.rs` — the profile directories, the child's environment, resume guards.
//! * [`plugin`] — a run's skills as a per-run plugin (`--plugin-dir`).
//! * [`inspect`] — the environment report (`--version`).
//! * `run.rs` — the process, failure classification, the response.
//! * [`acp`] — the second transport, `agent acp` (config `transport = "acp"`), through `providers::acp`.

pub mod acp;
pub mod config;
pub mod inspect;
pub mod plugin;
mod profile;
mod run;
pub mod translate;
pub mod wire;

use std::sync::Arc;

use crate::driver::process::ProcessRegistry;
use crate::driver::{
    ConfigField, ConfigSchema, ContinueMode, DecisionMode, Descriptor, Driver, EnvironmentReport,
    InspectError, InvalidConfig, JsonSessionCodec, McpCaps, MessageCaps, ProcessCaps, Request, Response,
    RunIo, RunPolicyCaps, SessionCaps, SessionCodec, StreamCaps, StructuredCaps, session,
};

pub use config::{CursorConfig, CursorMode, CursorTransport};
pub use profile::{PARAM_CURSOR_CONFIG_DIR, PARAM_CURSOR_DATA_DIR, PARAM_CURSOR_HOME, Profile};
pub use run::FORK_UNSUPPORTED;

/// The driver type name.
pub const DRIVER_TYPE: &str = "cursor";

/// The Cursor descriptor. Each capability names the test that proves it in
/// `docs/providers/cursor-driver.md`.
pub fn descriptor() -> Descriptor {
    Descriptor {
        driver_type: DRIVER_TYPE.into(),
        display_name: "Cursor agent".into(),
        sessions: SessionCaps {
            resume: true,
            fork: false,
        },
        run_policy: RunPolicyCaps {
            permission: vec![DecisionMode::AutoApprove],
            ..Default::default()
        },
        messages: MessageCaps {
            boundaries: Vec::new(),
            interrupt: false,
            continue_mode: ContinueMode::Resume,
            max_units: 0,
            unit: "bytes".into(),
            confirmed_delivery: false,
            persists_delivered: true,
            min_version: None,
        },
        structured: StructuredCaps {
            native: false,
            prompt_validate: true,
            native_with_hitl: false,
        },
        stream: StreamCaps::default(),
        process: ProcessCaps { persistent: false },
        mcp: McpCaps::default(),
        // Per-run plugin through `--plugin-dir` (`plugin.rs`).
        skills: crate::driver::SkillCaps { supported: true },
        system_prompt_append: false,
    }
}

/// The Cursor agent driver.
#[derive(Debug, Clone)]
pub struct CursorDriver {
    config: Arc<CursorConfig>,
    registry: ProcessRegistry,
}

impl CursorDriver {
    /// A driver with `config`.
    pub fn new(config: CursorConfig) -> CursorDriver {
        CursorDriver {
            config: Arc::new(config),
            registry: ProcessRegistry::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CursorConfig {
        &self.config
    }

    /// The registry of this driver's live processes.
    pub fn registry(&self) -> &ProcessRegistry {
        &self.registry
    }
}

#[async_trait::async_trait]
impl Driver for CursorDriver {
    fn descriptor(&self) -> Descriptor {
        match self.config.transport {
            CursorTransport::Print => descriptor(),
            CursorTransport::Acp => acp::descriptor(),
        }
    }

    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.config.validate()
    }

    fn common_config(&self) -> Option<&crate::driver::CommonConfig> {
        Some(&self.config.common)
    }

    async fn run(&self, request: Request, io: RunIo) -> Response {
        match self.config.transport {
            CursorTransport::Print => run::run(&self.config, &self.registry, request, io).await,
            CursorTransport::Acp => acp::run(&self.config, &self.registry, request, io).await,
        }
    }

    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        Ok(inspect::environment(&self.config, &self.registry).await)
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }

    fn session_fingerprint(&self) -> Option<String> {
        let c = &*self.config;
        let root = c
            .profile_dir
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let extra = c.common.extra_args.join("\u{1f}");
        let mut parts = vec![
            DRIVER_TYPE,
            c.model.as_deref().unwrap_or(""),
            c.mode.map_or("", CursorMode::as_str),
            &root,
            c.common.instructions.as_deref().unwrap_or(""),
            &extra,
        ];
        // A session of one transport is not continued on the other (print-mode fingerprints unchanged).
        if c.transport == CursorTransport::Acp {
            parts.push(c.transport.as_str());
        }
        Some(session::fingerprint(&parts))
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
                f("command", "path", "The CLI (default: cursor-agent on PATH)"),
                f("model", "string", "--model"),
                f("mode", "string", "agent|ask|plan"),
                f("transport", "string", "print (default) | acp"),
                f(
                    "hook_relay",
                    "string[]",
                    "Hook relay command (hooks are not wired: turn-end resume)",
                ),
                f(
                    "profile_dir",
                    "path",
                    "Root of CURSOR_HOME, CURSOR_CONFIG_DIR and CURSOR_DATA_DIR",
                ),
            ],
        })
    }

    async fn close_processes(&self) -> Result<(), String> {
        let report = self.registry.shutdown_all(self.config.common.grace()).await;
        if report.unreaped > 0 {
            return Err(format!(
                "{} cursor-agent processes could not be reaped",
                report.unreaped
            ));
        }
        Ok(())
    }
}
