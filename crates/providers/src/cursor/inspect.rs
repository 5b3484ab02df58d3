//! Inspect: the environment report from `cursor-agent --version` (never a model task).
//!
//! The probe runs in a scratch profile under the system temp dir (`HOME` and the three `CURSOR_*`
//! directories), removed afterwards, so it reads neither the host user's `~/.cursor` nor the driver's
//! profile and writes to neither.

use std::path::PathBuf;
use std::time::Duration;

use crate::driver::process::{ProcessRegistry, ProcessSpec, probe_stdout};
use crate::driver::{EnvironmentCheck, EnvironmentReport};

use super::config::CursorConfig;
use super::profile::{Profile, inherited};
use super::{DRIVER_TYPE, descriptor};

/// How long `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

/// The version in `--version` output: the first word that starts with a digit (Cursor prints a
/// date-and-hash version such as `2026.10.22-27dcf5f`, possibly after the program name).
pub fn parse_version(text: &str) -> Option<String> {
    crate::driver::inspect::first_version_word(text)
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
    let text = probe_stdout(registry, spec, VERSION_TIMEOUT, "cursor-agent --version").await?;
    parse_version(&text).ok_or_else(|| format!("cursor-agent --version named no version: {}", text.trim()))
}

/// The environment report: one `cli` check (the binary runs and names its version).
pub async fn environment(config: &CursorConfig, registry: &ProcessRegistry) -> EnvironmentReport {
    let version = version(config, registry).await;
    let check = EnvironmentCheck::cli("Cursor agent", &version);
    EnvironmentReport::from_checks(DRIVER_TYPE, version.ok(), vec![check], descriptor().messages)
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
