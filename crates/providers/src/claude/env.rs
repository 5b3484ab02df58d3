//! The child's environment: an SDK-owned `CLAUDE_CONFIG_DIR` (sessions, plans, materialized MCP
//! configuration), the switches that keep the CLI off every host but its model endpoint, `IS_SANDBOX=1`
//! when running as root with permissions bypassed, and what is inherited from the server (the base
//! allowlist plus `ANTHROPIC_*` and `CLAUDE_*`, e.g. the API key and base URL).
//!
//! Precedence, lowest first: inherited variables, the driver's fixed switches, `CommonConfig::env`,
//! `Request::env`, and last `CLAUDE_CONFIG_DIR` itself (the driver must know where sessions live).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::vocab::{McpServer, McpTransport};

use super::config::{Config, PermissionMode};

/// Where a run's skills sit inside its overlay (`--add-dir <overlay>`): Claude Code loads
/// `<dir>/.claude/skills/<name>/SKILL.md` of every added directory, by the skill's own name (verified
/// against 2.1.332: listed in the system prompt's skills section like `<config dir>/skills/<name>`).
pub const SKILLS_LAYOUT: &str = ".claude/skills";

/// The variable that names the config dir.
pub const CONFIG_DIR_VAR: &str = "CLAUDE_CONFIG_DIR";

/// Fixed switches, and why (verified offline against 2.1.332: with them, zero DNS lookups).
pub const FIXED: &[(&str, &str, &str)] = &[
    (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "1",
        "no update checks, telemetry or other calls to anthropic hosts",
    ),
    ("DISABLE_TELEMETRY", "1", "belt and braces for the above"),
    ("DISABLE_AUTOUPDATER", "1", "never update the CLI mid-run"),
    ("DISABLE_ERROR_REPORTING", "1", "no crash reports"),
    ("DISABLE_BUG_COMMAND", "1", "no feedback upload endpoint"),
    (
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
        "1",
        "no side requests (titles, …): one model request per model turn",
    ),
];

/// Whether a server variable is copied into the child (besides the process module's base allowlist).
pub fn inherits(name: &str) -> bool {
    (name.starts_with("ANTHROPIC_") || name.starts_with("CLAUDE_")) && name != CONFIG_DIR_VAR
}

/// The SDK-owned config dir: the configured one, else `CLAUDE_CONFIG_DIR` from the configured env, else
/// `$HOME/.agent-adaptor/claude/<profile>`.
pub fn config_dir(config: &Config, profile: &str) -> PathBuf {
    if let Some(d) = &config.config_dir {
        return d.clone();
    }
    if let Some(d) = config.common.env.get(CONFIG_DIR_VAR) {
        return PathBuf::from(d);
    }
    let profile: String = profile
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    let profile = if profile.is_empty() {
        "default".to_owned()
    } else {
        profile
    };
    let home = std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from);
    home.join(".agent-adaptor").join("claude").join(profile)
}

/// The config dir of one invocation: the core's profile dir when it resolved one, else
/// [`config_dir`]. With it, whether the SDK may write into it (not into the user's native dir).
pub fn request_dir(config: &Config, req: &crate::driver::Request) -> (PathBuf, bool) {
    match &req.profile {
        Some(p) => (p.dir.clone(), p.managed),
        None => (config_dir(config, &req.identity.profile), true),
    }
}

/// Where the driver writes its own per-run files when the config dir is the user's native one.
pub fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join("agent-adaptor-claude")
}

/// Whether this process runs as root (`/proc/self` is owned by the effective uid on Linux).
pub fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The explicit variables of one child (inherited ones are added by the process spec's filter).
/// `root` says whether the server runs as root: with `bypassPermissions` the CLI refuses to start as root
/// unless `IS_SANDBOX=1` (or `CLAUDE_CODE_BUBBLEWRAP`) is set, so the driver sets it unless the host did.
pub fn vars(
    config: &Config,
    request_env: &BTreeMap<String, String>,
    config_dir: &Path,
    mode: PermissionMode,
    root: bool,
) -> BTreeMap<String, String> {
    let mut v: BTreeMap<String, String> = FIXED
        .iter()
        .map(|(k, val, _)| ((*k).to_owned(), (*val).to_owned()))
        .collect();
    v.extend(config.common.env.iter().map(|(k, val)| (k.clone(), val.clone())));
    v.extend(request_env.iter().map(|(k, val)| (k.clone(), val.clone())));
    // `IS_SANDBOX` is not inherited (only `ANTHROPIC_*`/`CLAUDE_*` are), so only the explicit env counts;
    // `CLAUDE_CODE_BUBBLEWRAP` may also come from the server's environment.
    let bubblewrap =
        v.contains_key("CLAUDE_CODE_BUBBLEWRAP") || std::env::var_os("CLAUDE_CODE_BUBBLEWRAP").is_some();
    if root && mode == PermissionMode::BypassPermissions && !v.contains_key("IS_SANDBOX") && !bubblewrap {
        v.insert("IS_SANDBOX".into(), "1".into());
    }
    v.insert(CONFIG_DIR_VAR.into(), config_dir.to_string_lossy().into_owned());
    v
}

/// The `--mcp-config` JSON for `servers`: stdio `{type,command,args,env}`, streamable HTTP and SSE
/// `{type,url,headers}` (bearer tokens as `Authorization: Bearer ${VAR}`).
pub fn mcp_config(servers: &[McpServer]) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for s in servers {
        let entry = match &s.transport {
            McpTransport::Stdio { command, args, env } => serde_json::json!({
                "type": "stdio", "command": command, "args": args, "env": env,
            }),
            McpTransport::Http {
                url,
                headers,
                bearer_token_env,
            }
            | McpTransport::Sse {
                url,
                headers,
                bearer_token_env,
            } => {
                let kind = if matches!(s.transport, McpTransport::Http { .. }) {
                    "http"
                } else {
                    "sse"
                };
                let mut headers = headers.clone();
                if let Some(var) = bearer_token_env {
                    headers.insert("Authorization".into(), format!("Bearer ${{{var}}}"));
                }
                serde_json::json!({ "type": kind, "url": url, "headers": headers })
            }
        };
        map.insert(s.name.clone(), entry);
    }
    serde_json::json!({ "mcpServers": map })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_dir_prefers_the_field_then_the_env_then_a_profile_dir() {
        let mut c = Config::default();
        let d = config_dir(&c, "team/../x");
        assert!(d.ends_with(".agent-adaptor/claude/teamx"), "{}", d.display());
        assert!(config_dir(&c, "").ends_with("claude/default"));
        c.common.env.insert(CONFIG_DIR_VAR.into(), "/from/env".into());
        assert_eq!(config_dir(&c, "p"), PathBuf::from("/from/env"));
        c.config_dir = Some("/from/field".into());
        assert_eq!(config_dir(&c, "p"), PathBuf::from("/from/field"));
    }

    #[test]
    fn the_config_dir_wins_and_root_bypass_gets_a_sandbox_flag() {
        let mut c = Config::default();
        c.common
            .env
            .insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:1".into());
        c.common.env.insert(CONFIG_DIR_VAR.into(), "/elsewhere".into());
        let mut req = BTreeMap::new();
        req.insert("DISABLE_TELEMETRY".into(), "0".into());
        let v = vars(&c, &req, Path::new("/owned"), PermissionMode::Default, true);
        assert_eq!(v[CONFIG_DIR_VAR], "/owned");
        assert_eq!(v["ANTHROPIC_BASE_URL"], "http://127.0.0.1:1");
        assert_eq!(
            v["DISABLE_TELEMETRY"], "0",
            "the request's env wins over the switches"
        );
        assert!(!v.contains_key("IS_SANDBOX"), "only with bypassPermissions");
        let b = vars(&c, &req, Path::new("/o"), PermissionMode::BypassPermissions, true);
        assert_eq!(b["IS_SANDBOX"], "1");
        let n = vars(
            &c,
            &req,
            Path::new("/o"),
            PermissionMode::BypassPermissions,
            false,
        );
        assert!(!n.contains_key("IS_SANDBOX"), "not as an ordinary user");
        assert!(inherits("ANTHROPIC_API_KEY") && inherits("CLAUDE_CODE_MAX_RETRIES"));
        assert!(!inherits(CONFIG_DIR_VAR) && !inherits("OPENAI_API_KEY"));
    }

    #[test]
    fn mcp_config_has_every_transport_shape() {
        let mut http = McpServer::http("h", "http://127.0.0.1:9/mcp");
        if let McpTransport::Http { bearer_token_env, .. } = &mut http.transport {
            *bearer_token_env = Some("TOK".into());
        }
        let v = mcp_config(&[McpServer::stdio("s", "node", vec!["srv.js".into()]), http]);
        assert_eq!(v["mcpServers"]["s"]["type"], "stdio");
        assert_eq!(v["mcpServers"]["s"]["args"][0], "srv.js");
        assert_eq!(v["mcpServers"]["h"]["type"], "http");
        assert_eq!(v["mcpServers"]["h"]["headers"]["Authorization"], "Bearer ${TOK}");
    }
}
