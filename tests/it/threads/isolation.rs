//! Isolation (§1, §2, §4) under the three identity shapes: an Agent built without a thread store
//! keeps its named threads in a private in-memory store (another Agent on the same driver does not
//! see them) while direct sends stay independent; supplemental input sent to one direct task joins
//! only that execution; and identity scopes thread ownership (the same key under another tenant is
//! another thread, not busy while the first runs) without selecting a driver.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::Identity;
use agent_adaptor::runtime::{Agent, CallOptions, MessageOptions, Payload};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

use super::shapes::{Shape, shapes};
use super::{history, run};

fn slow() -> ReferenceDriver {
    ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    })
}

/// An Agent of `shape` on `driver` with no thread store given.
fn storeless(shape: Shape, driver: ReferenceDriver) -> Agent {
    shape.builder(Agent::builder(driver)).build()
}

shapes!(
    each_agent_keeps_its_named_threads_in_a_private_memory_store,
    |shape| async move {
        // One driver (its sessions shared), two Agents without a store.
        let driver = ReferenceDriver::new(ReferenceConfig::default());
        let a = storeless(shape, driver.clone());
        let b = storeless(shape, driver);
        assert!(
            !Arc::ptr_eq(a.store(), b.store()),
            "{shape:?}: each Agent gets its own store"
        );
        let (_, first) = run(a.thread("k").send("one", shape.opts())).await;
        assert_eq!(history(&first), 1);
        let (_, second) = run(a.thread("k").send("two", shape.opts())).await;
        assert_eq!(history(&second), 2, "{shape:?}: A continues its own thread");
        assert!(
            a.thread("k").checkpoint(shape.tenant()).await.unwrap().is_some(),
            "{shape:?}: A has a checkpoint"
        );
        assert!(
            b.thread("k").checkpoint(shape.tenant()).await.unwrap().is_none(),
            "{shape:?}: B does not see A's thread"
        );
        let (_, other) = run(b.thread("k").send("three", shape.opts())).await;
        assert_eq!(
            history(&other),
            1,
            "{shape:?}: B's thread of the same key starts fresh"
        );
        // Direct sends stay independent of both.
        for agent in [&a, &b] {
            let (_, direct) = run(agent.send("alone", shape.opts())).await;
            assert_eq!(history(&direct), 1, "{shape:?}: a direct send starts fresh");
        }
        let (_, again) = run(a.thread("k").send("four", shape.opts())).await;
        assert_eq!(history(&again), 3, "{shape:?}: untouched by the direct sends");
    }
);

shapes!(
    supplemental_input_joins_only_its_own_direct_task,
    |shape| async move {
        let agent = shape.agent(slow(), Arc::new(agent_adaptor::store::memory::MemoryStore::new()));
        let prompt = "one two three four five six seven eight";
        let a = agent.send(prompt, shape.opts());
        let b = agent.send(prompt, shape.opts());
        a.send("only-for-a", MessageOptions::new().id("m-a"))
            .await
            .expect("admitted");
        let (ra, rb) = tokio::join!(run(a), run(b));
        let (ra, rb) = (ra.1.expect("a"), rb.1.expect("b"));
        assert!(
            ra.text.contains("(noted: only-for-a)"),
            "{shape:?}: delivered to its own execution: {}",
            ra.text
        );
        assert_eq!(ra.messages().len(), 1);
        assert!(
            !rb.text.contains("only-for-a"),
            "{shape:?}: the concurrent direct task never sees it: {}",
            rb.text
        );
        assert!(
            rb.messages().is_empty(),
            "{shape:?}: nor reports it: {:?}",
            rb.messages()
        );
    }
);

/// Call options acting for `tenant`.
fn as_tenant(tenant: &str) -> CallOptions {
    CallOptions::new().identity(Identity {
        tenant: tenant.into(),
        ..Default::default()
    })
}

shapes!(
    identity_scopes_thread_ownership_and_does_not_select_the_driver,
    |shape| async move {
        let agent = shape.agent(slow(), Arc::new(agent_adaptor::store::memory::MemoryStore::new()));
        let other = "another-tenant";
        let (_, mine) = run(agent.thread("shared-key").send("one", shape.opts())).await;
        assert_eq!(history(&mine), 1);
        // While the shape's run on the key is active, the other tenant's thread of the same key is
        // not busy: it is another thread.
        let active = agent
            .thread("shared-key")
            .send("two three four five six", shape.opts());
        let mut events = active.events();
        // Streaming text: the run holds the thread.
        while let Some(e) = events.next().await {
            if matches!(e.payload, Payload::TextDelta(_)) {
                break;
            }
        }
        let (_, theirs) = run(agent.thread("shared-key").send("x", as_tenant(other))).await;
        assert_eq!(
            history(&theirs),
            1,
            "{shape:?}: another tenant's same key is its own thread, not busy: {theirs:?}"
        );
        while events.next().await.is_some() {}
        let mine = active.result().await;
        assert_eq!(history(&mine), 2, "{shape:?}: the shape's thread continued");
        let t = agent.thread("shared-key");
        let theirs_cp = t.checkpoint(other).await.unwrap().expect("their record");
        let mine_cp = t.checkpoint(shape.tenant()).await.unwrap().expect("my record");
        assert_ne!(theirs_cp.record_id, mine_cp.record_id, "{shape:?}: two records");
        // The same driver ran both: identity does not route.
        let theirs = theirs.expect("ok");
        let mine = mine.expect("ok");
        assert_eq!(
            (theirs.provider.as_str(), mine.provider.as_str()),
            ("reference", "reference")
        );
    }
);
