//! Store story clause STORE-22: metered usage — one record per run (a second write replaces it),
//! aggregated per (tenant, agent, thread) over a time range in key order with a cursor, scoped to a
//! tenant unless the query names none, and summed for budgets.

use chrono::TimeDelta;

use super::{Kit, ensure, ok};
use agent_adaptor_store::{UsageFilter, UsageKey, UsageQuery, UsageRecord, now};

fn rec(run: &str, tenant: &str, agent: &str, thread: Option<&str>, tokens: u64, ago_s: i64) -> UsageRecord {
    let ended = now() - TimeDelta::seconds(ago_s);
    UsageRecord {
        run_id: run.to_owned(),
        tenant: tenant.to_owned(),
        agent: agent.to_owned(),
        thread_key: thread.map(str::to_owned),
        model: "model-x".into(),
        state: "succeeded".into(),
        input_tokens: tokens,
        output_tokens: tokens * 2,
        cached_input_tokens: 1,
        cost_micros: i64::try_from(tokens).unwrap_or(0) * 10,
        wall_ms: 100,
        cpu_ms: 7,
        started_at: ended - TimeDelta::seconds(1),
        ended_at: ended,
    }
}

/// STORE-22: usage records, aggregation, paging, scoping and totals.
pub(super) async fn usage(kit: &Kit) {
    const C: &str = "STORE-22 (metered usage)";
    let store = &kit.store;
    let (a, b) = (kit.name("usage-a"), kit.name("usage-b"));
    let run = |n: &str| kit.name(&format!("usage-run-{n}"));
    let records = [
        rec(&run("1"), &a, "claude", Some("t1"), 10, 10),
        rec(&run("2"), &a, "claude", Some("t1"), 20, 5),
        rec(&run("3"), &a, "claude", None, 30, 5),
        rec(&run("4"), &a, "codex", Some("t1"), 40, 5),
        rec(&run("5"), &a, "claude", Some("t2"), 50, 3600),
        rec(&run("6"), &b, "claude", Some("t1"), 60, 5),
    ];
    for r in &records {
        ok(C, "put_usage", store.put_usage(r).await);
    }
    // A second record of run 2 replaces the first.
    ok(
        C,
        "put_usage again",
        store
            .put_usage(&rec(&run("2"), &a, "claude", Some("t1"), 25, 5))
            .await,
    );

    let mut q = UsageQuery {
        tenant: Some(a.clone()),
        limit: 100,
        ..Default::default()
    };
    let rows = ok(C, "usage", store.usage(&q).await);
    let keys: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.key.agent.as_str(), r.key.thread_key.as_str()))
        .collect();
    ensure(
        C,
        keys == [
            ("claude", ""),
            ("claude", "t1"),
            ("claude", "t2"),
            ("codex", "t1"),
        ],
        || format!("one row per agent and thread, in key order, only tenant A: {keys:?}"),
    );
    let t1 = &rows[1];
    ensure(
        C,
        t1.totals.runs == 2 && t1.totals.input_tokens == 35 && t1.totals.output_tokens == 70,
        || format!("claude/t1 sums runs 1 and 2 (the replaced record counted once): {t1:?}"),
    );
    ensure(
        C,
        t1.totals.cost_micros == 350 && t1.totals.cpu_ms == 14 && t1.totals.wall_ms == 200,
        || format!("cost, CPU and wall sum too: {t1:?}"),
    );
    ensure(C, t1.first_at < t1.last_at, || format!("first/last end: {t1:?}"));

    // The time range is on the end, from inclusive, to exclusive.
    q.from = Some(now() - TimeDelta::seconds(60));
    let recent = ok(C, "usage from", store.usage(&q).await);
    ensure(C, recent.len() == 3, || {
        format!("run 5 ended an hour ago: {recent:?}")
    });
    q.from = None;
    q.to = Some(now() - TimeDelta::seconds(60));
    let old = ok(C, "usage to", store.usage(&q).await);
    ensure(C, old.len() == 1 && old[0].key.thread_key == "t2", || {
        format!("{old:?}")
    });
    q.to = None;

    // Paging: two rows, then the rest after the last key.
    q.limit = 2;
    let first = ok(C, "page 1", store.usage(&q).await);
    q.after = first.last().map(|r| r.key.clone());
    let second = ok(C, "page 2", store.usage(&q).await);
    let paged: Vec<UsageKey> = first.iter().chain(&second).map(|r| r.key.clone()).collect();
    let all: Vec<UsageKey> = rows.iter().map(|r| r.key.clone()).collect();
    ensure(C, paged == all, || format!("pages {paged:?} != all {all:?}"));

    // Filters, and every tenant when none is named.
    let codex = ok(
        C,
        "usage of one agent",
        store
            .usage(&UsageQuery {
                tenant: Some(a.clone()),
                agent: Some("codex".into()),
                limit: 100,
                ..Default::default()
            })
            .await,
    );
    ensure(C, codex.len() == 1 && codex[0].totals.input_tokens == 40, || {
        format!("{codex:?}")
    });
    let everyone = ok(
        C,
        "usage of every tenant",
        store
            .usage(&UsageQuery {
                thread_key: Some("t1".into()),
                limit: 10_000,
                ..Default::default()
            })
            .await,
    );
    let ours: Vec<&str> = everyone
        .iter()
        .filter(|r| r.key.tenant == a || r.key.tenant == b)
        .map(|r| r.key.tenant.as_str())
        .collect();
    ensure(C, ours.len() == 3 && ours.contains(&b.as_str()), || {
        format!("the operator's view spans tenants: {ours:?}")
    });

    // Totals for budgets: tenant, agent, thread, since.
    let total = |agent: Option<&str>, thread: Option<&str>, since_s: Option<i64>| UsageFilter {
        tenant: a.clone(),
        agent: agent.map(str::to_owned),
        thread_key: thread.map(str::to_owned),
        since: since_s.map(|s| now() - TimeDelta::seconds(s)),
    };
    let t = ok(
        C,
        "usage_total tenant",
        store.usage_total(&total(None, None, None)).await,
    );
    ensure(C, t.runs == 5 && t.input_tokens == 10 + 25 + 30 + 40 + 50, || {
        format!("{t:?}")
    });
    let t = ok(
        C,
        "usage_total agent",
        store.usage_total(&total(Some("claude"), None, Some(60))).await,
    );
    ensure(C, t.runs == 3 && t.input_tokens == 65, || format!("{t:?}"));
    let t = ok(
        C,
        "usage_total thread",
        store.usage_total(&total(Some("claude"), Some("t1"), None)).await,
    );
    ensure(C, t.runs == 2 && t.output_tokens == 70, || format!("{t:?}"));
    let none = UsageFilter {
        tenant: kit.name("usage-nobody"),
        ..Default::default()
    };
    let t = ok(C, "usage_total of nobody", store.usage_total(&none).await);
    ensure(C, t.runs == 0 && t.cost_micros == 0, || format!("{t:?}"));
}
