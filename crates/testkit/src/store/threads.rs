//! Store story clauses STORE-06 … STORE-08: record round trips, fork compare-and-set, archive/rebind.

use std::time::Duration;

use chrono::DateTime;

use super::leases::finalize_request;
use super::{AGENT, Kit, ensure, err, ok, record};
use agent_adaptor_store::{FinalizeRequest, Page, Query, Record, StoreError, ThreadStatus, micros};

const LONG: Duration = Duration::from_secs(60);

/// Compares everything but the timestamps (the store sets `updated_at`, and keeps the `created_at` of an
/// existing id).
fn same_content(a: &Record, b: &Record) -> bool {
    let strip = |r: &Record| Record {
        created_at: DateTime::UNIX_EPOCH,
        updated_at: DateTime::UNIX_EPOCH,
        ..r.clone()
    };
    strip(a) == strip(b)
}

/// STORE-06: every field survives; lookups are tenant-scoped; keys are compared byte for byte.
pub(super) async fn round_trip(kit: &Kit) {
    const C: &str = "STORE-06 (record round trip, tenancy, verbatim keys)";
    let store = &kit.store;
    let tenant = kit.name("rt");
    let other = kit.name("rt-other");
    let key = "  Ключ:/\t\u{1F642} key ";
    let lease = ok(
        C,
        "acquire",
        store.acquire_lease(&kit.name("rt-lease"), "w", LONG).await,
    );
    let mut input = record(&tenant, key, &kit.name("rt-1"));
    input.created_at = micros(input.created_at - chrono::TimeDelta::hours(1));
    let saved = ok(
        C,
        "finalize",
        store
            .finalize(finalize_request(input.clone(), vec![lease.clone()]))
            .await,
    );
    ensure(C, saved.created_at == input.created_at, || {
        format!("created_at changed: {input:?} -> {saved:?}")
    });
    ensure(C, same_content(&saved, &input), || {
        format!("finalize returned {saved:?} for {input:?}")
    });

    let by_key = ok(
        C,
        "resolve by key",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, by_key.as_ref() == Some(&saved), || {
        format!("by key: {by_key:?}, saved {saved:?}")
    });
    let by_id = ok(
        C,
        "resolve by id",
        store.resolve(&Query::id(&tenant, &input.id)).await,
    );
    ensure(C, by_id.as_ref() == Some(&saved), || format!("by id: {by_id:?}"));

    for near in [key.trim(), "  ключ:/\t\u{1F642} key ", "  Ключ:/ \u{1F642} key "] {
        let found = ok(
            C,
            "resolve a near-miss key",
            store.resolve(&Query::key(&tenant, AGENT, near)).await,
        );
        ensure(C, found.is_none(), || {
            format!("key {near:?} must not match {key:?}")
        });
    }
    let leaked = ok(
        C,
        "resolve from another tenant",
        store.resolve(&Query::key(&other, AGENT, key)).await,
    );
    ensure(C, leaked.is_none(), || {
        format!("another tenant resolved the key: {leaked:?}")
    });
    let leaked = ok(
        C,
        "resolve id from another tenant",
        store
            .resolve(&Query::id(&other, &input.id).include_archived())
            .await,
    );
    ensure(C, leaked.is_none(), || {
        format!("another tenant resolved the id: {leaked:?}")
    });
    let listed = ok(
        C,
        "list another tenant",
        store.list_threads(&other, AGENT, &Page::first(100)).await,
    );
    ensure(C, listed.is_empty(), || {
        format!("another tenant lists {listed:?}")
    });

    // Saving the same id again updates it in place and keeps created_at.
    let mut update = input.clone();
    update.fingerprint = "fp-updated".to_owned();
    update.state = None;
    update.created_at = micros(chrono::Utc::now());
    let resaved = ok(
        C,
        "finalize the same id again",
        store
            .finalize(finalize_request(update.clone(), vec![lease.clone()]))
            .await,
    );
    ensure(C, resaved.created_at == saved.created_at, || {
        format!("created_at must be kept: {saved:?} -> {resaved:?}")
    });
    ensure(
        C,
        resaved.updated_at >= saved.updated_at
            && resaved.fingerprint == "fp-updated"
            && resaved.state.is_none(),
        || format!("update not applied: {resaved:?}"),
    );
    let again = ok(
        C,
        "resolve after update",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, again.as_ref() == Some(&resaved), || {
        format!("after update: {again:?}")
    });

    // The same id may not move to another tenant or key.
    let mut moved = update.clone();
    moved.key = "elsewhere".to_owned();
    err(
        C,
        "finalize an existing id under another key",
        store.finalize(finalize_request(moved, vec![lease.clone()])).await,
        |e| matches!(e, StoreError::Conflict { .. }),
    );
    let mut invalid = record(&tenant, "", "no-key");
    invalid.key.clear();
    err(
        C,
        "finalize without a key",
        store.finalize(finalize_request(invalid, vec![])).await,
        |e| matches!(e, StoreError::Invalid { .. }),
    );
    ok(C, "release", store.release_lease(&lease).await);
}

/// STORE-07: sixteen forks race into one key with `require_key_absent`; exactly one wins.
pub(super) async fn fork_race(kit: &Kit) {
    const C: &str = "STORE-07 (fork compare-and-set under concurrency)";
    let tenant = kit.name("fork");
    let parent_key = "parent";
    let child_key = "child";
    let store = &kit.store;
    let lease = ok(
        C,
        "acquire parent",
        store.acquire_lease(&kit.name("fork-parent"), "p", LONG).await,
    );
    let parent = ok(
        C,
        "finalize parent",
        store
            .finalize(finalize_request(
                record(&tenant, parent_key, &kit.name("parent")),
                vec![lease],
            ))
            .await,
    );
    let mut tasks = Vec::new();
    for i in 0..16 {
        let store = kit.store.clone();
        let target = kit.name(&format!("fork-{i}"));
        let child = record(&tenant, child_key, &kit.name(&format!("child-{i}")));
        tasks.push(tokio::spawn(async move {
            let lease = store.acquire_lease(&target, "forker", LONG).await?;
            let request = FinalizeRequest {
                record: child,
                previous_id: None,
                held_leases: vec![lease],
                archive_old: false,
                rebind_active: true,
                require_key_absent: true,
            };
            store.finalize(request).await
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        match task.await.expect("fork task panicked") {
            Ok(saved) => winners.push(saved),
            Err(StoreError::AlreadyExists { key }) => {
                ensure(C, key == child_key, || {
                    format!("AlreadyExists names {key:?}, not {child_key:?}")
                });
            }
            Err(e) => panic!("{C}: a fork failed with {e} ({e:?}); only AlreadyExists is acceptable"),
        }
    }
    ensure(C, winners.len() == 1, || {
        format!("exactly one fork must win, {} did", winners.len())
    });
    let child = ok(
        C,
        "resolve child",
        store.resolve(&Query::key(&tenant, AGENT, child_key)).await,
    );
    ensure(C, child.as_ref().map(|c| &c.id) == Some(&winners[0].id), || {
        format!("child resolves to {child:?}")
    });
    let still = ok(
        C,
        "resolve parent",
        store.resolve(&Query::key(&tenant, AGENT, parent_key)).await,
    );
    ensure(C, still.as_ref() == Some(&parent), || {
        format!("the parent changed: {still:?}")
    });
}

/// STORE-08: continue-with-a-new-session archives and rebinds; without rebind it is a conflict;
/// listing pages by key; `archive` ends a key's active record.
pub(super) async fn archive_and_rebind(kit: &Kit) {
    const C: &str = "STORE-08 (archive, rebind, list)";
    let store = &kit.store;
    let tenant = kit.name("rebind");
    let key = "k-main";
    let lease = ok(
        C,
        "acquire",
        store.acquire_lease(&kit.name("rebind-lease"), "w", LONG).await,
    );
    let held = || vec![lease.clone()];
    let first = ok(
        C,
        "finalize first",
        store
            .finalize(finalize_request(record(&tenant, key, &kit.name("s1")), held()))
            .await,
    );

    let stray = record(&tenant, key, &kit.name("stray"));
    let no_rebind = FinalizeRequest {
        rebind_active: false,
        ..finalize_request(stray.clone(), held())
    };
    err(
        C,
        "a second active record without rebind",
        store.finalize(no_rebind).await,
        |e| matches!(e, StoreError::Conflict { .. }),
    );
    let found = ok(
        C,
        "resolve the refused id",
        store
            .resolve(&Query::id(&tenant, &stray.id).include_archived())
            .await,
    );
    ensure(C, found.is_none(), || {
        format!("a refused finalize wrote {found:?}")
    });

    let second = record(&tenant, key, &kit.name("s2"));
    let replace = FinalizeRequest {
        previous_id: Some(first.id.clone()),
        archive_old: true,
        rebind_active: true,
        ..finalize_request(second.clone(), held())
    };
    let second = ok(
        C,
        "finalize with archive_old + rebind_active",
        store.finalize(replace).await,
    );
    let active = ok(
        C,
        "resolve key",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, active.as_ref().map(|r| &r.id) == Some(&second.id), || {
        format!("key resolves to {active:?}")
    });
    let hidden = ok(
        C,
        "resolve old id",
        store.resolve(&Query::id(&tenant, &first.id)).await,
    );
    ensure(C, hidden.is_none(), || {
        format!("an archived record resolved without include_archived: {hidden:?}")
    });
    let old = ok(
        C,
        "resolve old id, archived",
        store
            .resolve(&Query::id(&tenant, &first.id).include_archived())
            .await,
    );
    ensure(
        C,
        old.as_ref().is_some_and(|r| r.status == ThreadStatus::Archived),
        || format!("old record: {old:?}"),
    );

    // Paging by key in byte order, active records only.
    let mut keys: Vec<String> = vec![key.to_owned()];
    for name in ["a", "B", "b", "\u{e9}", "z z"] {
        let k = format!("k-{name}");
        ok(
            C,
            "finalize for listing",
            store
                .finalize(finalize_request(record(&tenant, &k, &kit.name(&k)), held()))
                .await,
        );
        keys.push(k);
    }
    keys.sort();
    let mut listed = Vec::new();
    let mut page = Page::first(2);
    loop {
        let batch = ok(C, "list_threads", store.list_threads(&tenant, AGENT, &page).await);
        ensure(C, batch.len() <= 2, || {
            format!("page limit ignored: {} items", batch.len())
        });
        let Some(last) = batch.last() else { break };
        page = Page::after(last.key.clone(), 2);
        listed.extend(batch.into_iter().map(|r| r.key));
    }
    ensure(C, listed == keys, || {
        format!("paged listing {listed:?}, expected {keys:?}")
    });

    // Superseding exactly the active record (archive_old) needs no rebind.
    let third = FinalizeRequest {
        previous_id: Some(second.id.clone()),
        archive_old: true,
        rebind_active: false,
        ..finalize_request(record(&tenant, key, &kit.name("s2b")), held())
    };
    let third = ok(
        C,
        "finalize superseding the active record without rebind",
        store.finalize(third).await,
    );
    let active = ok(
        C,
        "resolve key",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, active.as_ref() == Some(&third), || {
        format!("key resolves to {active:?}")
    });

    let archived = ok(C, "archive", store.archive(&tenant, AGENT, key).await);
    ensure(
        C,
        archived.id == third.id && archived.status == ThreadStatus::Archived,
        || format!("archive returned {archived:?}"),
    );
    let gone = ok(
        C,
        "resolve after archive",
        store.resolve(&Query::key(&tenant, AGENT, key)).await,
    );
    ensure(C, gone.is_none(), || {
        format!("an archived key still resolves: {gone:?}")
    });
    err(
        C,
        "archive again",
        store.archive(&tenant, AGENT, key).await,
        |e| matches!(e, StoreError::NotFound),
    );
    err(
        C,
        "archive from another tenant",
        store.archive(&kit.name("nobody"), AGENT, "k-a").await,
        |e| matches!(e, StoreError::NotFound),
    );
    let reuse = FinalizeRequest {
        require_key_absent: true,
        ..finalize_request(record(&tenant, key, &kit.name("s3")), held())
    };
    ok(
        C,
        "an archived key can be taken again with require_key_absent",
        store.finalize(reuse).await,
    );
    ok(C, "release", store.release_lease(&lease).await);
}
