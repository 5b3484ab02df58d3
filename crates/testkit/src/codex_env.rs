//! An isolated, offline environment for the real Codex CLI: writes `$CODEX_HOME/config.toml` with a
//! custom model provider pointing at a loopback mock ([`crate::mock::responses`]) and
//! returns the environment map and base arguments for `codex exec` and `codex app-server`.
//!
//! Why each setting (verified against Codex 0.171.0):
//!
//! | setting | why |
//! |---|---|
//! | `CODEX_HOME=<root>/codex-home` | config, sessions (`thread_history_1.sqlite`), logs stay in the temp dir |
//! | `HOME`, `TMPDIR` under the root | nothing reads or writes the real home; Codex creates `$TMPDIR`-based helpers |
//! | `model_provider = "mock"` + `[model_providers.mock] base_url` | Codex ignores `OPENAI_BASE_URL` for this; a custom provider is the only redirect |
//! | `wire_api = "responses"` | the provider speaks `POST {base_url}/responses` SSE |
//! | `env_key = "MOCK_API_KEY"` | Codex sends `Authorization: Bearer <value>`; no login needed |
//! | `request_max_retries`, `stream_max_retries` = 1 | HTTP errors and dropped streams fail fast instead of backing off for minutes |
//! | `stream_idle_timeout_ms` | a stalled mock stream fails the turn instead of hanging |
//! | `model = "gpt-5.5"` | a slug from the bundled catalogue: an unknown slug adds a warning item and changes the tool set |
//! | `check_for_update_on_startup = false` | no update check |
//! | `[features] plugins = false` | otherwise Codex looks up github.com for the plugin marketplace |
//! | `[analytics] enabled = false`, `[feedback] enabled = false` | no telemetry endpoints |
//!
//! Run the binary with `env_clear()` plus [`CodexEnv::env`] so no ambient `OPENAI_*`/`CODEX_*`
//! variable leaks in. A connection failure to the provider is retried forever ("waiting for
//! network"), so callers must always put a timeout around the process.

use std::path::{Path, PathBuf};

/// Options for [`CodexEnv::create`].
#[derive(Debug, Clone)]
pub struct CodexEnvOptions {
    /// Model slug (default `gpt-5.5`).
    pub model: String,
    /// `request_max_retries` of the provider (default 1).
    pub request_max_retries: u32,
    /// `stream_max_retries` of the provider (default 1).
    pub stream_max_retries: u32,
    /// `stream_idle_timeout_ms` of the provider (default 20 000).
    pub stream_idle_timeout_ms: u64,
    /// Extra `[features]` switches, e.g. `("request_permissions_tool", true)`.
    pub features: Vec<(String, bool)>,
    /// Extra TOML appended verbatim to `config.toml` (MCP servers, sandbox tables, …); must not
    /// repeat a table written above (`[features]`: use [`CodexEnvOptions::features`]).
    pub extra_toml: String,
}

impl Default for CodexEnvOptions {
    fn default() -> Self {
        Self {
            model: "gpt-5.5".into(),
            request_max_retries: 1,
            stream_max_retries: 1,
            stream_idle_timeout_ms: 20_000,
            features: Vec::new(),
            extra_toml: String::new(),
        }
    }
}

/// The isolated directories and the values to launch Codex with.
#[derive(Debug, Clone)]
pub struct CodexEnv {
    /// The root all other paths live under.
    pub root: PathBuf,
    /// `$HOME` for the child.
    pub home: PathBuf,
    /// `$CODEX_HOME` (holds `config.toml`).
    pub codex_home: PathBuf,
    /// `$TMPDIR` for the child.
    pub tmp: PathBuf,
    /// A working directory for the session (not a git repository).
    pub cwd: PathBuf,
    /// The provider base URL written into the config.
    pub base_url: String,
}

/// The environment variable Codex reads the mock's API key from (`env_key`).
pub const API_KEY_ENV: &str = "MOCK_API_KEY";
/// The dummy key the mock receives as `Authorization: Bearer …`.
pub const API_KEY: &str = "dummy-key";
/// The provider id in `config.toml`.
pub const PROVIDER_ID: &str = "mock";

impl CodexEnv {
    /// Creates `home/`, `codex-home/`, `tmp/` and `proj/` under `root` and writes
    /// `codex-home/config.toml` pointing at `base_url` (e.g. `MockResponses::base_url()`).
    pub fn create(root: &Path, base_url: &str, opts: &CodexEnvOptions) -> std::io::Result<Self> {
        let env = Self {
            root: root.to_path_buf(),
            home: root.join("home"),
            codex_home: root.join("codex-home"),
            tmp: root.join("tmp"),
            cwd: root.join("proj"),
            base_url: base_url.to_owned(),
        };
        for d in [&env.home, &env.codex_home, &env.tmp, &env.cwd] {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(env.codex_home.join("config.toml"), config_toml(base_url, opts))?;
        Ok(env)
    }

    /// The complete environment for the child (use with `env_clear()`): `PATH`, `HOME`, `TMPDIR`,
    /// `CODEX_HOME`, the API key and a plain `TERM`/`LANG`.
    pub fn env(&self) -> Vec<(String, String)> {
        let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
        vec![
            ("PATH".into(), path),
            ("HOME".into(), self.home.display().to_string()),
            ("TMPDIR".into(), self.tmp.display().to_string()),
            ("CODEX_HOME".into(), self.codex_home.display().to_string()),
            (API_KEY_ENV.into(), API_KEY.into()),
            ("TERM".into(), "dumb".into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("NO_COLOR".into(), "1".into()),
        ]
    }

    /// `exec --json --skip-git-repo-check -C <cwd>`; append flags, then the prompt (or `-` to read
    /// it from stdin, or `resume <id> <prompt>`).
    pub fn exec_args(&self) -> Vec<String> {
        vec![
            "exec".into(),
            "--json".into(),
            "--skip-git-repo-check".into(),
            "-C".into(),
            self.cwd.display().to_string(),
        ]
    }

    /// `app-server --listen stdio://`: JSON-RPC over stdin/stdout.
    pub fn app_server_args(&self) -> Vec<String> {
        vec!["app-server".into(), "--listen".into(), "stdio://".into()]
    }
}

/// The `config.toml` text.
pub fn config_toml(base_url: &str, opts: &CodexEnvOptions) -> String {
    format!(
        r#"model = "{model}"
model_provider = "{PROVIDER_ID}"
check_for_update_on_startup = false

[model_providers.{PROVIDER_ID}]
name = "Mock Responses"
base_url = "{base_url}"
env_key = "{API_KEY_ENV}"
wire_api = "responses"
request_max_retries = {req}
stream_max_retries = {stream}
stream_idle_timeout_ms = {idle}

[features]
plugins = false
{features}
[analytics]
enabled = false

[feedback]
enabled = false
{extra}"#,
        model = opts.model,
        req = opts.request_max_retries,
        stream = opts.stream_max_retries,
        idle = opts.stream_idle_timeout_ms,
        features = opts
            .features
            .iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect::<String>(),
        extra = opts.extra_toml,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_parseable_config_and_isolated_env() {
        let dir = tempfile::tempdir().unwrap();
        let opts = CodexEnvOptions {
            features: vec![("request_permissions_tool".into(), true)],
            extra_toml: "\n[sandbox_workspace_write]\nexclude_slash_tmp = true\n".into(),
            ..Default::default()
        };
        let env = CodexEnv::create(dir.path(), "http://127.0.0.1:9/v1", &opts).unwrap();
        let text = std::fs::read_to_string(env.codex_home.join("config.toml")).unwrap();
        let v: toml::Value = toml::from_str(&text).unwrap();
        assert_eq!(v["model_provider"].as_str(), Some("mock"));
        assert_eq!(
            v["model_providers"]["mock"]["base_url"].as_str(),
            Some("http://127.0.0.1:9/v1")
        );
        assert_eq!(
            v["model_providers"]["mock"]["wire_api"].as_str(),
            Some("responses")
        );
        assert_eq!(v["features"]["plugins"].as_bool(), Some(false));
        assert_eq!(v["features"]["request_permissions_tool"].as_bool(), Some(true));
        assert_eq!(
            v["sandbox_workspace_write"]["exclude_slash_tmp"].as_bool(),
            Some(true)
        );
        let map: std::collections::HashMap<_, _> = env.env().into_iter().collect();
        assert_eq!(map["CODEX_HOME"], env.codex_home.display().to_string());
        assert_eq!(map[API_KEY_ENV], API_KEY);
        assert!(env.cwd.is_dir() && env.tmp.is_dir() && env.home.is_dir());
        assert_eq!(env.exec_args()[..2], ["exec".to_owned(), "--json".to_owned()]);
    }
}
