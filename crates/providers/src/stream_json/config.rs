//! Configuration pieces both stream-json drivers share: the `--permission-mode` values and the
//! millisecond (de)serialization of optional timers.

use serde::{Deserialize, Serialize};

/// `--permission-mode`: how the CLI itself treats tools that need permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// `default`: ask (bidirectional/control transport) or refuse (one-shot/headless).
    Default,
    /// `acceptEdits`: file edits pass, commands still need permission.
    AcceptEdits,
    /// `plan`: read-only until the plan is accepted (`ExitPlanMode` → plan review).
    Plan,
    /// `auto`: the CLI's classifier decides.
    Auto,
    /// `dontAsk`: everything not pre-approved is refused.
    DontAsk,
    /// `bypassPermissions`: everything runs.
    BypassPermissions,
}

impl PermissionMode {
    /// The flag value.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::Auto => "auto",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }
}

/// `Option<Duration>` as optional whole milliseconds (`#[serde(with = "opt_millis")]`).
pub mod opt_millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes the duration as milliseconds (or `null`).
    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.as_millis() as u64).serialize(s)
    }

    /// Reads milliseconds (or `null`).
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
    }
}
