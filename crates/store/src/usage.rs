//! Metered usage of runs: one [`UsageRecord`] per finished run (tokens, estimated cost, CLI wall and CPU
//! time), aggregated per tenant, agent and thread over a time range ([`UsageQuery`] → [`UsageRow`]) and
//! summed for budgets ([`UsageFilter`] → [`UsageTotals`]).
//!
//! Usage is accounting data: it is stored whatever a run's exposure policy keeps of its events, and the
//! event-log retention does not delete it.

use chrono::{DateTime, Utc};

/// The metered usage of one finished run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsageRecord {
    /// The run id (one record per run; a second write replaces the first).
    pub run_id: String,
    /// The tenant.
    pub tenant: String,
    /// The agent's name.
    pub agent: String,
    /// The thread key, for a run on a thread.
    pub thread_key: Option<String>,
    /// The effective model (empty when unknown).
    pub model: String,
    /// The run's final state (`succeeded`, `failed`, …).
    pub state: String,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens served from a cache.
    pub cached_input_tokens: u64,
    /// Estimated cost in millionths of a US dollar.
    pub cost_micros: i64,
    /// The run's wall time, in milliseconds.
    pub wall_ms: u64,
    /// The CPU time of the run's CLI processes, in milliseconds.
    pub cpu_ms: u64,
    /// When the run started.
    pub started_at: DateTime<Utc>,
    /// When it ended (the time range of queries is on this).
    pub ended_at: DateTime<Utc>,
}

/// The key of one aggregate row, and the cursor of the next page.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct UsageKey {
    /// The tenant.
    pub tenant: String,
    /// The agent.
    pub agent: String,
    /// The thread key; empty for runs without a thread.
    pub thread_key: String,
}

/// Which usage to aggregate: rows per (tenant, agent, thread) ordered by that key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsageQuery {
    /// Only this tenant (`None`: every tenant, the operator's view).
    pub tenant: Option<String>,
    /// Only this agent.
    pub agent: Option<String>,
    /// Only this thread.
    pub thread_key: Option<String>,
    /// Runs that ended at or after this.
    pub from: Option<DateTime<Utc>>,
    /// Runs that ended before this.
    pub to: Option<DateTime<Utc>>,
    /// Rows after this key (the previous page's last).
    pub after: Option<UsageKey>,
    /// At most this many rows (clamped to [`MAX_PAGE`](super::MAX_PAGE)).
    pub limit: u32,
}

/// Sums of usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct UsageTotals {
    /// Runs counted.
    pub runs: u64,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cached input tokens.
    pub cached_input_tokens: u64,
    /// Estimated cost in millionths of a US dollar.
    pub cost_micros: i64,
    /// Wall time in milliseconds.
    pub wall_ms: u64,
    /// CPU time in milliseconds.
    pub cpu_ms: u64,
}

impl UsageTotals {
    /// Adds one run's record.
    pub fn add(&mut self, r: &UsageRecord) {
        self.runs += 1;
        self.input_tokens += r.input_tokens;
        self.output_tokens += r.output_tokens;
        self.cached_input_tokens += r.cached_input_tokens;
        self.cost_micros += r.cost_micros;
        self.wall_ms += r.wall_ms;
        self.cpu_ms += r.cpu_ms;
    }
}

/// One aggregate row of a [`UsageQuery`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageRow {
    /// Tenant, agent and thread (empty thread: runs without one).
    pub key: UsageKey,
    /// The sums.
    pub totals: UsageTotals,
    /// The earliest end in the group.
    pub first_at: DateTime<Utc>,
    /// The latest end in the group.
    pub last_at: DateTime<Utc>,
}

/// Which runs a budget counts: one tenant's, optionally of one agent or one thread, since a time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UsageFilter {
    /// The tenant.
    pub tenant: String,
    /// Only this agent.
    pub agent: Option<String>,
    /// Only this thread (with `agent`, that agent's thread).
    pub thread_key: Option<String>,
    /// Runs that ended at or after this (`None`: all time).
    pub since: Option<DateTime<Utc>>,
}

impl UsageFilter {
    /// True when `r` is one of the runs the filter counts.
    pub fn matches(&self, r: &UsageRecord) -> bool {
        r.tenant == self.tenant
            && self.agent.as_ref().is_none_or(|a| *a == r.agent)
            && self
                .thread_key
                .as_ref()
                .is_none_or(|k| r.thread_key.as_ref() == Some(k))
            && self.since.is_none_or(|s| r.ended_at >= s)
    }
}

impl UsageQuery {
    /// True when `r` is in the query's range and filters (the page cursor aside).
    pub fn matches(&self, r: &UsageRecord) -> bool {
        self.tenant.as_ref().is_none_or(|t| *t == r.tenant)
            && self.agent.as_ref().is_none_or(|a| *a == r.agent)
            && self
                .thread_key
                .as_ref()
                .is_none_or(|k| r.thread_key.as_ref() == Some(k))
            && self.from.is_none_or(|f| r.ended_at >= f)
            && self.to.is_none_or(|t| r.ended_at < t)
    }
}

/// Checks the fields every backend requires of a record.
pub(crate) fn check(r: &UsageRecord) -> super::StoreResult<()> {
    super::rules::require("run_id", &r.run_id)?;
    super::rules::require("tenant", &r.tenant)?;
    super::rules::require("agent", &r.agent)?;
    for (field, v) in [
        ("input_tokens", r.input_tokens),
        ("output_tokens", r.output_tokens),
        ("cached_input_tokens", r.cached_input_tokens),
        ("wall_ms", r.wall_ms),
        ("cpu_ms", r.cpu_ms),
    ] {
        if i64::try_from(v).is_err() {
            return Err(super::StoreError::invalid(format!("{field} is out of range")));
        }
    }
    Ok(())
}
