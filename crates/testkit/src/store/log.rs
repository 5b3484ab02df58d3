//! Store story clauses STORE-01 and STORE-13 … STORE-15: the run event log and its retention.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::TimeDelta;

use super::{AGENT, Kit, ensure, err, event, ok};
use agent_adaptor_store::{EventRecord, NewEvent, RetentionPolicy, StoreError, micros, now};

fn conflict(e: &StoreError) -> bool {
    matches!(e, StoreError::Conflict { .. })
}

/// `seq`s of a run's events, in the order read.
fn seqs(events: &[EventRecord]) -> Vec<u64> {
    events.iter().map(|e| e.seq).collect()
}

/// STORE-01: on a fresh store, retention deletes exactly the old events and each tenant's oldest
/// beyond the cap, and reports the count.
pub(super) async fn retention(kit: &Kit) {
    const C: &str = "STORE-01 (retention)";
    let store = &kit.store;
    let (t1, t2, t3) = (kit.name("ret-1"), kit.name("ret-2"), kit.name("ret-3"));
    let old = micros(now() - TimeDelta::days(10));
    let mut batch: Vec<NewEvent> = (0..5).map(|s| event(&t1, Some("k"), "old", s, old)).collect();
    batch.extend((0..10).map(|s| event(&t1, Some("k"), "new", s, now())));
    ok(C, "append t1", store.append_events(batch).await);
    ok(
        C,
        "append t2",
        store
            .append_events((0..20).map(|s| event(&t2, Some("k"), "r", s, now())).collect())
            .await,
    );
    ok(
        C,
        "append t3",
        store
            .append_events((0..3).map(|s| event(&t3, None, "r", s, now())).collect())
            .await,
    );

    let none = ok(
        C,
        "retention with no bounds",
        store.retention(&RetentionPolicy::default()).await,
    );
    ensure(C, none == 0, || format!("an empty policy deleted {none} events"));
    let by_age = RetentionPolicy {
        max_age: Some(Duration::from_secs(86_400)),
        max_events_per_tenant: None,
    };
    let deleted = ok(C, "retention by age", store.retention(&by_age).await);
    ensure(C, deleted == 5, || {
        format!("max_age 1 day must delete the 5 ten-day-old events, deleted {deleted}")
    });
    let old_left = ok(C, "read old run", store.read_run(&t1, "old", None, 100).await);
    ensure(C, old_left.is_empty(), || {
        format!("old events survived: {:?}", seqs(&old_left))
    });
    let new_left = ok(C, "read new run", store.read_run(&t1, "new", None, 100).await);
    ensure(C, seqs(&new_left) == (0..10).collect::<Vec<_>>(), || {
        format!("recent events lost: {:?}", seqs(&new_left))
    });

    let by_count = RetentionPolicy {
        max_age: None,
        max_events_per_tenant: Some(12),
    };
    let deleted = ok(C, "retention by count", store.retention(&by_count).await);
    ensure(C, deleted == 8, || {
        format!("a cap of 12 must delete t2's 8 oldest only, deleted {deleted}")
    });
    let t2_left = ok(C, "read t2", store.read_run(&t2, "r", None, 100).await);
    ensure(C, seqs(&t2_left) == (8..20).collect::<Vec<_>>(), || {
        format!("t2 kept {:?}, expected 8..20", seqs(&t2_left))
    });
    let t1_left = ok(C, "read t1", store.read_thread(&t1, AGENT, "k", None, 100).await);
    ensure(C, t1_left.len() == 10, || {
        format!("t1 (under the cap) lost events: {}", t1_left.len())
    });
    let t3_left = ok(C, "read t3", store.read_run(&t3, "r", None, 100).await);
    ensure(C, t3_left.len() == 3, || {
        format!("t3 (under the cap) lost events: {}", t3_left.len())
    });
    let both = RetentionPolicy {
        max_age: Some(Duration::from_secs(86_400)),
        max_events_per_tenant: Some(12),
    };
    let again = ok(C, "retention again", store.retention(&both).await);
    ensure(C, again == 0, || {
        format!("a second identical retention deleted {again}")
    });
}

/// Pages through a thread's log from `after` in pages of 7.
async fn page_thread(
    kit: &Kit,
    clause: &str,
    tenant: &str,
    key: &str,
    after: Option<u64>,
) -> Vec<EventRecord> {
    let mut out = Vec::new();
    let mut cursor = after;
    loop {
        let page = ok(
            clause,
            "read_thread",
            kit.store.read_thread(tenant, AGENT, key, cursor, 7).await,
        );
        let Some(last) = page.last() else { return out };
        cursor = Some(last.cursor);
        out.extend(page);
    }
}

/// STORE-13: append in interleaved batches; replay from every cursor and every seq.
pub(super) async fn replay(kit: &Kit) {
    const C: &str = "STORE-13 (event log replay from every cursor)";
    let store = &kit.store;
    let tenant = kit.name("log");
    let key = "th";
    let plan: [(Option<&str>, &str, std::ops::Range<u64>); 7] = [
        (Some(key), "r1", 0..10),
        (Some(key), "r2", 0..10),
        (Some("other"), "r9", 0..3),
        (Some(key), "r1", 10..20),
        (None, "r3", 0..5),
        (Some(key), "r2", 10..20),
        (Some(key), "r1", 20..30),
    ];
    let mut expected = Vec::new();
    let mut last_cursor = 0;
    for (thread, run, seqs) in plan {
        let batch: Vec<NewEvent> = seqs.map(|s| event(&tenant, thread, run, s, now())).collect();
        let cursors = ok(C, "append", store.append_events(batch.clone()).await);
        ensure(C, cursors.len() == batch.len(), || {
            format!("{} cursors for {} events", cursors.len(), batch.len())
        });
        for (cursor, new) in cursors.into_iter().zip(batch) {
            ensure(C, cursor > last_cursor, || {
                format!("cursor {cursor} after {last_cursor}: cursors must increase")
            });
            last_cursor = cursor;
            let new = NewEvent {
                at: micros(new.at),
                ..new
            };
            expected.push(EventRecord::from_new(cursor, new));
        }
    }
    // A batch larger than a backend's insert chunk (SQLite: 500 rows) keeps cursors and rows paired.
    let big: Vec<NewEvent> = (0..1_200)
        .map(|s| event(&tenant, Some("big"), "r-big", s, now()))
        .collect();
    let cursors = ok(C, "append a large batch", store.append_events(big.clone()).await);
    let stored = ok(
        C,
        "read the large batch",
        store.read_thread(&tenant, AGENT, "big", None, 10_000).await,
    );
    let pairs: Vec<(u64, u64)> = stored.iter().map(|e| (e.cursor, e.seq)).collect();
    let returned: Vec<(u64, u64)> = cursors.iter().copied().zip(big.iter().map(|e| e.seq)).collect();
    ensure(C, pairs == returned && cursors[0] > last_cursor, || {
        format!(
            "a 1,200-event batch: {} cursors returned, {} rows read, first pairs returned {:?} vs stored {:?}",
            cursors.len(),
            stored.len(),
            &returned[..returned.len().min(3)],
            &pairs[..pairs.len().min(3)]
        )
    });
    let thread: Vec<EventRecord> = expected
        .iter()
        .filter(|e| e.thread_key.as_deref() == Some(key))
        .cloned()
        .collect();
    let all = ok(
        C,
        "read whole thread",
        store.read_thread(&tenant, AGENT, key, None, 10_000).await,
    );
    ensure(C, all == thread, || {
        format!(
            "thread replay differs: got {} events, want {}",
            all.len(),
            thread.len()
        )
    });
    for start in std::iter::once(None).chain(thread.iter().map(|e| Some(e.cursor))) {
        let from = start.map_or(0, |c| {
            thread.iter().position(|e| e.cursor == c).map_or(0, |i| i + 1)
        });
        let got = page_thread(kit, C, &tenant, key, start).await;
        ensure(C, got == thread[from..], || {
            format!(
                "replay after cursor {start:?}: {} events, want {}",
                got.len(),
                thread.len() - from
            )
        });
    }
    for run in ["r1", "r2", "r3"] {
        let want: Vec<EventRecord> = expected.iter().filter(|e| e.run_id == run).cloned().collect();
        for start in std::iter::once(None).chain(want.iter().map(|e| Some(e.seq))) {
            let got = ok(C, "read_run", store.read_run(&tenant, run, start, 10_000).await);
            let want_from: Vec<EventRecord> = want
                .iter()
                .filter(|e| start.is_none_or(|s| e.seq > s))
                .cloned()
                .collect();
            ensure(C, got == want_from, || {
                format!(
                    "run {run} after seq {start:?}: {:?}, want {:?}",
                    seqs(&got),
                    seqs(&want_from)
                )
            });
        }
    }
    let limited = ok(
        C,
        "read with limit 3",
        store.read_run(&tenant, "r1", Some(4), 3).await,
    );
    ensure(C, seqs(&limited) == [5, 6, 7], || {
        format!("limit 3 after seq 4 gave {:?}", seqs(&limited))
    });
    let zero = ok(
        C,
        "read with limit 0",
        store.read_thread(&tenant, AGENT, key, None, 0).await,
    );
    ensure(C, zero.is_empty(), || {
        format!("limit 0 returned {} events", zero.len())
    });
    let other = kit.name("log-other");
    let leaked = ok(
        C,
        "another tenant's thread",
        store.read_thread(&other, AGENT, key, None, 100).await,
    );
    let leaked_run = ok(
        C,
        "another tenant's run",
        store.read_run(&other, "r1", None, 100).await,
    );
    ensure(C, leaked.is_empty() && leaked_run.is_empty(), || {
        "events leaked across tenants".to_owned()
    });
}

/// STORE-14: a batch with a duplicate `(tenant, run, seq)` is refused whole.
pub(super) async fn batch_atomicity(kit: &Kit) {
    const C: &str = "STORE-14 (batches are all-or-nothing)";
    let store = &kit.store;
    let tenant = kit.name("atom");
    let ev = |run: &str, seq: u64| event(&tenant, Some("th"), run, seq, now());
    ok(
        C,
        "append 0..5",
        store.append_events((0..5).map(|s| ev("rb", s)).collect()).await,
    );
    err(
        C,
        "append a batch repeating seq 2",
        store
            .append_events(vec![ev("rb", 5), ev("rb", 6), ev("rb", 2)])
            .await,
        conflict,
    );
    err(
        C,
        "append a batch with an internal duplicate",
        store
            .append_events(vec![ev("rc", 0), ev("rc", 1), ev("rc", 0)])
            .await,
        conflict,
    );
    let mut too_big = ev("rd", 0);
    too_big.seq = u64::MAX;
    err(
        C,
        "append a seq beyond i64",
        store.append_events(vec![ev("rd", 1), too_big]).await,
        |e| matches!(e, StoreError::Invalid { .. }),
    );
    let rb = ok(C, "read rb", store.read_run(&tenant, "rb", None, 100).await);
    ensure(C, seqs(&rb) == [0, 1, 2, 3, 4], || {
        format!("a refused batch left events behind in rb: {:?}", seqs(&rb))
    });
    for run in ["rc", "rd"] {
        let left = ok(C, "read", store.read_run(&tenant, run, None, 100).await);
        ensure(C, left.is_empty(), || {
            format!("a refused batch left events behind in {run}: {:?}", seqs(&left))
        });
    }
    let thread = ok(
        C,
        "read thread",
        store.read_thread(&tenant, AGENT, "th", None, 100).await,
    );
    ensure(C, thread.len() == 5, || {
        format!("the thread holds {} events, want 5", thread.len())
    });
    let other = kit.name("atom-other");
    ok(
        C,
        "the same run and seq in another tenant",
        store
            .append_events(vec![event(&other, None, "rb", 2, now())])
            .await,
    );
    let empty = ok(C, "append an empty batch", store.append_events(Vec::new()).await);
    ensure(C, empty.is_empty(), || {
        format!("an empty batch returned cursors {empty:?}")
    });
}

/// STORE-15: four runs append to one thread while a reader tails it by cursor.
pub(super) async fn tailing(kit: &Kit) {
    const C: &str = "STORE-15 (tailing a thread under concurrent appends)";
    let tenant = kit.name("tail");
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let (store, tenant, done) = (kit.store.clone(), tenant.clone(), done.clone());
        tokio::spawn(async move {
            let mut seen: Vec<EventRecord> = Vec::new();
            loop {
                let finished = done.load(Ordering::SeqCst);
                let after = seen.last().map(|e| e.cursor);
                let page = store
                    .read_thread(&tenant, AGENT, "t", after, 50)
                    .await
                    .expect("tail read");
                if page.is_empty() {
                    if finished {
                        return seen;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                seen.extend(page);
            }
        })
    };
    let mut writers = Vec::new();
    for w in 0..4 {
        let (store, tenant) = (kit.store.clone(), tenant.clone());
        writers.push(tokio::spawn(async move {
            for b in 0..25u64 {
                let batch = (b * 8..b * 8 + 8)
                    .map(|s| event(&tenant, Some("t"), &format!("w{w}"), s, now()))
                    .collect();
                store.append_events(batch).await.expect("append");
                tokio::task::yield_now().await;
            }
        }));
    }
    for writer in writers {
        writer
            .await
            .unwrap_or_else(|e| panic!("{C}: a writer failed: {e}"));
    }
    done.store(true, Ordering::SeqCst);
    let seen = tokio::time::timeout(Duration::from_secs(60), reader)
        .await
        .unwrap_or_else(|_| panic!("{C}: the tailing reader did not finish"))
        .unwrap_or_else(|e| panic!("{C}: the tailing reader failed: {e}"));
    let all = ok(
        C,
        "read all",
        kit.store.read_thread(&tenant, AGENT, "t", None, 10_000).await,
    );
    ensure(C, all.len() == 800, || {
        format!("the thread holds {} events, want 800", all.len())
    });
    ensure(C, seen == all, || {
        let missing = all
            .iter()
            .filter(|e| !seen.iter().any(|s| s.cursor == e.cursor))
            .count();
        format!(
            "the tailing reader saw {} events ({missing} missing) instead of exactly the 800 stored",
            seen.len()
        )
    });
    for w in 0..4 {
        let run = format!("w{w}");
        let order: Vec<u64> = seen.iter().filter(|e| e.run_id == run).map(|e| e.seq).collect();
        ensure(C, order == (0..200).collect::<Vec<_>>(), || {
            format!("run {run} seen out of order: {order:?}")
        });
    }
}
