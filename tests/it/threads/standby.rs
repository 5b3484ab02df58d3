//! Standby: join vs start, queued executions, busy task sends, one live handle, cancel keeps
//! accepting, the retry-once rule and carried input.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use agent_adaptor::driver::{
    Descriptor, Driver, Failure, FailureCode, InvalidConfig, JsonSessionCodec, Request, Response, RunIo,
    SessionCodec,
};
use agent_adaptor::runtime::{Agent, ErrorKind, Event, Payload, ThreadErrorKind};
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, reference_descriptor};
use tokio::sync::mpsc::Receiver;
use tokio_util::sync::CancellationToken;

use super::{run, tenant};

fn slow_agent() -> Agent {
    Agent::builder(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    }))
    .thread_store(Arc::new(MemoryStore::new()))
    .build()
}

/// Collects events until `n` executions have ended.
async fn executions(rx: &mut Receiver<Event>, n: usize) -> Vec<Event> {
    let mut out = Vec::new();
    let mut done = 0;
    while done < n {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("events")
            .expect("open");
        if e.is_done() {
            done += 1;
        }
        out.push(e);
    }
    out
}

fn run_ids(events: &[Event]) -> Vec<String> {
    let mut ids: Vec<String> = Vec::new();
    for e in events {
        if !ids.contains(&e.meta.run_id) {
            ids.push(e.meta.run_id.clone());
        }
    }
    ids
}

#[tokio::test]
async fn message_only_sends_join_the_active_execution() {
    let a = slow_agent();
    let life = CancellationToken::new();
    let sb = a.thread("s1").standby(life.clone(), tenant("t"));
    let mut rx = sb.events().expect("first subscriber");
    assert!(sb.events().is_none(), "single consumer");
    sb.send("one two three four five six", ()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(40)).await;
    let joined = sb.send("and also this", ()).await.unwrap();
    let events = executions(&mut rx, 1).await;
    assert_eq!(
        run_ids(&events).len(),
        1,
        "the message joined the running execution"
    );
    assert!(events.iter().any(
        |e| matches!(&e.payload, Payload::MessageUpdate(u) if u.id == joined
        && u.state == agent_adaptor::runtime::MessageState::Delivered)
    ));
    life.cancel();
}

#[tokio::test]
async fn execution_options_queue_a_separate_execution_and_task_sends_are_busy() {
    let a = slow_agent();
    let life = CancellationToken::new();
    let t = a.thread("s2");
    let sb = t.standby(life.clone(), tenant("t"));
    let mut rx = sb.events().unwrap();
    sb.send("first run please", ()).await.unwrap();
    sb.send("second run", tenant("t").model("other")).await.unwrap();
    let (_, busy) = run(t.send("task", tenant("t"))).await;
    assert_eq!(busy.unwrap_err().kind(), ErrorKind::Thread(ThreadErrorKind::Busy));
    let events = executions(&mut rx, 2).await;
    assert_eq!(run_ids(&events).len(), 2, "two separate executions");
    // The same Agent/key yields the same live handle.
    let again = t.standby(CancellationToken::new(), tenant("t"));
    assert!(
        again.events().is_none(),
        "the existing handle (its events were taken)"
    );
    life.cancel();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        run(t.send("after", tenant("t"))).await.1.is_ok(),
        "ownership released with the lifetime"
    );
}

#[tokio::test]
async fn cancel_stops_current_work_and_keeps_accepting() {
    let a = slow_agent();
    let life = CancellationToken::new();
    let sb = a.thread("s3").standby(life.clone(), tenant("t"));
    let mut rx = sb.events().unwrap();
    sb.send("a long answer with many many words to stream slowly", ())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(60)).await;
    sb.cancel();
    let first = executions(&mut rx, 1).await;
    let Payload::Done(d) = &first.last().unwrap().payload else {
        unreachable!()
    };
    assert_eq!(
        d.outcome.as_ref().unwrap_err().reason().unwrap().as_str(),
        "cancelled"
    );
    sb.send("next", ()).await.unwrap();
    let second = executions(&mut rx, 1).await;
    let Payload::Done(d) = &second.last().unwrap().payload else {
        unreachable!()
    };
    assert!(d.outcome.is_ok(), "the Standby kept accepting after cancel");
    life.cancel();
}

/// Fails the first invocation with a transient (rate-limit) failure, then behaves.
struct FlakyModel {
    calls: AtomicU32,
    code: FailureCode,
}

#[async_trait::async_trait]
impl Driver for FlakyModel {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(agent_adaptor::driver::ContinueMode::None);
        d.driver_type = "flaky-model".into();
        d.messages.boundaries.clear();
        d.messages.interrupt = false;
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }
    fn session_fingerprint(&self) -> Option<String> {
        Some("flaky".into())
    }
    async fn run(&self, req: Request, _io: RunIo) -> Response {
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 {
            let mut f = Failure::new(self.code.clone(), "overloaded");
            f.retry_after = Some(Duration::from_millis(20));
            return Response {
                failure: Some(f),
                ..Default::default()
            };
        }
        let state = agent_adaptor::driver::SessionState {
            resume_id: "s".into(),
            ..Default::default()
        };
        Response {
            text: format!("ok: {}", req.prompt),
            checkpoint: Some(agent_adaptor::driver::Checkpoint { state, valid: true }),
            ..Default::default()
        }
    }
}

#[tokio::test]
async fn transient_failures_with_undelivered_input_retry_once() {
    let a = Agent::builder(FlakyModel {
        calls: AtomicU32::new(0),
        code: FailureCode::RateLimited,
    })
    .thread_store(Arc::new(MemoryStore::new()))
    .build();
    let life = CancellationToken::new();
    let sb = a.thread("r").standby(life.clone(), tenant("t"));
    let mut rx = sb.events().unwrap();
    let id = sb.send("hello", ()).await.unwrap();
    let events = executions(&mut rx, 2).await;
    let dones: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Done(d) => Some(d.outcome.clone()),
            _ => None,
        })
        .collect();
    assert!(
        dones[0].is_err() && dones[1].is_ok(),
        "failed once, then retried successfully"
    );
    assert_eq!(
        dones[1].as_ref().unwrap().text,
        "ok: hello",
        "the original input was retried"
    );
    assert!(!id.is_empty());
    life.cancel();
}

#[tokio::test]
async fn other_failures_carry_input_into_the_next_execution() {
    let a = Agent::builder(FlakyModel {
        calls: AtomicU32::new(0),
        code: FailureCode::AgentError,
    })
    .thread_store(Arc::new(MemoryStore::new()))
    .build();
    let life = CancellationToken::new();
    let sb = a.thread("c").standby(life.clone(), tenant("t"));
    let mut rx = sb.events().unwrap();
    sb.send("lost?", ()).await.unwrap();
    let first = executions(&mut rx, 1).await;
    assert!(matches!(&first.last().unwrap().payload, Payload::Done(d) if d.outcome.is_err()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        rx.try_recv().is_err(),
        "no automatic retry for a non-transient failure"
    );
    sb.send("next", ()).await.unwrap();
    let second = executions(&mut rx, 1).await;
    let Payload::Done(d) = &second.last().unwrap().payload else {
        unreachable!()
    };
    assert_eq!(
        d.outcome.as_ref().unwrap().text,
        "ok: lost?",
        "carried input leads the next execution"
    );
    life.cancel();
}
