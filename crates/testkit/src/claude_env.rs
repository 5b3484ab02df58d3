//! One definition of "run the real Claude Code CLI offline": the environment and base arguments that
//! point it at a loopback mock (`testkit::mock::anthropic`) and keep it away from the network and from
//! the host user's configuration. Shared by the recording harness and the Claude driver's tests.
//!
//! It does not spawn anything: drivers spawn through `driver::process`, the lab harness in `tests/`.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

/// The dummy API key; sent by the CLI as `x-api-key`. Nothing secret.
pub const DUMMY_API_KEY: &str = "dummy-key";

/// Every variable [`ClaudeEnv`] sets, with the reason. Paths and the URL are filled in per instance.
pub const ENV_DOC: &[(&str, &str)] = &[
    (
        "HOME",
        "own home: the CLI reads and writes ~/.claude.json and ~/.claude; keep the host user's out",
    ),
    (
        "TMPDIR",
        "own temp dir: the CLI puts its messaging socket (cc-socks/<pid>.sock) and scratch files there",
    ),
    (
        "CLAUDE_CONFIG_DIR",
        "own config dir: sessions land in projects/<cwd-slug>/<session>.jsonl, plans in plans/",
    ),
    (
        "ANTHROPIC_BASE_URL",
        "the loopback mock; the CLI posts to <url>/v1/messages?beta=true",
    ),
    (
        "ANTHROPIC_API_KEY",
        "dummy key so no login is needed; init reports apiKeySource ANTHROPIC_API_KEY",
    ),
    (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "no update checks, telemetry, or other calls to anthropic hosts",
    ),
    ("DISABLE_TELEMETRY", "belt and braces for the above"),
    ("DISABLE_AUTOUPDATER", "never try to download a newer CLI"),
    ("DISABLE_ERROR_REPORTING", "no crash reports"),
    ("DISABLE_BUG_COMMAND", "no feedback upload endpoint"),
    (
        "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
        "no side requests (titles etc.) to the model: one request per model turn",
    ),
    (
        "CLAUDE_CODE_MAX_RETRIES",
        "0 by default: errors surface at once instead of ~10 backoff retries (>60 s for a 401)",
    ),
    ("PATH", "inherited: the Bash tool needs the usual binaries"),
    (
        "SHELL",
        "/bin/bash, so the Bash tool does not depend on the host's login shell",
    ),
    (
        "IS_SANDBOX",
        "only with allow_bypass_as_root(): as root, bypassPermissions is refused without it",
    ),
];

/// An isolated, offline environment for one or more CLI runs under `root`.
#[derive(Debug, Clone)]
pub struct ClaudeEnv {
    /// The root of everything below.
    pub root: PathBuf,
    /// `HOME`.
    pub home: PathBuf,
    /// `TMPDIR`.
    pub tmp: PathBuf,
    /// `CLAUDE_CONFIG_DIR`.
    pub config_dir: PathBuf,
    /// The working directory the CLI runs in (its project).
    pub cwd: PathBuf,
    vars: BTreeMap<String, String>,
}

impl ClaudeEnv {
    /// Creates `home/`, `tmp/`, `cfg/` and `proj/` under `root` and the variables for `base_url`.
    pub fn new(root: &Path, base_url: &str) -> io::Result<ClaudeEnv> {
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
        set("CLAUDE_CONFIG_DIR", &config_dir.to_string_lossy());
        set("ANTHROPIC_BASE_URL", base_url);
        set("ANTHROPIC_API_KEY", DUMMY_API_KEY);
        for k in [
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_TELEMETRY",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
            "DISABLE_BUG_COMMAND",
            "DISABLE_NON_ESSENTIAL_MODEL_CALLS",
        ] {
            set(k, "1");
        }
        set("CLAUDE_CODE_MAX_RETRIES", "0");
        set("SHELL", "/bin/bash");
        if let Some(path) = std::env::var_os("PATH") {
            set("PATH", &path.to_string_lossy());
        }
        Ok(ClaudeEnv {
            root: root.to_owned(),
            home,
            tmp,
            config_dir,
            cwd,
            vars,
        })
    }

    /// Sets (or overrides) one variable, e.g. `CLAUDE_CODE_MAX_RETRIES=2` for a retry test.
    pub fn with_var(mut self, key: &str, value: &str) -> ClaudeEnv {
        self.vars.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Removes one variable (e.g. to observe what the CLI does without one of the `DISABLE_*` guards).
    pub fn without_var(mut self, key: &str) -> ClaudeEnv {
        self.vars.remove(key);
        self
    }

    /// Adds `IS_SANDBOX=1` when running as root, so `--permission-mode bypassPermissions` /
    /// `--dangerously-skip-permissions` is accepted (otherwise rc 1: "cannot be used with root/sudo").
    pub fn allow_bypass_as_root(self) -> ClaudeEnv {
        if is_root() {
            self.with_var("IS_SANDBOX", "1")
        } else {
            self
        }
    }

    /// The complete environment (the child should start from an empty one).
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.vars
    }

    /// One-shot print mode: `-p --output-format stream-json --verbose` (prompt goes after these).
    pub fn print_args() -> Vec<String> {
        ["-p", "--output-format", "stream-json", "--verbose"]
            .map(str::to_owned)
            .to_vec()
    }

    /// Bidirectional mode with permission prompts over stdio:
    /// `-p --input-format stream-json --output-format stream-json --verbose --permission-prompt-tool stdio`.
    pub fn bidi_args() -> Vec<String> {
        [
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-prompt-tool",
            "stdio",
        ]
        .map(str::to_owned)
        .to_vec()
    }
}

/// Whether this process runs as root: `/proc/self` is owned by the effective uid (Linux).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_every_documented_variable_except_opt_ins() {
        let dir = tempfile::tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), "http://127.0.0.1:1").unwrap();
        for (k, _) in ENV_DOC {
            if *k == "IS_SANDBOX" {
                continue;
            }
            assert!(env.vars().contains_key(*k), "{k} missing");
        }
        assert_eq!(env.vars()["ANTHROPIC_BASE_URL"], "http://127.0.0.1:1");
        assert!(env.cwd.is_dir() && env.config_dir.is_dir());
        let env = env.with_var("CLAUDE_CODE_MAX_RETRIES", "2");
        assert_eq!(env.vars()["CLAUDE_CODE_MAX_RETRIES"], "2");
        assert!(ClaudeEnv::bidi_args().contains(&"stdio".to_owned()));
    }
}
