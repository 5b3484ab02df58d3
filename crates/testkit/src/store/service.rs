//! Store story clauses STORE-16 … STORE-19: approvals, runs and thread declarations.

use std::time::Duration;

use chrono::TimeDelta;
use serde_json::json;

use super::{Kit, ensure, err, ok};
use agent_adaptor_store::{
    Approval, ApprovalState, Declaration, Page, RunRecord, RunState, StoreError, micros, now,
};

pub(super) fn approval(tenant: &str, run: &str, id: &str, deadline_in: TimeDelta) -> Approval {
    Approval {
        tenant: tenant.to_owned(),
        run_id: run.to_owned(),
        request_id: id.to_owned(),
        kind: "permission".to_owned(),
        payload: json!({"tool": "Bash", "input": {"command": "ls -la"}}),
        state: ApprovalState::Pending,
        decision: None,
        created_at: micros(now()),
        deadline: micros(now() + deadline_in),
    }
}

/// STORE-16: sixteen resolvers race; exactly one decision is recorded.
pub(super) async fn approval_race(kit: &Kit) {
    const C: &str = "STORE-16 (approval compare-and-set)";
    let store = &kit.store;
    let tenant = kit.name("ap");
    let created = approval(&tenant, "run-1", "req-1", TimeDelta::seconds(60));
    ok(C, "create", store.create_approval(&created).await);
    err(C, "create again", store.create_approval(&created).await, |e| {
        matches!(e, StoreError::AlreadyExists { .. })
    });
    let mut tasks = Vec::new();
    for i in 0..16 {
        let (store, tenant) = (kit.store.clone(), tenant.clone());
        tasks.push(tokio::spawn(async move {
            (
                i,
                store
                    .resolve_approval(&tenant, "req-1", json!({"behavior": "allow", "by": i}))
                    .await,
            )
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.expect("resolver panicked") {
            (i, Ok(resolved)) => winners.push((i, resolved)),
            (_, Err(StoreError::AlreadyResolved { request_id })) => {
                ensure(C, request_id == "req-1", || {
                    format!("AlreadyResolved names {request_id:?}")
                });
            }
            (_, Err(e)) => panic!("{C}: a resolver failed with {e}; only AlreadyResolved is acceptable"),
        }
    }
    ensure(C, winners.len() == 1, || {
        format!("exactly one resolver must win, {} did", winners.len())
    });
    let (winner, resolved) = &winners[0];
    let decision = json!({"behavior": "allow", "by": winner});
    ensure(
        C,
        resolved.state == ApprovalState::Resolved && resolved.decision.as_ref() == Some(&decision),
        || format!("the winner got {resolved:?}"),
    );
    let listed = ok(C, "list", store.list_approvals(&tenant, "run-1", false).await);
    let want = Approval {
        state: ApprovalState::Resolved,
        decision: Some(decision),
        ..created.clone()
    };
    ensure(C, listed == [want.clone()], || {
        format!("stored {listed:?}, want {want:?}")
    });
    let pending = ok(
        C,
        "list pending",
        store.list_approvals(&tenant, "run-1", true).await,
    );
    ensure(C, pending.is_empty(), || {
        format!("a resolved approval is listed as pending: {pending:?}")
    });
    err(
        C,
        "resolve an unknown id",
        store.resolve_approval(&tenant, "nope", json!(1)).await,
        |e| matches!(e, StoreError::NotFound),
    );
    err(
        C,
        "resolve from another tenant",
        store.resolve_approval(&kit.name("ap-x"), "req-1", json!(1)).await,
        |e| matches!(e, StoreError::NotFound),
    );
}

/// STORE-17: deadlines end approvals, by resolve attempt or by `expire_approvals`.
pub(super) async fn approval_expiry(kit: &Kit) {
    const C: &str = "STORE-17 (approval expiry)";
    let store = &kit.store;
    let tenant = kit.name("ex");
    let short = approval(&tenant, "run-2", "a-short", TimeDelta::milliseconds(150));
    let long = approval(&tenant, "run-2", "b-long", TimeDelta::seconds(60));
    let swept = approval(&tenant, "run-2", "c-swept", TimeDelta::milliseconds(150));
    for a in [&short, &long, &swept] {
        ok(C, "create", store.create_approval(a).await);
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    err(
        C,
        "resolve after the deadline",
        store.resolve_approval(&tenant, "a-short", json!("late")).await,
        |e| matches!(e, StoreError::Expired { .. }),
    );
    let swept_count = ok(C, "expire_approvals", store.expire_approvals(now()).await);
    ensure(C, swept_count == 1, || {
        format!("expire_approvals must expire exactly c-swept, expired {swept_count}")
    });
    let again = ok(C, "expire_approvals again", store.expire_approvals(now()).await);
    ensure(C, again == 0, || format!("a second sweep expired {again}"));
    err(
        C,
        "resolve a swept approval",
        store.resolve_approval(&tenant, "c-swept", json!("late")).await,
        |e| matches!(e, StoreError::Expired { .. }),
    );
    ok(
        C,
        "resolve before the deadline",
        store.resolve_approval(&tenant, "b-long", json!("ok")).await,
    );
    let listed = ok(C, "list", store.list_approvals(&tenant, "run-2", false).await);
    let states: Vec<(&str, ApprovalState)> =
        listed.iter().map(|a| (a.request_id.as_str(), a.state)).collect();
    let want = [
        ("a-short", ApprovalState::Expired),
        ("b-long", ApprovalState::Resolved),
        ("c-swept", ApprovalState::Expired),
    ];
    ensure(C, states == want, || format!("states {states:?}, want {want:?}"));
    let invalid = Approval {
        state: ApprovalState::Resolved,
        ..approval(&tenant, "run-2", "d", TimeDelta::seconds(9))
    };
    err(
        C,
        "create an already-resolved approval",
        store.create_approval(&invalid).await,
        |e| matches!(e, StoreError::Invalid { .. }),
    );
}

pub(super) fn run(tenant: &str, id: &str, key: Option<&str>, state: RunState, owner: &str) -> RunRecord {
    RunRecord {
        run_id: id.to_owned(),
        tenant: tenant.to_owned(),
        agent: "reference".to_owned(),
        thread_key: key.map(str::to_owned),
        state,
        owner: owner.to_owned(),
        result: None,
        error: None,
        created_at: micros(now()),
        updated_at: micros(now()),
    }
}

/// STORE-18: runs are created once, change state until terminal, page by id, and a crashed replica's
/// live runs become interrupted.
pub(super) async fn runs(kit: &Kit) {
    const C: &str = "STORE-18 (runs and mark_interrupted)";
    let store = &kit.store;
    let tenant = kit.name("runs");
    let (rep1, rep2) = (kit.name("replica-1"), kit.name("replica-2"));
    let id = |n: u32| kit.name(&format!("run-{n}"));
    let runs = [
        run(&tenant, &id(1), None, RunState::Running, &rep1),
        run(&tenant, &id(2), Some("k"), RunState::Queued, &rep1),
        run(&tenant, &id(3), Some("k"), RunState::Running, &rep2),
        run(&tenant, &id(4), None, RunState::Running, &rep1),
        run(&tenant, &id(5), Some("k"), RunState::Parked, &rep1),
    ];
    for r in &runs {
        ok(C, "put_run", store.put_run(r).await);
    }
    err(C, "put_run twice", store.put_run(&runs[0]).await, |e| {
        matches!(e, StoreError::AlreadyExists { .. })
    });
    let got = ok(C, "get_run", store.get_run(&tenant, &id(1)).await)
        .unwrap_or_else(|| panic!("{C}: run 1 missing"));
    ensure(
        C,
        RunRecord {
            updated_at: runs[0].updated_at,
            ..got.clone()
        } == runs[0],
        || format!("stored {got:?}"),
    );
    let leaked = ok(
        C,
        "get_run from another tenant",
        store.get_run(&kit.name("runs-x"), &id(1)).await,
    );
    ensure(C, leaked.is_none(), || format!("another tenant read {leaked:?}"));

    let result = json!({"text": "done", "usage": {"input": 3}});
    let done = ok(
        C,
        "finish run 4",
        store
            .update_run_state(&id(4), RunState::Succeeded, Some(result.clone()), None)
            .await,
    );
    ensure(
        C,
        done.state == RunState::Succeeded && done.result.as_ref() == Some(&result),
        || format!("updated {done:?}"),
    );
    err(
        C,
        "move a finished run",
        store
            .update_run_state(&id(4), RunState::Running, None, None)
            .await,
        |e| matches!(e, StoreError::Conflict { .. }),
    );
    err(
        C,
        "update an unknown run",
        store
            .update_run_state("no-such-run", RunState::Running, None, None)
            .await,
        |e| matches!(e, StoreError::NotFound),
    );
    let parked = ok(
        C,
        "resume parked run 5",
        store
            .update_run_state(&id(5), RunState::Running, None, None)
            .await,
    );
    ensure(C, parked.state == RunState::Running, || {
        format!("parked -> running gave {parked:?}")
    });

    let mut listed = Vec::new();
    let mut page = Page::first(2);
    loop {
        let batch = ok(C, "list_runs", store.list_runs(&tenant, None, &page).await);
        let Some(last) = batch.last() else { break };
        page = Page::after(last.run_id.clone(), 2);
        listed.extend(batch.into_iter().map(|r| r.run_id));
    }
    ensure(C, listed == (1..=5).map(id).collect::<Vec<_>>(), || {
        format!("paged runs {listed:?}")
    });
    let of_thread: Vec<String> = ok(
        C,
        "list_runs of a thread",
        store.list_runs(&tenant, Some("k"), &Page::first(100)).await,
    )
    .into_iter()
    .map(|r| r.run_id)
    .collect();
    ensure(C, of_thread == [id(2), id(3), id(5)], || {
        format!("runs of thread k: {of_thread:?}")
    });

    let marked = ok(C, "mark_interrupted", store.mark_interrupted(&rep1).await);
    ensure(C, marked == 3, || {
        format!("replica-1 had 3 live runs (1, 2, 5), marked {marked}")
    });
    let states = [
        (1, RunState::Interrupted),
        (2, RunState::Interrupted),
        (3, RunState::Running),
        (4, RunState::Succeeded),
        (5, RunState::Interrupted),
    ];
    for (n, want) in states {
        let got = ok(C, "get_run", store.get_run(&tenant, &id(n)).await).map(|r| r.state);
        ensure(C, got == Some(want), || {
            format!("run {n} is {got:?}, want {want:?}")
        });
    }
    let again = ok(C, "mark_interrupted again", store.mark_interrupted(&rep1).await);
    ensure(C, again == 0, || {
        format!("a second mark_interrupted changed {again} runs")
    });
}

/// STORE-19: a declaration round-trips every field (JSON defaults exactly), its `(tenant, agent, key)` is
/// unique, another tenant or agent does not see it, and delete removes it once.
pub(super) async fn declarations(kit: &Kit) {
    const C: &str = "STORE-19 (thread declarations)";
    let store = &kit.store;
    let tenant = kit.name("decl");
    let declared = Declaration {
        tenant: tenant.clone(),
        agent: "reference".to_owned(),
        key: "thr \u{1F9F5} 1".to_owned(),
        defaults: json!({"model": "m-1", "metadata": {"a": "b"}, "approvals": null}),
        forked_from: Some("parent".to_owned()),
        created_at: micros(now()),
    };
    ok(C, "put", store.put_declaration(&declared).await);
    let got = ok(
        C,
        "get",
        store.get_declaration(&tenant, "reference", &declared.key).await,
    );
    ensure(C, got.as_ref() == Some(&declared), || {
        format!("round trip changed the declaration: {got:?} != {declared:?}")
    });
    err(
        C,
        "a second put of the same key",
        store.put_declaration(&declared).await,
        |e| matches!(e, StoreError::AlreadyExists { .. }),
    );
    let other_tenant = kit.name("decl-other");
    for (t, a) in [
        (other_tenant.as_str(), "reference"),
        (tenant.as_str(), "other-agent"),
    ] {
        let seen = ok(
            C,
            "get elsewhere",
            store.get_declaration(t, a, &declared.key).await,
        );
        ensure(C, seen.is_none(), || {
            format!("tenant {t:?} / agent {a:?} sees another's declaration")
        });
    }
    let elsewhere = Declaration {
        tenant: other_tenant.clone(),
        forked_from: None,
        ..declared.clone()
    };
    ok(
        C,
        "the same key for another tenant",
        store.put_declaration(&elsewhere).await,
    );
    ensure(
        C,
        ok(
            C,
            "delete",
            store
                .delete_declaration(&tenant, "reference", &declared.key)
                .await,
        ),
        || "delete of an existing declaration reported nothing deleted".into(),
    );
    ensure(
        C,
        !ok(
            C,
            "delete again",
            store
                .delete_declaration(&tenant, "reference", &declared.key)
                .await,
        ),
        || "a second delete reported a deletion".into(),
    );
    let gone = ok(
        C,
        "get after delete",
        store.get_declaration(&tenant, "reference", &declared.key).await,
    );
    ensure(C, gone.is_none(), || "the declaration survived its delete".into());
    let kept = ok(
        C,
        "get the other tenant's",
        store
            .get_declaration(&other_tenant, "reference", &declared.key)
            .await,
    );
    ensure(C, kept == Some(elsewhere), || {
        "deleting one tenant's declaration touched another's".into()
    });
}
