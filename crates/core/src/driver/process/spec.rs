//! [`ProcessSpec`]: everything needed to start one child, built by a driver and handed to
//! [`spawn`](super::spawn).
//!
//! The environment starts EMPTY (`spawn` adds only the owner tag `AGENT_ADAPTOR_OWNER`, used by the
//! boot-time orphan reaper). A driver either lists every variable it wants, or opts in to a
//! filtered copy of the server's own environment ([`ProcessSpec::inherit_env`],
//! [`ProcessSpec::inherit_base_env`]). Explicit entries always win over inherited ones. Nothing here
//! reads the parent environment until the child is actually spawned.
//!
//! `Debug` never prints secrets: values of variables whose names look secret (`*KEY*`, `*TOKEN*`,
//! `*SECRET*`, `*PASSWORD*`, …) and values of secret-looking command-line flags are redacted.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

/// Default limit for one stdout line (16 MiB); longer lines become [`Line::TooLong`](super::Line::TooLong).
pub const DEFAULT_MAX_LINE_LEN: usize = 16 * 1024 * 1024;
/// Default size of the stderr tail kept for error messages (64 KiB).
pub const DEFAULT_STDERR_TAIL: usize = 64 * 1024;
/// Default cap on the complete stderr and complete stdout kept for `Result.Raw` (64 MiB each).
pub const DEFAULT_RAW_CAP: usize = 64 * 1024 * 1024;

/// Variables [`ProcessSpec::inherit_base_env`] copies from the server's environment: what a CLI
/// needs to find its tools, its home and a locale, and nothing that carries credentials.
/// Names ending in `*` are prefixes.
pub const BASE_ENV_ALLOWLIST: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "TMPDIR", "TZ", "XDG_*",
];

/// Called with each stderr line (without its `\n`) as it arrives. It runs on the stderr reader
/// task, so it must return quickly and never block (push to an unbounded channel or an event sink).
pub type StderrLineFn = Arc<dyn Fn(Bytes) + Send + Sync>;

/// Decides whether an inherited variable (by name) is copied into the child's environment.
pub type EnvFilter = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// How to start one child process. Build with [`ProcessSpec::new`] and the chained setters.
///
/// ```
/// use agent_adaptor::driver::process::ProcessSpec;
/// let spec = ProcessSpec::new("claude")
///     .args(["-p", "--output-format", "stream-json"])
///     .cwd("/tmp")
///     .inherit_base_env()
///     .env("ANTHROPIC_API_KEY", "sk-not-printed")
///     .stdin_piped(true)
///     .label("claude run 42");
/// assert!(!format!("{spec:?}").contains("sk-not-printed"));
/// ```
#[derive(Clone)]
pub struct ProcessSpec {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: BTreeMap<OsString, OsString>,
    pub(crate) env_remove: Vec<OsString>,
    pub(crate) inherit: Option<EnvFilter>,
    pub(crate) stdin_piped: bool,
    pub(crate) max_line_len: usize,
    pub(crate) stderr_tail: usize,
    pub(crate) stderr_cap: usize,
    pub(crate) stdout_cap: usize,
    pub(crate) on_stderr_line: Option<StderrLineFn>,
    pub(crate) label: String,
}

impl ProcessSpec {
    /// A spec for `program` (a path, or a name looked up on the child's `PATH`), with an empty
    /// environment, stdin closed (`/dev/null`) and the default limits.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        let program = program.as_ref().to_os_string();
        let label = Path::new(&program).file_name().map_or_else(
            || program.to_string_lossy().into_owned(),
            |n| n.to_string_lossy().into_owned(),
        );
        Self {
            program,
            args: Vec::new(),
            cwd: None,
            env: BTreeMap::new(),
            env_remove: Vec::new(),
            inherit: None,
            stdin_piped: false,
            max_line_len: DEFAULT_MAX_LINE_LEN,
            stderr_tail: DEFAULT_STDERR_TAIL,
            stderr_cap: DEFAULT_RAW_CAP,
            stdout_cap: DEFAULT_RAW_CAP,
            on_stderr_line: None,
            label,
        }
    }

    /// Appends one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    /// Appends several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// The child's working directory (the workspace). Without it the child inherits the server's.
    pub fn cwd(mut self, dir: impl AsRef<Path>) -> Self {
        self.cwd = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Sets one environment variable (overrides an inherited one).
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env
            .insert(key.as_ref().to_os_string(), value.as_ref().to_os_string());
        self
    }

    /// Sets several environment variables.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        for (k, v) in vars {
            self.env
                .insert(k.as_ref().to_os_string(), v.as_ref().to_os_string());
        }
        self
    }

    /// Makes sure `key` is absent from the child's environment, inherited or not.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        let key = key.as_ref().to_os_string();
        self.env.remove(&key);
        self.env_remove.push(key);
        self
    }

    /// Copies the server's environment variables whose names pass `filter` (checked at spawn time).
    /// Variables whose names are not valid UTF-8 are never inherited.
    pub fn inherit_env(mut self, filter: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        self.inherit = Some(Arc::new(filter));
        self
    }

    /// Copies the server's variables named in [`BASE_ENV_ALLOWLIST`] (PATH, HOME, locale, …).
    pub fn inherit_base_env(self) -> Self {
        self.inherit_env(|name| {
            BASE_ENV_ALLOWLIST
                .iter()
                .any(|allowed| match allowed.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => name == *allowed,
                })
        })
    }

    /// Whether stdin is a pipe the driver writes frames to (default `false`: `/dev/null`).
    pub fn stdin_piped(mut self, piped: bool) -> Self {
        self.stdin_piped = piped;
        self
    }

    /// The longest stdout line parsed, excluding its `\n` (default [`DEFAULT_MAX_LINE_LEN`]).
    pub fn max_line_len(mut self, bytes: usize) -> Self {
        self.max_line_len = bytes.max(1);
        self
    }

    /// How many trailing stderr bytes to keep for error messages (default [`DEFAULT_STDERR_TAIL`]).
    pub fn stderr_tail(mut self, bytes: usize) -> Self {
        self.stderr_tail = bytes;
        self
    }

    /// Cap on the complete stderr kept (default [`DEFAULT_RAW_CAP`]); beyond it, capture is marked truncated.
    pub fn stderr_cap(mut self, bytes: usize) -> Self {
        self.stderr_cap = bytes;
        self
    }

    /// Cap on the complete stdout kept (default [`DEFAULT_RAW_CAP`]); `0` disables the raw copy.
    pub fn stdout_cap(mut self, bytes: usize) -> Self {
        self.stdout_cap = bytes;
        self
    }

    /// Forwards every stderr line to `f` as it arrives (see [`StderrLineFn`]).
    pub fn on_stderr_line(mut self, f: impl Fn(Bytes) + Send + Sync + 'static) -> Self {
        self.on_stderr_line = Some(Arc::new(f));
        self
    }

    /// A short human label for tracing and the registry (default: the program's file name).
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The program to run.
    pub fn program(&self) -> &OsStr {
        &self.program
    }

    /// The label.
    pub fn label_str(&self) -> &str {
        &self.label
    }

    /// The environment the child will get: inherited (filtered) variables, then explicit ones,
    /// minus removed names. `parent` is the server's environment (`std::env::vars_os()` at spawn).
    pub(crate) fn resolve_env(
        &self,
        parent: impl IntoIterator<Item = (OsString, OsString)>,
    ) -> BTreeMap<OsString, OsString> {
        let mut out = BTreeMap::new();
        if let Some(filter) = &self.inherit {
            for (k, v) in parent {
                if k.to_str().is_some_and(|name| filter(name)) {
                    out.insert(k, v);
                }
            }
        }
        out.extend(self.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        for k in &self.env_remove {
            out.remove(k);
        }
        out
    }
}

/// Whether a variable or flag name looks like it carries a credential.
pub(crate) fn looks_secret(name: &str) -> bool {
    const MARKERS: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "AUTH",
    ];
    let upper = name.to_ascii_uppercase();
    MARKERS.iter().any(|m| upper.contains(m))
}

const REDACTED: &str = "<redacted>";

/// The arguments as printed by `Debug`: values of secret-looking flags (`--api-key X`,
/// `--token=X`) are replaced.
fn redacted_args(args: &[OsString]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut hide_next = false;
    for arg in args {
        let s = arg.to_string_lossy();
        if hide_next {
            out.push(REDACTED.to_owned());
            hide_next = false;
            continue;
        }
        if let Some(flag) = s.strip_prefix('-') {
            match flag.split_once('=') {
                Some((name, _)) if looks_secret(name) => out.push(format!("-{name}={REDACTED}")),
                Some(_) => out.push(s.into_owned()),
                None => {
                    hide_next = looks_secret(flag);
                    out.push(s.into_owned());
                }
            }
        } else {
            out.push(s.into_owned());
        }
    }
    out
}

impl fmt::Debug for ProcessSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Env<'a>(&'a BTreeMap<OsString, OsString>);
        impl fmt::Debug for Env<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut map = f.debug_map();
                for (k, v) in self.0 {
                    let name = k.to_string_lossy();
                    if looks_secret(&name) {
                        map.entry(&name, &REDACTED);
                    } else {
                        map.entry(&name, &v.to_string_lossy());
                    }
                }
                map.finish()
            }
        }
        f.debug_struct("ProcessSpec")
            .field("label", &self.label)
            .field("program", &self.program)
            .field("args", &redacted_args(&self.args))
            .field("cwd", &self.cwd)
            .field("env", &Env(&self.env))
            .field("env_remove", &self.env_remove)
            .field("inherit_env", &self.inherit.is_some())
            .field("stdin_piped", &self.stdin_piped)
            .field("max_line_len", &self.max_line_len)
            .field("stderr_tail", &self.stderr_tail)
            .field("stderr_cap", &self.stderr_cap)
            .field("stdout_cap", &self.stdout_cap)
            .field("on_stderr_line", &self.on_stderr_line.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn env_starts_empty_and_explicit_wins() {
        let spec = ProcessSpec::new("x").env("A", "1");
        let env = spec.resolve_env(os(&[("PATH", "/bin"), ("A", "parent")]));
        assert_eq!(env.len(), 1);
        assert_eq!(
            env.get(OsStr::new("A")).map(|v| v.as_os_str()),
            Some(OsStr::new("1"))
        );
    }

    #[test]
    fn base_env_is_filtered_and_removals_apply() {
        let spec = ProcessSpec::new("x")
            .inherit_base_env()
            .env("A", "1")
            .env_remove("HOME");
        let env = spec.resolve_env(os(&[
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("LC_ALL", "C"),
            ("OPENAI_API_KEY", "sk-1"),
            ("A", "parent"),
        ]));
        let names: Vec<_> = env.keys().map(|k| k.to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["A", "LC_ALL", "PATH"]);
        assert_eq!(env[OsStr::new("A")], "1");
    }

    #[test]
    fn debug_redacts_secret_env_and_flags() {
        let spec = ProcessSpec::new("/usr/bin/tool")
            .env("ANTHROPIC_API_KEY", "sk-ant-1")
            .env("GITHUB_TOKEN", "ghp_2")
            .env("db_password", "hunter2")
            .env("MY_SECRET_THING", "s3")
            .env("PLAIN", "visible")
            .args(["--api-key", "sk-arg", "--token=tok-eq", "--model", "m1", "-p"]);
        let dbg = format!("{spec:?}");
        for secret in ["sk-ant-1", "ghp_2", "hunter2", "s3\"", "sk-arg", "tok-eq"] {
            assert!(!dbg.contains(secret), "{secret} leaked: {dbg}");
        }
        for visible in ["visible", "m1", "--model", "--api-key", "tool"] {
            assert!(dbg.contains(visible), "{visible} missing: {dbg}");
        }
    }

    #[test]
    fn label_defaults_to_file_name() {
        assert_eq!(ProcessSpec::new("/opt/bin/codex").label_str(), "codex");
        assert_eq!(ProcessSpec::new("sh").label("x").label_str(), "x");
    }
}
