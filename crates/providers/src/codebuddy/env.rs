//! The child's environment: an SDK-owned `CODEBUDDY_CONFIG_DIR` (sessions, plans, materialized MCP
//! configuration), the switches that keep the CLI off every host but its model endpoint, and what is
//! inherited from the server (the base allowlist plus `CODEBUDDY_*`, e.g. the API key and base URL).
//!
//! Precedence, lowest first: inherited variables, the driver's fixed switches, `CommonConfig::env`,
//! `Request::env`, and last `CODEBUDDY_CONFIG_DIR` itself (the driver must know where sessions live) and,
//! for a run with skills, `CODEBUDDY_SESSION_SKILL_DIRS` (the run's skill overlay).
//!
//! Per-run skills (verified against 2.117.0, `tests/it/codebuddy_driver/skills.rs`): the CLI's skill
//! loader scans `<cwd>/.codebuddy/skills`, `<config dir>/skills`, `<config dir>/connectors/skills` and the
//! one directory named by `CODEBUDDY_SESSION_SKILL_DIRS` (recursively, symlinks followed, by the skill's own
//! frontmatter name); `--add-dir` does not load skills, and `--plugin-dir` plugins load after the first
//! model request of a `--print` run. The merged product configuration, skills included, is cached in
//! `<config dir>/local_storage` and loaded by the next process at start while it rescans in the
//! background: a plain `-p` run sent the previous run's skills in its request (4 of 4 tries, even with
//! the skill's directory deleted); with the driver's `--verbose --include-partial-messages` it did not
//! (0 of 3). That is a race the flags happen to win, so `CODEBUDDY_DISABLE_PRODUCT_CACHE` keeps the
//! cache from ever being read (it is still written).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::vocab::{McpServer, McpTransport};

use super::argv::Transport;
use super::config::CodeBuddyConfig;

/// The variable that names the config dir.
pub const CONFIG_DIR_VAR: &str = "CODEBUDDY_CONFIG_DIR";

/// The variable that names one extra skills directory: the run's skill overlay.
pub const SKILL_DIRS_VAR: &str = "CODEBUDDY_SESSION_SKILL_DIRS";

/// Where a run's skills sit inside its overlay; `CODEBUDDY_SESSION_SKILL_DIRS` names this directory.
pub const SKILLS_LAYOUT: &str = "skills";

/// Fixed switches, and why: the CLI must not phone home, update itself or write auto-memory.
pub const FIXED: &[(&str, &str, &str)] = &[
    ("DISABLE_TELEMETRY", "1", "no lookups of www.codebuddy.ai"),
    (
        "CODEBUDDY_SKIP_BUILTIN_MARKETPLACE",
        "1",
        "no lookups of the plugin marketplace",
    ),
    ("DISABLE_AUTOUPDATER", "1", "never update the CLI mid-run"),
    (
        "CODEBUDDY_DISABLE_AUTO_MEMORY",
        "1",
        "no auto-memory writes (the official SDK sets it too)",
    ),
    (
        "CODEBUDDY_DISABLE_PRODUCT_CACHE",
        "1",
        "never start from the cached product configuration: it holds the previous run's skills",
    ),
];

/// Whether a server variable is copied into the child (besides the process module's base allowlist).
pub fn inherits(name: &str) -> bool {
    name.starts_with("CODEBUDDY_") && name != CONFIG_DIR_VAR && name != SKILL_DIRS_VAR
}

/// The SDK-owned config dir: the configured one, else `CODEBUDDY_CONFIG_DIR` from the configured env, else
/// `$HOME/.agent-adaptor/codebuddy/<profile>`.
pub fn config_dir(config: &CodeBuddyConfig, profile: &str) -> PathBuf {
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
    home.join(".agent-adaptor").join("codebuddy").join(profile)
}

/// The explicit variables of one child (inherited ones are added by the process spec's filter);
/// `skills` is the run's overlay skills directory, if it has skills.
pub fn vars(
    config: &CodeBuddyConfig,
    request_env: &BTreeMap<String, String>,
    config_dir: &Path,
    transport: Transport,
    skills: Option<&Path>,
) -> BTreeMap<String, String> {
    let mut v: BTreeMap<String, String> = FIXED
        .iter()
        .map(|(k, val, _)| ((*k).to_owned(), (*val).to_owned()))
        .collect();
    if transport == Transport::Control {
        // The entrypoint the official Python SDK and the Go original announce for the control protocol.
        v.insert("CODEBUDDY_CODE_ENTRYPOINT".into(), "sdk-py".into());
    }
    v.extend(config.common.env.iter().map(|(k, val)| (k.clone(), val.clone())));
    v.extend(request_env.iter().map(|(k, val)| (k.clone(), val.clone())));
    v.insert(CONFIG_DIR_VAR.into(), config_dir.to_string_lossy().into_owned());
    if let Some(dir) = skills {
        v.insert(SKILL_DIRS_VAR.into(), dir.to_string_lossy().into_owned());
    }
    v
}

/// The `--mcp-config` JSON for `servers`: stdio `{command,args,env}`, streamable HTTP and SSE
/// `{type,transportType,url,headers}` (bearer tokens as `Authorization: Bearer ${VAR}`).
pub fn mcp_config(servers: &[McpServer]) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for s in servers {
        let entry = match &s.transport {
            McpTransport::Stdio { command, args, env } => serde_json::json!({
                "command": command, "args": args, "env": env,
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
                    "streamable-http"
                } else {
                    "sse"
                };
                let mut headers = headers.clone();
                if let Some(var) = bearer_token_env {
                    headers.insert("Authorization".into(), format!("Bearer ${{{var}}}"));
                }
                serde_json::json!({
                    "type": if kind == "sse" { "sse" } else { "http" },
                    "transportType": kind, "url": url, "headers": headers,
                })
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
        let mut c = CodeBuddyConfig::default();
        let d = config_dir(&c, "team/../x");
        assert!(d.ends_with(".agent-adaptor/codebuddy/teamx"), "{}", d.display());
        assert!(config_dir(&c, "").ends_with("codebuddy/default"));
        c.common.env.insert(CONFIG_DIR_VAR.into(), "/from/env".into());
        assert_eq!(config_dir(&c, "p"), PathBuf::from("/from/env"));
        c.config_dir = Some("/from/field".into());
        assert_eq!(config_dir(&c, "p"), PathBuf::from("/from/field"));
    }

    #[test]
    fn the_config_dir_wins_over_every_env_source() {
        let mut c = CodeBuddyConfig::default();
        c.common
            .env
            .insert("CODEBUDDY_BASE_URL".into(), "http://127.0.0.1:1".into());
        c.common.env.insert(CONFIG_DIR_VAR.into(), "/elsewhere".into());
        let mut req = BTreeMap::new();
        req.insert("DISABLE_TELEMETRY".into(), "0".into());
        req.insert(SKILL_DIRS_VAR.into(), "/host/skills".into());
        let v = vars(
            &c,
            &req,
            Path::new("/owned"),
            Transport::Control,
            Some(Path::new("/ov/skills")),
        );
        assert_eq!(v[CONFIG_DIR_VAR], "/owned");
        assert_eq!(v["CODEBUDDY_BASE_URL"], "http://127.0.0.1:1");
        assert_eq!(
            v["DISABLE_TELEMETRY"], "0",
            "the request's env wins over the switches"
        );
        assert_eq!(v["CODEBUDDY_CODE_ENTRYPOINT"], "sdk-py");
        assert_eq!(v[SKILL_DIRS_VAR], "/ov/skills", "the run's overlay wins");
        assert_eq!(v["CODEBUDDY_DISABLE_PRODUCT_CACHE"], "1");
        let h = vars(
            &c,
            &BTreeMap::new(),
            Path::new("/owned"),
            Transport::Headless,
            None,
        );
        assert!(!h.contains_key("CODEBUDDY_CODE_ENTRYPOINT"));
        assert!(!h.contains_key(SKILL_DIRS_VAR), "no skills, no skills dir");
        assert!(inherits("CODEBUDDY_API_KEY") && !inherits(CONFIG_DIR_VAR) && !inherits("HTTP_PROXY"));
        assert!(
            !inherits(SKILL_DIRS_VAR),
            "a server-wide skills dir never joins a run"
        );
    }

    #[test]
    fn mcp_config_has_every_transport_shape() {
        let mut http = McpServer::http("h", "http://127.0.0.1:9/mcp");
        if let McpTransport::Http { bearer_token_env, .. } = &mut http.transport {
            *bearer_token_env = Some("TOK".into());
        }
        let v = mcp_config(&[McpServer::stdio("s", "node", vec!["srv.js".into()]), http]);
        assert_eq!(v["mcpServers"]["s"]["command"], "node");
        assert_eq!(v["mcpServers"]["s"]["args"][0], "srv.js");
        assert_eq!(v["mcpServers"]["h"]["transportType"], "streamable-http");
        assert_eq!(v["mcpServers"]["h"]["headers"]["Authorization"], "Bearer ${TOK}");
    }
}
