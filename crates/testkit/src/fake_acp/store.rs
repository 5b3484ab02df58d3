//! Sessions persisted as `<data dir>/sessions/<id>.json`, so `session/load`, `session/resume` and
//! `session/fork` work across processes and an unknown id is "resource not found".

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One prompt and its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// What the user sent.
    pub prompt: String,
    /// The agent's text.
    pub reply: String,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The id.
    pub session_id: String,
    /// The working directory it was created in.
    pub cwd: String,
    /// Completed turns.
    pub turns: Vec<Turn>,
    /// The MCP servers `session/new` passed (kept for tests).
    #[serde(default)]
    pub mcp_servers: Value,
}

fn path(dir: &Path, id: &str) -> Option<PathBuf> {
    let ok = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| dir.join("sessions").join(format!("{id}.json")))
}

/// Loads session `id`; `None` when unknown (or not a valid id).
pub fn load(dir: &Path, id: &str) -> Option<Session> {
    let text = std::fs::read_to_string(path(dir, id)?).ok()?;
    serde_json::from_str(&text).ok()
}

/// Saves `s`.
pub fn save(dir: &Path, s: &Session) -> std::io::Result<()> {
    let p = path(dir, &s.session_id).ok_or_else(|| std::io::Error::other("invalid session id"))?;
    std::fs::create_dir_all(dir.join("sessions"))?;
    let text = serde_json::to_string_pretty(s).map_err(std::io::Error::other)?;
    std::fs::write(p, text)
}
