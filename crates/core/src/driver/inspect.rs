//! Inspection reports: environment health, models, quota and configuration schema.
//!
//! Inspection never starts a model task. A driver that cannot answer says so with
//! [`InspectError::Unavailable`]; it never fakes success.

use serde::{Deserialize, Serialize};

use super::descriptor::MessageCaps;

/// Overall health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    /// Healthy.
    Pass,
    /// Usable with caveats.
    Warn,
    /// Not usable.
    Fail,
}

/// One health check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentCheck {
    /// Machine code (`binary_found`, `version`, …).
    pub code: String,
    /// Status.
    pub status: CheckStatus,
    /// Human-readable message.
    pub message: String,
}

impl EnvironmentCheck {
    /// The `cli` check of a version probe: passes as "`product` `version`", or fails with the probe's
    /// error.
    pub fn cli(product: &str, version: &Result<String, String>) -> EnvironmentCheck {
        match version {
            Ok(v) => EnvironmentCheck {
                code: "cli".into(),
                status: CheckStatus::Pass,
                message: format!("{product} {v}"),
            },
            Err(e) => EnvironmentCheck {
                code: "cli".into(),
                status: CheckStatus::Fail,
                message: e.clone(),
            },
        }
    }
}

/// The first word of a version probe's output that starts with a digit (`codex-cli 0.171.0` →
/// `0.171.0`).
pub fn first_version_word(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_owned)
}

/// The environment report of a driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvironmentReport {
    /// Driver type.
    pub driver_type: String,
    /// Worst status of the checks.
    pub status: CheckStatus,
    /// `status != Fail`.
    pub healthy: bool,
    /// Detected CLI version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The checks.
    pub checks: Vec<EnvironmentCheck>,
    /// The effective message capability for the detected version.
    pub messages: MessageCaps,
}

impl EnvironmentReport {
    /// Builds a report from checks, computing `status` and `healthy`.
    pub fn from_checks(
        driver_type: &str,
        version: Option<String>,
        checks: Vec<EnvironmentCheck>,
        messages: MessageCaps,
    ) -> Self {
        let status = if checks.iter().any(|c| c.status == CheckStatus::Fail) {
            CheckStatus::Fail
        } else if checks.iter().any(|c| c.status == CheckStatus::Warn) {
            CheckStatus::Warn
        } else {
            CheckStatus::Pass
        };
        EnvironmentReport {
            driver_type: driver_type.into(),
            status,
            healthy: status != CheckStatus::Fail,
            version,
            checks,
            messages,
        }
    }
}

/// A model the provider offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// Model id.
    pub id: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    /// True for the provider's default.
    #[serde(default)]
    pub default: bool,
}

/// A usage window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotaWindow {
    /// Label (`5h`, `weekly`, …).
    pub label: String,
    /// Used fraction 0..=1, when known.
    pub used_fraction: Option<f64>,
    /// When it resets, RFC 3339.
    pub resets_at: Option<String>,
}

/// Quota information.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuotaReport {
    /// Driver type.
    pub driver_type: String,
    /// Windows.
    pub windows: Vec<QuotaWindow>,
}

/// One configuration field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigField {
    /// Field name.
    pub name: String,
    /// JSON type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Required.
    pub required: bool,
    /// Description.
    pub description: String,
}

/// The configuration schema of a driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigSchema {
    /// Driver type.
    pub driver_type: String,
    /// Fields.
    pub fields: Vec<ConfigField>,
}

/// Why an inspection could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    /// The driver does not offer this probe.
    #[error("{what} is unavailable for this driver")]
    Unavailable {
        /// Which probe.
        what: &'static str,
    },
    /// The probe ran and failed.
    #[error("{what} failed: {message}")]
    Failed {
        /// Which probe.
        what: &'static str,
        /// Why.
        message: String,
    },
}

/// `a < b` for dotted numeric versions (`2.1.99 < 2.1.332`): up to three parts, a missing part counts
/// as 0, a non-numeric part as 0.
pub fn version_older(a: &str, b: &str) -> bool {
    let parts = |s: &str| -> Vec<u64> {
        s.split(['.', '-'])
            .take(3)
            .map(|p| p.trim().parse().unwrap_or(0))
            .collect()
    };
    let (mut a, mut b) = (parts(a), parts(b));
    a.resize(3, 0);
    b.resize(3, 0);
    a < b
}
