//! One definition of "run the real CodeBuddy Code CLI offline": the environment and base arguments that point
//! it at the loopback Chat Completions mock (`testkit::mock::chat`) and keep it away from the network and the
//! host user's configuration. Shared by the recording harness (`tests/it/codebuddy_lab`) and the CodeBuddy
//! driver's tests.
//!
//! It never spawns anything: drivers spawn through `driver::process`, the lab harness in `tests/`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The dummy API key. The CLI sends it as `Authorization: Bearer` and `X-API-Key`, and echoes it back in
/// the `initialize` control response (`account.token`), so never put a real key here.
pub const DUMMY_API_KEY: &str = "dummy-key";

/// Every variable [`CodeBuddyEnv`] sets, and why. Paths and the URL are filled in per instance.
pub const ENV_DOC: &[(&str, &str)] = &[
    (
        "HOME",
        "own home: keeps the host user's ~/.codebuddy and dotfiles out of the run",
    ),
    ("TMPDIR", "own temp dir for the CLI's scratch files"),
    (
        "CODEBUDDY_CONFIG_DIR",
        "own config dir: sessions land in projects/<cwd-slug>/<session>.jsonl; --resume looks there",
    ),
    (
        "CODEBUDDY_BASE_URL",
        "the loopback mock; the CLI posts to <url>/chat/completions (no /v1 prefix)",
    ),
    ("CODEBUDDY_API_KEY", "dummy key, so no login is needed"),
    ("DISABLE_TELEMETRY", "no lookups of www.codebuddy.ai"),
    (
        "CODEBUDDY_SKIP_BUILTIN_MARKETPLACE",
        "no lookups of cnb.cool (plugin marketplace)",
    ),
    (
        "DISABLE_AUTOUPDATER",
        "never update the CLI mid-run (the official SDK sets it too)",
    ),
    (
        "CODEBUDDY_DISABLE_AUTO_MEMORY",
        "no auto-memory reminder and no memory Write tool calls (the official SDK sets it too)",
    ),
    (
        "PATH",
        "inherited: the bin is a node script (#!/usr/bin/env node) and Bash needs the usual tools",
    ),
    (
        "SHELL",
        "/bin/bash, so the Bash tool does not depend on the host's login shell",
    ),
    (
        "CODEBUDDY_CODE_ENTRYPOINT",
        "only in control mode (control_command): sdk-py, as the Go original and the Python SDK send",
    ),
];

/// An isolated, offline environment for one or more CodeBuddy runs under `root`.
#[derive(Debug, Clone)]
pub struct CodeBuddyEnv {
    /// The root of everything below.
    pub root: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
    /// `TMPDIR`.
    pub tmp: PathBuf,
    /// `CODEBUDDY_CONFIG_DIR`.
    pub config_dir: PathBuf,
    /// The working directory the CLI runs in (its project).
    pub cwd: PathBuf,
    vars: BTreeMap<String, String>,
}

impl CodeBuddyEnv {
    /// Creates `home/`, `tmp/`, `cfg/` and `proj/` under `root` and the variables for `base_url`.
    pub fn new(root: &Path, base_url: &str) -> io::Result<CodeBuddyEnv> {
        let home = root.join("home");
        let tmp = root.join("tmp");
        let config_dir = root.join("cfg");
        let cwd = root.join("proj");
        for d in [&home, &tmp, &config_dir, &cwd] {
            std::fs::create_dir_all(d)?;
        }
        let mut vars = BTreeMap::new();
        let mut set = |k: &str, v: &str| {
            vars.insert(k.to_owned(), v.to_owned());
        };
        set("HOME", &home.to_string_lossy());
        set("TMPDIR", &tmp.to_string_lossy());
        set("CODEBUDDY_CONFIG_DIR", &config_dir.to_string_lossy());
        set("CODEBUDDY_BASE_URL", base_url);
        set("CODEBUDDY_API_KEY", DUMMY_API_KEY);
        for k in [
            "DISABLE_TELEMETRY",
            "CODEBUDDY_SKIP_BUILTIN_MARKETPLACE",
            "DISABLE_AUTOUPDATER",
            "CODEBUDDY_DISABLE_AUTO_MEMORY",
        ] {
            set(k, "1");
        }
        set("SHELL", "/bin/bash");
        if let Some(path) = std::env::var_os("PATH") {
            set("PATH", &path.to_string_lossy());
        }
        Ok(CodeBuddyEnv {
            root: root.to_owned(),
            home,
            tmp,
            config_dir,
            cwd,
            vars,
        })
    }

    /// Sets (or overrides) one variable.
    #[must_use]
    pub fn with_var(mut self, key: &str, value: &str) -> CodeBuddyEnv {
        self.vars.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Removes one variable.
    #[must_use]
    pub fn without_var(mut self, key: &str) -> CodeBuddyEnv {
        self.vars.remove(key);
        self
    }

    /// The complete environment (the child starts from an empty one).
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// Headless one-shot: `--print --output-format stream-json --verbose`; the prompt goes last.
    pub fn headless_args() -> Vec<String> {
        ["--print", "--output-format", "stream-json", "--verbose"]
            .map(str::to_owned)
            .to_vec()
    }

    /// The control transport: `--input-format=stream-json --output-format=stream-json --verbose`
    /// (the process that runs them also needs `CODEBUDDY_CODE_ENTRYPOINT=sdk-py`).
    pub fn control_args() -> Vec<String> {
        [
            "--input-format=stream-json",
            "--output-format=stream-json",
            "--verbose",
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// The JSONL transcript the CLI keeps for `session_id`, if it exists:
    /// `<CODEBUDDY_CONFIG_DIR>/projects/<cwd slug>/<session_id>.jsonl`. The slug is searched, not derived
    /// (observed: `/tmp/.tmpAb/proj` -> `tmp-.tmpAb-proj`, i.e. `/` becomes `-`, the leading one dropped).
    pub fn session_file(&self, session_id: &str) -> Option<PathBuf> {
        let name = format!("{session_id}.jsonl");
        std::fs::read_dir(self.config_dir.join("projects"))
            .ok()?
            .filter_map(Result::ok)
            .map(|e| e.path().join(&name))
            .find(|p| p.is_file())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_sets_every_documented_variable_but_the_control_one() {
        let dir = tempfile::tempdir().unwrap();
        let env = CodeBuddyEnv::new(dir.path(), "http://127.0.0.1:1").unwrap();
        for (k, _) in ENV_DOC {
            if *k == "CODEBUDDY_CODE_ENTRYPOINT" || (*k == "PATH" && std::env::var_os("PATH").is_none()) {
                continue;
            }
            assert!(env.vars().contains_key(*k), "{k} missing");
        }
        assert_eq!(env.vars()["CODEBUDDY_BASE_URL"], "http://127.0.0.1:1");
        assert!(env.cwd.is_dir() && env.config_dir.is_dir());
        let env = env.with_var("X", "1").without_var("SHELL");
        assert_eq!(env.vars().get("X").map(String::as_str), Some("1"));
        assert!(!env.vars().contains_key("SHELL"));
    }
}
