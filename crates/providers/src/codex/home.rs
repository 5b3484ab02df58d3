//! The SDK-owned `CODEX_HOME` and the child's environment.
//!
//! Each Agent/profile gets its own `CODEX_HOME` (threads are stored in it, so a thread resumes only
//! under the same one). The driver writes its `config.toml` before every launch:
//!
//! | setting | why |
//! |---|---|
//! | `model`, `model_provider` + `[model_providers.<id>]` | the configured model and custom provider (Codex ignores `OPENAI_BASE_URL`) |
//! | `model_reasoning_effort`, `service_tier`/`features.fast_mode` | `ReasoningEffort`, `FastMode` |
//! | `check_for_update_on_startup = false` | no update check |
//! | `[features] plugins = false` | otherwise Codex looks up github.com for the plugin marketplace |
//! | `[analytics]`, `[feedback]` `enabled = false` | no telemetry endpoints |
//!
//! MCP servers are per request (the host tools server and the call's declarations), so they are not
//! written into the shared `config.toml` (concurrent runs of one Agent would race on it): each launch
//! gets them as `-c mcp_servers.<name>={…}` overrides ([`mcp_overrides`]) — streamable HTTP as
//! `url` + `bearer_token_env_var` (the token's *name*; Codex reads the value from its environment) +
//! `http_headers`, stdio as `command`/`args`/`env`, `required` as declared. The host tools server's
//! tools are pre-approved (`default_tools_approval_mode = "approve"`): the host wrote them and
//! `tools::reject` is their policy. Other servers are pre-approved only when the run auto-approves
//! permissions; otherwise Codex asks before each call (`mcpServer/elicitation/request`) and the run's
//! permission policy answers. Codex has no SSE transport.
//!
//! Environment precedence, lowest first: the process module's base allowlist, `CommonConfig::env`,
//! `Request::env`, and last `CODEX_HOME` itself (the driver must know where threads live).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::config::CodexConfig;
use crate::vocab::{HOSTED_TOOLS_SERVER, McpServer, McpTransport};

/// The variable that names the Codex home.
pub const HOME_VAR: &str = "CODEX_HOME";

/// The SDK-owned home: the configured one, else `CODEX_HOME` from the configured env, else
/// `$HOME/.agent-adaptor/codex/<profile>`.
pub fn codex_home(config: &CodexConfig, profile: &str) -> PathBuf {
    if let Some(d) = &config.codex_home {
        return d.clone();
    }
    if let Some(d) = config.common.env.get(HOME_VAR) {
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
    home.join(".agent-adaptor").join("codex").join(profile)
}

/// The `CODEX_HOME` of one invocation: the core's profile dir when it resolved one, else
/// [`codex_home`]. With it, whether the SDK may write into it (not into the user's native `~/.codex`).
pub fn request_home(config: &CodexConfig, req: &crate::driver::Request) -> (PathBuf, bool) {
    match &req.profile {
        Some(p) => (p.dir.clone(), p.managed),
        None => (codex_home(config, &req.identity.profile), true),
    }
}

/// The keys of `config.toml` the driver owns (replaced on every launch; every other key is kept, so
/// a cloned or hand-written MCP table or setting survives).
pub const OWNED_KEYS: &[&str] = &[
    "model",
    "model_reasoning_effort",
    "service_tier",
    "check_for_update_on_startup",
    "model_provider",
    "model_providers",
    "features",
    "analytics",
    "feedback",
];

/// The driver's settings as `-c key=value` overrides, for a home the SDK must not write (the native
/// `~/.codex`): the same keys [`config_toml`] would write, each an inline TOML value.
pub fn config_overrides(config: &CodexConfig) -> Vec<String> {
    let table: Table = config_toml(config).parse().unwrap_or_default();
    table
        .iter()
        .flat_map(|(k, v)| ["-c".to_owned(), format!("{k}={v}")])
        .collect()
}

/// `existing` (a `config.toml` text) with the driver's keys replaced by `config`'s; an unreadable
/// file is replaced whole.
pub fn merged_toml(existing: &str, config: &CodexConfig) -> String {
    let ours = config_toml(config);
    let Ok(mut table) = existing.parse::<Table>() else {
        return ours;
    };
    for k in OWNED_KEYS {
        table.remove(*k);
    }
    let ours: Table = ours.parse().unwrap_or_default();
    table.extend(ours);
    toml::to_string(&table).unwrap_or_default()
}

/// The `config.toml` text for `config`.
pub fn config_toml(config: &CodexConfig) -> String {
    let mut root = Table::new();
    if let Some(m) = &config.model {
        root.insert("model".into(), Value::String(m.clone()));
    }
    if let Some(e) = config.reasoning_effort {
        root.insert("model_reasoning_effort".into(), Value::String(e.as_str().into()));
    }
    if config.fast_mode {
        root.insert("service_tier".into(), Value::String("fast".into()));
    }
    root.insert("check_for_update_on_startup".into(), Value::Boolean(false));
    if let Some(p) = &config.provider {
        root.insert("model_provider".into(), Value::String(p.id.clone()));
        let mut t = Table::new();
        t.insert("name".into(), Value::String(p.name.clone()));
        t.insert("base_url".into(), Value::String(p.base_url.clone()));
        if let Some(k) = &p.env_key {
            t.insert("env_key".into(), Value::String(k.clone()));
        }
        t.insert("wire_api".into(), Value::String(p.wire_api.clone()));
        for (k, v) in [
            ("request_max_retries", p.request_max_retries.map(u64::from)),
            ("stream_max_retries", p.stream_max_retries.map(u64::from)),
            ("stream_idle_timeout_ms", p.stream_idle_timeout_ms),
        ] {
            if let Some(v) = v {
                t.insert(k.into(), Value::Integer(v.min(i64::MAX as u64) as i64));
            }
        }
        let mut providers = Table::new();
        providers.insert(p.id.clone(), Value::Table(t));
        root.insert("model_providers".into(), Value::Table(providers));
    }
    let mut features = Table::new();
    features.insert("plugins".into(), Value::Boolean(false));
    if config.fast_mode {
        features.insert("fast_mode".into(), Value::Boolean(true));
    }
    root.insert("features".into(), Value::Table(features));
    for section in ["analytics", "feedback"] {
        let mut t = Table::new();
        t.insert("enabled".into(), Value::Boolean(false));
        root.insert(section.into(), Value::Table(t));
    }
    toml::to_string(&root).unwrap_or_default()
}

/// One `[mcp_servers.<name>]` table; `approve` pre-approves its tools.
fn mcp_table(server: &McpServer, approve: bool) -> Result<Table, String> {
    let strings = |m: &BTreeMap<String, String>| -> Table {
        m.iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    };
    let mut t = Table::new();
    match &server.transport {
        McpTransport::Stdio { command, args, env } => {
            t.insert("command".into(), Value::String(command.clone()));
            t.insert(
                "args".into(),
                Value::Array(args.iter().cloned().map(Value::String).collect()),
            );
            if !env.is_empty() {
                t.insert("env".into(), Value::Table(strings(env)));
            }
        }
        McpTransport::Http {
            url,
            headers,
            bearer_token_env,
        } => {
            t.insert("url".into(), Value::String(url.clone()));
            if let Some(var) = bearer_token_env {
                t.insert("bearer_token_env_var".into(), Value::String(var.clone()));
            }
            if !headers.is_empty() {
                t.insert("http_headers".into(), Value::Table(strings(headers)));
            }
        }
        McpTransport::Sse { .. } => {
            return Err(format!(
                "MCP server {:?}: Codex has no SSE transport",
                server.name
            ));
        }
    }
    if server.required {
        t.insert("required".into(), Value::Boolean(true));
    }
    if approve || server.name == HOSTED_TOOLS_SERVER {
        t.insert(
            "default_tools_approval_mode".into(),
            Value::String("approve".into()),
        );
    }
    Ok(t)
}

/// The `-c mcp_servers.<name>={…}` arguments that declare `servers` to one `codex app-server`.
/// The host tools server is always pre-approved; the others only when `approve_all` (the run's
/// permission policy auto-approves). Otherwise Codex asks with an MCP elicitation before each call,
/// which becomes a permission decision under the run's policy (Ask, or AutoDeny).
pub fn mcp_overrides(servers: &[McpServer], approve_all: bool) -> Result<Vec<String>, String> {
    let mut args = Vec::with_capacity(servers.len() * 2);
    for s in servers {
        s.validate()?;
        let table = Value::Table(mcp_table(s, approve_all)?);
        args.push("-c".to_owned());
        args.push(format!("mcp_servers.{}={table}", s.name));
    }
    Ok(args)
}

/// Creates `home` and (re)writes its `config.toml` atomically.
pub fn prepare(home: &Path, config: &CodexConfig) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    let file = home.join("config.toml");
    let text = merged_toml(&std::fs::read_to_string(&file).unwrap_or_default(), config);
    if std::fs::read_to_string(&file).is_ok_and(|t| t == text) {
        return Ok(());
    }
    let tmp = home.join(format!(".config.toml.{}.tmp", uuid::Uuid::new_v4()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &file)
}

/// The explicit variables of the child (inherited ones come from the base allowlist).
pub fn vars(
    config: &CodexConfig,
    request_env: &BTreeMap<String, String>,
    home: &Path,
) -> BTreeMap<String, String> {
    let mut v: BTreeMap<String, String> = BTreeMap::new();
    v.insert("NO_COLOR".into(), "1".into());
    v.extend(config.common.env.iter().map(|(k, val)| (k.clone(), val.clone())));
    v.extend(request_env.iter().map(|(k, val)| (k.clone(), val.clone())));
    v.insert(HOME_VAR.into(), home.to_string_lossy().into_owned());
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::config::{ModelProvider, ReasoningEffort};

    #[test]
    fn other_keys_survive_the_drivers_rewrite_and_overrides_mirror_the_file() {
        let mut c = CodexConfig {
            model: Some("m1".into()),
            ..Default::default()
        };
        c.provider = Some(ModelProvider::responses("mock", "http://127.0.0.1:9/v1", None));
        let existing =
            "model = \"old\"\nservice_tier = \"fast\"\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n";
        let merged: Table = merged_toml(existing, &c).parse().unwrap();
        assert_eq!(
            merged["model"].as_str(),
            Some("m1"),
            "the driver's key is replaced"
        );
        assert!(
            !merged.contains_key("service_tier"),
            "a stale driver key is dropped"
        );
        assert_eq!(
            merged["mcp_servers"]["docs"]["command"].as_str(),
            Some("docs-mcp")
        );
        assert_eq!(
            merged_toml("not = [toml", &c),
            config_toml(&c),
            "an unreadable file is replaced"
        );
        let o = config_overrides(&c);
        assert!(o.chunks(2).all(|p| p[0] == "-c"));
        assert!(o.contains(&"model=\"m1\"".to_owned()), "{o:?}");
        assert!(
            o.iter()
                .any(|a| a.starts_with("model_providers={") && a.contains("127.0.0.1:9")),
            "{o:?}"
        );
    }

    #[test]
    fn config_toml_has_the_provider_and_the_isolation_switches() {
        let mut p = ModelProvider::responses("mock", "http://127.0.0.1:9/v1", Some("MOCK_API_KEY"));
        p.request_max_retries = Some(1);
        let c = CodexConfig {
            model: Some("gpt-5.5 \"q\"".into()),
            reasoning_effort: Some(ReasoningEffort::Low),
            fast_mode: true,
            provider: Some(p),
            ..Default::default()
        };
        let v: toml::Value = toml::from_str(&config_toml(&c)).unwrap();
        assert_eq!(v["model"].as_str(), Some("gpt-5.5 \"q\""));
        assert_eq!(v["model_provider"].as_str(), Some("mock"));
        let mp = &v["model_providers"]["mock"];
        assert_eq!(mp["base_url"].as_str(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(mp["env_key"].as_str(), Some("MOCK_API_KEY"));
        assert_eq!(mp["wire_api"].as_str(), Some("responses"));
        assert_eq!(mp["request_max_retries"].as_integer(), Some(1));
        assert_eq!(v["model_reasoning_effort"].as_str(), Some("low"));
        assert_eq!(v["service_tier"].as_str(), Some("fast"));
        assert_eq!(v["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(v["analytics"]["enabled"].as_bool(), Some(false));
        assert_eq!(v["feedback"]["enabled"].as_bool(), Some(false));
        let plain: toml::Value = toml::from_str(&config_toml(&CodexConfig::default())).unwrap();
        assert!(plain.get("model_provider").is_none());
    }

    #[test]
    fn home_and_vars_follow_the_precedence() {
        let mut c = CodexConfig::default();
        c.common.env.insert("CODEX_HOME".into(), "/from/env".into());
        c.common.env.insert("A".into(), "config".into());
        assert_eq!(codex_home(&c, "p"), PathBuf::from("/from/env"));
        c.codex_home = Some("/explicit".into());
        assert_eq!(codex_home(&c, "p"), PathBuf::from("/explicit"));
        let d = CodexConfig::default();
        assert!(codex_home(&d, "a/b").ends_with(".agent-adaptor/codex/ab"));
        let mut req = BTreeMap::new();
        req.insert("A".to_owned(), "request".to_owned());
        let v = vars(&c, &req, Path::new("/h"));
        assert_eq!(v["A"], "request");
        assert_eq!(v["CODEX_HOME"], "/h");
    }

    #[test]
    fn mcp_overrides_declare_each_transport_with_the_token_name_only() {
        let mut hosted = McpServer::http(HOSTED_TOOLS_SERVER, "http://127.0.0.1:9/mcp");
        hosted.required = true;
        if let McpTransport::Http {
            bearer_token_env,
            headers,
            ..
        } = &mut hosted.transport
        {
            *bearer_token_env = Some("TOK_VAR".into());
            headers.insert("X-A".into(), "b \"q\"".into());
        }
        let mut stdio = McpServer::stdio("s-1", "node", vec!["srv.js".into(), "--x=y z".into()]);
        if let McpTransport::Stdio { env, .. } = &mut stdio.transport {
            env.insert("K".into(), "v".into());
        }
        let args = mcp_overrides(&[hosted, stdio.clone()], false).unwrap();
        assert_eq!(args.len(), 4);
        assert_eq!(args[0], "-c");
        // Parse each override the way Codex does: `key=value`, the value as TOML.
        let parse = |kv: &str| -> (String, toml::Value) {
            let (k, v) = kv.split_once('=').unwrap();
            let doc: toml::Table = toml::from_str(&format!("v = {v}")).unwrap();
            (k.to_owned(), doc["v"].clone())
        };
        let (k, h) = parse(&args[1]);
        assert_eq!(k, format!("mcp_servers.{HOSTED_TOOLS_SERVER}"));
        assert_eq!(h["url"].as_str(), Some("http://127.0.0.1:9/mcp"));
        assert_eq!(h["bearer_token_env_var"].as_str(), Some("TOK_VAR"));
        assert_eq!(h["http_headers"]["X-A"].as_str(), Some("b \"q\""));
        assert_eq!(h["required"].as_bool(), Some(true));
        assert_eq!(h["default_tools_approval_mode"].as_str(), Some("approve"));
        let (k, s) = parse(&args[3]);
        assert_eq!(k, "mcp_servers.s-1");
        assert_eq!(s["command"].as_str(), Some("node"));
        assert_eq!(s["args"][1].as_str(), Some("--x=y z"));
        assert_eq!(s["env"]["K"].as_str(), Some("v"));
        assert!(
            s.get("default_tools_approval_mode").is_none(),
            "only host tools are pre-approved"
        );
        assert!(s.get("required").is_none());
        let sse = McpServer {
            name: "e".into(),
            transport: McpTransport::Sse {
                url: "http://127.0.0.1:1/sse".into(),
                headers: BTreeMap::new(),
                bearer_token_env: None,
            },
            required: false,
        };
        let approved = mcp_overrides(&[stdio], true).unwrap();
        assert!(
            approved[1].contains("default_tools_approval_mode = \"approve\""),
            "{approved:?}"
        );
        assert!(mcp_overrides(&[sse], false).unwrap_err().contains("SSE"));
        assert!(mcp_overrides(&[McpServer::stdio("a.b", "x", vec![])], false).is_err());
        assert!(mcp_overrides(&[], false).unwrap().is_empty());
    }

    #[test]
    fn prepare_writes_once_and_rewrites_on_change() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("h");
        let mut c = CodexConfig::default();
        prepare(&home, &c).unwrap();
        let first = std::fs::read_to_string(home.join("config.toml")).unwrap();
        c.model = Some("m".into());
        prepare(&home, &c).unwrap();
        let second = std::fs::read_to_string(home.join("config.toml")).unwrap();
        assert_ne!(first, second);
        assert!(second.contains("model = \"m\""));
    }
}
