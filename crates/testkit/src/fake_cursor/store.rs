//! Chats persisted under `CURSOR_DATA_DIR/chats/<chatId>.json`, so `--resume` works across invocations and
//! an unknown id fails the way the resume-rejection rule expects.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One prompt and its reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// What the user sent.
    pub prompt: String,
    /// The final text.
    pub reply: String,
}

/// A stored chat.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chat {
    /// The chat id (= `session_id`).
    pub chat_id: String,
    /// The workspace it ran in.
    pub workspace: String,
    /// Completed turns.
    pub turns: Vec<Turn>,
}

/// Where chats live: `<data dir>/chats`.
pub fn chats_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("chats")
}

fn path(data_dir: &Path, chat_id: &str) -> Option<PathBuf> {
    // Ids are uuids; refuse anything that could escape the directory.
    let ok = !chat_id.is_empty()
        && chat_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    ok.then(|| chats_dir(data_dir).join(format!("{chat_id}.json")))
}

/// Loads a chat; `None` when it does not exist (or the id is not a valid id).
pub fn load(data_dir: &Path, chat_id: &str) -> Option<Chat> {
    let text = std::fs::read_to_string(path(data_dir, chat_id)?).ok()?;
    serde_json::from_str(&text).ok()
}

/// Saves a chat.
pub fn save(data_dir: &Path, chat: &Chat) -> std::io::Result<()> {
    let p = path(data_dir, &chat.chat_id).ok_or_else(|| std::io::Error::other("invalid chat id"))?;
    std::fs::create_dir_all(chats_dir(data_dir))?;
    let text = serde_json::to_string_pretty(chat).map_err(std::io::Error::other)?;
    std::fs::write(p, text)
}
