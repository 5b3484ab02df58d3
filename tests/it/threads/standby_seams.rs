//! Standby (§5.2) seams under the three identity shapes: a send waiting for queue space (the
//! execution's `MaxPending` reached) holds up neither `cancel` nor shutdown, nor does carried input
//! that cannot all join the next execution at once; events before the first `events()` call are
//! discarded, the merged stream having a single consumer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use agent_adaptor::driver::{
    ContinueMode, Descriptor, Driver, Failure, FailureCode, InvalidConfig, MessageFailure, MessagePolicy,
    Policy, Request, Response, RunIo,
};
use agent_adaptor::runtime::{Agent, Event, FailureReason, MessageState, Payload};
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, reference_descriptor};
use tokio::sync::mpsc::Receiver;
use tokio_util::sync::CancellationToken;

use super::run;
use super::shapes::shapes;

/// Never claims supplemental input: runs until cancelled (at most 30 s), except a `[quick]` prompt,
/// answered at once. Without resume, so a thread needs no session codec.
struct Hoarder;

#[async_trait::async_trait]
impl Driver for Hoarder {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::InRun);
        d.driver_type = "hoarder".into();
        d.sessions.resume = false;
        d.sessions.fork = false;
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        if !req.prompt.contains("[quick]") {
            tokio::select! {
                _ = io.cancel.cancelled() => {}
                _ = tokio::time::sleep(Duration::from_secs(30)) => {}
            }
        }
        Response {
            text: format!("ok: {}", req.prompt),
            ..Default::default()
        }
    }
}

/// Like [`Hoarder`], but its first invocation fails (`agent_error`, not retried) after 300 ms.
struct FailsThenHoards {
    calls: AtomicU32,
}

#[async_trait::async_trait]
impl Driver for FailsThenHoards {
    fn descriptor(&self) -> Descriptor {
        Hoarder.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        if self.calls.fetch_add(1, Ordering::SeqCst) > 0 {
            return Hoarder.run(req, io).await;
        }
        tokio::select! {
            _ = io.cancel.cancelled() => {}
            _ = tokio::time::sleep(Duration::from_millis(300)) => {}
        }
        Response {
            failure: Some(Failure::new(
                FailureCode::AgentError,
                "the first invocation fails",
            )),
            ..Default::default()
        }
    }
}

fn one_pending() -> Policy {
    Policy {
        messages: MessagePolicy {
            max_pending: 1,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// Claims (and delivers) in-turn input twice, 400 ms apart, then answers with what it got.
struct ClaimsLater;

#[async_trait::async_trait]
impl Driver for ClaimsLater {
    fn descriptor(&self) -> Descriptor {
        Hoarder.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, _req: Request, io: RunIo) -> Response {
        let mut got = Vec::new();
        for _ in 0..2 {
            tokio::time::sleep(Duration::from_millis(400)).await;
            if let Some(port) = &io.messages {
                for c in port.claim(agent_adaptor::driver::Boundary::InTurn) {
                    got.push(c.original.clone());
                    c.ack(agent_adaptor::driver::Ack::Delivered {
                        mechanism: "test".into(),
                    });
                }
            }
        }
        Response {
            text: format!("got: {}", got.join(", ")),
            ..Default::default()
        }
    }
}

/// The next `Done` within `within`, else `None`.
async fn next_done(rx: &mut Receiver<Event>, within: Duration) -> Option<Event> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(e)) if e.is_done() => return Some(e),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => return None,
        }
    }
}

shapes!(
    a_send_waiting_for_queue_space_blocks_neither_cancel_nor_shutdown,
    |shape| async move {
        let a = shape
            .builder(Agent::builder(Hoarder).thread_store(Arc::new(MemoryStore::new())))
            .policy(one_pending())
            .build();
        let life = CancellationToken::new();
        let t = a.thread("sb-full");
        let sb = t.standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("task", ()).await.unwrap();
        sb.send("one", ()).await.expect("fills the queue");
        let waiting = tokio::spawn({
            let sb = sb.clone();
            async move { sb.send("two", ()).await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(
            !waiting.is_finished(),
            "{shape:?}: the second send waits for queue space"
        );
        sb.cancel();
        let done = next_done(&mut rx, Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("{shape:?}: cancel waited for queue space"));
        let Payload::Done(d) = &done.payload else {
            unreachable!()
        };
        let Err(e) = &d.outcome else {
            panic!("{shape:?}: {:?}", d.outcome)
        };
        assert_eq!(e.reason(), Some(FailureReason::Cancelled), "{shape:?}: {e}");
        let partial = e.as_run().map(|r| r.result.clone()).expect("a run error");
        let one = partial
            .messages()
            .into_iter()
            .find(|m| m.text == "one")
            .expect("the admitted input is reported");
        assert_eq!(one.state, MessageState::Failed, "{shape:?}");
        let sent = tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("the waiting send returns after cancel")
            .unwrap();
        assert!(
            sent.is_err(),
            "{shape:?}: never admitted, so the send reports it: {sent:?}"
        );

        // Shutdown while a send waits for space: prompt, and the thread's lease is released.
        sb.send("again", ()).await.unwrap();
        sb.send("fill", ()).await.expect("fills the queue");
        let waiting = tokio::spawn({
            let sb = sb.clone();
            async move { sb.send("waits", ()).await }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        life.cancel();
        let sent = tokio::time::timeout(Duration::from_secs(3), waiting)
            .await
            .unwrap_or_else(|_| panic!("{shape:?}: shutdown waited for queue space"))
            .unwrap();
        assert!(sent.is_err(), "{shape:?}: {sent:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, free) = run(t.send("[quick] probe", shape.opts())).await;
        assert!(
            free.is_ok(),
            "{shape:?}: the thread is free {:?} after shutdown: {free:?}",
            started.elapsed()
        );
    }
);

shapes!(
    carried_input_beyond_the_queue_limit_blocks_nothing,
    |shape| async move {
        let driver = FailsThenHoards {
            calls: AtomicU32::new(0),
        };
        let a = shape
            .builder(Agent::builder(driver).thread_store(Arc::new(MemoryStore::new())))
            .policy(one_pending())
            .build();
        let life = CancellationToken::new();
        let sb = a.thread("sb-carry-full").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("alpha", ()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        sb.send("bravo", ()).await.expect("fills the queue");
        let charlie = tokio::spawn({
            let sb = sb.clone();
            async move { sb.send("charlie", ()).await }
        });
        let first = next_done(&mut rx, Duration::from_secs(3))
            .await
            .expect("the first execution ends");
        assert!(
            matches!(&first.payload, Payload::Done(d) if d.outcome.is_err()),
            "{shape:?}: the first execution fails"
        );
        // alpha and bravo carry into the next execution, charlie joins it: more than it can queue.
        let sent = tokio::time::timeout(Duration::from_secs(3), charlie)
            .await
            .unwrap_or_else(|_| panic!("{shape:?}: carried input held up the Standby"))
            .unwrap();
        assert!(sent.is_ok(), "{shape:?}: {sent:?}");
        sb.cancel();
        let done = next_done(&mut rx, Duration::from_secs(3))
            .await
            .unwrap_or_else(|| panic!("{shape:?}: cancel waited for queue space"));
        let Payload::Done(d) = &done.payload else {
            unreachable!()
        };
        let Err(e) = &d.outcome else {
            panic!("{shape:?}: {:?}", d.outcome)
        };
        assert_eq!(e.reason(), Some(FailureReason::Cancelled), "{shape:?}: {e}");
        let partial = e.as_run().map(|r| r.result.clone()).expect("a run error");
        for text in ["bravo", "charlie"] {
            let m = partial
                .messages()
                .into_iter()
                .find(|m| m.text == text)
                .unwrap_or_else(|| panic!("{shape:?}: {text} is reported"));
            assert_eq!(
                (m.state, m.reason),
                (MessageState::Failed, Some(MessageFailure::Cancelled)),
                "{shape:?}: {text}"
            );
        }
        life.cancel();
    }
);

shapes!(
    a_send_abandoned_while_waiting_for_queue_space_is_withdrawn,
    |shape| async move {
        let a = shape
            .builder(Agent::builder(ClaimsLater).thread_store(Arc::new(MemoryStore::new())))
            .policy(one_pending())
            .build();
        let life = CancellationToken::new();
        let sb = a.thread("sb-abandon").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("task", ()).await.unwrap();
        sb.send("one", ()).await.expect("fills the queue");
        let gave_up = tokio::time::timeout(Duration::from_millis(100), sb.send("two", ())).await;
        assert!(gave_up.is_err(), "{shape:?}: the send waited for queue space");
        let done = next_done(&mut rx, Duration::from_secs(5))
            .await
            .expect("the execution ends");
        let Payload::Done(d) = &done.payload else {
            unreachable!()
        };
        let r = d.outcome.as_ref().expect("success");
        assert_eq!(
            r.text, "got: one",
            "{shape:?}: the abandoned send was admitted anyway"
        );
        life.cancel();
    }
);

shapes!(
    events_before_the_first_subscription_are_discarded,
    |shape| async move {
        let a = shape.agent(
            ReferenceDriver::new(ReferenceConfig::default()),
            Arc::new(MemoryStore::new()),
        );
        let life = CancellationToken::new();
        let t = a.thread("sb-late");
        let sb = t.standby(life.clone(), shape.opts());
        sb.send("early", ()).await.unwrap();
        // The early execution ends unobserved: its checkpoint is persisted (before its `Done`).
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.checkpoint(shape.store_tenant()).await.unwrap().is_none() {
            assert!(Instant::now() < deadline, "{shape:?}: the early execution ended");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut rx = sb.events().expect("the first call takes the stream");
        assert!(sb.events().is_none(), "{shape:?}: a single consumer");
        sb.send("late", ()).await.unwrap();
        let mut seen = Vec::new();
        while seen.last().is_none_or(|e: &Event| !e.is_done()) {
            let e = tokio::time::timeout(Duration::from_secs(5), rx.recv())
                .await
                .expect("events in time")
                .expect("open");
            seen.push(e);
        }
        assert!(
            matches!(seen[0].payload, Payload::RunStarted(_)),
            "{shape:?}: the late execution comes first: {:?}",
            seen.iter().map(|e| e.payload.type_name()).collect::<Vec<_>>()
        );
        let run_id = &seen[0].meta.run_id;
        assert!(
            seen.iter().all(|e| &e.meta.run_id == run_id),
            "{shape:?}: nothing of the early execution was kept"
        );
        let Payload::Done(d) = &seen.last().unwrap().payload else {
            unreachable!()
        };
        let r = d.outcome.as_ref().expect("the late execution succeeds");
        assert!(r.text.contains("late"), "{shape:?}: {}", r.text);
        life.cancel();
    }
);

/// Sends `text` from a caller that leaves (its task is aborted, like an HTTP request ending) as soon
/// as the send was accepted; returns the send's answer.
async fn send_and_leave(
    sb: &agent_adaptor::runtime::Standby,
    text: &'static str,
) -> Result<String, agent_adaptor::runtime::MessageError> {
    let sb = sb.clone();
    let (tx, answer) = tokio::sync::oneshot::channel();
    let caller = tokio::spawn(async move {
        let _ = tx.send(sb.send(text, ()).await);
        std::future::pending::<()>().await;
    });
    let r = answer.await.expect("the send answered");
    caller.abort();
    r
}

shapes!(
    input_accepted_before_the_caller_leaves_stays_admitted,
    |shape| async move {
        let a = shape.agent(ClaimsLater, Arc::new(MemoryStore::new()));
        let life = CancellationToken::new();
        let sb = a.thread("sb-leave").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        // Idle: the accepted send starts an execution that outlives its caller.
        send_and_leave(&sb, "task").await.expect("accepted");
        // Active: the accepted send joins it and is not withdrawn when its caller leaves.
        send_and_leave(&sb, "joined").await.expect("accepted");
        let done = next_done(&mut rx, Duration::from_secs(5))
            .await
            .expect("the execution ends");
        let Payload::Done(d) = &done.payload else {
            unreachable!()
        };
        let r = d.outcome.as_ref().expect("the execution succeeds");
        assert_eq!(
            r.text, "got: joined",
            "{shape:?}: delivered after its caller left"
        );
        assert_eq!(r.messages()[0].state, MessageState::Delivered);
        life.cancel();
    }
);
