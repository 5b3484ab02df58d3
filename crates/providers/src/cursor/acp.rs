//! Cursor's second transport: `agent acp` (Cursor's documented ACP server mode, `cursor.com/docs/cli/acp`)
//! run through the ACP client engine (`providers::acp::run`), with the Cursor profile directories of the
//! print transport (`profile.rs`).
//!
//! What Cursor documents and this transport relies on: `agent [options] acp`, newline-delimited JSON-RPC
//! on stdio, `initialize` then `authenticate` with `methodId: "cursor_login"` (pre-authenticated through
//! `CURSOR_API_KEY` / `agent login`), `session/new` or `session/load`, `session/prompt` with
//! `session/update`s, `session/request_permission` answered with `allow-once` / `allow-always` /
//! `reject-once`, `session/cancel`, and the modes `agent` / `plan` / `ask`. What it does not declare:
//! `session/resume`, `session/fork`, `session/list` (a fork is refused before launch), and MCP servers
//! passed in `session/new` (Cursor's approval middleware blocks them in ACP mode, so none are offered).
//! Cursor's own blocking `cursor/*` requests are answered "method not found" with a notice.

use std::path::Path;

use crate::acp::{AgentCaps, caps, run as engine};
use crate::driver::process::ProcessSpec;
use crate::driver::{Descriptor, FailureCode, McpCaps, Request, Response, RunIo, SessionPlan};

use super::config::CursorConfig;
use super::profile::{Profile, guard_violation, inherited};
use super::{DRIVER_TYPE, FORK_UNSUPPORTED};
use crate::driver::process::ProcessRegistry;

/// The `authenticate` method Cursor advertises.
pub const AUTH_METHOD: &str = "cursor_login";

/// Guard key: the transport a session was created on (a print-mode chat is not resumed over ACP).
pub const PARAM_CURSOR_TRANSPORT: &str = "cursor_transport";

/// What Cursor declares for `agent acp` (per its documentation): `session/load`, nothing else of the
/// session family.
pub fn agent_caps() -> AgentCaps {
    AgentCaps {
        name: "cursor-agent".into(),
        title: "Cursor Agent".into(),
        load: true,
        auth_methods: vec![AUTH_METHOD.into()],
        ..Default::default()
    }
}

/// The descriptor of the ACP transport.
pub fn descriptor() -> Descriptor {
    let mut d = caps::descriptor(DRIVER_TYPE, "Cursor agent (ACP)", &agent_caps());
    d.mcp = McpCaps::default();
    d
}

/// `acp --workspace <dir> [--model m] <extra>`.
pub fn args(config: &CursorConfig, workspace: &Path, model: Option<&str>) -> Vec<String> {
    let mut a = vec![
        "acp".to_owned(),
        "--workspace".to_owned(),
        workspace.to_string_lossy().into_owned(),
    ];
    if let Some(m) = model.or(config.model.as_deref()) {
        a.extend(["--model".into(), m.to_owned()]);
    }
    a.extend(config.common.extra_args.iter().cloned());
    a
}

/// Runs one invocation over `agent acp`.
pub async fn run(config: &CursorConfig, registry: &ProcessRegistry, req: Request, io: RunIo) -> Response {
    let profile = Profile::new(config, &req.identity.profile);
    match &req.session {
        SessionPlan::Fork(_) => {
            return Response::failed(
                FailureCode::Other(FORK_UNSUPPORTED.into()),
                "cursor-agent acp does not declare session/fork",
            );
        }
        SessionPlan::Resume(s) => {
            if let Some(why) = guard_violation(s, &req, &profile) {
                return Response::failed(FailureCode::ResumeRejected, why);
            }
        }
        SessionPlan::Fresh => {}
    }
    let tmp = profile
        .root
        .join("tmp")
        .join(crate::driver::file_label(&req.run_id));
    for d in [&profile.home, &profile.config, &profile.data, &tmp] {
        if let Err(e) = std::fs::create_dir_all(d) {
            return Response::failed(
                FailureCode::AgentError,
                format!("cannot create the cursor profile directory {}: {e}", d.display()),
            );
        }
    }
    let program = config.program();
    let spec = ProcessSpec::new(&program)
        .args(args(config, &req.cwd, req.model.as_deref()))
        .cwd(&req.cwd)
        .inherit_env(inherited)
        .envs(profile.vars(config, &req.env, &tmp))
        .label(format!("cursor-agent acp {}", req.run_id));
    let mut guards: Vec<(String, String)> = profile
        .guards()
        .iter()
        .map(|(k, d)| ((*k).to_owned(), d.to_string_lossy().into_owned()))
        .collect();
    guards.push((PARAM_CURSOR_TRANSPORT.into(), "acp".into()));
    let caps = agent_caps();
    let setup = engine::Setup {
        driver_type: DRIVER_TYPE,
        spec,
        program: program.display().to_string(),
        caps: &caps,
        auth_method: Some(AUTH_METHOD),
        mode: config.mode.map(|m| m.as_str()),
        // The model goes on the command line (`--model`), not through the unstable session/set_model.
        model: None,
        client_fs: true,
        handshake: crate::acp::config::DEFAULT_HANDSHAKE_TIMEOUT,
        grace: config.common.grace(),
        instructions: config.common.instructions.as_deref(),
        guards,
    };
    let mut req = req;
    // The engine would send session/set_model for a per-call model; Cursor takes it as `--model`.
    let model = req.model.take();
    let mut r = engine::run(setup, registry, &req, &io).await;
    let _ = std::fs::remove_dir_all(&tmp);
    if r.model.is_empty() {
        r.model = model.or_else(|| config.model.clone()).unwrap_or_default();
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_acp_descriptor_is_cursor_s_documented_surface() {
        let d = descriptor();
        assert_eq!(d.driver_type, "cursor");
        assert!(d.sessions.resume && !d.sessions.fork);
        assert!(d.stream.hitl && d.stream.token_level);
        assert_eq!(
            d.mcp,
            McpCaps::default(),
            "session/new MCP servers are blocked by Cursor in ACP mode"
        );
        let c = CursorConfig {
            model: Some("gpt-5".into()),
            ..Default::default()
        };
        assert_eq!(
            args(&c, Path::new("/w"), None),
            ["acp", "--workspace", "/w", "--model", "gpt-5"]
        );
        assert_eq!(args(&c, Path::new("/w"), Some("m2"))[4], "m2");
    }
}
