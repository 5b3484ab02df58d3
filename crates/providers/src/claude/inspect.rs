//! Inspect: the environment report (`claude --version`, with the message capabilities trimmed when the CLI
//! is older than [`MESSAGES_MIN_VERSION`](super::MESSAGES_MIN_VERSION)), the models the CLI lists in its
//! `initialize` answer (no model request is made), and the configuration schema.

use std::time::Duration;

use futures::StreamExt;

use crate::driver::process::{ProcessRegistry, ProcessSpec, StopPlan, probe_stdout, spawn};
use crate::driver::{
    CheckStatus, ConfigField, ConfigSchema, EnvironmentCheck, EnvironmentReport, InspectError, ModelInfo,
};

use super::argv::{self, Invocation, Transport};
use super::config::{Config, PermissionMode};
use super::wire::{Frame, InitializeInfo, InputFrame, parse_line};
use super::{DRIVER_TYPE, MESSAGES_MIN_VERSION, bidi_messages, env};

/// How long an inspection process may take.
const INSPECT_TIMEOUT: Duration = Duration::from_secs(60);

/// The version in `claude --version` output (`2.1.332 (Claude Code)`).
pub fn parse_version(text: &str) -> Option<String> {
    let v = text.split_whitespace().next()?;
    v.chars().next()?.is_ascii_digit().then(|| v.to_owned())
}

/// `a < b` for dotted numeric versions (missing parts count as 0; a non-numeric part as 0).
pub use crate::driver::inspect::version_older as older;

async fn version(config: &Config, registry: &ProcessRegistry) -> Result<String, String> {
    let spec = ProcessSpec::new(config.program())
        .arg("--version")
        .inherit_base_env()
        .envs(env::FIXED.iter().map(|(k, v, _)| (*k, *v)))
        .label("claude --version");
    let text = probe_stdout(registry, spec, INSPECT_TIMEOUT, "claude --version").await?;
    parse_version(&text).ok_or_else(|| format!("claude --version named no version: {}", text.trim()))
}

/// The environment report.
pub async fn environment(config: &Config, registry: &ProcessRegistry) -> EnvironmentReport {
    let version = version(config, registry).await;
    let mut checks = vec![EnvironmentCheck::cli("Claude Code", &version)];
    let mut messages = bidi_messages();
    if let Ok(v) = &version
        && older(v, MESSAGES_MIN_VERSION)
    {
        // What a run does below the minimum: the core's trimming (`MessageCaps::without_in_run`).
        messages = messages.without_in_run(true);
        checks.push(EnvironmentCheck {
            code: "messages".into(),
            status: CheckStatus::Warn,
            message: format!(
                "Claude Code {v} is older than {MESSAGES_MIN_VERSION}: supplemental messages are \
                 delivered at turn ends through a checkpoint resume"
            ),
        });
    }
    EnvironmentReport::from_checks(DRIVER_TYPE, version.ok(), checks, messages)
}

/// The models of the CLI's `initialize` answer (`value` as the id; the `default` entry flagged).
pub async fn models(config: &Config, registry: &ProcessRegistry) -> Result<Vec<ModelInfo>, InspectError> {
    let failed = |message: String| InspectError::Failed {
        what: "models",
        message,
    };
    let dir = env::config_dir(config, "default");
    std::fs::create_dir_all(&dir).map_err(|e| failed(e.to_string()))?;
    let policy = crate::driver::Policy::default();
    let args = argv::build(config, &policy, Transport::Bidi, &Invocation::default());
    let vars = env::vars(config, &Default::default(), &dir, PermissionMode::Default, false);
    let cwd = config.common.directory.clone().unwrap_or_else(std::env::temp_dir);
    let spec = ProcessSpec::new(config.program())
        .args(&args)
        .cwd(cwd)
        .inherit_env(|n| env::inherits(n) || matches!(n, "PATH" | "HOME" | "TMPDIR" | "LANG"))
        .envs(&vars)
        .stdin_piped(true)
        .label("claude models");
    let mut child = spawn(registry, spec).await.map_err(|e| failed(e.to_string()))?;
    let mut out = child.take_stdout().ok_or_else(|| failed("no stdout".into()))?;
    let stdin = child.stdin().ok_or_else(|| failed("no stdin".into()))?;
    let read = async {
        stdin
            .send_json(&InputFrame::initialize("agent-adaptor-models"))
            .await
            .map_err(|e| e.to_string())?;
        while let Some(Ok(line)) = out.next().await {
            let Some(raw) = line.raw() else { continue };
            if let Ok(Frame::ControlResponse(r)) = parse_line(raw)
                && r.response.request_id == "agent-adaptor-models"
            {
                return r.payload::<InitializeInfo>().ok_or_else(|| {
                    r.response
                        .error
                        .clone()
                        .unwrap_or_else(|| "initialize refused".into())
                });
            }
        }
        Err("Claude exited before answering initialize".to_owned())
    };
    let info = tokio::time::timeout(INSPECT_TIMEOUT, read).await;
    stdin.close().await;
    let _ = child
        .stop(StopPlan::new().interrupt_grace(Duration::from_secs(1)))
        .await;
    let info = info.map_err(|_| failed("timed out".into()))?.map_err(failed)?;
    Ok(info
        .models
        .iter()
        .filter_map(|m| {
            let id = m.get("value")?.as_str()?.to_owned();
            let display_name = m
                .get("displayName")
                .and_then(|d| d.as_str())
                .unwrap_or_default()
                .to_owned();
            Some(ModelInfo {
                default: id == "default",
                id,
                display_name,
            })
        })
        .collect())
}

/// The configuration schema.
pub fn config_schema() -> ConfigSchema {
    let f = |name: &str, kind: &str, description: &str| ConfigField {
        name: name.into(),
        kind: kind.into(),
        required: false,
        description: description.into(),
    };
    ConfigSchema {
        driver_type: DRIVER_TYPE.into(),
        fields: vec![
            f(
                "command",
                "path",
                "The claude binary (default: $AGENT_ADAPTOR_CLAUDE_BIN, else claude on PATH)",
            ),
            f("model", "string", "--model"),
            f("effort", "string", "low|medium|high|xhigh|max"),
            f("max_turns_per_run", "integer", "--max-turns"),
            f(
                "permission_mode",
                "string",
                "default|acceptEdits|plan|auto|dontAsk|bypassPermissions (default: from the approval policy)",
            ),
            f("config_dir", "path", "The SDK-owned CLAUDE_CONFIG_DIR"),
            f(
                "handshake_timeout",
                "milliseconds",
                "Wait for the initialize answer",
            ),
            f(
                "idle_timeout",
                "milliseconds",
                "A thread's persistent claude process is stopped after this long without a run (default 5 min)",
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_compare() {
        assert_eq!(
            parse_version("2.1.332 (Claude Code)\n").as_deref(),
            Some("2.1.332")
        );
        assert_eq!(parse_version("error: x"), None);
        assert!(older("2.1.99", "2.1.332"));
        assert!(!older("2.1.332", "2.1.332"));
        assert!(!older("2.2.0", "2.1.332"));
        assert!(older("1.9", "2.1.332"));
    }

    #[test]
    fn the_schema_names_every_config_field() {
        let names: Vec<String> = config_schema().fields.into_iter().map(|f| f.name).collect();
        let v = serde_json::to_value(Config::default()).unwrap();
        for key in [
            "model",
            "effort",
            "max_turns_per_run",
            "permission_mode",
            "config_dir",
        ] {
            assert!(v.get(key).is_some(), "{key} not a config field");
            assert!(names.iter().any(|n| n == key), "{key} missing");
        }
    }
}
