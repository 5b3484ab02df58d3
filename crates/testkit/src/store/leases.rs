//! Store story clauses STORE-02 … STORE-05: leases, fencing tokens, expiry, and finalize fencing.

use std::time::Duration;

use super::{AGENT, Kit, ensure, err, ok, record};
use agent_adaptor_store::{FinalizeRequest, Lease, Query, StoreError};

/// A TTL long enough never to lapse during the story.
const LONG: Duration = Duration::from_secs(60);
/// A TTL that lapses within the story, and a sleep that outlasts it.
const SHORT: Duration = Duration::from_millis(400);
const PAST_SHORT: Duration = Duration::from_millis(700);

fn busy(e: &StoreError) -> bool {
    matches!(e, StoreError::Busy { .. })
}

fn lost(e: &StoreError) -> bool {
    matches!(e, StoreError::LeaseLost { .. })
}

/// STORE-02: 32 tasks, half owner A and half owner B, acquire one target at once.
pub(super) async fn race(kit: &Kit) {
    const C: &str = "STORE-02 (lease race between two owners)";
    let target = kit.name("race");
    let mut tasks = Vec::new();
    for i in 0..32 {
        let store = kit.store.clone();
        let target = target.clone();
        let owner = if i % 2 == 0 { "owner-a" } else { "owner-b" };
        tasks.push(tokio::spawn(async move {
            (owner, store.acquire_lease(&target, owner, LONG).await)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (owner, result) = task.await.expect("acquire task panicked");
        match result {
            Ok(lease) => winners.push((owner, lease)),
            Err(StoreError::Busy { target: t }) => {
                ensure(C, t == target, || format!("Busy names {t:?}, not {target:?}"));
            }
            Err(e) => panic!("{C}: acquire failed with {e}"),
        }
    }
    let owners: std::collections::BTreeSet<&str> = winners.iter().map(|(o, _)| *o).collect();
    ensure(C, owners.len() == 1, || {
        format!("exactly one owner must win, winners: {owners:?}")
    });
    let mut tokens: Vec<u64> = winners.iter().map(|(_, l)| l.token).collect();
    tokens.sort_unstable();
    tokens.dedup();
    ensure(C, tokens.len() == winners.len(), || {
        format!("every acquisition needs its own token: {tokens:?}")
    });
    let newest = winners
        .iter()
        .map(|(_, l)| l)
        .max_by_key(|l| l.token)
        .cloned()
        .expect("a winner");
    ok(
        C,
        "renewing the newest lease",
        kit.store.renew_lease(&newest, LONG).await,
    );
    if let Some((_, older)) = winners.iter().find(|(_, l)| l.token != newest.token) {
        err(
            C,
            "renewing a superseded token",
            kit.store.renew_lease(older, LONG).await,
            lost,
        );
    }
    ok(C, "release", kit.store.release_lease(&newest).await);
}

/// STORE-03: tokens strictly increase; stale tokens neither renew nor release.
pub(super) async fn tokens(kit: &Kit) {
    const C: &str = "STORE-03 (fencing tokens)";
    let target = kit.name("tokens");
    let store = &kit.store;
    err(
        C,
        "a zero TTL",
        store.acquire_lease(&target, "o1", Duration::ZERO).await,
        |e| matches!(e, StoreError::Invalid { .. }),
    );
    let first = ok(C, "first acquire", store.acquire_lease(&target, "o1", LONG).await);
    ensure(C, first.owner == "o1" && first.target == target, || {
        format!("lease fields: {first:?}")
    });
    let second = ok(
        C,
        "re-acquire by the holder",
        store.acquire_lease(&target, "o1", LONG).await,
    );
    ensure(C, second.token > first.token, || {
        format!("re-acquire must raise the token: {first:?} -> {second:?}")
    });
    err(
        C,
        "renew with the superseded token",
        store.renew_lease(&first, LONG).await,
        lost,
    );
    ok(C, "release with a stale token", store.release_lease(&first).await);
    err(
        C,
        "acquire by o2 after a stale release",
        store.acquire_lease(&target, "o2", LONG).await,
        busy,
    );
    let renewed = ok(
        C,
        "renew with the current token",
        store.renew_lease(&second, LONG).await,
    );
    ensure(
        C,
        renewed.token == second.token && renewed.expires_at >= second.expires_at,
        || format!("renew keeps the token and extends: {second:?} -> {renewed:?}"),
    );
    ok(C, "release", store.release_lease(&renewed).await);
    ok(
        C,
        "release again (idempotent)",
        store.release_lease(&renewed).await,
    );
    err(
        C,
        "renew after release",
        store.renew_lease(&renewed, LONG).await,
        lost,
    );
    let third = ok(
        C,
        "acquire by o2 after release",
        store.acquire_lease(&target, "o2", LONG).await,
    );
    ensure(C, third.token > second.token, || {
        format!("tokens must grow across owners: {second:?} -> {third:?}")
    });
    err(
        C,
        "acquire by o1 while o2 holds",
        store.acquire_lease(&target, "o1", LONG).await,
        busy,
    );
    ok(C, "release o2", store.release_lease(&third).await);
}

/// STORE-04: an expired lease can be taken over; the previous holder has lost it.
pub(super) async fn expiry(kit: &Kit) {
    const C: &str = "STORE-04 (lease expiry and takeover)";
    let target = kit.name("expiry");
    let store = &kit.store;
    let old = ok(
        C,
        "acquire with a short TTL",
        store.acquire_lease(&target, "o1", SHORT).await,
    );
    err(
        C,
        "acquire by o2 before expiry",
        store.acquire_lease(&target, "o2", LONG).await,
        busy,
    );
    tokio::time::sleep(PAST_SHORT).await;
    err(C, "renew after expiry", store.renew_lease(&old, LONG).await, lost);
    let new = ok(
        C,
        "take over after expiry",
        store.acquire_lease(&target, "o2", LONG).await,
    );
    ensure(C, new.token > old.token, || {
        format!("takeover must raise the token: {old:?} -> {new:?}")
    });
    err(
        C,
        "old holder re-acquires",
        store.acquire_lease(&target, "o1", LONG).await,
        busy,
    );
    ok(C, "release", store.release_lease(&new).await);
}

/// A finalize request that saves `record` under `leases`, archiving and rebinding.
pub(super) fn finalize_request(record: agent_adaptor_store::Record, leases: Vec<Lease>) -> FinalizeRequest {
    FinalizeRequest {
        record,
        previous_id: None,
        held_leases: leases,
        archive_old: false,
        rebind_active: true,
        require_key_absent: false,
    }
}

/// STORE-05: finalize refuses an expired, foreign, forged or partial lease set and writes nothing.
pub(super) async fn finalize_fencing(kit: &Kit) {
    const C: &str = "STORE-05 (finalize fencing)";
    let store = &kit.store;
    let tenant = kit.name("fence");
    let key = "thread-1";
    let target = kit.name("fence-key");
    let other_target = kit.name("fence-id");
    let attempt = |id: &str, leases: Vec<Lease>| finalize_request(record(&tenant, key, id), leases);

    let expired = ok(
        C,
        "acquire short",
        store.acquire_lease(&target, "stale", SHORT).await,
    );
    tokio::time::sleep(PAST_SHORT).await;
    err(
        C,
        "finalize with an expired lease",
        store.finalize(attempt("r-expired", vec![expired.clone()])).await,
        lost,
    );

    let current = ok(
        C,
        "acquire by the new owner",
        store.acquire_lease(&target, "fresh", LONG).await,
    );
    err(
        C,
        "finalize with the taken-over lease",
        store.finalize(attempt("r-stale", vec![expired.clone()])).await,
        lost,
    );
    let forged = Lease {
        token: current.token + 1,
        ..current.clone()
    };
    err(
        C,
        "finalize with a forged token",
        store.finalize(attempt("r-forged", vec![forged])).await,
        lost,
    );
    let foreign = Lease {
        owner: "stale".to_owned(),
        ..current.clone()
    };
    err(
        C,
        "finalize with another owner's token",
        store.finalize(attempt("r-foreign", vec![foreign])).await,
        lost,
    );
    let unknown = Lease {
        target: kit.name("never-leased"),
        ..current.clone()
    };
    err(
        C,
        "finalize with a lease that never existed",
        store.finalize(attempt("r-none", vec![unknown])).await,
        lost,
    );

    let second = ok(
        C,
        "acquire the id lease",
        store.acquire_lease(&other_target, "fresh", SHORT).await,
    );
    tokio::time::sleep(PAST_SHORT).await;
    let partial = vec![current.clone(), second];
    let lost_one = err(
        C,
        "finalize with one of two leases expired",
        store.finalize(attempt("r-partial", partial)).await,
        lost,
    );
    ensure(
        C,
        matches!(&lost_one, StoreError::LeaseLost { target: t } if *t == other_target),
        || format!("LeaseLost must name the lapsed target {other_target:?}: {lost_one:?}"),
    );

    for id in [
        "r-expired",
        "r-stale",
        "r-forged",
        "r-foreign",
        "r-none",
        "r-partial",
    ] {
        let found = ok(
            C,
            "resolve by id",
            store.resolve(&Query::id(&tenant, id).include_archived()).await,
        );
        ensure(C, found.is_none(), || {
            format!("a refused finalize wrote record {id}: {found:?}")
        });
    }
    let found = ok(
        C,
        "resolve by key",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, found.is_none(), || {
        format!("a refused finalize bound the key: {found:?}")
    });

    let saved = ok(
        C,
        "finalize with the current lease",
        store.finalize(attempt("r-good", vec![current.clone()])).await,
    );
    ensure(C, saved.id == "r-good", || {
        format!("saved the wrong record: {saved:?}")
    });
    ok(C, "release", store.release_lease(&current).await);
    err(
        C,
        "finalize after release",
        store.finalize(attempt("r-late", vec![current])).await,
        lost,
    );
}
