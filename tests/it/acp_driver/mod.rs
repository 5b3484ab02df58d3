//! The ACP client driver (`providers::acp`) end to end through the public runtime API.
//!
//! * `fake.rs` — against the scripted fake ACP agent (`fake-acp-agent`): text, reasoning, permissions
//!   approved and denied, a hung permission, malformed frames, unknown updates, a crash mid-turn, a hung
//!   turn cancelled, resume and fork in new processes, `fs/*` confinement, turn-end input, the
//!   conformance kit.
//! * `claude.rs` — the real `claude-agent-acp` adapter over the real Claude Code binary and the mock
//!   Anthropic API.
//! * `codex.rs` — the real `codex-acp` adapter over the real Codex binary and the mock Responses API.

mod claude;
mod codex;
mod fake;

use std::path::PathBuf;
use std::time::Duration;

use agent_adaptor::providers::acp::{AcpConfig, AcpDriver};
use agent_adaptor::runtime::CallOptions;

pub use crate::driver_support::{delta_text, drain, run_error, tool_result};

/// The fake agent binary.
pub const FAKE: &str = env!("CARGO_BIN_EXE_fake-acp-agent");

/// A workspace and a data dir for the fake, both temporary.
pub struct Fx {
    _dir: tempfile::TempDir,
    /// The workspace.
    pub ws: PathBuf,
    /// The fake's session store.
    pub data: PathBuf,
}

impl Fx {
    /// Fresh directories.
    pub fn new() -> Fx {
        let dir = tempfile::Builder::new().prefix("acp-drv").tempdir().unwrap();
        let ws = dir.path().join("ws");
        let data = dir.path().join("data");
        std::fs::create_dir_all(&ws).unwrap();
        Fx {
            ws: ws.canonicalize().unwrap(),
            data,
            _dir: dir,
        }
    }

    /// The fake's configuration, with `env` added.
    pub fn config(&self, env: &[(&str, &str)]) -> AcpConfig {
        let mut c = AcpConfig::command(FAKE, &[]);
        c.common.grace_period = Some(Duration::from_millis(500));
        c.common.env.insert(
            "FAKE_ACP_DATA_DIR".into(),
            self.data.to_string_lossy().into_owned(),
        );
        for (k, v) in env {
            c.common.env.insert((*k).into(), (*v).into());
        }
        c
    }

    /// A driver built by probing the fake.
    pub async fn driver(&self, env: &[(&str, &str)]) -> AcpDriver {
        AcpDriver::connect(self.config(env)).await.unwrap()
    }

    /// Call options in the workspace.
    pub fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(&self.ws)
    }
}

/// Asserts that no agent process is left.
pub fn assert_reaped(driver: &AcpDriver) {
    assert_eq!(driver.registry().live_count(), 0, "an ACP agent process is left");
}
