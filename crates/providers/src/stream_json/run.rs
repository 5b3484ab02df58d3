//! Per-invocation plumbing both stream-json drivers share: the joined instructions, the materialized MCP
//! file, claiming and settling supplemental input, the session plan, the spawn notice and the
//! checkpoint.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::driver::{
    Ack, Boundary, Checkpoint, ClaimedMessage, DriverEvent, MessageFailure, ProcessInfo, ProcessKind,
    Request, RunIo, SessionPlan, SessionState, session::PARAM_CWD,
};

/// Guard key: the SDK-owned config dir the session lives in.
pub const PARAM_CONFIG_DIR: &str = "config_dir";

/// The configured and the per-request instructions, blank ones dropped, joined by a blank line; `None`
/// when nothing is left.
pub fn instructions(configured: Option<&str>, request: Option<&str>) -> Option<String> {
    let joined = [configured, request]
        .into_iter()
        .flatten()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    (!joined.is_empty()).then_some(joined)
}

/// The permission rules pre-approved for a run (`--allowedTools`): every tool of the host tools server
/// (`mcp__agent_adaptor_tools`). The host defined those tools and their handlers are their policy
/// (`tools::reject`), so asking the host again for each call would only add a round trip.
pub fn preapproved(req: &Request) -> Vec<String> {
    req.mcp
        .iter()
        .filter(|s| s.name == crate::vocab::HOSTED_TOOLS_SERVER)
        .map(|s| format!("mcp__{}", s.name))
        .collect()
}

/// Writes the request's MCP servers, rendered by `render`, to `<config dir>/agent-adaptor/mcp/<run id>.json`
/// (for `--mcp-config … --strict-mcp-config`); `None` when there are none.
pub fn write_mcp_config(
    req: &Request,
    config_dir: &Path,
    render: impl FnOnce(&Request) -> Value,
) -> std::io::Result<Option<PathBuf>> {
    if req.mcp.is_empty() {
        return Ok(None);
    }
    let dir = config_dir.join("agent-adaptor").join("mcp");
    std::fs::create_dir_all(&dir)?;
    let name = crate::driver::file_label(&req.run_id);
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, render(req).to_string())?;
    Ok(Some(file))
}

/// Claims queued input at `boundary`: the prompt for the next turn (the texts joined by a blank line) and
/// the claims to settle.
pub fn claim(io: &RunIo, boundary: Boundary) -> Option<(String, Vec<ClaimedMessage>)> {
    let port = io.messages.as_ref()?;
    let claims = port.claim(boundary);
    if claims.is_empty() {
        return None;
    }
    let prompt = claims
        .iter()
        .map(|c| c.text.as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    Some((prompt, claims))
}

/// Settles claims after the attempt to hand them to the CLI: delivered through `mechanism`, or failed.
pub fn settle_claims(claims: Vec<ClaimedMessage>, delivered: bool, mechanism: &str) {
    for c in claims {
        c.ack(if delivered {
            Ack::Delivered {
                mechanism: mechanism.into(),
            }
        } else {
            Ack::Failed(MessageFailure::RunFailed)
        });
    }
}

/// The session to continue: `(id, fork)`, or `None` for a fresh one.
pub fn session_plan(req: &Request) -> Option<(&str, bool)> {
    match &req.session {
        SessionPlan::Fresh => None,
        SessionPlan::Resume(s) => Some((s.resume_id.as_str(), false)),
        SessionPlan::Fork(s) => Some((s.resume_id.as_str(), true)),
    }
}

/// The `ProcessInfo` event for a started CLI.
pub fn spawned(program: &Path, transport: &str, pid: u32) -> DriverEvent {
    let mut info = ProcessInfo {
        kind: ProcessKind::Spawn,
        text: format!("{} ({transport})", program.display()),
        bytes: None,
        metadata: Default::default(),
        data: Default::default(),
    };
    info.metadata.insert("pid".into(), pid.to_string());
    info.metadata.insert("transport".into(), transport.into());
    DriverEvent::ProcessInfo(info)
}

/// The checkpoint of session `session_id`, guarded by the working directory and the config dir.
pub fn checkpoint(session_id: &str, cwd: &Path, config_dir: &Path, valid: bool) -> Checkpoint {
    let mut state = SessionState {
        resume_id: session_id.to_owned(),
        display_id: session_id.to_owned(),
        ..Default::default()
    };
    state
        .data
        .insert(PARAM_CWD.into(), cwd.to_string_lossy().into_owned());
    state
        .data
        .insert(PARAM_CONFIG_DIR.into(), config_dir.to_string_lossy().into_owned());
    Checkpoint { state, valid }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_drop_blanks_and_join_with_a_blank_line() {
        assert_eq!(instructions(None, Some("  ")), None);
        assert_eq!(instructions(Some("A"), Some("B")).as_deref(), Some("A\n\nB"));
        assert_eq!(instructions(Some(""), Some("B")).as_deref(), Some("B"));
    }

    #[test]
    fn checkpoints_carry_both_guards() {
        let c = checkpoint("s1", Path::new("/w"), Path::new("/c"), true);
        assert_eq!(c.state.resume_id, "s1");
        assert_eq!(c.state.data[PARAM_CWD], "/w");
        assert_eq!(c.state.data[PARAM_CONFIG_DIR], "/c");
        assert!(c.valid);
    }
}
