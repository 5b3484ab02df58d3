//! Store story clause STORE-25: webhook subscriptions and their delivery outbox — round trip, tenant
//! scope, due order, one claim of concurrent claimers, fenced attempts with their log, retry, delete.

use chrono::TimeDelta;

use super::{Kit, ensure, err, ok};
use agent_adaptor_store::webhooks::{Attempt, AttemptEnd, DeliveryState, NewDelivery, Webhook};
use agent_adaptor_store::{StoreError, now};

/// STORE-25: the webhook tables.
pub(super) async fn webhooks(kit: &Kit) {
    const C: &str = "STORE-25 (webhooks)";
    let Some(store) = kit.store.webhooks() else {
        panic!("{C}: the store keeps no webhooks");
    };
    let (ta, tb) = (kit.name("wh-a"), kit.name("wh-b"));
    let t0 = now() - TimeDelta::seconds(60);
    let hook = |id: &str, tenant: &str, offset: i64| Webhook {
        id: kit.name(id),
        tenant: tenant.to_owned(),
        url: "http://127.0.0.1:9/hook?x=\u{e9}".to_owned(),
        events: vec!["run.finished".into(), "approval.requested".into()],
        description: Some("d\u{e9}scription \"quoted\"".into()),
        secret: "whsec_c2VjcmV0".into(),
        created_at: t0 + TimeDelta::milliseconds(offset),
    };
    let (a1, a2, b1) = (hook("a1", &ta, 0), hook("a2", &ta, 1), hook("b1", &tb, 2));
    for w in [&a1, &a2, &b1] {
        ok(C, "create_webhook", store.create_webhook(w).await);
    }
    err(
        C,
        "a second webhook with the same id",
        store.create_webhook(&a1).await,
        |e| matches!(e, StoreError::AlreadyExists { .. }),
    );
    let mine = ok(C, "list_webhooks", store.list_webhooks(Some(&ta)).await);
    ensure(C, mine == vec![a1.clone(), a2.clone()], || {
        format!("a tenant lists its own webhooks, oldest first, every field round-tripped: {mine:?}")
    });
    let all = ok(C, "list_webhooks(None)", store.list_webhooks(None).await);
    ensure(C, [&a1, &a2, &b1].iter().all(|w| all.contains(w)), || {
        "the operator's list holds every tenant's webhooks".into()
    });
    let foreign = ok(C, "get_webhook", store.get_webhook(Some(&tb), &a1.id).await);
    ensure(C, foreign.is_none(), || {
        "another tenant's webhook is not found".into()
    });
    let gone = ok(C, "delete_webhook", store.delete_webhook(Some(&tb), &a1.id).await);
    ensure(C, !gone, || "another tenant cannot delete a webhook".into());

    // Three deliveries to a1, due in enqueue order; one to a2.
    let delivery = |n: i64, hook: &Webhook| NewDelivery {
        id: kit.name(&format!("d{n}-{}", hook.id)),
        webhook_id: hook.id.clone(),
        tenant: hook.tenant.clone(),
        event_id: kit.name(&format!("evt{n}")),
        event_type: "run.finished".into(),
        payload: format!("{{\"n\":{n},\"text\":\"h\u{e9}\\u0000\"}}"),
        created_at: t0 + TimeDelta::milliseconds(10 + n),
    };
    let batch: Vec<NewDelivery> = (0..3).map(|n| delivery(n, &a1)).collect();
    ok(C, "enqueue", store.enqueue(&batch).await);
    ok(C, "enqueue", store.enqueue(&[delivery(3, &a2)]).await);
    let due = ok(C, "due", store.due(now(), 100).await);
    let ours: Vec<&str> = due
        .iter()
        .filter(|d| d.tenant == ta)
        .map(|d| d.id.as_str())
        .collect();
    let expected: Vec<String> = (0..3)
        .map(|n| batch[n].id.clone())
        .chain([delivery(3, &a2).id])
        .collect();
    ensure(C, ours == expected, || {
        format!("due earliest first: {ours:?} != {expected:?}")
    });
    let first = due.iter().find(|d| d.id == batch[0].id).cloned();
    let Some(first) = first else {
        panic!("{C}: the first delivery is due");
    };
    ensure(
        C,
        first.payload == batch[0].payload && first.attempts == 0 && first.state == DeliveryState::Pending,
        || format!("a delivery round-trips its body and starts pending: {first:?}"),
    );
    let not_yet = ok(C, "due", store.due(t0, 100).await);
    ensure(C, !not_yet.iter().any(|d| d.tenant == ta), || {
        "nothing is due before its time".into()
    });

    // Concurrent claimers of one due delivery: exactly one wins.
    let seen = first.next_attempt_at.unwrap_or(first.created_at);
    let until = now() + TimeDelta::seconds(30);
    let claims = (0..8).map(|_| {
        let store = store.clone();
        let id = first.id.clone();
        tokio::spawn(async move { store.claim(&id, seen, until).await })
    });
    let mut won = 0;
    for c in futures::future::join_all(claims).await {
        if ok(C, "claim", c.unwrap_or(Ok(false))) {
            won += 1;
        }
    }
    ensure(C, won == 1, || format!("exactly one claimer wins, {won} did"));
    let due = ok(C, "due", store.due(now(), 100).await);
    ensure(C, !due.iter().any(|d| d.id == first.id), || {
        "a claimed delivery is not due until its claim ends".into()
    });

    // Attempts are fenced by their number and logged.
    let failed = Attempt {
        attempt: 1,
        at: now(),
        status: Some(503),
        error: None,
        duration_ms: 12,
    };
    let retry_at = now() - TimeDelta::seconds(1);
    let wrote = ok(
        C,
        "record_attempt",
        store
            .record_attempt(&first.id, &failed, AttemptEnd::RetryAt(retry_at))
            .await,
    );
    ensure(C, wrote, || "the first attempt is recorded".into());
    let again = ok(
        C,
        "record_attempt",
        store
            .record_attempt(&first.id, &failed, AttemptEnd::Delivered)
            .await,
    );
    ensure(C, !again, || {
        "the same attempt number is not recorded twice".into()
    });
    let due = ok(C, "due", store.due(now(), 100).await);
    ensure(C, due.iter().any(|d| d.id == first.id && d.attempts == 1), || {
        "a failed attempt leaves the delivery due at its retry time".into()
    });
    let delivered = Attempt {
        attempt: 2,
        at: now(),
        status: None,
        error: Some("connection refused".into()),
        duration_ms: 3,
    };
    ok(
        C,
        "record_attempt",
        store
            .record_attempt(&first.id, &delivered, AttemptEnd::GiveUp)
            .await,
    );
    let listed = ok(C, "list_deliveries", store.list_deliveries(&a1.id, 100).await);
    let ids: Vec<&str> = listed.iter().map(|d| d.id.as_str()).collect();
    let newest_first: Vec<&str> = batch.iter().rev().map(|d| d.id.as_str()).collect();
    ensure(C, ids == newest_first, || {
        format!("deliveries newest first: {ids:?}")
    });
    let logged = listed.iter().find(|d| d.id == first.id);
    ensure(
        C,
        logged.is_some_and(|d| {
            d.state == DeliveryState::Failed
                && d.attempts == 2
                && d.next_attempt_at.is_none()
                && d.log.len() == 2
                && d.log[0].status == Some(503)
                && d.log[0].duration_ms == 12
                && d.log[1].error.as_deref() == Some("connection refused")
        }),
        || format!("the delivery log shows both attempts in order: {logged:?}"),
    );

    // A retry re-arms a finished delivery; an unknown one is None.
    let re = ok(
        C,
        "retry_delivery",
        store.retry_delivery(&a1.id, &first.id, now()).await,
    );
    ensure(
        C,
        re.as_ref()
            .is_some_and(|d| d.state == DeliveryState::Pending && d.attempts == 2),
        || format!("a retried delivery is pending again, its attempts kept: {re:?}"),
    );
    let none = ok(
        C,
        "retry_delivery",
        store.retry_delivery(&a2.id, &first.id, now()).await,
    );
    ensure(C, none.is_none(), || {
        "a delivery of another webhook is not retried".into()
    });

    // Delete takes the deliveries along.
    let gone = ok(C, "delete_webhook", store.delete_webhook(Some(&ta), &a1.id).await);
    ensure(C, gone, || "a tenant deletes its webhook".into());
    let left = ok(C, "list_deliveries", store.list_deliveries(&a1.id, 100).await);
    ensure(C, left.is_empty(), || {
        "a deleted webhook's deliveries are gone".into()
    });
    let due = ok(C, "due", store.due(now(), 100).await);
    ensure(C, !due.iter().any(|d| d.webhook_id == a1.id), || {
        "a deleted webhook's deliveries are never due".into()
    });
    for w in [&a2, &b1] {
        ok(C, "delete_webhook", store.delete_webhook(None, &w.id).await);
    }
}
