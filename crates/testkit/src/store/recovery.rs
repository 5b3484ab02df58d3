//! Store story clause STORE-20: the primitives of crash recovery (`orphaned_runs`, `break_lease`,
//! `abandon_approvals`).

use std::time::Duration;

use chrono::TimeDelta;
use serde_json::json;

use super::service::{approval, run};
use super::{Kit, ensure, err, ok};
use agent_adaptor_store::{ApprovalState, RunState, StoreError, replica_lease_target};

/// STORE-20: a dead owner's unfinished runs are listed (never finished ones, never the asker's own
/// unless it is starting; on Postgres never those of an owner with a live replica lease); a broken
/// lease is free at once with a higher token and its old holder cannot renew; abandoning a run's
/// approvals expires exactly its pending ones, with the reason as their decision.
pub(super) async fn recovery(kit: &Kit) {
    const C: &str = "STORE-20 (crash recovery primitives)";
    let store = &kit.store;
    let tenant = kit.name("recovery");
    let (me, dead, alive) = (kit.name("me"), kit.name("dead"), kit.name("alive"));
    let id = |n: u32| kit.name(&format!("rec-{n}"));
    ok(
        C,
        "take the live replica's lease",
        store
            .acquire_lease(&replica_lease_target(&alive), &alive, Duration::from_secs(60))
            .await,
    );
    let runs = [
        run(&tenant, &id(1), Some("k1"), RunState::Running, &dead),
        run(&tenant, &id(2), None, RunState::Parked, &dead),
        run(&tenant, &id(3), None, RunState::Running, &me),
        run(&tenant, &id(4), None, RunState::Running, &alive),
        run(&tenant, &id(5), None, RunState::Running, &dead),
    ];
    for r in &runs {
        ok(C, "put_run", store.put_run(r).await);
    }
    ok(
        C,
        "finish run 5",
        store
            .update_run_state(&id(5), RunState::Succeeded, None, None)
            .await,
    );
    let (me_ref, tenant_ref) = (me.as_str(), tenant.as_str());
    let listed = |starting: bool| async move {
        let all = ok(
            C,
            "orphaned_runs",
            store.orphaned_runs(me_ref, starting, 10_000).await,
        );
        let mut ids: Vec<String> = all
            .into_iter()
            .filter(|r| r.tenant == tenant_ref)
            .map(|r| r.run_id)
            .collect();
        ids.sort();
        ids
    };
    let running = listed(false).await;
    ensure(C, running.contains(&id(1)) && running.contains(&id(2)), || {
        format!("a dead owner's unfinished runs are orphans: {running:?}")
    });
    ensure(C, !running.contains(&id(3)), || {
        format!("the asker's own run is not an orphan while it runs: {running:?}")
    });
    ensure(C, !running.contains(&id(5)), || {
        format!("a finished run is never an orphan: {running:?}")
    });
    if store.backend() == "postgres" {
        ensure(C, !running.contains(&id(4)), || {
            format!("an owner with a live replica lease is alive: {running:?}")
        });
    }
    let starting = listed(true).await;
    ensure(C, starting.contains(&id(3)), || {
        format!("at start the asker's own unfinished runs are a previous life's: {starting:?}")
    });

    // break_lease: free at once, whoever held it; the row stays, so tokens still grow.
    let target = kit.name("rec-target");
    let held = ok(
        C,
        "acquire",
        store
            .acquire_lease(&target, &dead, Duration::from_secs(300))
            .await,
    );
    ensure(C, ok(C, "break_lease", store.break_lease(&target).await), || {
        "break_lease of a held lease reports true".into()
    });
    let taken = ok(
        C,
        "acquire after break",
        store.acquire_lease(&target, &me, Duration::from_secs(60)).await,
    );
    ensure(C, taken.token > held.token, || {
        format!("token after break {} is not above {}", taken.token, held.token)
    });
    err(
        C,
        "the broken holder renews",
        store.renew_lease(&held, Duration::from_secs(60)).await,
        |e| matches!(e, StoreError::LeaseLost { .. }),
    );
    ok(C, "release", store.release_lease(&taken).await);
    ensure(
        C,
        !ok(C, "break a free lease", store.break_lease(&target).await),
        || "break_lease of a free lease reports false".into(),
    );

    // abandon_approvals: exactly the run's pending approvals, with the reason as their decision.
    let minute = TimeDelta::seconds(60);
    for a in [
        approval(&tenant, &id(1), &kit.name("ab-1"), minute),
        approval(&tenant, &id(1), &kit.name("ab-2"), minute),
        approval(&tenant, &id(2), &kit.name("ab-3"), minute),
    ] {
        ok(C, "create_approval", store.create_approval(&a).await);
    }
    ok(
        C,
        "resolve ab-2",
        store
            .resolve_approval(&tenant, &kit.name("ab-2"), json!({"behavior": "allow"}))
            .await,
    );
    let reason = json!({"code": "run_interrupted", "message": "gone"});
    let ended = ok(
        C,
        "abandon_approvals",
        store.abandon_approvals(&tenant, &id(1), reason.clone()).await,
    );
    ensure(C, ended == 1, || format!("abandoned {ended}, expected 1"));
    let all = ok(C, "list", store.list_approvals(&tenant, &id(1), false).await);
    for a in &all {
        if a.request_id == kit.name("ab-1") {
            ensure(
                C,
                a.state == ApprovalState::Expired && a.decision.as_ref() == Some(&reason),
                || format!("the abandoned approval reads {a:?}"),
            );
        } else {
            ensure(C, a.state == ApprovalState::Resolved, || {
                format!("a resolved approval stays resolved: {a:?}")
            });
        }
    }
    err(
        C,
        "resolve the abandoned one",
        store
            .resolve_approval(&tenant, &kit.name("ab-1"), json!({"behavior": "allow"}))
            .await,
        |e| matches!(e, StoreError::Expired { .. }),
    );
    let other = ok(C, "list run 2", store.list_approvals(&tenant, &id(2), true).await);
    ensure(C, other.len() == 1, || {
        format!("another run's approval stays pending: {other:?}")
    });
}
