//! Runs and pending approvals for the in-memory store.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::rules::{self, micros};
use crate::{Approval, ApprovalState, Page, RunRecord, RunState, StoreError, StoreResult};

/// Runs by id and approvals by `(tenant, request id)`.
#[derive(Debug, Default)]
pub(super) struct Service {
    runs: BTreeMap<String, RunRecord>,
    approvals: BTreeMap<(String, String), Approval>,
}

impl Service {
    pub(super) fn put_run(&mut self, run: &RunRecord) -> StoreResult<()> {
        rules::require("run id", &run.run_id)?;
        rules::require("tenant", &run.tenant)?;
        if self.runs.contains_key(&run.run_id) {
            return Err(StoreError::AlreadyExists {
                key: run.run_id.clone(),
            });
        }
        let stored = RunRecord {
            created_at: micros(run.created_at),
            updated_at: rules::now(),
            ..run.clone()
        };
        self.runs.insert(run.run_id.clone(), stored);
        Ok(())
    }

    pub(super) fn update_run_state(
        &mut self,
        run_id: &str,
        state: RunState,
        result: Option<Value>,
        error: Option<Value>,
    ) -> StoreResult<RunRecord> {
        let run = self.runs.get_mut(run_id).ok_or(StoreError::NotFound)?;
        rules::check_transition(run_id, run.state, state)?;
        run.state = state;
        run.result = result;
        run.error = error;
        run.updated_at = rules::now();
        Ok(run.clone())
    }

    pub(super) fn get_run(&self, tenant: &str, run_id: &str) -> Option<RunRecord> {
        self.runs.get(run_id).filter(|run| run.tenant == tenant).cloned()
    }

    pub(super) fn list_runs(&self, tenant: &str, thread_key: Option<&str>, page: &Page) -> Vec<RunRecord> {
        let from = page
            .after
            .clone()
            .map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        self.runs
            .range((from, std::ops::Bound::Unbounded))
            .map(|(_, run)| run)
            .filter(|run| {
                run.tenant == tenant && thread_key.is_none_or(|key| run.thread_key.as_deref() == Some(key))
            })
            .take(rules::limit_usize(page))
            .cloned()
            .collect()
    }

    /// Newest first by `(created_at, run_id)`.
    pub(super) fn search_runs(&self, search: &crate::RunSearch) -> Vec<RunRecord> {
        let mut found: Vec<&RunRecord> = self.runs.values().filter(|run| search.matches(run)).collect();
        found.sort_by(|a, b| (b.created_at, &b.run_id).cmp(&(a.created_at, &a.run_id)));
        found
            .into_iter()
            .take(search.limit.min(rules::MAX_PAGE) as usize)
            .cloned()
            .collect()
    }

    pub(super) fn mark_interrupted(&mut self, owner: &str) -> u64 {
        let now = rules::now();
        let mut changed = 0;
        for run in self
            .runs
            .values_mut()
            .filter(|run| run.owner == owner && run.state.is_live())
        {
            run.state = RunState::Interrupted;
            run.updated_at = now;
            changed += 1;
        }
        changed
    }

    /// The unfinished runs of every owner but `me` (and of `me` when `starting`): one process, one node.
    pub(super) fn orphaned_runs(&self, me: &str, starting: bool, limit: u32) -> Vec<RunRecord> {
        self.runs
            .values()
            .filter(|run| run.state.is_live() && (starting || run.owner != me))
            .take(limit.min(rules::MAX_PAGE) as usize)
            .cloned()
            .collect()
    }

    /// Pending approvals of the run → expired, with `reason` as their decision.
    pub(super) fn abandon_approvals(&mut self, tenant: &str, run_id: &str, reason: &Value) -> u64 {
        let mut ended = 0;
        for approval in self.approvals.values_mut() {
            if approval.tenant == tenant
                && approval.run_id == run_id
                && approval.state == ApprovalState::Pending
            {
                approval.state = ApprovalState::Expired;
                approval.decision = Some(reason.clone());
                ended += 1;
            }
        }
        ended
    }

    pub(super) fn create_approval(&mut self, approval: &Approval) -> StoreResult<()> {
        rules::require("tenant", &approval.tenant)?;
        rules::require("request id", &approval.request_id)?;
        if approval.state != ApprovalState::Pending || approval.decision.is_some() {
            return Err(StoreError::invalid(
                "a new approval must be pending, without a decision",
            ));
        }
        let id = (approval.tenant.clone(), approval.request_id.clone());
        if self.approvals.contains_key(&id) {
            return Err(StoreError::AlreadyExists {
                key: approval.request_id.clone(),
            });
        }
        let stored = Approval {
            created_at: micros(approval.created_at),
            deadline: micros(approval.deadline),
            ..approval.clone()
        };
        self.approvals.insert(id, stored);
        Ok(())
    }

    pub(super) fn resolve_approval(
        &mut self,
        tenant: &str,
        request_id: &str,
        decision: Value,
    ) -> StoreResult<Approval> {
        let approval = self
            .approvals
            .get_mut(&(tenant.to_owned(), request_id.to_owned()))
            .ok_or(StoreError::NotFound)?;
        match approval.state {
            ApprovalState::Resolved => Err(StoreError::AlreadyResolved {
                request_id: request_id.to_owned(),
            }),
            ApprovalState::Expired => Err(StoreError::Expired {
                request_id: request_id.to_owned(),
            }),
            ApprovalState::Pending if approval.deadline <= rules::now() => {
                approval.state = ApprovalState::Expired;
                Err(StoreError::Expired {
                    request_id: request_id.to_owned(),
                })
            }
            ApprovalState::Pending => {
                approval.state = ApprovalState::Resolved;
                approval.decision = Some(decision);
                Ok(approval.clone())
            }
        }
    }

    pub(super) fn expire_approvals(&mut self, now: DateTime<Utc>) -> u64 {
        let mut expired = 0;
        for approval in self.approvals.values_mut() {
            if approval.state == ApprovalState::Pending && approval.deadline <= now {
                approval.state = ApprovalState::Expired;
                expired += 1;
            }
        }
        expired
    }

    pub(super) fn list_approvals(&self, tenant: &str, run_id: &str, only_pending: bool) -> Vec<Approval> {
        let mut found: Vec<Approval> = self
            .approvals
            .values()
            .filter(|a| a.tenant == tenant && a.run_id == run_id)
            .filter(|a| !only_pending || a.state == ApprovalState::Pending)
            .cloned()
            .collect();
        found.sort_by(|a, b| (a.created_at, &a.request_id).cmp(&(b.created_at, &b.request_id)));
        found
    }
}
