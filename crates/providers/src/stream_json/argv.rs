//! Command-line pieces both stream-json drivers share: which transport a policy needs, the
//! `--permission-mode` a policy implies, and refusing `extra_args` that would override a driver-owned flag.

use std::path::Path;

use crate::driver::{DecisionKind, DecisionMode, Policy};

use super::config::PermissionMode;

/// True when no decision can reach the host: permission and plan review are both auto-approved and
/// questions are not asked. Such a request runs one process per provider turn without a control channel.
pub fn nothing_can_ask(policy: &Policy) -> bool {
    let a = &policy.approvals;
    let auto_approved = |k| a.effective_mode(k) == DecisionMode::AutoApprove;
    auto_approved(DecisionKind::Permission)
        && auto_approved(DecisionKind::PlanReview)
        && a.effective_mode(DecisionKind::Question) != DecisionMode::Ask
}

/// The `--permission-mode` value: `configured`, else `bypassPermissions` when permission requests are
/// auto-approved, else `default` (the CLI asks through `can_use_tool`, or refuses without a control
/// channel).
pub fn permission_mode(configured: Option<PermissionMode>, policy: &Policy) -> PermissionMode {
    configured.unwrap_or_else(|| {
        if policy.approvals.effective_mode(DecisionKind::Permission) == DecisionMode::AutoApprove {
            PermissionMode::BypassPermissions
        } else {
            PermissionMode::Default
        }
    })
}

/// Refuses extra arguments naming one of `owned` (also in `--flag=value` form); `driver` names the driver
/// in the message.
pub fn check_extra_args(extra: &[String], owned: &[&str], driver: &str) -> Result<(), String> {
    for arg in extra {
        let name = arg.split_once('=').map_or(arg.as_str(), |(n, _)| n);
        if owned.contains(&name) {
            return Err(format!(
                "extra argument {name} overrides a flag the {driver} driver sets itself"
            ));
        }
    }
    Ok(())
}

/// The flags both CLIs take the same way, after the transport flags.
#[derive(Debug, Clone, Copy)]
pub struct Common<'a> {
    /// `--resume <id>`.
    pub resume: Option<&'a str>,
    /// With `resume`: `--fork-session`.
    pub fork: bool,
    /// `--permission-mode`.
    pub permission_mode: PermissionMode,
    /// `--model`.
    pub model: Option<&'a str>,
    /// `--effort`.
    pub effort: Option<&'a str>,
    /// `--max-turns`.
    pub max_turns: Option<u32>,
    /// `--json-schema`.
    pub schema: Option<&'a str>,
    /// `--append-system-prompt` (skipped when blank).
    pub instructions: Option<&'a str>,
    /// `--mcp-config <file> --strict-mcp-config`.
    pub mcp_config: Option<&'a Path>,
}

/// Appends `--verbose --include-partial-messages` and the [`Common`] flags to `a`.
pub fn push_common(a: &mut Vec<String>, c: &Common<'_>) {
    a.push("--verbose".into());
    a.push("--include-partial-messages".into());
    if let Some(id) = c.resume {
        a.extend(["--resume".into(), id.to_owned()]);
        if c.fork {
            a.push("--fork-session".into());
        }
    }
    a.extend(["--permission-mode".into(), c.permission_mode.as_str().into()]);
    if let Some(m) = c.model {
        a.extend(["--model".into(), m.to_owned()]);
    }
    if let Some(e) = c.effort {
        a.extend(["--effort".into(), e.to_owned()]);
    }
    if let Some(n) = c.max_turns {
        a.extend(["--max-turns".into(), n.to_string()]);
    }
    if let Some(s) = c.schema {
        a.extend(["--json-schema".into(), s.to_owned()]);
    }
    if let Some(i) = c.instructions.filter(|i| !i.trim().is_empty()) {
        a.extend(["--append-system-prompt".into(), i.to_owned()]);
    }
    if let Some(f) = c.mcp_config {
        a.extend([
            "--mcp-config".into(),
            f.to_string_lossy().into_owned(),
            "--strict-mcp-config".into(),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_flags_are_matched_by_name_in_both_spellings() {
        let owned = ["--resume", "-p"];
        assert!(check_extra_args(&["--add-dir".into(), "/x".into()], &owned, "x").is_ok());
        let err = check_extra_args(&["--resume=abc".into()], &owned, "x").unwrap_err();
        assert_eq!(
            err,
            "extra argument --resume overrides a flag the x driver sets itself"
        );
        assert!(check_extra_args(&["-p".into()], &owned, "x").is_err());
        assert!(check_extra_args(&["--resumed".into()], &owned, "x").is_ok());
    }
}
