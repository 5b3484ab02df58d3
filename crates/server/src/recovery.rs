//! Crash recovery: the runs a dead service process left behind end visibly.
//!
//! A process killed mid-run (kill -9, OOM, power) leaves its runs `running` in the store, their event
//! logs without a terminal event and their threads' leases held until the lease TTL. At start (before
//! the listener accepts) and, on a shared store, whenever a replica's heartbeat lapses, each run of a
//! dead owner ([`ThreadStore::orphaned_runs`] says who is dead) is ended:
//!
//! 1. its log gets the terminal sequence `RunFinished` + `Done` (failed, `infrastructure_error`,
//!    `details.code = run_interrupted`, `details.last_recorded_seq`), numbered after the last recorded
//!    event, so a replay ends with a terminal frame. The append is the compare-and-set between
//!    recoverers: a duplicate sequence is a conflict, and the loser leaves the run alone;
//! 2. the run's record becomes `interrupted` with the same error;
//! 3. its pending approvals become `expired` with a `run_interrupted` decision;
//! 4. its thread's lease is broken at once, so the next send on the thread is admitted and resumes the
//!    last healthy checkpoint (or starts fresh with the continuity notice, as after any failure).
//!
//! An open Standby holds its thread's lease even while idle; it keeps a record (run id prefixed
//! [`STANDBY_RECORD_PREFIX`], no events) `running` while it is open, so a dead process's Standby is
//! found like a run: its record ends `interrupted` and its lease is broken at once (steps 2 and 4).
//!
//! **Who is dead.** SQLite and memory are single-node: every owner but this process (and this
//! process's own id when it starts — a stable `replica_id` restarting). On Postgres each replica holds
//! a heartbeat lease ([`crate::store::replica_lease_target`], TTL [`REPLICA_TTL`], renewed every
//! [`HEARTBEAT`]); an owner whose heartbeat lease is missing or expired by the database clock is dead,
//! and every replica sweeps for such runs every [`HEARTBEAT`]. With a fresh id per start (the default),
//! a restarted replica's old runs end when the old heartbeat lapses (at most [`REPLICA_TTL`] + one
//! sweep); with a stable id they end at once.
//!
//! **The publish-first window.** The service publishes events to live subscribers before the store
//! commits them (at most `record_backlog` events behind). A kill loses what was published but not yet
//! committed: the durable log is the committed prefix, and the terminal is numbered right after it.
//! A subscriber that had seen events beyond that prefix and reconnects with a `Last-Event-ID` at or past
//! the terminal's sequence is still sent the terminal, numbered after its own cursor (`sse::replay`),
//! so no client ever sees an id it already had reused or an event it saw contradicted; what it saw
//! live and the log lacks is counted as lost in `details.last_recorded_seq`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::driver::JsonMap;
use crate::recorder::{ExposurePolicy, Recorder};
use crate::runtime::{DEFAULT_TENANT, Done, Error, ErrorInfo, Event, EventMeta, Payload, RunFinished};
use crate::store::{RunRecord, RunState, StoreError, ThreadStore};

/// The TTL of a replica's heartbeat lease on a shared store.
pub const REPLICA_TTL: Duration = Duration::from_secs(30);
/// How often a replica renews its heartbeat and sweeps for dead replicas' runs.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// The `details.code` of a run its owner's death ended.
pub const RUN_INTERRUPTED: &str = "run_interrupted";
/// Runs handled per store query.
const PAGE: u32 = 100;
/// Events read per page while finding a run's last recorded sequence.
const READ_PAGE: u32 = 1000;

/// The run-id prefix of the record an open Standby keeps while it holds its thread (`running` until
/// it is released): it has no events; recovery only ends it and breaks the thread's lease.
pub const STANDBY_RECORD_PREFIX: &str = "standby-";

/// What one recovery pass ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Runs marked interrupted.
    pub runs: u64,
    /// Pending approvals ended.
    pub approvals: u64,
    /// Thread leases broken.
    pub leases: u64,
}

/// Ends every run of a dead owner (see the module docs); `starting` on the pass before serving.
/// A run that cannot be ended is logged and left for the next pass; the error is the store's refusal
/// to list them at all.
pub async fn recover(
    store: &Arc<dyn ThreadStore>,
    me: &str,
    starting: bool,
) -> Result<Recovered, StoreError> {
    let mut seen = HashSet::new();
    let mut total = Recovered::default();
    loop {
        let page = store.orphaned_runs(me, starting, PAGE).await?;
        let fresh: Vec<RunRecord> = page
            .into_iter()
            .filter(|r| seen.insert(r.run_id.clone()))
            .collect();
        if fresh.is_empty() {
            return Ok(total);
        }
        for run in fresh {
            // A transient failure is retried here: on a single-node store no later pass comes until the
            // next start, and a run left `running` whose log already ends reads wrong until then.
            let mut ended = end_run(store, &run).await;
            for pause in [100, 500] {
                if !matches!(ended, Err(StoreError::Unavailable { .. })) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(pause)).await;
                ended = end_run(store, &run).await;
            }
            match ended {
                Ok(Some(done)) => {
                    tracing::warn!(
                        run_id = %run.run_id,
                        owner = %run.owner,
                        approvals = done.approvals,
                        "a dead owner's run was ended interrupted"
                    );
                    total.runs += done.runs;
                    total.approvals += done.approvals;
                    total.leases += done.leases;
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::error!(run_id = %run.run_id, error = %e, "could not end a dead owner's run")
                }
            }
        }
    }
}

/// The error a recovered run ends with (record and `Done` alike).
fn interrupted_error(last_recorded: u64) -> ErrorInfo {
    let mut details = JsonMap::new();
    details.insert("code".into(), RUN_INTERRUPTED.into());
    details.insert("last_recorded_seq".into(), last_recorded.into());
    ErrorInfo {
        code: "run_failed".into(),
        reason: Some("infrastructure_error".into()),
        message: "the service process that ran this run stopped (crash or kill); the run was interrupted"
            .into(),
        details,
    }
}

/// The last recorded sequence of a run and whether the log already ends with `done`.
async fn last_recorded(store: &Arc<dyn ThreadStore>, run: &RunRecord) -> Result<(u64, bool), StoreError> {
    let (mut last, mut done) = (0, false);
    loop {
        let page = store
            .read_run(&run.tenant, &run.run_id, (last > 0).then_some(last), READ_PAGE)
            .await?;
        let short = page.len() < READ_PAGE as usize;
        if let Some(e) = page.last() {
            last = e.seq;
            done = e.kind == "done";
        }
        if short {
            return Ok((last, done));
        }
    }
}

/// Ends one run; `None` when another recoverer (or the owner, alive after all) got there first.
async fn end_run(store: &Arc<dyn ThreadStore>, run: &RunRecord) -> Result<Option<Recovered>, StoreError> {
    let standby = run.run_id.starts_with(STANDBY_RECORD_PREFIX);
    let (last, ended) = if standby {
        (0, true)
    } else {
        last_recorded(store, run).await?
    };
    let info = interrupted_error(last);
    if !ended {
        let key = run.thread_key.clone().unwrap_or_default();
        let thread_id = run.thread_key.clone().unwrap_or_else(|| run.run_id.clone());
        let meta = |sequence| EventMeta {
            run_id: run.run_id.clone(),
            thread_key: key.clone(),
            sequence,
            time: Utc::now(),
            turn_id: String::new(),
            source: None,
        };
        let events = [
            Event {
                meta: meta(last + 1),
                payload: Payload::RunFinished(RunFinished {
                    run_id: run.run_id.clone(),
                    thread_id,
                    usage: None,
                    failed: true,
                    reason: "infrastructure_error".into(),
                    message: info.message.clone(),
                }),
            },
            Event {
                meta: meta(last + 2),
                payload: Payload::Done(Done {
                    outcome: Err(Error::Replayed(info.clone())),
                }),
            },
        ];
        let recorder = Recorder::new(
            store.clone(),
            run.tenant.clone(),
            run.agent.clone(),
            ExposurePolicy::default(),
        );
        match recorder.record(&events).await {
            Ok(_) => {}
            Err(StoreError::Conflict { .. }) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    let error = serde_json::to_value(&info).unwrap_or(Value::Null);
    match store
        .update_run_state(&run.run_id, RunState::Interrupted, None, Some(error))
        .await
    {
        Ok(_) => {}
        Err(StoreError::Conflict { .. } | StoreError::NotFound) => return Ok(None),
        Err(e) => return Err(e),
    }
    let reason =
        json!({"code": RUN_INTERRUPTED, "message": "the run was interrupted before a decision arrived"});
    let approvals = store.abandon_approvals(&run.tenant, &run.run_id, reason).await?;
    let mut leases = 0;
    if let Some(key) = &run.thread_key {
        let tenant = if run.tenant.is_empty() {
            DEFAULT_TENANT
        } else {
            run.tenant.as_str()
        };
        if store
            .break_lease(&crate::runtime::lease_target(tenant, &run.agent, key))
            .await?
        {
            leases += 1;
        }
    }
    Ok(Some(Recovered {
        runs: 1,
        approvals,
        leases,
    }))
}

/// On a shared store (Postgres): holds this replica's heartbeat lease and sweeps for dead replicas'
/// runs every [`HEARTBEAT`] until `shutdown`, then releases the lease. Takes the lease before it
/// returns, so no other replica takes this one for dead once it serves.
pub async fn spawn_heartbeat(
    store: Arc<dyn ThreadStore>,
    me: String,
    shutdown: CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, StoreError> {
    let target = crate::store::replica_lease_target(&me);
    let mut lease = store.acquire_lease(&target, &me, REPLICA_TTL).await?;
    Ok(tokio::spawn(async move {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                () = tokio::time::sleep(HEARTBEAT) => {}
            }
            lease = match store.renew_lease(&lease, REPLICA_TTL).await {
                Ok(l) => l,
                Err(e) => {
                    tracing::error!(error = %e, "could not renew the replica heartbeat; taking it again");
                    match store.acquire_lease(&target, &me, REPLICA_TTL).await {
                        Ok(l) => l,
                        Err(e) => {
                            tracing::error!(error = %e, "could not take the replica heartbeat");
                            continue;
                        }
                    }
                }
            };
            if let Err(e) = recover(&store, &me, false).await {
                tracing::error!(error = %e, "could not sweep for dead replicas' runs");
            }
        }
        let _ = store.release_lease(&lease).await;
    }))
}
