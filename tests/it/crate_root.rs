//! The contract's nouns are reachable from the crate root, one path each: a library user writes
//! `agent_adaptor::{Agent, Thread, Stream, Event, RunResult, Driver}` and never learns the module layout.

use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use agent_adaptor::{Agent, CallOptions, Done, Driver, Error, Event, Payload, RunResult, Stream, Thread};
use futures::StreamExt;
use std::sync::Arc;

/// The root names are the runtime's and the SPI's own types, not copies.
#[test]
fn the_root_names_are_the_module_types() {
    fn same<A: 'static, B: 'static>() -> bool {
        std::any::TypeId::of::<A>() == std::any::TypeId::of::<B>()
    }
    assert!(same::<Agent, agent_adaptor::runtime::Agent>());
    assert!(same::<Thread, agent_adaptor::runtime::Thread>());
    assert!(same::<Stream, agent_adaptor::runtime::Stream>());
    assert!(same::<Event, agent_adaptor::runtime::Event>());
    assert!(same::<RunResult, agent_adaptor::runtime::RunResult>());
    assert!(same::<Error, agent_adaptor::runtime::Error>());
    assert!(same::<Arc<dyn Driver>, Arc<dyn agent_adaptor::driver::Driver>>());
}

/// A run driven through root names only: the stream's events end with `Done`, whose result is `result()`'s.
#[tokio::test]
async fn a_run_through_root_names_only() {
    let driver: Arc<dyn Driver> = Arc::new(ReferenceDriver::new(ReferenceConfig::default()));
    let agent = Agent::builder_arc(driver).build();
    let stream: Stream = agent.send("say hello", CallOptions::new());
    let mut events = stream.events();
    let mut done: Option<Done> = None;
    let mut text = String::new();
    while let Some(ev) = events.next().await {
        let ev: Event = ev;
        match ev.payload {
            Payload::TextDelta(t) => text.push_str(&t.text),
            Payload::Done(d) => done = Some(d),
            _ => {}
        }
    }
    let result: Arc<RunResult> = stream.result().await.expect("the reference run succeeds");
    assert!(!text.is_empty(), "the reference agent streamed no text");
    assert_eq!(result.text, text, "the result's text is the streamed text");
    assert!(done.is_some(), "no Done event");
    let thread: Thread = agent.thread("root-names");
    assert_eq!(thread.key(), "root-names");
}
