//! Threads over the store: continue-or-start, resume-only, fork, ownership leases, compatibility
//! drift, resume rejection, persistence failures, receipts and cross-process exclusion; the newer
//! contract tests run under the three identity shapes of [`shapes`].

mod checkpoints;
mod compat;
mod errors;
pub mod flaky;
mod isolation;
mod keys;
mod ownership;
mod receipts;
mod refresh;
mod resume;
pub mod shapes;
mod standby;
mod standby_contract;
mod standby_seams;

use std::sync::Arc;

use agent_adaptor::driver::Identity;
use agent_adaptor::runtime::{Agent, CallOptions, Event, Payload, RunOutcome, Stream};
use agent_adaptor::store::ThreadStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

/// A reference agent on `store`.
pub fn agent(store: Arc<dyn ThreadStore>) -> Agent {
    Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
        .thread_store(store)
        .build()
}

/// Options for tenant `t`.
pub fn tenant(t: &str) -> CallOptions {
    CallOptions::new().identity(Identity {
        tenant: t.into(),
        ..Default::default()
    })
}

/// Drains events and returns them with the outcome.
pub async fn run(stream: Stream) -> (Vec<Event>, RunOutcome) {
    let events: Vec<Event> = stream.events().collect().await;
    (events, stream.result().await)
}

/// The history length the reference driver reports (how many prompts its session holds).
pub fn history(outcome: &RunOutcome) -> usize {
    let r = outcome.as_ref().expect("success");
    r.metadata
        .get("history_len")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Notices of `kind`.
pub fn notices<'a>(events: &'a [Event], kind: &str) -> Vec<&'a agent_adaptor::driver::Notice> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Notice(n) if n.kind == kind => Some(n),
            _ => None,
        })
        .collect()
}
