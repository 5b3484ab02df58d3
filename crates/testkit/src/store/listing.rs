//! Store story clause STORE-23: run listing — runs filtered by tenant, agent, thread key, state and a
//! creation-time window (`since` inclusive, `until` exclusive),
//! newest first by `(created_at, run_id)`, paged by a keyset position with no gap and no duplicate, every
//! tenant only when the search names none.

use chrono::TimeDelta;

use super::service::run;
use super::{Kit, ensure, ok};
use agent_adaptor_store::{RunRecord, RunSearch, RunState, micros, now};

/// STORE-23: `search_runs` filters, orders newest first and pages by position.
pub(super) async fn listing(kit: &Kit) {
    const C: &str = "STORE-23 (run listing)";
    let store = &kit.store;
    let (t1, t2) = (kit.name("list-a"), kit.name("list-b"));
    let base = micros(now()) - TimeDelta::seconds(100);
    // Seven runs of t1 (two share a created_at: the run id breaks the tie) and one of t2.
    let mut runs: Vec<RunRecord> = Vec::new();
    let spec: [(&str, Option<&str>, RunState, i64, &str); 7] = [
        ("r1", None, RunState::Succeeded, 1, "alpha"),
        ("r2", Some("k1"), RunState::Failed, 2, "alpha"),
        ("r3", Some("k1"), RunState::Succeeded, 3, "beta"),
        ("r4", Some("k2"), RunState::Running, 4, "alpha"),
        ("r5", Some("k1"), RunState::Succeeded, 5, "alpha"),
        ("r6", Some("k1"), RunState::Succeeded, 5, "alpha"),
        ("r7", None, RunState::Cancelled, 7, "beta"),
    ];
    for (id, key, state, at, agent) in spec {
        let mut r = run(&t1, &kit.name(id), key, state, "owner");
        r.agent = agent.to_owned();
        r.created_at = base + TimeDelta::seconds(at);
        runs.push(r);
    }
    let mut other = run(&t2, &kit.name("r8"), Some("k1"), RunState::Succeeded, "owner");
    other.created_at = base + TimeDelta::seconds(6);
    runs.push(other);
    for r in &runs {
        ok(C, "put_run", store.put_run(r).await);
    }
    let ids = |found: &[RunRecord]| found.iter().map(|r| r.run_id.clone()).collect::<Vec<_>>();
    let want = |names: &[&str]| names.iter().map(|n| kit.name(n)).collect::<Vec<_>>();
    let search = |tenant: Option<&str>| RunSearch {
        tenant: tenant.map(str::to_owned),
        limit: 100,
        ..RunSearch::default()
    };

    let all = ok(C, "search a tenant", store.search_runs(&search(Some(&t1))).await);
    ensure(
        C,
        ids(&all) == want(&["r7", "r6", "r5", "r4", "r3", "r2", "r1"]),
        || format!("newest first by created_at then run id, got {:?}", ids(&all)),
    );
    ensure(
        C,
        all[1]
            == RunRecord {
                updated_at: all[1].updated_at,
                ..runs[5].clone()
            },
        || format!("a listed run round-trips, got {:?}", all[1]),
    );

    let q = RunSearch {
        thread_key: Some("k1".into()),
        ..search(Some(&t1))
    };
    let on_k1 = ok(C, "search a thread", store.search_runs(&q).await);
    ensure(C, ids(&on_k1) == want(&["r6", "r5", "r3", "r2"]), || {
        format!("thread k1 of one tenant only, got {:?}", ids(&on_k1))
    });
    let q = RunSearch {
        agent: Some("alpha".into()),
        state: Some(RunState::Succeeded),
        ..search(Some(&t1))
    };
    let alpha_ok = ok(C, "search an agent and state", store.search_runs(&q).await);
    ensure(C, ids(&alpha_ok) == want(&["r6", "r5", "r1"]), || {
        format!("agent alpha, succeeded, got {:?}", ids(&alpha_ok))
    });

    // A creation-time window: from r3's time (inclusive) to r6's (exclusive), then paged within it.
    let q = RunSearch {
        since: Some(base + TimeDelta::seconds(3)),
        until: Some(base + TimeDelta::seconds(5)),
        ..search(Some(&t1))
    };
    let window = ok(C, "search a time window", store.search_runs(&q).await);
    ensure(C, ids(&window) == want(&["r4", "r3"]), || {
        format!(
            "since r3 inclusive, until r5/r6 exclusive, got {:?}",
            ids(&window)
        )
    });
    let q = RunSearch {
        since: Some(base + TimeDelta::seconds(5)),
        limit: 1,
        ..search(Some(&t1))
    };
    let first = ok(C, "search a window page", store.search_runs(&q).await);
    let q = RunSearch {
        before: first.last().map(RunSearch::position_of),
        ..q
    };
    let second = ok(C, "search the next window page", store.search_runs(&q).await);
    ensure(
        C,
        ids(&first) == want(&["r7"]) && ids(&second) == want(&["r6"]),
        || {
            format!(
                "since r5 paged by one, got {:?} then {:?}",
                ids(&first),
                ids(&second)
            )
        },
    );

    // Paging by position, two at a time: every run once, in order, however the ties fall.
    let mut paged = Vec::new();
    let mut q = RunSearch {
        limit: 2,
        ..search(Some(&t1))
    };
    for _ in 0..10 {
        let page = ok(C, "search a page", store.search_runs(&q).await);
        ensure(C, page.len() <= 2, || format!("limit 2 returned {}", page.len()));
        let Some(last) = page.last() else { break };
        q.before = Some(RunSearch::position_of(last));
        paged.extend(ids(&page));
    }
    ensure(
        C,
        paged == want(&["r7", "r6", "r5", "r4", "r3", "r2", "r1"]),
        || format!("pages joined, got {paged:?}"),
    );

    let q = RunSearch {
        limit: agent_adaptor_store::MAX_PAGE,
        ..search(None)
    };
    let everyone = ok(C, "search every tenant", store.search_runs(&q).await);
    let mine: Vec<String> = everyone
        .iter()
        .filter(|r| r.tenant == t1 || r.tenant == t2)
        .map(|r| r.run_id.clone())
        .collect();
    ensure(
        C,
        mine == want(&["r7", "r8", "r6", "r5", "r4", "r3", "r2", "r1"]),
        || format!("no tenant named: every tenant's runs, newest first, got {mine:?}"),
    );
    let nobody = ok(
        C,
        "search an unknown tenant",
        store.search_runs(&search(Some(&kit.name("list-x")))).await,
    );
    ensure(C, nobody.is_empty(), || format!("another tenant read {nobody:?}"));
}
