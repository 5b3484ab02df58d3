//! Configuration shared by every built-in provider driver.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Default grace period between the protocol interrupt, SIGTERM and SIGKILL.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// Configuration every provider accepts (the spec's `CommonConfig`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CommonConfig {
    /// The CLI binary; `None` uses the provider's default command name on PATH.
    pub command: Option<PathBuf>,
    /// Default working directory of a run whose options name no workspace (the core applies it);
    /// `None` uses the process's current directory.
    pub directory: Option<PathBuf>,
    /// Extra environment for the CLI (wins over the inherited environment).
    pub env: BTreeMap<String, String>,
    /// Extra instructions for every run.
    pub instructions: Option<String>,
    /// Default execution deadline of a run whose options set none (the core enforces it for every
    /// driver); zero or `None` means no deadline.
    #[serde(with = "opt_secs")]
    pub timeout: Option<Duration>,
    /// Grace period for the escalating stop.
    #[serde(with = "opt_secs")]
    pub grace_period: Option<Duration>,
    /// Extra CLI arguments. Arguments that would override an SDK-owned flag are stripped or
    /// rejected by each driver.
    pub extra_args: Vec<String>,
}

impl CommonConfig {
    /// The effective grace period.
    pub fn grace(&self) -> Duration {
        self.grace_period.unwrap_or(DEFAULT_GRACE)
    }
}

mod opt_secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.as_secs_f64()).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let v = Option::<f64>::deserialize(d)?;
        match v {
            Some(s) if !(0.0..=1e9).contains(&s) || s.is_nan() => Err(serde::de::Error::custom(
                "duration seconds must be between 0 and 1e9",
            )),
            Some(s) => Ok(Some(Duration::from_secs_f64(s))),
            None => Ok(None),
        }
    }
}
