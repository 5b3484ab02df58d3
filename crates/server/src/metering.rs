//! Metering: every run's usage — input, output and cached tokens, an estimated cost, the CLI's wall and
//! CPU time — measured whatever the agent's exposure policy, shown in the run's `result.usage` and
//! stored per run (`ThreadStore::put_usage`) for `GET /v1/usage` ([`super::usage`]) and for budgets
//! ([`super::budget`]).
//!
//! The cost is estimated from the operator's price table (`[[prices]]`: per agent and model, in US
//! dollars per million tokens; the first matching row wins); without a matching row it is the cost the
//! CLI itself reported (Claude Code and CodeBuddy report one), else zero. `cost_source` says which.
//!
//! The run pump calls [`RunMeter::observe`] on every batch of events (the live usage: each finished
//! turn's `TurnEnd` usage plus the turn in progress from `usage` notices) and [`RunMeter::finish`] once
//! at the run's end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::budget::{BudgetSpec, RunBudgets};
use super::error::ApiError;
use crate::driver::Usage;
use crate::runtime::{Event, Payload, RunOutcome, Stream};
use crate::store::{RunState, ThreadStore, UsageRecord};

/// One `[[prices]]` row: what an agent's model costs, in US dollars per million tokens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// The agent it applies to (every agent when absent).
    #[serde(default)]
    pub agent: Option<String>,
    /// The model: exact, or a prefix ending in `*` (`claude-sonnet-*`); every model when absent.
    #[serde(default)]
    pub model: Option<String>,
    /// Dollars per million input tokens.
    pub input_per_mtok: f64,
    /// Dollars per million output tokens.
    pub output_per_mtok: f64,
    /// Dollars per million cached input tokens (the input price when absent).
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
}

impl Price {
    fn matches(&self, agent: &str, model: &str) -> bool {
        let agent_ok = self.agent.as_deref().is_none_or(|a| a == agent);
        let model_ok = match self.model.as_deref() {
            None | Some("*") => true,
            Some(m) => match m.strip_suffix('*') {
                Some(prefix) => model.starts_with(prefix),
                None => m == model,
            },
        };
        agent_ok && model_ok
    }

    /// Checks the prices are finite and not negative.
    pub fn validate(&self) -> Result<(), String> {
        let prices = [
            ("input_per_mtok", Some(self.input_per_mtok)),
            ("output_per_mtok", Some(self.output_per_mtok)),
            ("cached_input_per_mtok", self.cached_input_per_mtok),
        ];
        for (name, v) in prices {
            if let Some(v) = v
                && (!v.is_finite() || v < 0.0)
            {
                return Err(format!("{name} must be a finite, non-negative number"));
            }
        }
        Ok(())
    }

    /// The cost of `u` in millionths of a dollar (a dollar per million tokens is a micro-dollar per
    /// token).
    fn cost_micros(&self, u: &Usage) -> i64 {
        let cached = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        let micros = u.input_tokens as f64 * self.input_per_mtok
            + u.output_tokens as f64 * self.output_per_mtok
            + u.cached_input_tokens as f64 * cached;
        micros.round().min(i64::MAX as f64) as i64
    }
}

/// Where a run's cost estimate comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostSource {
    /// A `[[prices]]` row.
    PriceTable,
    /// The CLI's own report.
    Reported,
    /// Neither: the cost is zero.
    None,
}

impl CostSource {
    fn as_str(self) -> &'static str {
        match self {
            CostSource::PriceTable => "price_table",
            CostSource::Reported => "reported",
            CostSource::None => "none",
        }
    }
}

/// The estimated cost of `u` for `agent`'s `model`, in micro-dollars, and where it came from.
pub fn estimate(prices: &[Price], agent: &str, model: &str, u: &Usage) -> (i64, CostSource) {
    if let Some(p) = prices.iter().find(|p| p.matches(agent, model)) {
        return (p.cost_micros(u), CostSource::PriceTable);
    }
    if u.estimated_cost_milli > 0 {
        return (u.estimated_cost_milli.saturating_mul(1000), CostSource::Reported);
    }
    (0, CostSource::None)
}

/// The service's metering: prices, budgets and the live usage of this process's runs.
#[derive(Debug, Default)]
pub struct Metering {
    prices: Vec<Price>,
    budgets: Vec<BudgetSpec>,
    /// Live usage by run id, with the run's tenant, agent and thread (budgets count running runs too).
    live: Mutex<HashMap<String, LiveRun>>,
}

/// A running run's identity and usage so far.
#[derive(Debug, Clone)]
pub(super) struct LiveRun {
    pub tenant: String,
    pub agent: String,
    pub thread_key: Option<String>,
    pub usage: Usage,
}

impl Metering {
    /// Metering with a price table and budgets.
    pub fn new(prices: Vec<Price>, budgets: Vec<BudgetSpec>) -> Self {
        Metering {
            prices,
            budgets,
            live: Mutex::default(),
        }
    }

    /// The price table.
    pub fn prices(&self) -> &[Price] {
        &self.prices
    }

    /// The budgets.
    pub fn budgets(&self) -> &[BudgetSpec] {
        &self.budgets
    }

    pub(super) fn live_runs(&self) -> Vec<(String, LiveRun)> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn set_live(&self, run_id: &str, run: Option<LiveRun>) {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        match run {
            Some(r) => {
                live.insert(run_id.to_owned(), r);
            }
            None => {
                live.remove(run_id);
            }
        }
    }

    /// Refuses a new run that cannot fit in one of its budgets (402 `budget_exceeded`).
    pub async fn admit(
        &self,
        store: &Arc<dyn ThreadStore>,
        tenant: &str,
        agent: &str,
        thread_key: Option<&str>,
    ) -> Result<(), ApiError> {
        super::budget::admit(self, store, tenant, agent, thread_key).await
    }

    /// The meter of one run that was just admitted.
    pub async fn start(self: &Arc<Self>, store: &Arc<dyn ThreadStore>, run: RunIdentity) -> RunMeter {
        let budgets = RunBudgets::load(self, store, &run).await;
        RunMeter {
            metering: self.clone(),
            store: store.clone(),
            run,
            completed: None,
            in_turn: None,
            budgets,
        }
    }
}

/// Who a run is: its id, tenant, agent, thread and start.
#[derive(Debug, Clone)]
pub struct RunIdentity {
    /// The run id.
    pub run_id: String,
    /// The tenant.
    pub tenant: String,
    /// The agent's name.
    pub agent: String,
    /// The thread key, for a run on a thread.
    pub thread_key: Option<String>,
    /// When it started.
    pub started_at: DateTime<Utc>,
}

/// The meter of one run: its live usage and budgets, and its record at the end.
pub struct RunMeter {
    metering: Arc<Metering>,
    store: Arc<dyn ThreadStore>,
    run: RunIdentity,
    /// The usage of the turns that ended.
    completed: Option<Usage>,
    /// The usage so far of the turn in progress (`usage` notices).
    in_turn: Option<Usage>,
    budgets: RunBudgets,
}

impl std::fmt::Debug for RunMeter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunMeter")
            .field("run_id", &self.run.run_id)
            .finish_non_exhaustive()
    }
}

impl RunMeter {
    /// The run's usage so far.
    pub fn live_usage(&self) -> Option<Usage> {
        Usage::sum(self.completed, self.in_turn)
    }

    /// The cost of `u` so far (the model is not known before the run ends: agent-wide prices apply).
    pub(super) fn live_cost(&self, u: &Usage) -> i64 {
        estimate(&self.metering.prices, &self.run.agent, "", u).0
    }

    /// Folds a batch of the run's events into its live usage, and applies its budgets: a notice at
    /// 80 % of one, and the run stopped (`budget_exceeded`) once it crosses one.
    pub async fn observe(&mut self, stream: &Stream, batch: &[Event]) {
        let mut changed = false;
        let mut turn_ended = false;
        for e in batch {
            match &e.payload {
                Payload::TurnEnd(t) => {
                    let turn = t.result.as_ref().and_then(|r| r.usage);
                    // The turn's own report supersedes what it streamed.
                    let turn = turn.or(self.in_turn.take());
                    self.completed = Usage::sum(self.completed, turn);
                    self.in_turn = None;
                    changed = true;
                    turn_ended = true;
                }
                Payload::Notice(n) => {
                    if let Some(u) = Usage::from_progress_notice(n) {
                        self.in_turn = Some(u);
                        changed = true;
                    }
                }
                _ => {}
            }
        }
        if !changed {
            return;
        }
        let usage = self.live_usage().unwrap_or_default();
        self.metering.set_live(
            &self.run.run_id,
            Some(LiveRun {
                tenant: self.run.tenant.clone(),
                agent: self.run.agent.clone(),
                thread_key: self.run.thread_key.clone(),
                usage,
            }),
        );
        if turn_ended {
            // Other runs may have ended meanwhile: count them from the store again.
            self.budgets.refresh(&self.metering, &self.store, &self.run).await;
        }
        let cost = self.live_cost(&usage);
        self.budgets
            .check(&self.metering, &self.run, stream, &usage, cost);
    }

    /// Records the run's usage at its end and returns its result with `usage` added (a failed run's
    /// result is its partial result: what it answered, its turns and its usage).
    pub async fn finish(
        &mut self,
        stream: &Stream,
        outcome: &RunOutcome,
        state: RunState,
        result: Option<Value>,
    ) -> Value {
        let ended_at = Utc::now();
        let partial = match outcome {
            Ok(r) => Some(r.as_ref()),
            Err(e) => e.as_run().map(|r| r.result.as_ref()),
        };
        // What the run reported at its end, else what it streamed before it was stopped.
        let reported = partial.and_then(|r| r.usage);
        let usage = match (reported, self.live_usage()) {
            (Some(r), Some(l)) if l.tokens() > r.tokens() => l,
            (Some(r), _) => r,
            (None, l) => l.unwrap_or_default(),
        };
        let observed = reported.is_some() || self.live_usage().is_some();
        let model = partial.map(|r| r.model.clone()).unwrap_or_default();
        let (cost_micros, source) = estimate(&self.metering.prices, &self.run.agent, &model, &usage);
        let wall = (ended_at - self.run.started_at).to_std().unwrap_or_default();
        let cpu = stream.cpu_time();
        let record = UsageRecord {
            run_id: self.run.run_id.clone(),
            tenant: self.run.tenant.clone(),
            agent: self.run.agent.clone(),
            thread_key: self.run.thread_key.clone(),
            model: model.clone(),
            state: state_name(state),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            cost_micros,
            wall_ms: u64::try_from(wall.as_millis()).unwrap_or(u64::MAX),
            cpu_ms: u64::try_from(cpu.as_millis()).unwrap_or(u64::MAX),
            started_at: self.run.started_at,
            ended_at,
        };
        if let Err(e) = self.store.put_usage(&record).await {
            tracing::warn!(run_id = %self.run.run_id, error = %e, "could not record the run's usage");
        }
        self.metering.set_live(&self.run.run_id, None);
        let mut result = result.unwrap_or_else(|| match partial {
            Some(r) => json!({ "text": r.text, "turns": r.turns, "summary": r.summary }),
            None => json!({}),
        });
        result["usage"] = json!({
            "observed": observed,
            "model": model,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cached_input_tokens": usage.cached_input_tokens,
            "cost_usd": cost_micros as f64 / 1_000_000.0,
            "cost_source": source.as_str(),
            "wall_seconds": wall.as_secs_f64(),
            "cpu_seconds": cpu.as_secs_f64(),
        });
        result
    }
}

/// The wire name of a run state (`succeeded`, …).
fn state_name(state: RunState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

impl Drop for RunMeter {
    fn drop(&mut self) {
        // A pump that ended without `finish` (it panicked) leaves no live usage behind.
        self.metering.set_live(&self.run.run_id, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(agent: Option<&str>, model: Option<&str>, input: f64) -> Price {
        Price {
            agent: agent.map(str::to_owned),
            model: model.map(str::to_owned),
            input_per_mtok: input,
            output_per_mtok: input * 5.0,
            cached_input_per_mtok: None,
        }
    }

    #[test]
    fn the_first_matching_price_wins_then_the_reported_cost_then_zero() {
        let prices = [
            price(Some("claude"), Some("claude-sonnet-*"), 3.0),
            price(Some("claude"), None, 15.0),
        ];
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cached_input_tokens: 10,
            estimated_cost_milli: 7,
        };
        // 1M in at $3 + 100k out at $15 + 10 cached at $3 per million.
        assert_eq!(
            estimate(&prices, "claude", "claude-sonnet-4-5", &u),
            (3_000_000 + 1_500_000 + 30, CostSource::PriceTable)
        );
        assert_eq!(
            estimate(&prices, "claude", "claude-opus-4", &u).0,
            15_000_000 + 7_500_000 + 150
        );
        assert_eq!(
            estimate(&prices, "codex", "gpt-5", &u),
            (7_000, CostSource::Reported)
        );
        let unreported = Usage {
            estimated_cost_milli: 0,
            ..u
        };
        assert_eq!(
            estimate(&prices, "codex", "gpt-5", &unreported),
            (0, CostSource::None)
        );
    }

    #[test]
    fn prices_must_be_finite_and_not_negative() {
        assert!(price(None, None, 1.0).validate().is_ok());
        assert!(price(None, None, -1.0).validate().is_err());
        assert!(price(None, None, f64::NAN).validate().is_err());
    }
}
