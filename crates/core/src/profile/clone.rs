//! Preparing a profile dir before its first use: a managed dir is created; a clone takes what its
//! options say from its source once (a marker file records that it was prepared, so later syncs never
//! copy over what the clone changed since); a native dir is only checked, never written.

use std::fs;
use std::path::Path;

use super::{CloneOptions, ProfileError, Resolved, Selection};

/// The marker a prepared clone carries.
pub const CLONE_MARKER: &str = ".agent-adaptor-clone";

/// Prepares `r`'s dir (see the module doc); returns warnings.
pub fn prepare(r: &Resolved) -> Result<Vec<String>, ProfileError> {
    let mut warnings = Vec::new();
    let options = match &r.selection {
        Selection::Default | Selection::Dedicated { .. } => {
            fs::create_dir_all(&r.dir).map_err(|e| ProfileError::io(&r.dir, e))?;
            return Ok(warnings);
        }
        Selection::Native => {
            if !r.dir.is_dir() {
                warnings.push(format!(
                    "the native profile {} does not exist yet (the CLI creates it; the SDK never does)",
                    r.dir.display()
                ));
            }
            return Ok(warnings);
        }
        Selection::CloneNative { options } | Selection::CloneFrom { options, .. } => options,
    };
    let source = r.source.as_deref().unwrap_or(&r.dir);
    if r.dir.join(CLONE_MARKER).is_file() {
        return Ok(warnings);
    }
    if !source.is_dir() {
        return Err(ProfileError::SourceMissing(source.to_owned()));
    }
    fs::create_dir_all(&r.dir).map_err(|e| ProfileError::io(&r.dir, e))?;
    copy_parts(r, source, options, &mut warnings)?;
    let marker = r.dir.join(CLONE_MARKER);
    fs::write(&marker, source.to_string_lossy().as_bytes()).map_err(|e| ProfileError::io(&marker, e))?;
    Ok(warnings)
}

fn copy_parts(
    r: &Resolved,
    source: &Path,
    o: &CloneOptions,
    warnings: &mut Vec<String>,
) -> Result<(), ProfileError> {
    let family = r.family;
    if o.copy_settings {
        copy_file(
            &source.join(family.settings_file()),
            &r.dir.join(family.settings_file()),
            warnings,
        )?;
    }
    if o.copy_skills {
        let from = source.join("skills");
        if from.is_dir() {
            copy_tree(&from, &r.dir.join("skills"))?;
        } else {
            warnings.push(format!("no skills to copy in {}", source.display()));
        }
    }
    let auth_from = source.join(family.auth_file());
    let auth_to = r.dir.join(family.auth_file());
    if o.link_auth {
        if auth_from.exists() {
            let _ = fs::remove_file(&auth_to);
            std::os::unix::fs::symlink(&auth_from, &auth_to).map_err(|e| ProfileError::io(&auth_to, e))?;
        } else {
            warnings.push(format!("no credentials to link at {}", auth_from.display()));
        }
    } else if o.copy_auth {
        copy_file(&auth_from, &auth_to, warnings)?;
    }
    if o.copy_mcp {
        copy_mcp(r, source, warnings)?;
    }
    Ok(())
}

/// Copies only the MCP declarations: Claude's `mcpServers` of the source's `.claude.json` into the
/// clone's; Codex's `[mcp_servers]` of the source's `config.toml` into the clone's `config.toml`.
fn copy_mcp(r: &Resolved, source: &Path, warnings: &mut Vec<String>) -> Result<(), ProfileError> {
    let native = matches!(r.selection, Selection::CloneNative { .. });
    match r.family.mcp_file(source, native) {
        Some(from) => {
            let Some(servers) = fs::read_to_string(&from)
                .ok()
                .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
                .and_then(|v| v.get("mcpServers").cloned())
            else {
                warnings.push(format!("no MCP servers to copy in {}", from.display()));
                return Ok(());
            };
            let to = r.dir.join(".claude.json");
            let mut doc: serde_json::Value = fs::read_to_string(&to)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_else(|| serde_json::json!({}));
            doc["mcpServers"] = servers;
            fs::write(&to, doc.to_string()).map_err(|e| ProfileError::io(&to, e))
        }
        None => {
            let from = source.join("config.toml");
            let Some(servers) = fs::read_to_string(&from)
                .ok()
                .and_then(|t| t.parse::<toml::Table>().ok())
                .and_then(|t| t.get("mcp_servers").cloned())
            else {
                warnings.push(format!("no MCP servers to copy in {}", from.display()));
                return Ok(());
            };
            let to = r.dir.join("config.toml");
            let mut doc: toml::Table = fs::read_to_string(&to)
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or_default();
            doc.insert("mcp_servers".into(), servers);
            let text = toml::to_string(&doc).map_err(|e| ProfileError::io(&to, e))?;
            fs::write(&to, text).map_err(|e| ProfileError::io(&to, e))
        }
    }
}

fn copy_file(from: &Path, to: &Path, warnings: &mut Vec<String>) -> Result<(), ProfileError> {
    if !from.is_file() {
        warnings.push(format!("nothing to copy at {}", from.display()));
        return Ok(());
    }
    fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| ProfileError::io(to, e))
}

/// Copies a tree (symlinks are followed; special files and dangling symlinks are skipped).
pub fn copy_tree(from: &Path, to: &Path) -> Result<(), ProfileError> {
    crate::skills::overlay::copy_tree(from, to).map_err(|e| ProfileError::io(to, e))
}
