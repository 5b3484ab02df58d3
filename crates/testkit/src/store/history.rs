//! Store story clauses STORE-09 … STORE-12: delivered-message receipts and continuity history.

use chrono::TimeDelta;

use super::{AGENT, Kit, ensure, ok};
use agent_adaptor_store::{CONTINUITY_BUDGET, ContinuityEntry, ContinuityKind, micros, now};

/// STORE-09: receipts deduplicate and are scoped to tenant and thread.
pub(super) async fn receipts_dedup(kit: &Kit) {
    const C: &str = "STORE-09 (receipt dedup)";
    let store = &kit.store;
    let tenant = kit.name("rc");
    let ids = |names: &[&str]| names.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let added = ok(
        C,
        "record m1 m2",
        store
            .record_receipts(&tenant, AGENT, "t", &ids(&["m1", "m2"]), now())
            .await,
    );
    ensure(C, added == 2, || format!("2 new receipts, reported {added}"));
    let added = ok(
        C,
        "record m2 m3 m3",
        store
            .record_receipts(&tenant, AGENT, "t", &ids(&["m2", "m3", "m3"]), now())
            .await,
    );
    ensure(C, added == 1, || format!("only m3 is new, reported {added}"));
    let found = ok(
        C,
        "batch lookup",
        store
            .has_receipts(&tenant, AGENT, "t", &ids(&["m1", "m4", "m3"]))
            .await,
    );
    ensure(C, found == [true, false, true], || {
        format!("lookup m1 m4 m3 gave {found:?}")
    });
    ensure(
        C,
        ok(C, "has m2", store.has_receipt(&tenant, AGENT, "t", "m2").await),
        || "m2 missing".to_owned(),
    );
    ensure(
        C,
        !ok(
            C,
            "other thread",
            store.has_receipt(&tenant, AGENT, "t2", "m1").await,
        ),
        || "leaked across threads".into(),
    );
    let other = kit.name("rc-other");
    ensure(
        C,
        !ok(
            C,
            "other tenant",
            store.has_receipt(&other, AGENT, "t", "m1").await,
        ),
        || "leaked across tenants".into(),
    );
    let empty = ok(
        C,
        "empty lookup",
        store.has_receipts(&tenant, AGENT, "t", &[]).await,
    );
    ensure(C, empty.is_empty(), || format!("empty lookup gave {empty:?}"));
}

/// STORE-10: at most 1000 receipts per thread; the oldest go first.
pub(super) async fn receipts_cap(kit: &Kit) {
    const C: &str = "STORE-10 (receipt cap)";
    let store = &kit.store;
    let tenant = kit.name("cap");
    let all: Vec<String> = (0..1100).map(|i| format!("msg-{i:04}")).collect();
    for chunk in all.chunks(100) {
        ok(
            C,
            "record",
            store.record_receipts(&tenant, AGENT, "t", chunk, now()).await,
        );
    }
    let found = ok(
        C,
        "lookup all",
        store.has_receipts(&tenant, AGENT, "t", &all).await,
    );
    let kept: Vec<usize> = found
        .iter()
        .enumerate()
        .filter(|(_, f)| **f)
        .map(|(i, _)| i)
        .collect();
    ensure(C, kept == (100..1100).collect::<Vec<_>>(), || {
        format!(
            "expected the newest 1000 (100..1100) kept, got {} kept from {:?}",
            kept.len(),
            kept.first()
        )
    });
}

/// STORE-11: receipts more than 7 days older than a write are pruned by it.
pub(super) async fn receipts_age(kit: &Kit) {
    const C: &str = "STORE-11 (receipt age)";
    let store = &kit.store;
    let tenant = kit.name("age");
    let one = |s: &str| vec![s.to_owned()];
    ok(
        C,
        "record old",
        store
            .record_receipts(&tenant, AGENT, "t", &one("old"), now() - TimeDelta::days(8))
            .await,
    );
    ensure(
        C,
        ok(C, "has old", store.has_receipt(&tenant, AGENT, "t", "old").await),
        || "old receipt not stored".into(),
    );
    ok(
        C,
        "record mid",
        store
            .record_receipts(&tenant, AGENT, "t", &one("mid"), now() - TimeDelta::days(6))
            .await,
    );
    ok(
        C,
        "record new",
        store
            .record_receipts(&tenant, AGENT, "t", &one("new"), now())
            .await,
    );
    let found = ok(
        C,
        "lookup",
        store
            .has_receipts(
                &tenant,
                AGENT,
                "t",
                &[one("old"), one("mid"), one("new")].concat(),
            )
            .await,
    );
    ensure(C, found == [false, true, true], || {
        format!("after a write now: old/mid/new = {found:?}, want [false, true, true]")
    });
}

/// STORE-12: guidance plus the last three turns, within 8 KiB, newest kept.
pub(super) async fn continuity(kit: &Kit) {
    const C: &str = "STORE-12 (continuity bounds)";
    let store = &kit.store;
    let tenant = kit.name("cont");
    let empty = ok(C, "empty history", store.continuity(&tenant, AGENT, "none").await);
    ensure(C, empty.is_empty(), || {
        format!("an empty thread has history {empty:?}")
    });
    let base = micros(now());
    let mut appended = Vec::new();
    for (i, (kind, text)) in [
        ("g", "g1"),
        ("a", "a1"),
        ("a", "a2"),
        ("g", "g2"),
        ("a", "a3"),
        ("a", "a4"),
    ]
    .into_iter()
    .enumerate()
    {
        let kind = if kind == "g" {
            ContinuityKind::Guidance
        } else {
            ContinuityKind::AssistantTurn
        };
        let entry = ContinuityEntry {
            kind,
            text: text.to_owned(),
            at: base + TimeDelta::seconds(i as i64),
        };
        ok(
            C,
            "append",
            store.append_continuity(&tenant, AGENT, "t", entry.clone()).await,
        );
        appended.push(entry);
    }
    let got = ok(C, "read", store.continuity(&tenant, AGENT, "t").await);
    let want: Vec<ContinuityEntry> = [0, 2, 3, 4, 5].iter().map(|i| appended[*i].clone()).collect();
    ensure(C, got == want, || format!("got {got:?}\nwant {want:?}"));

    let big = |c: char, n: usize| c.to_string().repeat(n);
    for c in ['a', 'b', 'c'] {
        let entry = ContinuityEntry {
            kind: ContinuityKind::Guidance,
            text: big(c, 3000),
            at: now(),
        };
        ok(
            C,
            "append 3000 bytes",
            store.append_continuity(&tenant, AGENT, "big", entry).await,
        );
    }
    let got = ok(C, "read big", store.continuity(&tenant, AGENT, "big").await);
    let firsts: String = got.iter().filter_map(|e| e.text.chars().next()).collect();
    ensure(C, firsts == "bc", || {
        format!("9000 bytes of guidance must trim to the newest two, got {firsts:?}")
    });
    let huge = format!("{}END", big('x', CONTINUITY_BUDGET + 100));
    let entry = ContinuityEntry {
        kind: ContinuityKind::AssistantTurn,
        text: huge,
        at: now(),
    };
    ok(
        C,
        "append an oversized turn",
        store.append_continuity(&tenant, AGENT, "big", entry).await,
    );
    let got = ok(C, "read oversized", store.continuity(&tenant, AGENT, "big").await);
    let total: usize = got.iter().map(|e| e.text.len()).sum();
    ensure(
        C,
        got.len() == 1 && total <= CONTINUITY_BUDGET && got[0].text.ends_with("END"),
        || {
            format!(
                "an oversized newest turn must be cut to its newest {CONTINUITY_BUDGET} bytes: {} entries, {total} bytes",
                got.len()
            )
        },
    );
}
