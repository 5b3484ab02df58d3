//! Inspect: the environment report from `cursor-agent --version` (never a model task).
//!
//! The probe runs in a scratch profile under the system temp dir (`HOME` and the three `CURSOR_*`
//! directories), removed afterwards, so it reads neither the host user's `~/.cursor` nor the driver's
//! profile and writes to neither.

use std::path::PathBuf;
use std::time::Duration;

use futures::StreamExt;

use crate::driver::process::{ProcessRegistry, ProcessSpec, StopPlan, spawn};
use crate::driver::{CheckStatus, EnvironmentCheck, EnvironmentReport};

use super::config::CursorConfig;
use super::profile::{Profile, inherited};
use super::{DRIVER_TYPE, descriptor};

/// How long `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The version in `--version` output: the first word that starts with a digit (Cursor prints a
/// date-and-hash version such as `2026.10.22-27dcf5f`, possibly after the program name).
pub fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// A scratch profile root that is removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn version(config: &CursorConfig, registry: &ProcessRegistry) -> Result<String, String> {
    let scratch = Scratch(
        std::env::temp_dir()
            .join("agent-adaptor-inspect")
            .join(format!("cursor-{}", uuid::Uuid::new_v4().simple())),
    );
    let profile = Profile::new(
        &CursorConfig {
            profile_dir: Some(scratch.0.clone()),
            ..CursorConfig::default()
        },
        "",
    );
    let tmp = scratch.0.join("tmp");
    for d in [&profile.home, &profile.config, &profile.data, &tmp] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let program = config.program();
    let spec = ProcessSpec::new(&program)
        .arg("--version")
        .inherit_env(inherited)
        .envs(profile.vars(config, &Default::default(), &tmp))
        .label("cursor-agent --version");
    let mut child = spawn(registry, spec)
        .await
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let mut out = child.take_stdout().ok_or("no stdout")?;
    let read = async {
        let mut text = String::new();
        while let Some(Ok(line)) = out.next().await {
            if let Some(raw) = line.raw() {
                text.push_str(&String::from_utf8_lossy(raw));
                text.push('\n');
            }
        }
        text
    };
    let text = tokio::time::timeout(VERSION_TIMEOUT, read).await;
    let exit = child.stop(StopPlan::new()).await;
    let text = text.map_err(|_| "cursor-agent --version timed out".to_owned())?;
    match parse_version(&text) {
        Some(v) if exit.success() => Ok(v),
        _ => Err(format!(
            "{} --version failed ({exit}): {}",
            program.display(),
            text.trim()
        )),
    }
}

/// The environment report: one `cli` check (the binary runs and names its version).
pub async fn environment(config: &CursorConfig, registry: &ProcessRegistry) -> EnvironmentReport {
    let (detected, check) = match version(config, registry).await {
        Ok(v) => (
            Some(v.clone()),
            EnvironmentCheck {
                code: "cli".into(),
                status: CheckStatus::Pass,
                message: format!("Cursor agent {v}"),
            },
        ),
        Err(e) => (
            None,
            EnvironmentCheck {
                code: "cli".into(),
                status: CheckStatus::Fail,
                message: e,
            },
        ),
    };
    EnvironmentReport::from_checks(DRIVER_TYPE, detected, vec![check], descriptor().messages)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_is_the_first_word_that_starts_with_a_digit() {
        assert_eq!(
            parse_version("2026.10.22-27dcf5f\n").as_deref(),
            Some("2026.10.22-27dcf5f")
        );
        assert_eq!(
            parse_version("cursor-agent 2025.09.18-7ae6800").as_deref(),
            Some("2025.09.18-7ae6800")
        );
        assert_eq!(parse_version("usage: agent [options]"), None);
        assert_eq!(parse_version(""), None);
    }
}
