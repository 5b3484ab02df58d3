//! The store story: [`check_store`] runs one sequence of clauses (`STORE-01` … `STORE-25`) that every
//! [`ThreadStore`] backend must pass, and panics with the clause id and a clear message at the first
//! failure. Backends get a one-line test each (`tests/it/store.rs`); [`faulty::Faulty`] wraps a correct
//! store with one deliberate bug so the kit itself can be tested (it must reject every fault).
//!
//! | clause | what it holds the store to |
//! |---|---|
//! | STORE-01 | retention deletes old events and each tenant's oldest beyond the cap, nothing else, and counts right |
//! | STORE-02 | many tasks of two owners race for one lease: exactly one owner wins |
//! | STORE-03 | fencing tokens grow on every acquisition; stale tokens cannot renew; stale releases do nothing |
//! | STORE-04 | an expired lease can be taken over with a higher token; the old holder cannot renew |
//! | STORE-05 | finalize with an expired, foreign, forged or partial set of leases fails and writes nothing |
//! | STORE-06 | finalize round-trips every field; ids and keys are tenant-scoped and compared verbatim |
//! | STORE-07 | concurrent forks into one key (`require_key_absent`): exactly one wins |
//! | STORE-08 | archive-and-rebind, conflict without rebind, paging by key, `archive` |
//! | STORE-09 | receipts deduplicate and are scoped to tenant and thread |
//! | STORE-10 | at most 1000 receipts per thread, oldest pruned first |
//! | STORE-11 | receipts older than 7 days are pruned on write |
//! | STORE-12 | continuity: guidance plus the last 3 turns, within 8 KiB, newest kept |
//! | STORE-13 | the event log replays with no gap and no duplicate from every cursor and every seq |
//! | STORE-14 | a batch with a duplicate `(run, seq)` is a `Conflict` and writes nothing |
//! | STORE-15 | a reader tailing a thread while four runs append sees every event exactly once, in order |
//! | STORE-16 | concurrent resolvers of one approval: exactly one `Ok`, the rest `AlreadyResolved` |
//! | STORE-17 | approvals past their deadline are `Expired`; `expire_approvals` counts; unknown is `NotFound` |
//! | STORE-18 | runs: create, state changes, terminal states stay, paging, `mark_interrupted` |
//! | STORE-19 | thread declarations round-trip, are unique per tenant/agent/key, scoped, and deletable |
//! | STORE-20 | crash recovery: a dead owner's unfinished runs are listed, a broken lease is free at once, a run's pending approvals are abandoned |
//! | STORE-21 | NUL round-trips inside every JSON payload (events, runs, approvals, declarations) and is refused in identifiers, alike on every store |
//! | STORE-22 | metered usage: one record per run, aggregated per tenant/agent/thread over a time range in key order with a cursor, every tenant only when none is named, totals for budgets |
//! | STORE-23 | run listing: filtered by tenant, agent, thread and state, newest first by `(created_at, run_id)`, keyset pages with no gap or duplicate, every tenant only when none is named |
//! | STORE-24 | idempotency keys: of concurrent claimers exactly one wins; complete and replay, mismatch, release, a lapsed claim or outlived answer claimed afresh, per tenant, purge by age |
//! | STORE-25 | webhooks: subscriptions round-trip and are tenant-scoped; deliveries are due in order, claimed once, their attempts fenced and logged; a retry re-arms a finished delivery; delete takes the deliveries along |
//! | STORE-26 | a thread is `(tenant, agent, key)`: two agents' threads under one key have their own records, leases, receipts, continuity and history; archiving one leaves the other |
//!
//! The story needs a **fresh, empty store**: STORE-01 checks retention, which is store-wide, by exact
//! counts. Everything else is namespaced by a random suffix. Clauses with lease expiry sleep for a few
//! hundred milliseconds; the whole story takes a few seconds.

pub mod faulty;
mod history;
mod idempotency;
mod leases;
mod listing;
mod log;
mod nul;
mod recovery;
mod scope;
mod service;
mod threads;
mod usage;
mod webhooks;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use agent_adaptor_store::{
    AgentIdentity, NewEvent, Record, SessionState, StoreError, StoreResult, ThreadStatus, ThreadStore, now,
};

/// Runs the whole story against `store`, which must be fresh and empty. Panics at the first failed
/// clause, naming it (`STORE-NN: …`).
pub async fn check_store(store: Arc<dyn ThreadStore>) {
    let kit = Kit {
        store,
        ns: uuid::Uuid::new_v4().simple().to_string()[..12].to_owned(),
    };
    log::retention(&kit).await;
    leases::race(&kit).await;
    leases::tokens(&kit).await;
    leases::expiry(&kit).await;
    leases::finalize_fencing(&kit).await;
    threads::round_trip(&kit).await;
    threads::fork_race(&kit).await;
    threads::archive_and_rebind(&kit).await;
    history::receipts_dedup(&kit).await;
    history::receipts_cap(&kit).await;
    history::receipts_age(&kit).await;
    history::continuity(&kit).await;
    log::replay(&kit).await;
    log::batch_atomicity(&kit).await;
    log::tailing(&kit).await;
    service::approval_race(&kit).await;
    service::approval_expiry(&kit).await;
    service::runs(&kit).await;
    service::declarations(&kit).await;
    recovery::recovery(&kit).await;
    nul::nul(&kit).await;
    usage::usage(&kit).await;
    listing::listing(&kit).await;
    idempotency::idempotency(&kit).await;
    webhooks::webhooks(&kit).await;
    scope::agent_scope(&kit).await;
}

/// The agent (host) name of the story's threads and events ([`Record::host_agent`]).
const AGENT: &str = "kit-agent";

/// The store under test plus a per-run namespace for tenants, keys and targets.
struct Kit {
    store: Arc<dyn ThreadStore>,
    ns: String,
}

impl Kit {
    /// A name unique to this run of the story.
    fn name(&self, base: &str) -> String {
        format!("{base}-{}", self.ns)
    }
}

/// Fails `clause` unless `cond` holds.
#[track_caller]
fn ensure(clause: &str, cond: bool, message: impl FnOnce() -> String) {
    if !cond {
        panic!("{clause}: {}", message());
    }
}

/// The value of a call that must succeed.
#[track_caller]
fn ok<T>(clause: &str, what: &str, result: StoreResult<T>) -> T {
    match result {
        Ok(value) => value,
        Err(err) => panic!("{clause}: {what} failed: {err} ({err:?})"),
    }
}

/// The error of a call that must fail as `matches` says.
#[track_caller]
fn err<T: Debug>(
    clause: &str,
    what: &str,
    result: StoreResult<T>,
    matches: fn(&StoreError) -> bool,
) -> StoreError {
    match result {
        Err(err) if matches(&err) => err,
        Err(err) => panic!("{clause}: {what} failed with the wrong error: {err} ({err:?})"),
        Ok(value) => panic!("{clause}: {what} must fail but succeeded: {value:?}"),
    }
}

/// A complete record with every field set (so round trips can compare everything).
fn record(tenant: &str, key: &str, id: &str) -> Record {
    let at = now();
    Record {
        id: id.to_owned(),
        key: key.to_owned(),
        tenant: tenant.to_owned(),
        host_agent: AGENT.to_owned(),
        status: ThreadStatus::Active,
        driver_type: "reference".to_owned(),
        agent: AgentIdentity {
            id: "agent-1".to_owned(),
            tenant: tenant.to_owned(),
            profile: "default".to_owned(),
            name: "Reference \u{1F916}".to_owned(),
        },
        fingerprint: format!("fp-{id}"),
        compatibility_fingerprint: "compat-1".to_owned(),
        codec: "reference/v1".to_owned(),
        state: Some(SessionState {
            resume_id: format!("resume-{id}"),
            display_id: format!("display-{id}"),
            data: BTreeMap::from([
                ("session.cwd".to_owned(), "/work/space".to_owned()),
                ("profile.fingerprint".to_owned(), "p\"q\\r\n".to_owned()),
            ]),
        }),
        created_at: at,
        updated_at: at,
    }
}

/// One event of `run` in the log.
fn event(tenant: &str, key: Option<&str>, run: &str, seq: u64, at: DateTime<Utc>) -> NewEvent {
    NewEvent {
        tenant: tenant.to_owned(),
        agent: AGENT.to_owned(),
        thread_key: key.map(str::to_owned),
        run_id: run.to_owned(),
        seq,
        kind: if seq == 0 {
            "run.started".to_owned()
        } else {
            "text.content".to_owned()
        },
        event: serde_json::json!({"seq": seq, "run": run, "text": format!("délta {seq} \u{1F600}"), "nested": {"a": [1, 2.5, null]}}),
        at,
    }
}
