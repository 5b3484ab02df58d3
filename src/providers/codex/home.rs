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
//! Environment precedence, lowest first: the process module's base allowlist, `CommonConfig::env`,
//! `Request::env`, and last `CODEX_HOME` itself (the driver must know where threads live).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::config::CodexConfig;

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

/// Creates `home` and (re)writes its `config.toml` atomically.
pub fn prepare(home: &Path, config: &CodexConfig) -> std::io::Result<()> {
    std::fs::create_dir_all(home)?;
    let text = config_toml(config);
    let file = home.join("config.toml");
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
    use crate::providers::codex::config::{ModelProvider, ReasoningEffort};

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
