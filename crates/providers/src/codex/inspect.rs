//! Inspection without a model task: `codex --version` and `model/list` (served offline from the
//! bundled catalogue) through a short-lived app-server.

use std::time::Duration;

use crate::driver::ModelInfo;
use crate::driver::inspect::first_version_word;
use crate::driver::process::{ProcessRegistry, ProcessSpec, probe_stdout};

use super::config::CodexConfig;
use super::home;
use super::run::conn::{Conn, Incoming, Launch};
use super::wire::RpcMessage;
use super::wire::client::{ClientInfo, ClientRequest, InitializeParams, ModelListParams, initialized};
use super::wire::results::ModelListResponse;

const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// `codex --version` → `0.171.0`.
pub async fn version(config: &CodexConfig, registry: &ProcessRegistry) -> Result<String, String> {
    let spec = ProcessSpec::new(config.program())
        .arg("--version")
        .inherit_base_env()
        .envs(&config.common.env)
        .label("codex --version");
    let text = probe_stdout(registry, spec, PROBE_TIMEOUT, "codex --version").await?;
    // `codex-cli 0.171.0`
    first_version_word(&text).ok_or_else(|| format!("codex --version named no version: {}", text.trim()))
}

/// `model/list` through a short-lived app-server in the SDK-owned home.
pub async fn models(config: &CodexConfig, registry: &ProcessRegistry) -> Result<Vec<ModelInfo>, String> {
    let home = home::codex_home(config, "");
    home::prepare(&home, config).map_err(|e| format!("cannot prepare CODEX_HOME: {e}"))?;
    let program = config.program();
    let cwd = std::env::temp_dir();
    let launch = Launch {
        program: &program,
        args: vec!["app-server".into(), "--listen".into(), "stdio://".into()],
        cwd: &cwd,
        vars: home::vars(config, &Default::default(), &home),
        label: "codex model/list".into(),
    };
    let mut conn = Conn::spawn(registry, launch).await.map_err(|e| e.to_string())?;
    let result = tokio::time::timeout(PROBE_TIMEOUT, list(&mut conn)).await;
    conn.stop(config.common.grace()).await;
    result.map_err(|_| "model/list timed out".to_owned())?
}

async fn list(conn: &mut Conn) -> Result<Vec<ModelInfo>, String> {
    let init = ClientRequest::Initialize(InitializeParams {
        client_info: ClientInfo {
            name: "agent-adaptor".into(),
            title: None,
            version: env!("CARGO_PKG_VERSION").into(),
        },
        capabilities: None,
    });
    let id = conn.send(&init).await.map_err(|e| e.to_string())?;
    answer(conn, &id).await?;
    conn.send_line(initialized()).await.map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut cursor = None;
    for _ in 0..20 {
        let req = ClientRequest::ModelList(ModelListParams {
            limit: None,
            cursor: cursor.take(),
        });
        let id = conn.send(&req).await.map_err(|e| e.to_string())?;
        let page: ModelListResponse = match answer(conn, &id).await? {
            RpcMessage::Response { result, .. } => {
                serde_json::from_str(result.get()).map_err(|e| format!("malformed model/list answer: {e}"))?
            }
            _ => return Err("unexpected model/list answer".into()),
        };
        out.extend(page.data.into_iter().filter(|m| !m.hidden).map(|m| ModelInfo {
            id: m.model,
            display_name: m.display_name,
            default: m.is_default,
        }));
        match page.next_cursor {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => break,
        }
    }
    Ok(out)
}

async fn answer(conn: &mut Conn, id: &super::wire::RequestId) -> Result<RpcMessage, String> {
    loop {
        match conn.next().await {
            Incoming::Msg(m @ RpcMessage::Response { .. }, _) if matches!(&m, RpcMessage::Response { id: r, .. } if r == id) =>
            {
                return Ok(m);
            }
            Incoming::Msg(RpcMessage::Error { id: Some(r), error }, _) if &r == id => {
                return Err(format!("{} (code {})", error.message, error.code));
            }
            Incoming::Eof => return Err("codex app-server exited".into()),
            _ => {}
        }
    }
}
