//! Thread keys (§5, §6.2): keys are opaque and compared verbatim (case, spaces, separators and
//! non-ASCII text name different threads), every event of a thread run carries its exact key, a direct
//! Agent task has an empty key and a fresh anonymous thread of its own, and an empty key is a
//! programming error (a panic, as the contract's "empty keys panic"). Each runs under the three identity
//! shapes.

use std::sync::Arc;

use agent_adaptor::runtime::Agent;
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};

use super::shapes::shapes;
use super::{history, run};

const KEYS: [&str; 7] = ["k", "K", "k ", " k", "k/1", "a:b", "ключ"];

shapes!(keys_are_opaque_and_compared_verbatim, |shape| async move {
    let agent = shape.agent(
        ReferenceDriver::new(ReferenceConfig::default()),
        Arc::new(MemoryStore::new()),
    );
    for key in KEYS {
        let (events, outcome) = run(agent.thread(key).send("first", shape.opts())).await;
        assert_eq!(history(&outcome), 1, "{shape:?}: {key:?} starts its own thread");
        assert!(
            events.iter().all(|e| e.meta.thread_key == key),
            "{shape:?}: every event carries the exact key {key:?}"
        );
    }
    for key in KEYS {
        let (_, outcome) = run(agent.thread(key).send("second", shape.opts())).await;
        assert_eq!(
            history(&outcome),
            2,
            "{shape:?}: {key:?} continues only its own session (no key folded into another)"
        );
    }
});

shapes!(
    direct_tasks_have_an_empty_key_and_a_fresh_thread_each,
    |shape| async move {
        let agent = shape.agent(
            ReferenceDriver::new(ReferenceConfig::default()),
            Arc::new(MemoryStore::new()),
        );
        for _ in 0..2 {
            let (events, outcome) = run(agent.send("alone", shape.opts())).await;
            assert_eq!(history(&outcome), 1, "{shape:?}: a direct task starts fresh");
            assert!(!events.is_empty());
            assert!(
                events.iter().all(|e| e.meta.thread_key.is_empty()),
                "{shape:?}: a direct task's events have an empty thread key"
            );
        }
        // A thread run between them is not joined by them.
        let (_, outcome) = run(agent.thread("named").send("one", shape.opts())).await;
        assert_eq!(history(&outcome), 1);
        let (_, outcome) = run(agent.send("alone again", shape.opts())).await;
        assert_eq!(
            history(&outcome),
            1,
            "{shape:?}: a direct task never joins a thread"
        );
    }
);

#[test]
#[should_panic(expected = "thread keys must not be empty")]
fn an_empty_thread_key_panics() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let _ = agent.thread("");
}

#[test]
#[should_panic(expected = "thread keys must not be empty")]
fn an_empty_fork_key_panics() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let _ = agent.thread("parent").fork("");
}
