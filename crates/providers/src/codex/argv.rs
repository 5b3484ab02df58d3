//! The `codex app-server` and `codex exec --json` command lines and the `ExtraArgs` rule.
//!
//! The driver always runs `codex app-server --listen stdio://` (JSON-RPC over stdio: deltas,
//! approvals as server requests, threads, steer and interrupt). Only configuration overrides may be
//! appended: `-c/--config <key=value>`, `--enable/--disable <feature>` and `--strict-config`. Any
//! other argument, and any override of a key the SDK owns (sandbox, approvals, web search,
//! instructions, the model provider, `CODEX_HOME`-relative state), is refused at validation.

use std::path::Path;

use crate::driver::{FeatureLevel, Policy, SandboxLevel};

/// `-c` keys the SDK sets itself (per turn or in `config.toml`).
const OWNED_KEYS: &[&str] = &[
    "sandbox_mode",
    "approval_policy",
    "web_search",
    "features.web_search_request",
    "tools.web_search",
    "developer_instructions",
    "instructions",
    "base_instructions",
    "model_instructions_file",
    "experimental_instructions_file",
    "model_provider",
];

/// Checks `ExtraArgs`; the error is a human-readable reason.
pub fn check_extra_args(args: &[String]) -> Result<(), String> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let override_value = match a.as_str() {
            "-c" | "--config" => Some(
                it.next()
                    .ok_or_else(|| format!("{a} needs a key=value argument"))?
                    .as_str(),
            ),
            "--enable" | "--disable" => {
                let f = it.next().ok_or_else(|| format!("{a} needs a feature name"))?;
                if f.starts_with("web_search") {
                    return Err(format!("{a} {f}: web search is set by the run policy"));
                }
                None
            }
            "--strict-config" => None,
            other => match other
                .strip_prefix("--config=")
                .or_else(|| other.strip_prefix("-c"))
            {
                Some(v) if !v.is_empty() => Some(v),
                _ => {
                    return Err(format!(
                        "unsupported app-server argument {other:?} (only -c/--config, --enable, --disable, --strict-config)"
                    ));
                }
            },
        };
        if let Some(kv) = override_value {
            let key = kv.split('=').next().unwrap_or_default().trim();
            if key.is_empty() || !kv.contains('=') {
                return Err(format!("config override {kv:?} is not key=value"));
            }
            if OWNED_KEYS.contains(&key) || key.starts_with("model_providers") {
                return Err(format!("config key {key:?} is owned by the SDK"));
            }
        }
    }
    Ok(())
}

/// The full argument list of `codex app-server` for `policy`, with the run's MCP overrides
/// (`home::mcp_overrides`) before the host's extra arguments.
pub fn app_server(extra: &[String], policy: &Policy, mcp: &[String]) -> Vec<String> {
    let mut args: Vec<String> = vec!["app-server".into(), "--listen".into(), "stdio://".into()];
    args.extend(mcp.iter().cloned());
    web_search(&mut args, policy.web_search);
    args.extend(extra.iter().cloned());
    args
}

/// `-c web_search="live"|"disabled"` (both transports read the same key).
fn web_search(args: &mut Vec<String>, level: FeatureLevel) {
    match level {
        FeatureLevel::Inherit => {}
        FeatureLevel::Allow => args.extend(["-c".into(), "web_search=\"live\"".into()]),
        FeatureLevel::Deny => args.extend(["-c".into(), "web_search=\"disabled\"".into()]),
    }
}

/// The `--sandbox` value of a level (the app-server's `sandbox` uses the same names).
pub fn sandbox_mode(level: SandboxLevel) -> Option<&'static str> {
    match level {
        SandboxLevel::Inherit => None,
        SandboxLevel::ReadOnly => Some("read-only"),
        SandboxLevel::WorkspaceWrite => Some("workspace-write"),
        SandboxLevel::Unrestricted => Some("danger-full-access"),
    }
}

/// What one `codex exec --json` command line depends on besides the policy.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExecArgs<'a> {
    /// `-C <dir>`: the working root.
    pub cwd: Option<&'a Path>,
    /// `-m <model>`: the per-call model (the configured one is in `config.toml`).
    pub model: Option<&'a str>,
    /// `-c developer_instructions=<TOML string>`.
    pub instructions: Option<&'a str>,
    /// `--output-schema <file>`.
    pub schema: Option<&'a Path>,
    /// `resume <thread id>`.
    pub resume: Option<&'a str>,
}

/// The full argument list of `codex exec --json`: the prompt is read from stdin (`-`), so neither its
/// size nor a leading `-` matters and it never shows in the process list.
pub fn exec(extra: &[String], policy: &Policy, mcp: &[String], a: &ExecArgs<'_>) -> Vec<String> {
    let mut args: Vec<String> = vec!["exec".into(), "--json".into(), "--skip-git-repo-check".into()];
    if let Some(cwd) = a.cwd {
        args.extend(["-C".into(), cwd.to_string_lossy().into_owned()]);
    }
    if let Some(mode) = sandbox_mode(policy.sandbox) {
        args.extend(["-s".into(), mode.into()]);
    }
    if let Some(m) = a.model {
        args.extend(["-m".into(), m.into()]);
    }
    if let Some(f) = a.schema {
        args.extend(["--output-schema".into(), f.to_string_lossy().into_owned()]);
    }
    if let Some(i) = a.instructions {
        // A JSON string is a valid one-line TOML basic string (same escapes, no `\/`).
        let value = serde_json::Value::String(i.to_owned());
        args.extend(["-c".into(), format!("developer_instructions={value}")]);
    }
    args.extend(mcp.iter().cloned());
    web_search(&mut args, policy.web_search);
    args.extend(extra.iter().cloned());
    if let Some(id) = a.resume {
        args.extend(["resume".into(), id.into()]);
    }
    args.push("-".into());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn extra_args_allow_only_config_overrides() {
        assert!(check_extra_args(&s(&["-c", "model_verbosity=\"low\"", "--strict-config"])).is_ok());
        assert!(check_extra_args(&s(&["--enable", "unified_exec", "-ctools.x=1"])).is_ok());
        assert!(check_extra_args(&s(&["--config=a.b=2"])).is_ok());
        for bad in [
            &["--search"][..],
            &["-s", "read-only"],
            &["-c", "sandbox_mode=\"danger-full-access\""],
            &["-capproval_policy=never"],
            &["--config=developer_instructions=\"x\""],
            &["-c", "model_providers.x.base_url=\"http://evil\""],
            &["--enable", "web_search_request"],
            &["-c"],
            &["-c", "novalue"],
            &["--dangerously-bypass-approvals-and-sandbox"],
        ] {
            assert!(check_extra_args(&s(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn web_search_policy_becomes_a_config_override() {
        let mut p = Policy::default();
        assert_eq!(
            app_server(&[], &p, &[]),
            s(&["app-server", "--listen", "stdio://"])
        );
        p.web_search = FeatureLevel::Deny;
        let a = app_server(&s(&["--strict-config"]), &p, &s(&["-c", "mcp_servers.m={}"]));
        assert_eq!(
            a[3..],
            s(&[
                "-c",
                "mcp_servers.m={}",
                "-c",
                "web_search=\"disabled\"",
                "--strict-config"
            ])[..]
        );
    }

    #[test]
    fn exec_argv_maps_the_policy_like_app_server_and_reads_the_prompt_from_stdin() {
        let plain = exec(&[], &Policy::default(), &[], &ExecArgs::default());
        assert_eq!(plain, s(&["exec", "--json", "--skip-git-repo-check", "-"]));
        let mut p = Policy::workspace_write();
        p.web_search = FeatureLevel::Allow;
        let a = exec(
            &s(&["--strict-config"]),
            &p,
            &s(&["-c", "mcp_servers.m={}"]),
            &ExecArgs {
                cwd: Some(Path::new("/w")),
                model: Some("gpt-5.5"),
                instructions: Some("Say \"x\"\nthen stop"),
                schema: Some(Path::new("/h/s.json")),
                resume: Some("t-1"),
            },
        );
        assert_eq!(
            a,
            s(&[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-C",
                "/w",
                "-s",
                "workspace-write",
                "-m",
                "gpt-5.5",
                "--output-schema",
                "/h/s.json",
                "-c",
                "developer_instructions=\"Say \\\"x\\\"\\nthen stop\"",
                "-c",
                "mcp_servers.m={}",
                "-c",
                "web_search=\"live\"",
                "--strict-config",
                "resume",
                "t-1",
                "-"
            ])
        );
        assert_eq!(
            sandbox_mode(SandboxLevel::Unrestricted),
            Some("danger-full-access")
        );
        assert_eq!(sandbox_mode(SandboxLevel::ReadOnly), Some("read-only"));
    }
}
