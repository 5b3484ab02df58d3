//! The client's `fs/read_text_file` and `fs/write_text_file`, confined to the run's workspace: a path
//! must be absolute and resolve (symbolic links followed) inside the workspace, else the agent gets a
//! JSON-RPC error and nothing is read or written. `terminal/*` is not offered at all (agents run their
//! commands themselves; a client terminal would bypass the agent's own sandbox).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use agent_adaptor_core::acp::rpc::{INTERNAL_ERROR, INVALID_PARAMS, RpcError};
use agent_adaptor_core::acp::wire::{ReadTextFileParams, ReadTextFileResponse, WriteTextFileParams};

/// ACP's "resource not found".
const NOT_FOUND: i64 = agent_adaptor_core::acp::rpc::RESOURCE_NOT_FOUND;

/// The largest file served (bigger reads are refused rather than held in memory).
pub const MAX_FILE: u64 = 16 * 1024 * 1024;

fn outside(path: &str) -> RpcError {
    RpcError::new(INVALID_PARAMS, "path outside the workspace").with_data(json!({ "path": path }))
}

/// `path` resolved inside `root` (both canonical), or an error. `must_exist` is false for a write,
/// where the parent must exist and the file may not.
fn confine(root: &Path, path: &str, must_exist: bool) -> Result<PathBuf, RpcError> {
    let p = Path::new(path);
    if !p.is_absolute() {
        return Err(RpcError::new(INVALID_PARAMS, "path must be absolute").with_data(json!({ "path": path })));
    }
    let root = root
        .canonicalize()
        .map_err(|e| RpcError::new(INTERNAL_ERROR, format!("workspace unavailable: {e}")))?;
    let resolved = match p.canonicalize() {
        Ok(r) => r,
        Err(_) if !must_exist => {
            let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
                return Err(outside(path));
            };
            let parent = parent.canonicalize().map_err(|_| {
                RpcError::new(NOT_FOUND, "the directory does not exist").with_data(json!({ "path": path }))
            })?;
            parent.join(name)
        }
        Err(_) => {
            return Err(RpcError::new(NOT_FOUND, "file not found").with_data(json!({ "path": path })));
        }
    };
    if resolved.starts_with(&root) {
        Ok(resolved)
    } else {
        Err(outside(path))
    }
}

/// Serves `fs/read_text_file` inside `root`.
pub fn read(root: &Path, params: Value) -> Result<Value, RpcError> {
    let p: ReadTextFileParams = serde_json::from_value(params).map_err(RpcError::invalid_params)?;
    let file = confine(root, &p.path, true)?;
    let meta = std::fs::metadata(&file).map_err(|e| RpcError::new(NOT_FOUND, e.to_string()))?;
    if !meta.is_file() {
        return Err(RpcError::new(INVALID_PARAMS, "not a file").with_data(json!({ "path": p.path })));
    }
    if meta.len() > MAX_FILE {
        return Err(RpcError::new(INVALID_PARAMS, "file too large").with_data(json!({ "path": p.path })));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| RpcError::new(INTERNAL_ERROR, e.to_string()))?;
    let content = match (p.line, p.limit) {
        (None, None) => text,
        (line, limit) => {
            let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
            let take = limit.map_or(usize::MAX, |l| l as usize);
            text.split_inclusive('\n').skip(skip).take(take).collect()
        }
    };
    serde_json::to_value(ReadTextFileResponse { content })
        .map_err(|e| RpcError::new(INTERNAL_ERROR, e.to_string()))
}

/// Serves `fs/write_text_file` inside `root`.
pub fn write(root: &Path, params: Value) -> Result<Value, RpcError> {
    let p: WriteTextFileParams = serde_json::from_value(params).map_err(RpcError::invalid_params)?;
    let file = confine(root, &p.path, false)?;
    std::fs::write(&file, p.content.as_bytes()).map_err(|e| RpcError::new(INTERNAL_ERROR, e.to_string()))?;
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_stay_inside_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(dir.path().join("secret.txt"), "no").unwrap();
        std::fs::write(ws.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("link.txt")).unwrap();
        let at = |p: &Path| p.to_string_lossy().into_owned();
        let req = |path: String| json!({"sessionId": "s", "path": path});

        let r = read(&ws, req(at(&ws.join("a.txt")))).unwrap();
        assert_eq!(r["content"], "one\ntwo\nthree\n");
        let r = read(
            &ws,
            json!({"sessionId": "s", "path": at(&ws.join("a.txt")), "line": 2, "limit": 1}),
        )
        .unwrap();
        assert_eq!(r["content"], "two\n");
        for bad in [
            at(&dir.path().join("secret.txt")),
            at(&ws.join("link.txt")),
            at(&ws.join("../secret.txt")),
        ] {
            assert_eq!(
                read(&ws, req(bad.clone())).unwrap_err().code,
                INVALID_PARAMS,
                "{bad}"
            );
        }
        assert_eq!(read(&ws, req("a.txt".into())).unwrap_err().code, INVALID_PARAMS);
        assert_eq!(read(&ws, req(at(&ws.join("none")))).unwrap_err().code, NOT_FOUND);
        assert_eq!(read(&ws, json!({"path": 5})).unwrap_err().code, INVALID_PARAMS);

        let w = |path: String| json!({"sessionId": "s", "path": path, "content": "new"});
        write(&ws, w(at(&ws.join("b.txt")))).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "new");
        assert!(write(&ws, w(at(&dir.path().join("c.txt")))).is_err());
        assert!(
            write(&ws, w(at(&ws.join("link.txt")))).is_err(),
            "no writing through a link"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("secret.txt")).unwrap(),
            "no"
        );
        assert!(!dir.path().join("c.txt").exists());
    }
}
