//! Metered usage for the in-memory store.

use std::collections::BTreeMap;

use crate::StoreResult;
use crate::rules::{MAX_PAGE, micros};
use crate::usage::{UsageFilter, UsageKey, UsageQuery, UsageRecord, UsageRow, UsageTotals, check};

/// Records by run id.
#[derive(Debug, Default)]
pub(super) struct Usage {
    runs: BTreeMap<String, UsageRecord>,
}

impl Usage {
    pub(super) fn put(&mut self, r: &UsageRecord) -> StoreResult<()> {
        check(r)?;
        let stored = UsageRecord {
            started_at: micros(r.started_at),
            ended_at: micros(r.ended_at),
            ..r.clone()
        };
        self.runs.insert(r.run_id.clone(), stored);
        Ok(())
    }

    pub(super) fn query(&self, q: &UsageQuery) -> Vec<UsageRow> {
        let mut groups: BTreeMap<UsageKey, UsageRow> = BTreeMap::new();
        for r in self.runs.values().filter(|r| q.matches(r)) {
            let key = UsageKey {
                tenant: r.tenant.clone(),
                agent: r.agent.clone(),
                thread_key: r.thread_key.clone().unwrap_or_default(),
            };
            let row = groups.entry(key.clone()).or_insert_with(|| UsageRow {
                key,
                totals: UsageTotals::default(),
                first_at: r.ended_at,
                last_at: r.ended_at,
            });
            row.totals.add(r);
            row.first_at = row.first_at.min(r.ended_at);
            row.last_at = row.last_at.max(r.ended_at);
        }
        groups
            .into_values()
            .filter(|row| q.after.as_ref().is_none_or(|a| row.key > *a))
            .take(q.limit.min(MAX_PAGE) as usize)
            .collect()
    }

    pub(super) fn total(&self, f: &UsageFilter) -> UsageTotals {
        let mut t = UsageTotals::default();
        for r in self.runs.values().filter(|r| f.matches(r)) {
            t.add(r);
        }
        t
    }
}
