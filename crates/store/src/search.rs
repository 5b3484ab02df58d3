//! Run listing: [`RunSearch`] filters a store's runs by tenant, agent, thread key, state and creation
//! time, newest first
//! (by `created_at`, then run id, both descending), paged by a keyset position ([`RunPosition`]) rather
//! than an offset, so a page is stable while new runs arrive.

use chrono::{DateTime, Utc};

use super::types::{RunRecord, RunState};

/// Where a page of [`RunSearch`] stops: the last run of the previous page. The next page holds runs
/// strictly older in `(created_at, run_id)` order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPosition {
    /// The previous page's last `created_at`.
    pub created_at: DateTime<Utc>,
    /// The previous page's last run id.
    pub run_id: String,
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RunSearch {
    /// Only this tenant (`None`: every tenant, the operator's view).
    pub tenant: Option<String>,
    /// Only runs of this agent.
    pub agent: Option<String>,
    /// Only runs on this thread key.
    pub thread_key: Option<String>,
    /// Only runs in this state.
    pub state: Option<RunState>,
    /// Only runs created at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only runs created before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only runs older than this position (the previous page's last run).
    pub before: Option<RunPosition>,
    /// At most this many runs (clamped to [`MAX_PAGE`](super::MAX_PAGE)).
    pub limit: u32,
}

impl RunSearch {
    /// True when `run` passes the filters and lies before the position.
    pub fn matches(&self, run: &RunRecord) -> bool {
        self.tenant.as_ref().is_none_or(|t| *t == run.tenant)
            && self.agent.as_ref().is_none_or(|a| *a == run.agent)
            && self
                .thread_key
                .as_ref()
                .is_none_or(|k| run.thread_key.as_ref() == Some(k))
            && self.state.is_none_or(|s| s == run.state)
            && self.since.is_none_or(|t| run.created_at >= t)
            && self.until.is_none_or(|t| run.created_at < t)
            && self
                .before
                .as_ref()
                .is_none_or(|p| (run.created_at, run.run_id.as_str()) < (p.created_at, p.run_id.as_str()))
    }

    /// The position just after `run` in this order (the cursor of the next page).
    pub fn position_of(run: &RunRecord) -> RunPosition {
        RunPosition {
            created_at: run.created_at,
            run_id: run.run_id.clone(),
        }
    }
}
