//! Event pipeline micro-benchmark: text deltas from a driver's sink to a consumer.
//!
//! Run: `cargo bench --bench pipeline`. Each iteration runs one execution of the reference driver
//! emitting `N` content deltas and drains its events; divan reports the time per iteration and
//! the item throughput (events/s).
//!
//! - `blocking_one_core`: blocking mode on a single-threaded runtime — producer and consumer share
//!   one core and nothing is dropped, so every event crosses the whole pipeline.
//! - `default_two_workers`: the default (drop) mode with producer and consumer on separate
//!   workers; the items counted are events published (delivered or dropped-and-counted).

use agent_adaptor::runtime::{Agent, Payload};
use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
use divan::counter::ItemsCount;
use futures::StreamExt;

const N: usize = 200_000;

fn main() {
    divan::main();
}

fn agent(blocking: bool) -> Agent {
    let b = Agent::builder(ReferenceDriver::scripted(Script::new(vec![Step::Bulk {
        count: N,
    }])));
    if blocking {
        b.blocking_events().build()
    } else {
        b.build()
    }
}

async fn drain(agent: &Agent) -> u64 {
    let stream = agent.send("bench", ());
    let mut events = stream.events();
    let mut seen = 0u64;
    while let Some(e) = events.next().await {
        match &e.payload {
            Payload::TextDelta(_) => seen += 1,
            Payload::Dropped(d) => seen += d.count,
            _ => {}
        }
    }
    seen
}

#[divan::bench(sample_count = 10)]
fn blocking_one_core(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let agent = agent(true);
    bencher.counter(ItemsCount::new(N)).bench_local(|| {
        let seen = rt.block_on(drain(&agent));
        assert!(seen >= N as u64);
    });
}

#[divan::bench(sample_count = 10)]
fn default_two_workers(bencher: divan::Bencher) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let agent = agent(false);
    bencher.counter(ItemsCount::new(N)).bench_local(|| {
        let seen = rt.block_on(drain(&agent));
        assert!(seen >= N as u64);
    });
}
