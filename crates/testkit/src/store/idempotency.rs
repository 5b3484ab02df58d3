//! Store story clause STORE-24: idempotency keys — a claim, its completion and replay, a mismatch, a
//! release, a lapsed claim and an outlived answer claimed afresh, per-tenant keys, purge, and many
//! concurrent claimers of one key of which exactly one wins.

use std::time::Duration;

use chrono::TimeDelta;

use super::{Kit, ensure, ok};
use agent_adaptor_store::{ClaimOutcome, IdempotencyClaim, StoredAnswer, now};

const LAPSE: Duration = Duration::from_secs(120);
const KEEP: Duration = Duration::from_secs(24 * 3600);

fn claim(tenant: &str, key: &str, hash: &str, token: &str) -> IdempotencyClaim {
    IdempotencyClaim {
        tenant: tenant.to_owned(),
        key: key.to_owned(),
        request_hash: hash.to_owned(),
        token: token.to_owned(),
        at: now(),
        lapse: LAPSE,
        keep: KEEP,
    }
}

/// STORE-24: claim, complete, replay, mismatch, release, lapse, scope, purge and the race.
pub(super) async fn idempotency(kit: &Kit) {
    const C: &str = "STORE-24 (idempotency keys)";
    let store = &kit.store;
    let (t1, t2) = (kit.name("idem-a"), kit.name("idem-b"));
    let answer = StoredAnswer {
        status: 201,
        content_type: Some("application/json".into()),
        location: Some("/v1/runs/r-1".into()),
        body: "{\"run_id\":\"r-1\",\"text\":\"h\u{e9}\"}".into(),
    };

    // The race first: many claimers of one fresh key, exactly one wins, the rest see it in progress.
    let racers = (0..16).map(|n| {
        let store = store.clone();
        let c = claim(&t1, "race", "h", &format!("tok-{n}"));
        tokio::spawn(async move { store.claim_idempotency(&c).await })
    });
    let mut won = 0;
    for racer in racers {
        match racer.await {
            Ok(Ok(ClaimOutcome::Claimed)) => won += 1,
            Ok(Ok(ClaimOutcome::InProgress)) => {}
            other => panic!("{C}: a racing claim answered {other:?}"),
        }
    }
    ensure(C, won == 1, || {
        format!("{won} of 16 concurrent claims of one key won")
    });

    let first = claim(&t1, "k", "h1", "tok-a");
    let got = ok(C, "claim a fresh key", store.claim_idempotency(&first).await);
    ensure(C, got == ClaimOutcome::Claimed, || {
        format!("a fresh key answered {got:?}")
    });
    let again = ok(
        C,
        "claim it again",
        store.claim_idempotency(&claim(&t1, "k", "h1", "tok-b")).await,
    );
    ensure(C, again == ClaimOutcome::InProgress, || {
        format!("a live claim answered {again:?}")
    });
    let other = ok(
        C,
        "claim with another request",
        store.claim_idempotency(&claim(&t1, "k", "h2", "tok-c")).await,
    );
    ensure(C, other == ClaimOutcome::Mismatch, || {
        format!("another request answered {other:?}")
    });
    let scoped = ok(
        C,
        "claim in another tenant",
        store.claim_idempotency(&claim(&t2, "k", "h2", "tok-d")).await,
    );
    ensure(C, scoped == ClaimOutcome::Claimed, || {
        format!("keys are per tenant, got {scoped:?}")
    });

    let stranger = ok(
        C,
        "complete with a foreign token",
        store.complete_idempotency(&t1, "k", "tok-b", &answer).await,
    );
    ensure(C, !stranger, || {
        "a claim that does not hold the key completed it".into()
    });
    let done = ok(
        C,
        "complete",
        store.complete_idempotency(&t1, "k", "tok-a", &answer).await,
    );
    ensure(C, done, || "the holder could not complete its key".into());
    let replay = ok(
        C,
        "claim a completed key",
        store.claim_idempotency(&claim(&t1, "k", "h1", "tok-e")).await,
    );
    ensure(C, replay == ClaimOutcome::Completed(answer.clone()), || {
        format!("replay answered {replay:?}")
    });
    let other = ok(
        C,
        "claim a completed key with another request",
        store.claim_idempotency(&claim(&t1, "k", "h2", "tok-f")).await,
    );
    ensure(C, other == ClaimOutcome::Mismatch, || {
        format!("another request answered {other:?}")
    });
    let twice = ok(
        C,
        "release a completed key",
        store.release_idempotency(&t1, "k", "tok-a").await,
    );
    ensure(C, !twice, || "a completed key was released".into());

    // Release: the key is free at once.
    ok(
        C,
        "claim k2",
        store.claim_idempotency(&claim(&t1, "k2", "h1", "tok-g")).await,
    );
    let released = ok(C, "release", store.release_idempotency(&t1, "k2", "tok-g").await);
    ensure(C, released, || "the holder could not release its key".into());
    let fresh = ok(
        C,
        "claim a released key",
        store.claim_idempotency(&claim(&t1, "k2", "h2", "tok-h")).await,
    );
    ensure(C, fresh == ClaimOutcome::Claimed, || {
        format!("a released key answered {fresh:?}")
    });

    // Lapse: a claim older than the lapse time is dead; its holder can no longer complete.
    let mut old = claim(&t1, "k3", "h1", "tok-i");
    old.at = now() - TimeDelta::seconds(121);
    ok(C, "claim k3 in the past", store.claim_idempotency(&old).await);
    let taken = ok(
        C,
        "claim a lapsed key",
        store.claim_idempotency(&claim(&t1, "k3", "h2", "tok-j")).await,
    );
    ensure(C, taken == ClaimOutcome::Claimed, || {
        format!("a lapsed claim answered {taken:?}")
    });
    let late = ok(
        C,
        "complete a lapsed claim",
        store.complete_idempotency(&t1, "k3", "tok-i", &answer).await,
    );
    ensure(C, !late, || {
        "a lapsed claim completed the key its successor holds".into()
    });
    let live = ok(
        C,
        "claim a young key",
        store.claim_idempotency(&claim(&t1, "k3", "h2", "tok-k")).await,
    );
    ensure(C, live == ClaimOutcome::InProgress, || {
        format!("the successor's claim answered {live:?}")
    });

    // Keep: a completed key outlives nothing past its keep time; purge deletes by age.
    let mut day_old = claim(&t1, "k4", "h1", "tok-l");
    day_old.at = now() - TimeDelta::hours(25);
    ok(C, "claim k4 a day ago", store.claim_idempotency(&day_old).await);
    ok(
        C,
        "complete k4",
        store.complete_idempotency(&t1, "k4", "tok-l", &answer).await,
    );
    let expired = ok(
        C,
        "claim an outlived key",
        store.claim_idempotency(&claim(&t1, "k4", "h2", "tok-m")).await,
    );
    ensure(C, expired == ClaimOutcome::Claimed, || {
        format!("an outlived answer answered {expired:?}")
    });
    let mut purgeable = claim(&t2, "k5", "h1", "tok-n");
    purgeable.at = now() - TimeDelta::hours(30);
    ok(C, "claim k5 long ago", store.claim_idempotency(&purgeable).await);
    let purged = ok(
        C,
        "purge",
        store.purge_idempotency(now() - TimeDelta::hours(24)).await,
    );
    ensure(C, purged >= 1, || format!("purge deleted {purged} rows"));
    let kept = ok(
        C,
        "claim a kept key",
        store.claim_idempotency(&claim(&t1, "k", "h1", "tok-o")).await,
    );
    ensure(C, matches!(kept, ClaimOutcome::Completed(_)), || {
        format!("purge deleted a young key: {kept:?}")
    });
}
