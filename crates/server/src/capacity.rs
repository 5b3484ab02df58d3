//! Capacity of one service process: the `[processes]` configuration and its metrics.
//!
//! - `max_kept`: idle CLI processes kept between a thread's runs, across every agent (the process-wide
//!   [`KeptLimit`]); past it the least recently used idle one is stopped and its thread resumes in a
//!   fresh process on its next run. Default: one per GiB of `MemAvailable`, 1 to 64 (8 when unknown).
//! - `max_active`: runs admitted at once across tenants (running, parked, and each open Standby); past
//!   it a new run is answered `503 capacity_exhausted` with `Retry-After: 5` (after the tenant's own
//!   `429`s) and `/readyz` answers 503. Default: one per 256 MiB of `MemAvailable` less `max_kept`, at
//!   least 1 (16 when unknown).

use serde::{Deserialize, Serialize};

use crate::driver::process::{KeptLimit, memory};

/// The `[processes]` table: the caps of this process (unset: derived from `MemAvailable`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Processes {
    /// Idle CLI processes kept between runs, across every agent (at least 1).
    #[serde(default)]
    pub max_kept: Option<usize>,
    /// Runs admitted at once, across tenants (at least 1).
    #[serde(default)]
    pub max_active: Option<usize>,
}

/// The largest `max_kept` or `max_active` accepted.
pub const MAX_PROCESSES: usize = 100_000;

impl Processes {
    /// Refuses `0` and values above [`MAX_PROCESSES`]; the error names the key.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        for (field, v) in [
            ("processes.max_kept", self.max_kept),
            ("processes.max_active", self.max_active),
        ] {
            match v {
                Some(0) => return Err((field, "must be at least 1".into())),
                Some(n) if n > MAX_PROCESSES => {
                    return Err((field, format!("must be at most {MAX_PROCESSES}, got {n}")));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Applies `max_kept` to the process-wide [`KeptLimit`] (when set) and returns the resolved
    /// `(max_kept, max_active)`.
    pub fn resolve(&self) -> (usize, usize) {
        let limit = KeptLimit::global();
        if let Some(n) = self.max_kept {
            limit.set_max(n);
        }
        let kept = limit.max();
        let active = self
            .max_active
            .unwrap_or_else(|| memory::default_max_active(kept));
        (kept, active)
    }
}

/// The capacity gauges and counters of `/metrics`.
pub fn render(active: usize, max_active: usize, refused: u64) -> String {
    let kept = KeptLimit::global();
    format!(
        "# HELP agent_adaptor_kept_processes Idle CLI processes kept between runs.\n\
         # TYPE agent_adaptor_kept_processes gauge\nagent_adaptor_kept_processes {}\n\
         # HELP agent_adaptor_kept_processes_max The cap on kept processes ([processes] max_kept).\n\
         # TYPE agent_adaptor_kept_processes_max gauge\nagent_adaptor_kept_processes_max {}\n\
         # HELP agent_adaptor_kept_evictions_total Kept processes stopped to stay under the cap.\n\
         # TYPE agent_adaptor_kept_evictions_total counter\nagent_adaptor_kept_evictions_total {}\n\
         # HELP agent_adaptor_active_runs Runs admitted now (running, parked, open Standbys).\n\
         # TYPE agent_adaptor_active_runs gauge\nagent_adaptor_active_runs {active}\n\
         # HELP agent_adaptor_max_active_runs The admission limit ([processes] max_active).\n\
         # TYPE agent_adaptor_max_active_runs gauge\nagent_adaptor_max_active_runs {max_active}\n\
         # HELP agent_adaptor_capacity_refused_total Runs refused with 503 capacity_exhausted.\n\
         # TYPE agent_adaptor_capacity_refused_total counter\nagent_adaptor_capacity_refused_total {refused}\n",
        kept.kept(),
        kept.max(),
        kept.evictions(),
    )
}
