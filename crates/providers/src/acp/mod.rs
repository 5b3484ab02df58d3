//! The ACP client driver (`acp`): any agent that speaks the Agent Client Protocol over stdio (Cursor's
//! `agent acp`, `gemini --acp`, the Claude and Codex adapters `claude-agent-acp` / `codex-acp`, …)
//! driven through the contract. The wire types are the protocol module's ([`agent_adaptor_core::acp::wire`]), shared
//! with the ACP server edge.
//!
//! The descriptor must be known before any run, and an ACP agent only says what it can do in
//! `initialize`: [`AcpDriver::connect`] (or [`AcpDriver::connect_blocking`], which the provider registry
//! uses) starts the agent once, reads its answer and stops it; the descriptor is built from that answer
//! ([`caps`]). Each run starts its own agent process and checks the answer again.
//!
//! * `config.rs` — [`AcpConfig`].
//! * [`caps`] — declared capabilities → Descriptor.
//! * `conn.rs` — the process and its JSON-RPC framing.
//! * [`translate`] — `session/update` → events and transcript (pure).
//! * [`permission`] — `session/request_permission` ↔ decisions (pure).
//! * [`fs`] — `fs/*` inside the workspace.
//! * [`run`] — one invocation (also Cursor's ACP transport).

pub mod caps;
pub mod config;
mod conn;
pub mod fs;
pub mod permission;
pub mod run;
pub mod translate;

use std::sync::Arc;
use std::time::Duration;

use crate::driver::process::{ProcessError, ProcessRegistry, ProcessSpec};
use crate::driver::{
    CheckStatus, ConfigField, ConfigSchema, Descriptor, Driver, EnvironmentCheck, EnvironmentReport,
    InspectError, InvalidConfig, JsonSessionCodec, Request, Response, RunIo, SessionCodec, session,
};
use agent_adaptor_core::acp::wire::{InitializeParams, InitializeResponse, PROTOCOL_VERSION};

pub use caps::AgentCaps;
pub use config::AcpConfig;
pub use run::FORK_UNSUPPORTED;

/// The driver type name.
pub const DRIVER_TYPE: &str = "acp";

/// Why an agent's capabilities could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The configuration is refused.
    #[error(transparent)]
    Config(#[from] InvalidConfig),
    /// The agent could not be started.
    #[error("cannot start the ACP agent: {0}")]
    Spawn(#[from] ProcessError),
    /// It did not answer `initialize` in time.
    #[error("the ACP agent did not answer initialize within {0:?}")]
    Timeout(Duration),
    /// It closed its output first.
    #[error("the ACP agent exited before answering initialize{}", if .0.is_empty() { String::new() } else { format!(": {}", .0) })]
    Exited(String),
    /// It answered with an error or with something that is no `initialize` answer.
    #[error("the ACP agent's initialize answer is unusable: {0}")]
    Answer(String),
    /// No runtime could be built for the blocking probe.
    #[error("cannot build a runtime for the probe: {0}")]
    Runtime(String),
}

/// The ACP client driver.
#[derive(Debug, Clone)]
pub struct AcpDriver {
    config: Arc<AcpConfig>,
    caps: Arc<AgentCaps>,
    registry: ProcessRegistry,
}

/// The process spec of `config`'s agent in `cwd`, with `extra` variables (the run's).
pub fn spec(
    config: &AcpConfig,
    cwd: &std::path::Path,
    extra: &std::collections::BTreeMap<String, String>,
    label: String,
) -> ProcessSpec {
    let program = config.common.command.clone().unwrap_or_default();
    ProcessSpec::new(program)
        .args(config.argv())
        .cwd(cwd)
        .inherit_base_env()
        .envs(&config.common.env)
        .envs(extra)
        .label(label)
}

/// Starts `config`'s agent, reads its `initialize` answer and stops it.
pub async fn probe(config: &AcpConfig, registry: &ProcessRegistry) -> Result<AgentCaps, ProbeError> {
    config.validate()?;
    let cwd = config
        .common
        .directory
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(std::env::temp_dir);
    let spec = spec(config, &cwd, &Default::default(), "acp probe".into());
    let mut conn = conn::Conn::spawn(registry, spec).await?;
    let grace = config.common.grace();
    let bound = config.handshake();
    let answer = tokio::time::timeout(bound, async {
        let params = InitializeParams {
            protocol_version: PROTOCOL_VERSION,
            client_capabilities: serde_json::json!({}),
            client_info: None,
        };
        let id = conn
            .request("initialize", params)
            .await
            .map_err(|e| ProbeError::Answer(e.to_string()))?;
        loop {
            match conn.next().await {
                conn::Msg::Eof => return Err(ProbeError::Exited(String::new())),
                conn::Msg::Rpc(agent_adaptor_core::acp::rpc::Incoming::Response { id: rid, outcome })
                    if rid.as_u64() == Some(id) =>
                {
                    let v = outcome.map_err(|e| ProbeError::Answer(e.to_string()))?;
                    let r: InitializeResponse =
                        serde_json::from_value(v).map_err(|e| ProbeError::Answer(e.to_string()))?;
                    if r.protocol_version != PROTOCOL_VERSION {
                        return Err(ProbeError::Answer(format!(
                            "protocol version {} (this client speaks {PROTOCOL_VERSION})",
                            r.protocol_version
                        )));
                    }
                    return Ok(AgentCaps::from_initialize(&r));
                }
                _ => {}
            }
        }
    })
    .await;
    conn.stop(grace).await;
    match answer {
        Ok(Err(ProbeError::Exited(_))) => Err(ProbeError::Exited(
            conn.child.stderr().tail_lossy().trim().to_owned(),
        )),
        Ok(r) => r,
        Err(_) => Err(ProbeError::Timeout(bound)),
    }
}

impl AcpDriver {
    /// A driver for an agent whose capabilities are already known (`caps`, e.g. from a [`probe`]).
    pub fn new(config: AcpConfig, caps: AgentCaps) -> AcpDriver {
        AcpDriver {
            config: Arc::new(config),
            caps: Arc::new(caps),
            registry: ProcessRegistry::new(),
        }
    }

    /// Probes the agent ([`probe`]) and builds the driver from its answer.
    pub async fn connect(config: AcpConfig) -> Result<AcpDriver, ProbeError> {
        let registry = ProcessRegistry::new();
        let caps = probe(&config, &registry).await?;
        Ok(AcpDriver {
            config: Arc::new(config),
            caps: Arc::new(caps),
            registry,
        })
    }

    /// [`AcpDriver::connect`] for synchronous callers (the provider registry): the probe runs on a
    /// runtime of its own on a helper thread, so it works inside and outside a tokio runtime.
    pub fn connect_blocking(config: AcpConfig) -> Result<AcpDriver, ProbeError> {
        std::thread::scope(|s| {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| ProbeError::Runtime(e.to_string()))?;
                rt.block_on(AcpDriver::connect(config))
            })
            .join()
            .unwrap_or_else(|_| Err(ProbeError::Runtime("the probe thread panicked".into())))
        })
    }

    /// The configuration.
    pub fn config(&self) -> &AcpConfig {
        &self.config
    }

    /// What the agent declared.
    pub fn caps(&self) -> &AgentCaps {
        &self.caps
    }

    /// The registry of this driver's live processes.
    pub fn registry(&self) -> &ProcessRegistry {
        &self.registry
    }

    fn display_name(&self) -> String {
        self.config
            .name
            .clone()
            .or_else(|| (!self.caps.title.is_empty()).then(|| self.caps.title.clone()))
            .or_else(|| (!self.caps.name.is_empty()).then(|| self.caps.name.clone()))
            .unwrap_or_else(|| "ACP agent".into())
    }
}

#[async_trait::async_trait]
impl Driver for AcpDriver {
    fn descriptor(&self) -> Descriptor {
        caps::descriptor(DRIVER_TYPE, &self.display_name(), &self.caps)
    }

    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.config.validate()
    }

    fn common_config(&self) -> Option<&crate::driver::CommonConfig> {
        Some(&self.config.common)
    }

    async fn run(&self, request: Request, io: RunIo) -> Response {
        let c = &*self.config;
        let setup = run::Setup {
            driver_type: DRIVER_TYPE,
            spec: spec(c, &request.cwd, &request.env, format!("acp {}", request.run_id)),
            program: c
                .common
                .command
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            caps: &self.caps,
            auth_method: c.auth_method.as_deref(),
            mode: c.mode.as_deref(),
            model: None,
            client_fs: c.client_fs,
            handshake: c.handshake(),
            grace: c.common.grace(),
            instructions: c.common.instructions.as_deref(),
            guards: Vec::new(),
        };
        run::run(setup, &self.registry, &request, &io).await
    }

    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }

    fn session_fingerprint(&self) -> Option<String> {
        let c = &*self.config;
        let command = c
            .common
            .command
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some(session::fingerprint(&[
            DRIVER_TYPE,
            &command,
            &c.argv().join("\u{1f}"),
            c.mode.as_deref().unwrap_or(""),
            c.common.instructions.as_deref().unwrap_or(""),
        ]))
    }

    async fn environment(&self) -> Result<EnvironmentReport, InspectError> {
        let (version, check) = match probe(&self.config, &self.registry).await {
            Ok(caps) => (
                (!caps.version.is_empty()).then(|| caps.version.clone()),
                EnvironmentCheck {
                    code: "initialize".into(),
                    status: CheckStatus::Pass,
                    message: format!("{} {} answered initialize", caps.name, caps.version),
                },
            ),
            Err(e) => (
                None,
                EnvironmentCheck {
                    code: "initialize".into(),
                    status: CheckStatus::Fail,
                    message: e.to_string(),
                },
            ),
        };
        Ok(EnvironmentReport::from_checks(
            DRIVER_TYPE,
            version,
            vec![check],
            self.descriptor().messages,
        ))
    }

    fn config_schema(&self) -> Option<ConfigSchema> {
        let f = |name: &str, kind: &str, required: bool, description: &str| ConfigField {
            name: name.into(),
            kind: kind.into(),
            required,
            description: description.into(),
        };
        Some(ConfigSchema {
            driver_type: DRIVER_TYPE.into(),
            fields: vec![
                f("command", "path", true, "The ACP agent to launch"),
                f("args", "string[]", false, "Its arguments"),
                f("env", "map", false, "Extra environment"),
                f(
                    "name",
                    "string",
                    false,
                    "Display name (default: the agent's title)",
                ),
                f(
                    "auth_method",
                    "string",
                    false,
                    "authenticate methodId after initialize",
                ),
                f(
                    "mode",
                    "string",
                    false,
                    "session/set_mode after the session opens",
                ),
                f(
                    "client_fs",
                    "bool",
                    false,
                    "Serve fs/* inside the workspace (default true)",
                ),
                f(
                    "handshake_timeout",
                    "seconds",
                    false,
                    "Bound on initialize and session calls (120)",
                ),
            ],
        })
    }

    async fn close_processes(&self) -> Result<(), String> {
        let report = self.registry.shutdown_all(self.config.common.grace()).await;
        if report.unreaped > 0 {
            return Err(format!(
                "{} ACP agent processes could not be reaped",
                report.unreaped
            ));
        }
        Ok(())
    }
}
