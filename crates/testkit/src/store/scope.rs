//! Store story clause STORE-26: a thread is named by `(tenant, agent, key)`. Two agents of one tenant
//! using the same key have two threads: their records, leases, receipts, continuity and event history
//! never meet, and archiving one leaves the other.

use std::time::Duration;

use super::leases::finalize_request;
use super::{Kit, ensure, err, event, ok, record};
use agent_adaptor_store::{
    ContinuityEntry, ContinuityKind, FinalizeRequest, NewEvent, Page, Query, StoreError, now,
    thread_lease_target,
};

const C: &str = "STORE-26 (threads scoped by agent)";
const LONG: Duration = Duration::from_secs(60);

/// An event of `run` on thread `key` of `agent`.
fn agent_event(tenant: &str, agent: &str, key: &str, run: &str, seq: u64) -> NewEvent {
    NewEvent {
        agent: agent.to_owned(),
        ..event(tenant, Some(key), run, seq, now())
    }
}

/// STORE-26: the same key under two agents (and under the unnamed agent `""`) is three threads.
pub(super) async fn agent_scope(kit: &Kit) {
    let store = &kit.store;
    let tenant = kit.name("scope");
    let (a, b) = ("reference", "ref2");
    let key = "x";

    // Leases: one target per agent, held at once by two owners.
    let (ta, tb) = (
        thread_lease_target(&tenant, a, key),
        thread_lease_target(&tenant, b, key),
    );
    ensure(C, ta != tb, || format!("one lease target for two agents: {ta}"));
    let la = ok(C, "lease of a", store.acquire_lease(&ta, "owner-a", LONG).await);
    let lb = ok(C, "lease of b", store.acquire_lease(&tb, "owner-b", LONG).await);

    // Records: b's fork-style create (key must be absent) succeeds beside a's active record.
    let mut ra = record(&tenant, key, &kit.name("scope-a"));
    ra.host_agent = a.to_owned();
    let mut rb = record(&tenant, key, &kit.name("scope-b"));
    rb.host_agent = b.to_owned();
    let saved_a = ok(
        C,
        "finalize a",
        store.finalize(finalize_request(ra.clone(), vec![la])).await,
    );
    let absent = FinalizeRequest {
        rebind_active: false,
        require_key_absent: true,
        ..finalize_request(rb.clone(), vec![lb.clone()])
    };
    let saved_b = ok(C, "finalize b beside a", store.finalize(absent).await);
    for (agent, want) in [(a, Some(&saved_a)), (b, Some(&saved_b)), ("", None)] {
        let got = ok(
            C,
            "resolve",
            store.resolve(&Query::key(&tenant, agent, key)).await,
        );
        ensure(C, got.as_ref() == want, || {
            format!("agent {agent:?} resolves {got:?}, want {want:?}")
        });
    }
    ensure(C, saved_a.host_agent == a && saved_b.host_agent == b, || {
        format!("host_agent not kept: {saved_a:?} {saved_b:?}")
    });
    let listed = ok(
        C,
        "list a",
        store.list_threads(&tenant, a, &Page::first(10)).await,
    );
    ensure(
        C,
        listed.iter().map(|r| r.id.as_str()).eq([ra.id.as_str()]),
        || format!("agent a lists {listed:?}"),
    );
    // A record id cannot move to another agent's thread.
    let moved = agent_adaptor_store::Record {
        host_agent: b.to_owned(),
        ..ra.clone()
    };
    err(
        C,
        "finalize a's id under b",
        store.finalize(finalize_request(moved, vec![lb])).await,
        |e| matches!(e, StoreError::Conflict { .. }),
    );

    // Receipts and continuity.
    let ids = vec!["m1".to_owned()];
    ok(
        C,
        "receipt on a",
        store.record_receipts(&tenant, a, key, &ids, now()).await,
    );
    ensure(
        C,
        !ok(C, "receipt on b", store.has_receipt(&tenant, b, key, "m1").await),
        || "a's receipt is seen on b".into(),
    );
    ensure(
        C,
        ok(C, "receipt on a", store.has_receipt(&tenant, a, key, "m1").await),
        || "a's receipt is lost".into(),
    );
    let entry = ContinuityEntry {
        kind: ContinuityKind::AssistantTurn,
        text: "from a".into(),
        at: now(),
    };
    ok(
        C,
        "continuity a",
        store.append_continuity(&tenant, a, key, entry).await,
    );
    let of_b = ok(C, "continuity b", store.continuity(&tenant, b, key).await);
    ensure(C, of_b.is_empty(), || format!("b sees a's continuity: {of_b:?}"));
    let of_a = ok(C, "continuity a", store.continuity(&tenant, a, key).await);
    ensure(C, of_a.len() == 1, || format!("a's continuity: {of_a:?}"));

    // History.
    let (run_a, run_b) = (kit.name("scope-run-a"), kit.name("scope-run-b"));
    let batch = vec![
        agent_event(&tenant, a, key, &run_a, 0),
        agent_event(&tenant, b, key, &run_b, 0),
        agent_event(&tenant, a, key, &run_a, 1),
    ];
    ok(C, "append", store.append_events(batch).await);
    let ha = ok(
        C,
        "history a",
        store.read_thread(&tenant, a, key, None, 100).await,
    );
    let hb = ok(
        C,
        "history b",
        store.read_thread(&tenant, b, key, None, 100).await,
    );
    ensure(
        C,
        ha.len() == 2 && ha.iter().all(|e| e.run_id == run_a && e.agent == a),
        || format!("history of a: {ha:?}"),
    );
    ensure(
        C,
        hb.len() == 1 && hb[0].run_id == run_b && hb[0].agent == b,
        || format!("history of b: {hb:?}"),
    );

    // Archive one; the other stays.
    let archived = ok(C, "archive a", store.archive(&tenant, a, key).await);
    ensure(C, archived.id == ra.id, || format!("archived {archived:?}"));
    let still = ok(C, "resolve b", store.resolve(&Query::key(&tenant, b, key)).await);
    ensure(C, still.as_ref().map(|r| &r.id) == Some(&rb.id), || {
        format!("archiving a touched b: {still:?}")
    });
    err(C, "archive a again", store.archive(&tenant, a, key).await, |e| {
        matches!(e, StoreError::NotFound)
    });
}
