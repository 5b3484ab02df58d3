//! `Checkpoint()` (§5) under the three identity shapes: it reports the latest healthy state, and a
//! checkpoint held in process after a store failure wins over the older durable one (until it is
//! persisted).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

use super::flaky::Flaky;
use super::shapes::shapes;
use super::{history, run};

shapes!(
    pending_in_process_recovery_wins_over_stale_durable_state,
    |shape| async move {
        let flaky = Flaky::new(Arc::new(MemoryStore::new()));
        let agent = shape.agent(ReferenceDriver::new(ReferenceConfig::default()), flaky.clone());
        let t = agent.thread("cp");
        assert!(
            t.checkpoint(shape.tenant()).await.unwrap().is_none(),
            "{shape:?}: none yet"
        );
        run(t.send("one", shape.opts())).await.1.expect("first run");
        let durable = t
            .checkpoint(shape.tenant())
            .await
            .unwrap()
            .expect("the healthy durable state");
        assert!(!durable.pending_persistence);
        // Changed instructions start a fresh session (a new resume id) whose finalize fails: it is
        // held in process.
        flaky.fail_finalize.store(10, Ordering::SeqCst);
        let opts = shape.opts().instructions("be brief");
        run(t.send("two", opts.clone()))
            .await
            .1
            .expect("a store outage is no run failure");
        let pending = t.checkpoint(shape.tenant()).await.unwrap().expect("a checkpoint");
        assert!(
            pending.pending_persistence,
            "{shape:?}: the in-process state is reported"
        );
        assert_ne!(
            pending.resume_id, durable.resume_id,
            "{shape:?}: the newer session, not the stale durable one"
        );
        let stale = flaky
            .inner
            .resolve(&agent_adaptor::store::Query::key(shape.store_tenant(), "", "cp"))
            .await
            .unwrap()
            .and_then(|r| r.state)
            .expect("the durable record");
        assert_eq!(
            stale.resume_id, durable.resume_id,
            "{shape:?}: the store still has the old one"
        );
        // Once the store is back, the next run continues from the in-process state and persists.
        flaky.fail_finalize.store(0, Ordering::SeqCst);
        let (_, third) = run(t.send("three", opts)).await;
        assert_eq!(history(&third), 2, "{shape:?}: continued the newer session");
        let now = t.checkpoint(shape.tenant()).await.unwrap().unwrap();
        assert!(!now.pending_persistence);
        assert_eq!(now.resume_id, pending.resume_id);
    }
);
