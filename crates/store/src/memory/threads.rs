//! Thread records and leases for the in-memory store.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::rules::{self, micros};
use crate::{FinalizeRequest, Lease, Lookup, Page, Query, Record, StoreError, StoreResult, ThreadStatus};

/// The current holder of one lease target. Never removed, so tokens never go backwards.
#[derive(Debug, Clone)]
struct LeaseRow {
    owner: String,
    token: u64,
    expires_at: DateTime<Utc>,
}

/// A thread: `(tenant, agent, key)`.
type Scope = (String, String, String);

/// The scope of a record.
fn scope_of(record: &Record) -> Scope {
    (
        record.tenant.clone(),
        record.host_agent.clone(),
        record.key.clone(),
    )
}

/// Records by id, the active index by `(tenant, agent, key)`, and lease rows by target.
#[derive(Debug, Default)]
pub(super) struct Threads {
    records: HashMap<String, Record>,
    active: BTreeMap<Scope, String>,
    leases: HashMap<String, LeaseRow>,
}

impl Threads {
    pub(super) fn resolve(&self, query: &Query) -> Option<Record> {
        let record = match &query.by {
            Lookup::Id(id) => self.records.get(id)?,
            Lookup::Key { agent, key } => {
                let id = self
                    .active
                    .get(&(query.tenant.clone(), agent.clone(), key.clone()))?;
                self.records.get(id)?
            }
        };
        let visible = record.tenant == query.tenant
            && (record.status == ThreadStatus::Active || query.include_archived);
        visible.then(|| record.clone())
    }

    pub(super) fn acquire_lease(&mut self, target: &str, owner: &str, ttl: Duration) -> StoreResult<Lease> {
        rules::require("lease target", target)?;
        rules::require("lease owner", owner)?;
        let ttl = rules::ttl(ttl)?;
        let now = rules::now();
        let token = match self.leases.get(target) {
            Some(row) if row.owner != owner && row.expires_at > now => {
                return Err(StoreError::Busy {
                    target: target.to_owned(),
                });
            }
            Some(row) => row.token + 1,
            None => 1,
        };
        let expires_at = now + ttl;
        self.leases.insert(
            target.to_owned(),
            LeaseRow {
                owner: owner.to_owned(),
                token,
                expires_at,
            },
        );
        Ok(Lease {
            target: target.to_owned(),
            owner: owner.to_owned(),
            token,
            expires_at,
        })
    }

    pub(super) fn renew_lease(&mut self, lease: &Lease, ttl: Duration) -> StoreResult<Lease> {
        let ttl = rules::ttl(ttl)?;
        let now = rules::now();
        match self.leases.get_mut(&lease.target) {
            Some(row) if is_current(row, lease, now) => {
                row.expires_at = now + ttl;
                Ok(Lease {
                    expires_at: row.expires_at,
                    ..lease.clone()
                })
            }
            _ => Err(StoreError::LeaseLost {
                target: lease.target.clone(),
            }),
        }
    }

    /// Expires the lease on `target` now, whoever holds it; true when it was unexpired.
    pub(super) fn break_lease(&mut self, target: &str) -> bool {
        let now = rules::now();
        match self.leases.get_mut(target) {
            Some(row) if row.expires_at > now => {
                row.expires_at = now;
                true
            }
            _ => false,
        }
    }

    pub(super) fn release_lease(&mut self, lease: &Lease) {
        let now = rules::now();
        if let Some(row) = self.leases.get_mut(&lease.target)
            && row.owner == lease.owner
            && row.token == lease.token
        {
            row.expires_at = row.expires_at.min(now);
        }
    }

    pub(super) fn finalize(&mut self, req: FinalizeRequest) -> StoreResult<Record> {
        rules::check_finalize(&req)?;
        let now = rules::now();
        for lease in &req.held_leases {
            match self.leases.get(&lease.target) {
                Some(row) if is_current(row, lease, now) => {}
                _ => {
                    return Err(StoreError::LeaseLost {
                        target: lease.target.clone(),
                    });
                }
            }
        }
        let slot = scope_of(&req.record);
        let other = rules::plan_key(&req, self.active.get(&slot).map(String::as_str))?;
        let record = req.record;
        let existing = self.records.get(&record.id);
        if let Some(existing) = existing
            && scope_of(existing) != scope_of(&record)
        {
            return Err(StoreError::conflict(format!(
                "record id {:?} belongs to another tenant, agent or key",
                record.id
            )));
        }
        let created_at = existing.map_or(micros(record.created_at), |r| r.created_at);
        // Everything is decided; nothing below fails, so a refusal above leaves no trace.
        if req.archive_old
            && let Some(previous) = &req.previous_id
        {
            self.archive_id(&record.tenant, previous, now);
        }
        if let Some(other) = other {
            self.archive_id(&record.tenant, &other, now);
        }
        let saved = Record {
            status: ThreadStatus::Active,
            created_at,
            updated_at: now,
            ..record
        };
        self.active.insert(slot, saved.id.clone());
        self.records.insert(saved.id.clone(), saved.clone());
        Ok(saved)
    }

    pub(super) fn list(&self, tenant: &str, agent: &str, page: &Page) -> Vec<Record> {
        let start = (
            tenant.to_owned(),
            agent.to_owned(),
            page.after.clone().unwrap_or_default(),
        );
        self.active
            .range(start..)
            .take_while(|((t, a, _), _)| t == tenant && a == agent)
            .filter(|((_, _, key), _)| page.after.as_ref().is_none_or(|after| key > after))
            .filter_map(|(_, id)| self.records.get(id).cloned())
            .take(rules::limit_usize(page))
            .collect()
    }

    pub(super) fn archive(&mut self, tenant: &str, agent: &str, key: &str) -> StoreResult<Record> {
        let id = self
            .active
            .get(&(tenant.to_owned(), agent.to_owned(), key.to_owned()))
            .cloned()
            .ok_or(StoreError::NotFound)?;
        self.archive_id(tenant, &id, rules::now())
            .ok_or(StoreError::NotFound)
    }

    /// Archives the record `id` of `tenant` if it is active, dropping it from the active index.
    fn archive_id(&mut self, tenant: &str, id: &str, now: DateTime<Utc>) -> Option<Record> {
        let record = self
            .records
            .get_mut(id)
            .filter(|r| r.tenant == tenant && r.status == ThreadStatus::Active)?;
        record.status = ThreadStatus::Archived;
        record.updated_at = now;
        let slot = scope_of(record);
        let record = record.clone();
        if self.active.get(&slot).is_some_and(|active| *active == record.id) {
            self.active.remove(&slot);
        }
        Some(record)
    }
}

/// Whether `lease` is what the row holds now (owner and token) and has not expired.
fn is_current(row: &LeaseRow, lease: &Lease, now: DateTime<Utc>) -> bool {
    row.owner == lease.owner && row.token == lease.token && row.expires_at > now
}
