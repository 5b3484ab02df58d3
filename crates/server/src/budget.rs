//! Budgets that stop runs (`[[budgets]]`): a ceiling on tokens (input + output) and/or estimated cost,
//! per tenant, per agent or per thread, over a calendar period (UTC hour, day, month, or all time).
//!
//! - **Admission.** A new run whose budget is already spent (stored usage of the period plus the live
//!   usage of running runs) is refused with 402 `budget_exceeded`, before anything starts.
//! - **Mid-run.** The run pump feeds every batch of events to the run's meter
//!   ([`super::metering::RunMeter::observe`]); when a budget's usage reaches 80 % the run gets one
//!   `limit.approaching` notice (`data.limit = "budget"`), and when it crosses the ceiling the run is
//!   stopped at that event boundary: its verdict is `limit_exceeded` with `details.code =
//!   "budget_exceeded"` (the reason the spec's closed set has for a limit; the code says which), its CLI
//!   is stopped and reaped like any cancelled run, and its partial result (text, turns, usage) is kept.
//!   Both act on a live execution: a run whose events all reached its pump after it ended (one that
//!   finished at once) gets no notice and is not stopped; its usage still counts at the next admission.
//!
//! Which runs count together: `per = "tenant"` all the tenant's runs (of `agent` only, when the budget
//! names one); `per = "agent"` the tenant's runs of the same agent; `per = "thread"` the runs of the same
//! thread (a budget per thread does not apply to thread-less runs). A budget without `tenant` applies to
//! every tenant, each counted on its own.

use std::collections::BTreeSet;
use std::sync::Arc;

use chrono::{DateTime, Datelike, TimeZone, Timelike, Utc};
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorCode};
use super::metering::{Metering, RunIdentity};
use crate::driver::{JsonMap, Notice, Usage, notice_kind};
use crate::runtime::{FailureReason, Stream};
use crate::store::{ThreadStore, UsageFilter, UsageTotals};

/// Whose runs a budget counts together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetScope {
    /// All of the tenant's runs.
    #[default]
    Tenant,
    /// The tenant's runs of one agent.
    Agent,
    /// The runs of one thread.
    Thread,
}

/// The window a budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetPeriod {
    /// Since the start of the current UTC hour.
    Hour,
    /// Since UTC midnight.
    #[default]
    Day,
    /// Since the first of the month, UTC.
    Month,
    /// All time.
    Total,
}

impl BudgetPeriod {
    /// Where the window that contains `now` starts (`None`: all time).
    pub fn start(self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let day = |d: u32| Utc.with_ymd_and_hms(now.year(), now.month(), d, 0, 0, 0).single();
        match self {
            BudgetPeriod::Hour => day(now.day()).map(|d| d + chrono::Duration::hours(i64::from(now.hour()))),
            BudgetPeriod::Day => day(now.day()),
            BudgetPeriod::Month => day(1),
            BudgetPeriod::Total => None,
        }
    }
}

/// One `[[budgets]]` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetSpec {
    /// Whose runs count together (`tenant`, `agent` or `thread`).
    #[serde(default)]
    pub per: BudgetScope,
    /// Only this tenant (every tenant, each on its own, when absent).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Only runs of this agent (every agent when absent).
    #[serde(default)]
    pub agent: Option<String>,
    /// The window (`hour`, `day`, `month`, `total`; default `day`).
    #[serde(default)]
    pub period: BudgetPeriod,
    /// At most this many tokens (input + output) in the window.
    #[serde(default)]
    pub max_tokens: Option<u64>,
    /// At most this estimated cost in US dollars in the window.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
}

impl BudgetSpec {
    /// Checks the budget has a ceiling and that it is sane.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_tokens.is_none() && self.max_cost_usd.is_none() {
            return Err("a budget needs max_tokens or max_cost_usd".into());
        }
        if let Some(c) = self.max_cost_usd
            && (!c.is_finite() || c < 0.0)
        {
            return Err("max_cost_usd must be a finite, non-negative number".into());
        }
        Ok(())
    }

    /// The runs this budget counts together with `run`, or `None` when it does not apply to `run`.
    fn filter(
        &self,
        tenant: &str,
        agent: &str,
        thread_key: Option<&str>,
        now: DateTime<Utc>,
    ) -> Option<UsageFilter> {
        if self.tenant.as_deref().is_some_and(|t| t != tenant)
            || self.agent.as_deref().is_some_and(|a| a != agent)
        {
            return None;
        }
        let by_agent = self.agent.is_some() || matches!(self.per, BudgetScope::Agent | BudgetScope::Thread);
        let thread = match self.per {
            BudgetScope::Thread => Some(thread_key?.to_owned()),
            _ => None,
        };
        Some(UsageFilter {
            tenant: tenant.to_owned(),
            agent: by_agent.then(|| agent.to_owned()),
            thread_key: thread,
            since: self.period.start(now),
        })
    }

    fn max_cost_micros(&self) -> Option<i64> {
        self.max_cost_usd
            .map(|c| (c * 1_000_000.0).round().min(i64::MAX as f64) as i64)
    }

    /// How full the budget is with `tokens` and `cost_micros` spent: the larger of the two fractions.
    fn fill(&self, tokens: u64, cost_micros: i64) -> f64 {
        let t = self.max_tokens.map_or(0.0, |m| {
            if m == 0 {
                f64::INFINITY
            } else {
                tokens as f64 / m as f64
            }
        });
        let c = self.max_cost_micros().map_or(0.0, |m| {
            if m <= 0 {
                f64::INFINITY
            } else {
                cost_micros as f64 / m as f64
            }
        });
        t.max(c)
    }

    /// A short description for messages: `tenant day budget of 1000 tokens`.
    fn describe(&self) -> String {
        let per = match self.per {
            BudgetScope::Tenant => "tenant",
            BudgetScope::Agent => "agent",
            BudgetScope::Thread => "thread",
        };
        let period = match self.period {
            BudgetPeriod::Hour => "hourly",
            BudgetPeriod::Day => "daily",
            BudgetPeriod::Month => "monthly",
            BudgetPeriod::Total => "total",
        };
        let mut ceilings = Vec::new();
        if let Some(t) = self.max_tokens {
            ceilings.push(format!("{t} tokens"));
        }
        if let Some(c) = self.max_cost_usd {
            ceilings.push(format!("${c}"));
        }
        format!("the {per}'s {period} budget of {}", ceilings.join(" / "))
    }

    fn details(&self, index: usize, tokens: u64, cost_micros: i64) -> JsonMap {
        let mut d = JsonMap::new();
        d.insert("code".into(), "budget_exceeded".into());
        d.insert("budget".into(), index.into());
        d.insert("per".into(), serde_json::to_value(self.per).unwrap_or_default());
        d.insert(
            "period".into(),
            serde_json::to_value(self.period).unwrap_or_default(),
        );
        if let Some(t) = self.max_tokens {
            d.insert("max_tokens".into(), t.into());
        }
        if let Some(c) = self.max_cost_usd {
            d.insert("max_cost_usd".into(), c.into());
        }
        d.insert("tokens".into(), tokens.into());
        d.insert("cost_usd".into(), (cost_micros as f64 / 1_000_000.0).into());
        d
    }
}

/// The share of a budget at which a run is warned.
pub const WARN_AT: f64 = 0.8;

/// The live usage of running runs (other than `except`) that `filter` counts: tokens and cost.
fn live_spend(metering: &Metering, filter: &UsageFilter, except: Option<&str>) -> (u64, i64) {
    let mut tokens: u64 = 0;
    let mut cost: i64 = 0;
    for (id, run) in metering.live_runs() {
        if Some(id.as_str()) == except
            || run.tenant != filter.tenant
            || filter.agent.as_ref().is_some_and(|a| *a != run.agent)
            || filter
                .thread_key
                .as_ref()
                .is_some_and(|k| run.thread_key.as_ref() != Some(k))
        {
            continue;
        }
        tokens = tokens.saturating_add(run.usage.tokens());
        cost =
            cost.saturating_add(super::metering::estimate(metering.prices(), &run.agent, "", &run.usage).0);
    }
    (tokens, cost)
}

/// The stored usage `filter` counts; a store that cannot say counts nothing (and is logged).
async fn stored_spend(store: &Arc<dyn ThreadStore>, filter: &UsageFilter) -> UsageTotals {
    match store.usage_total(filter).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "could not read the usage a budget counts; counting none");
            UsageTotals::default()
        }
    }
}

/// 402 `budget_exceeded` when one of the budgets that apply to a new run is already spent.
pub(super) async fn admit(
    metering: &Metering,
    store: &Arc<dyn ThreadStore>,
    tenant: &str,
    agent: &str,
    thread_key: Option<&str>,
) -> Result<(), ApiError> {
    let now = Utc::now();
    for b in metering.budgets() {
        let Some(filter) = b.filter(tenant, agent, thread_key, now) else {
            continue;
        };
        let stored = stored_spend(store, &filter).await;
        let (live_tokens, live_cost) = live_spend(metering, &filter, None);
        let tokens = stored
            .input_tokens
            .saturating_add(stored.output_tokens)
            .saturating_add(live_tokens);
        let cost = stored.cost_micros.saturating_add(live_cost);
        if b.fill(tokens, cost) >= 1.0 {
            return Err(ApiError::new(
                ErrorCode::BudgetExceeded,
                format!(
                    "{} is spent ({tokens} tokens, ${:.6} so far): no new run fits",
                    b.describe(),
                    cost as f64 / 1_000_000.0
                ),
            ));
        }
    }
    Ok(())
}

/// One budget as a run sees it: what was spent before (stored, and other runs' live usage).
#[derive(Debug)]
struct Applied {
    index: usize,
    spec: BudgetSpec,
    filter: UsageFilter,
    before_tokens: u64,
    before_cost: i64,
    warned: bool,
}

/// The budgets that apply to one run.
#[derive(Debug, Default)]
pub(super) struct RunBudgets {
    applied: Vec<Applied>,
    stopped: bool,
}

impl RunBudgets {
    /// The budgets that apply to `run`, with what was spent before it.
    pub(super) async fn load(metering: &Metering, store: &Arc<dyn ThreadStore>, run: &RunIdentity) -> Self {
        let now = Utc::now();
        let mut applied = Vec::new();
        for (index, spec) in metering.budgets().iter().enumerate() {
            let Some(filter) = spec.filter(&run.tenant, &run.agent, run.thread_key.as_deref(), now) else {
                continue;
            };
            applied.push(Applied {
                index,
                spec: spec.clone(),
                filter,
                before_tokens: 0,
                before_cost: 0,
                warned: false,
            });
        }
        let mut budgets = RunBudgets {
            applied,
            stopped: false,
        };
        budgets.refresh(metering, store, run).await;
        budgets
    }

    /// Counts what other runs spent again (the stored usage and the others' live usage).
    pub(super) async fn refresh(
        &mut self,
        metering: &Metering,
        store: &Arc<dyn ThreadStore>,
        run: &RunIdentity,
    ) {
        for a in &mut self.applied {
            let mut filter = a.filter.clone();
            // The window may have moved on since the run started.
            filter.since = a.spec.period.start(Utc::now());
            let stored = stored_spend(store, &filter).await;
            let (live_tokens, live_cost) = live_spend(metering, &filter, Some(&run.run_id));
            a.before_tokens = stored
                .input_tokens
                .saturating_add(stored.output_tokens)
                .saturating_add(live_tokens);
            a.before_cost = stored.cost_micros.saturating_add(live_cost);
        }
    }

    /// Applies the budgets to the run's usage so far: a `limit.approaching` notice at [`WARN_AT`], the
    /// run stopped once one is crossed.
    pub(super) fn check(
        &mut self,
        _metering: &Metering,
        run: &RunIdentity,
        stream: &Stream,
        usage: &Usage,
        cost: i64,
    ) {
        if self.stopped {
            return;
        }
        let mine = usage.tokens();
        let mut warned = BTreeSet::new();
        for a in &mut self.applied {
            let tokens = a.before_tokens.saturating_add(mine);
            let spent = a.before_cost.saturating_add(cost);
            let fill = a.spec.fill(tokens, spent);
            if fill > 1.0 {
                let message = format!("the run crossed {} ({tokens} tokens)", a.spec.describe());
                tracing::warn!(run_id = %run.run_id, budget = a.index, tokens, "{message}; stopping the run");
                stream.fail(
                    FailureReason::LimitExceeded,
                    message,
                    a.spec.details(a.index, tokens, spent),
                );
                self.stopped = true;
                return;
            }
            if fill >= WARN_AT && !a.warned {
                a.warned = true;
                warned.insert(a.index);
                let mut n = Notice::new(
                    notice_kind::LIMIT_APPROACHING,
                    format!("{:.0} % of {} is used", fill * 100.0, a.spec.describe()),
                )
                .with_meta("code", "budget_approaching");
                n.data = a.spec.details(a.index, tokens, spent);
                n.data.insert("code".into(), "budget_approaching".into());
                n.data.insert("limit".into(), "budget".into());
                stream.notice(n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(per: BudgetScope, agent: Option<&str>) -> BudgetSpec {
        BudgetSpec {
            per,
            tenant: None,
            agent: agent.map(str::to_owned),
            period: BudgetPeriod::Day,
            max_tokens: Some(100),
            max_cost_usd: None,
        }
    }

    #[test]
    fn periods_start_at_calendar_boundaries_in_utc() {
        let now = Utc.with_ymd_and_hms(2025, 3, 14, 15, 9, 26).unwrap();
        assert_eq!(
            BudgetPeriod::Hour.start(now),
            Utc.with_ymd_and_hms(2025, 3, 14, 15, 0, 0).single()
        );
        assert_eq!(
            BudgetPeriod::Day.start(now),
            Utc.with_ymd_and_hms(2025, 3, 14, 0, 0, 0).single()
        );
        assert_eq!(
            BudgetPeriod::Month.start(now),
            Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0).single()
        );
        assert_eq!(BudgetPeriod::Total.start(now), None);
    }

    #[test]
    fn a_budget_counts_the_runs_its_scope_names() {
        let now = Utc::now();
        let f = spec(BudgetScope::Tenant, None)
            .filter("acme", "claude", Some("t"), now)
            .unwrap();
        assert_eq!((f.agent, f.thread_key), (None, None));
        let f = spec(BudgetScope::Agent, None)
            .filter("acme", "claude", Some("t"), now)
            .unwrap();
        assert_eq!((f.agent.as_deref(), f.thread_key), (Some("claude"), None));
        let f = spec(BudgetScope::Thread, None)
            .filter("acme", "claude", Some("t"), now)
            .unwrap();
        assert_eq!(f.thread_key.as_deref(), Some("t"));
        assert!(
            spec(BudgetScope::Thread, None)
                .filter("acme", "claude", None, now)
                .is_none()
        );
        assert!(
            spec(BudgetScope::Tenant, Some("codex"))
                .filter("acme", "claude", None, now)
                .is_none()
        );
        let mut other = spec(BudgetScope::Tenant, None);
        other.tenant = Some("globex".into());
        assert!(other.filter("acme", "claude", None, now).is_none());
    }

    #[test]
    fn fill_is_the_fuller_of_tokens_and_cost_and_a_budget_needs_a_ceiling() {
        let mut b = spec(BudgetScope::Tenant, None);
        b.max_cost_usd = Some(1.0);
        assert!((b.fill(50, 900_000) - 0.9).abs() < 1e-9);
        assert!((b.fill(80, 0) - 0.8).abs() < 1e-9);
        b.max_tokens = None;
        b.max_cost_usd = None;
        assert!(b.validate().is_err());
    }
}
