//! Store story clause STORE-21: NUL (U+0000) is treated alike on every store — inside JSON payloads it
//! round-trips exactly (Postgres encodes it, `jsonb` cannot hold it), in identifiers it is refused.

use chrono::TimeDelta;
use serde_json::json;

use super::service::{approval, run};
use super::{AGENT, Kit, ensure, err, ok};
use agent_adaptor_store::{Declaration, NewEvent, RunState, StoreError, micros, now};

/// STORE-21: NUL in every JSON payload round-trips; NUL in an identifier is `Invalid`.
pub(super) async fn nul(kit: &Kit) {
    const C: &str = "STORE-21 (NUL in payloads and identifiers)";
    let store = &kit.store;
    let tenant = kit.name("nul");
    let payload = json!({"text": "a\u{0}b", "k\u{0}ey": ["\u{0}", "\u{E000}0", "\u{E000}"], "n": 1});

    let event = NewEvent {
        tenant: tenant.clone(),
        agent: AGENT.to_owned(),
        thread_key: Some(kit.name("nul-key")),
        run_id: kit.name("nul-run"),
        seq: 1,
        kind: "text_delta".into(),
        event: payload.clone(),
        at: micros(now()),
    };
    ok(
        C,
        "append an event with NUL",
        store.append_events(vec![event]).await,
    );
    let read = ok(
        C,
        "read_run",
        store.read_run(&tenant, &kit.name("nul-run"), None, 10).await,
    );
    ensure(C, read.len() == 1 && read[0].event == payload, || {
        format!("the event reads back as {read:?}")
    });

    let r = run(&tenant, &kit.name("nul-run"), None, RunState::Running, "owner");
    ok(C, "put_run", store.put_run(&r).await);
    let error = json!({"code": "x", "message": "bad \u{0} byte"});
    ok(
        C,
        "finish a run with NUL in result and error",
        store
            .update_run_state(
                &r.run_id,
                RunState::Failed,
                Some(payload.clone()),
                Some(error.clone()),
            )
            .await,
    );
    let got = ok(C, "get_run", store.get_run(&tenant, &r.run_id).await);
    ensure(
        C,
        got.as_ref().is_some_and(|g| {
            g.state == RunState::Failed
                && g.result.as_ref() == Some(&payload)
                && g.error.as_ref() == Some(&error)
        }),
        || format!("the run reads back as {got:?}"),
    );

    let mut a = approval(&tenant, &r.run_id, &kit.name("nul-ap"), TimeDelta::seconds(60));
    a.payload = payload.clone();
    ok(C, "create an approval with NUL", store.create_approval(&a).await);
    let decision = json!({"behavior": "deny", "message": "no\u{0}"});
    let resolved = ok(
        C,
        "resolve with NUL",
        store
            .resolve_approval(&tenant, &a.request_id, decision.clone())
            .await,
    );
    ensure(
        C,
        resolved.payload == payload && resolved.decision.as_ref() == Some(&decision),
        || format!("the approval resolved as {resolved:?}"),
    );
    let listed = ok(C, "list", store.list_approvals(&tenant, &r.run_id, false).await);
    ensure(
        C,
        listed.len() == 1 && listed[0].payload == payload && listed[0].decision.as_ref() == Some(&decision),
        || format!("the approval lists as {listed:?}"),
    );

    let d = Declaration {
        tenant: tenant.clone(),
        agent: "reference".into(),
        key: kit.name("nul-decl"),
        defaults: payload.clone(),
        forked_from: None,
        created_at: micros(now()),
    };
    ok(C, "put a declaration with NUL", store.put_declaration(&d).await);
    let back = ok(
        C,
        "get",
        store.get_declaration(&tenant, "reference", &d.key).await,
    );
    ensure(C, back.as_ref().is_some_and(|b| b.defaults == payload), || {
        format!("the declaration reads back as {back:?}")
    });

    let bad = run(&tenant, "run\u{0}nul", Some("k\u{0}"), RunState::Running, "owner");
    err(C, "put_run with NUL in its id", store.put_run(&bad).await, |e| {
        matches!(e, StoreError::Invalid { .. })
    });
    let bad_event = NewEvent {
        tenant: tenant.clone(),
        agent: AGENT.to_owned(),
        thread_key: None,
        run_id: "run\u{0}nul".into(),
        seq: 1,
        kind: "text_delta".into(),
        event: json!({}),
        at: micros(now()),
    };
    err(
        C,
        "append with NUL in the run id",
        store.append_events(vec![bad_event]).await,
        |e| matches!(e, StoreError::Invalid { .. }),
    );
}
