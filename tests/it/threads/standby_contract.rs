//! Standby (§5.2) under the three identity shapes: a live Standby excludes task sends on its key
//! whatever the identity shape, holds the store lease while idle (another process is excluded),
//! reports a failed ownership release (`thread.ownership`); carried input is never lost, the retry
//! keeps the failed execution's options and its delay blocks neither sends, cancel nor shutdown, only
//! `run_failed` outcomes carry, cancel fails queued input with `cancelled` outcomes, and closing the
//! Agent stops the Standby.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_adaptor::driver::{
    Checkpoint, ContinueMode, Descriptor, Driver, Failure, FailureCode, InvalidConfig, JsonSessionCodec,
    MessageFailure, MessagePolicy, Policy, Request, Response, RunIo, SessionCodec, SessionState, Timing,
    notice_kind,
};
use agent_adaptor::runtime::{
    CallOptions, ErrorKind, Event, MessageState, Payload, RunOutcome, ThreadErrorKind,
};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, reference_descriptor};
use tokio::sync::mpsc::Receiver;
use tokio_util::sync::CancellationToken;

use super::flaky::Flaky;
use super::run;
use super::shapes::shapes;

fn slow() -> ReferenceDriver {
    ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    })
}

fn busy(outcome: &RunOutcome) -> bool {
    matches!(outcome, Err(e) if e.kind() == ErrorKind::Thread(ThreadErrorKind::Busy))
}

/// Collects events until `n` executions have ended (each ends with its `Done`).
async fn executions(rx: &mut Receiver<Event>, n: usize) -> Vec<Event> {
    let mut out = Vec::new();
    let mut done = 0;
    while done < n {
        let e = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("events in time")
            .expect("open");
        if e.is_done() {
            done += 1;
        }
        out.push(e);
    }
    out
}

fn outcomes(events: &[Event]) -> Vec<RunOutcome> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Done(d) => Some(d.outcome.clone()),
            _ => None,
        })
        .collect()
}

shapes!(
    a_live_standby_excludes_task_sends_on_its_key,
    |shape| async move {
        let a = shape.agent(slow(), Arc::new(MemoryStore::new()));
        let life = CancellationToken::new();
        let t = a.thread("sb-busy");
        let _sb = t.standby(life.clone(), shape.opts());
        let (_, same) = run(t.send("task", shape.opts())).await;
        assert!(busy(&same), "{shape:?}: the same handle: {same:?}");
        let (_, other) = run(a.thread("sb-busy").send("task", shape.opts())).await;
        assert!(busy(&other), "{shape:?}: another handle on the key: {other:?}");
        life.cancel();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let (_, free) = run(t.send("task", shape.opts())).await;
        assert!(free.is_ok(), "{shape:?}: free once the Standby ended: {free:?}");
    }
);

shapes!(an_idle_standby_holds_the_store_lease, |shape| async move {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let a = shape.agent(slow(), store.clone());
    // Another process on the same store: another Agent, no shared in-process registry.
    let b = shape.agent(slow(), store);
    let life = CancellationToken::new();
    let _sb = a.thread("sb-lease").standby(life.clone(), shape.opts());
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (_, other) = run(b.thread("sb-lease").send("task", shape.opts())).await;
    assert!(
        busy(&other),
        "{shape:?}: an idle Standby excludes another process: {other:?}"
    );
    life.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, free) = run(b.thread("sb-lease").send("task", shape.opts())).await;
    assert!(
        free.is_ok(),
        "{shape:?}: the lease is released with the lifetime: {free:?}"
    );
});

shapes!(
    a_failed_ownership_release_is_a_thread_ownership_notice,
    |shape| async move {
        let flaky = Flaky::new(Arc::new(MemoryStore::new()));
        let a = shape.agent(slow(), flaky.clone());
        let life = CancellationToken::new();
        let sb = a.thread("sb-release").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("hello", ()).await.unwrap();
        executions(&mut rx, 1).await;
        flaky.fail_release.store(true, Ordering::SeqCst);
        life.cancel();
        let mut seen = Vec::new();
        while let Ok(Some(e)) = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            seen.push(e);
        }
        assert!(
            seen.iter().any(|e| matches!(&e.payload,
            Payload::Notice(n) if n.kind == notice_kind::THREAD_OWNERSHIP)),
            "{shape:?}: {:?}",
            seen.iter().map(|e| e.payload.type_name()).collect::<Vec<_>>()
        );
    }
);

/// Echoes its prompt; the first invocation, and any whose prompt contains `[fail]`, fails (after a
/// pause) with `code`. Declares no in-run
/// boundary (input joins through core resume continuation); records each request's model.
#[derive(Clone)]
struct FailsFirst {
    calls: Arc<AtomicU32>,
    code: FailureCode,
    retry_after: Option<Duration>,
    models: Arc<Mutex<Vec<Option<String>>>>,
}

impl FailsFirst {
    fn new(code: FailureCode, retry_after: Option<Duration>) -> FailsFirst {
        FailsFirst {
            calls: Default::default(),
            code,
            retry_after,
            models: Default::default(),
        }
    }
}

#[async_trait::async_trait]
impl Driver for FailsFirst {
    fn descriptor(&self) -> Descriptor {
        let mut d = reference_descriptor(ContinueMode::Resume);
        d.driver_type = "fails-first".into();
        d.messages.boundaries.clear();
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        Some(Arc::new(JsonSessionCodec))
    }
    fn session_fingerprint(&self) -> Option<String> {
        Some("fails-first".into())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.models.lock().unwrap().push(req.model.clone());
        if self.calls.fetch_add(1, Ordering::SeqCst) == 0 || req.prompt.contains("[fail]") {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(150)) => {}
                _ = io.cancel.cancelled() => {}
            }
            let mut f = Failure::new(self.code.clone(), "the first invocation fails");
            f.retry_after = self.retry_after;
            return Response {
                failure: Some(f),
                ..Default::default()
            };
        }
        Response {
            text: format!("ok: {}", req.prompt),
            checkpoint: Some(Checkpoint {
                state: SessionState {
                    resume_id: "s".into(),
                    ..Default::default()
                },
                valid: true,
            }),
            ..Default::default()
        }
    }
}

shapes!(carried_input_that_cannot_join_is_not_lost, |shape| async move {
    let driver = FailsFirst::new(FailureCode::AgentError, None);
    let a = shape.agent(driver, Arc::new(MemoryStore::new()));
    let life = CancellationToken::new();
    let sb = a.thread("sb-carry").standby(life.clone(), shape.opts());
    let mut rx = sb.events().expect("events");
    sb.send("alpha", ()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(40)).await;
    sb.send("bravo", ()).await.unwrap();
    let first = executions(&mut rx, 1).await;
    assert!(
        outcomes(&first)[0].is_err(),
        "{shape:?}: the first execution fails"
    );
    // The next execution cannot take supplemental input: bravo (carried) and charlie cannot join it.
    let no_messages = Policy {
        messages: MessagePolicy {
            disabled: true,
            ..Default::default()
        },
        ..Default::default()
    };
    sb.send("charlie", CallOptions::new().policy(no_messages))
        .await
        .unwrap();
    let mut texts = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !(texts.iter().any(|t: &String| t.contains("bravo")) && texts.iter().any(|t| t.contains("charlie")))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(Some(e)) = tokio::time::timeout(left, rx.recv()).await else {
            panic!("{shape:?}: carried input was lost; delivered texts: {texts:?}");
        };
        if let Payload::Done(d) = &e.payload
            && let Ok(r) = &d.outcome
        {
            texts.push(r.text.clone());
        }
    }
    life.cancel();
});

shapes!(
    the_retry_keeps_the_failed_executions_options,
    |shape| async move {
        let driver = FailsFirst::new(FailureCode::RateLimited, Some(Duration::from_millis(20)));
        let a = shape.agent(driver.clone(), Arc::new(MemoryStore::new()));
        let life = CancellationToken::new();
        let sb = a.thread("sb-retry").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("hello", CallOptions::new().model("model-x"))
            .await
            .unwrap();
        let events = executions(&mut rx, 2).await;
        let done = outcomes(&events);
        assert!(done[0].is_err() && done[1].is_ok(), "{shape:?}: {done:?}");
        let models = driver.models.lock().unwrap().clone();
        assert_eq!(
            models,
            vec![Some("model-x".to_string()), Some("model-x".to_string())],
            "{shape:?}: the retry runs with the failed execution's options"
        );
        life.cancel();
    }
);

shapes!(
    the_retry_delay_blocks_neither_sends_cancel_nor_shutdown,
    |shape| async move {
        let driver = FailsFirst::new(FailureCode::RateLimited, Some(Duration::from_secs(3)));
        let a = shape.agent(driver.clone(), Arc::new(MemoryStore::new()));
        let life = CancellationToken::new();
        let t = a.thread("sb-delay");
        let sb = t.standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("hello", ()).await.unwrap();
        executions(&mut rx, 1).await;
        // In the retry delay now.
        let started = Instant::now();
        let sent = tokio::time::timeout(Duration::from_millis(500), sb.send("more", ())).await;
        assert!(sent.is_ok(), "{shape:?}: a send waited for the retry delay");
        sb.cancel();
        let cancelled = tokio::time::timeout(Duration::from_millis(500), sb.send("after cancel", ())).await;
        assert!(cancelled.is_ok(), "{shape:?}: cancel waited for the retry delay");
        let next = executions(&mut rx, 1).await;
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{shape:?}: the send after cancel started at once ({:?})",
            started.elapsed()
        );
        let Ok(r) = &outcomes(&next)[0] else {
            panic!("{shape:?}: {:?}", outcomes(&next))
        };
        assert_eq!(
            r.text, "ok: after cancel",
            "{shape:?}: cancel dropped the pending retry"
        );
        // Shutdown during a retry delay is prompt too.
        sb.send("again [fail]", ()).await.unwrap();
        let failed = executions(&mut rx, 1).await;
        assert!(outcomes(&failed)[0].is_err(), "{shape:?}");
        life.cancel();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let (_, free) = run(t.send("task", shape.opts())).await;
        assert!(
            free.is_ok(),
            "{shape:?}: the thread is free soon after shutdown: {free:?}"
        );
    }
);

shapes!(only_run_failed_outcomes_carry, |shape| async move {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let one_turn = Policy {
        messages: MessagePolicy {
            max_turns: 1,
            ..Default::default()
        },
        ..Default::default()
    };
    let a = shape
        .builder(agent_adaptor::runtime::Agent::builder(slow()).thread_store(store))
        .policy(one_turn)
        .build();
    let life = CancellationToken::new();
    let sb = a.thread("sb-limit").standby(life.clone(), shape.opts());
    let mut rx = sb.events().expect("events");
    sb.send("one two three four five six", ()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(40)).await;
    sb.send("over the limit", CallOptions::new().when(Timing::AfterTurn))
        .await
        .unwrap();
    let first = executions(&mut rx, 1).await;
    let Ok(r) = &outcomes(&first)[0] else {
        panic!("{shape:?}")
    };
    let over = r
        .messages()
        .into_iter()
        .find(|m| m.text == "over the limit")
        .expect("outcome");
    assert_eq!(over.reason, Some(MessageFailure::LimitExceeded), "{shape:?}");
    sb.send("fresh", ()).await.unwrap();
    let second = executions(&mut rx, 1).await;
    let Ok(r) = &outcomes(&second)[0] else {
        panic!("{shape:?}")
    };
    assert!(
        r.text.starts_with("Reference reply: fresh"),
        "{shape:?}: a limit_exceeded message does not carry: {}",
        r.text
    );
    life.cancel();
});

shapes!(
    cancel_fails_queued_input_with_cancelled_outcomes,
    |shape| async move {
        let a = shape.agent(slow(), Arc::new(MemoryStore::new()));
        let life = CancellationToken::new();
        let sb = a.thread("sb-cancel").standby(life.clone(), shape.opts());
        let mut rx = sb.events().expect("events");
        sb.send("a long answer with many words to stream slowly", ())
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
        let queued = sb
            .send("a separate execution", CallOptions::new().model("other"))
            .await
            .unwrap();
        sb.cancel();
        let events = executions(&mut rx, 1).await;
        let done = outcomes(&events);
        let partial = done[0]
            .as_ref()
            .err()
            .and_then(|e| e.as_run())
            .map(|r| r.result.clone())
            .expect("cancelled with a partial result");
        let m = partial
            .messages()
            .into_iter()
            .find(|m| m.id == queued)
            .expect("the queued input is reported");
        assert_eq!(
            (m.state, m.reason, m.text.as_str()),
            (
                MessageState::Failed,
                Some(MessageFailure::Cancelled),
                "a separate execution"
            ),
            "{shape:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(&e.payload, Payload::MessageUpdate(u)
            if u.id == queued && u.reason == Some(MessageFailure::Cancelled))),
            "{shape:?}: a MessageUpdate reports it"
        );
        // Nothing runs afterwards: the queued execution was dropped.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), rx.recv())
                .await
                .is_err(),
            "{shape:?}"
        );
        life.cancel();
    }
);

shapes!(closing_the_agent_stops_its_standby, |shape| async move {
    let a = shape.agent(slow(), Arc::new(MemoryStore::new()));
    let life = CancellationToken::new();
    let sb = a.thread("sb-close").standby(life.clone(), shape.opts());
    sb.send("hello", ()).await.unwrap();
    let closed = a.close(Duration::from_secs(5)).await;
    assert!(closed.is_ok(), "{shape:?}: {closed:?}");
    assert!(!sb.is_live(), "{shape:?}: the Standby ended with its Agent");
    let sent = tokio::time::timeout(Duration::from_millis(500), sb.send("after close", ())).await;
    assert!(
        matches!(sent, Ok(Err(_))),
        "{shape:?}: a send after close is refused: {sent:?}"
    );
});

#[tokio::test]
async fn standby_messages_reject_nothing_silently() {
    // A control for the shapes above: the reference driver delivers a joined message.
    let a = agent_adaptor::runtime::Agent::builder(slow())
        .thread_store(Arc::new(MemoryStore::new()))
        .build();
    let life = CancellationToken::new();
    let sb = a.thread("sb-join").standby(life.clone(), CallOptions::new());
    let mut rx = sb.events().unwrap();
    sb.send("one two three four five six seven", ()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(40)).await;
    let id = sb
        .send("joined", CallOptions::new().message_id("j-1"))
        .await
        .unwrap();
    assert_eq!(id, "j-1");
    let events = executions(&mut rx, 1).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::MessageUpdate(u)
        if u.id == "j-1" && u.state == MessageState::Delivered))
    );
    life.cancel();
}
