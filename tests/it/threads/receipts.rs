//! Message ids are thread-scoped idempotency keys (§6.1): a supplemental id delivered in one run of a
//! thread is a duplicate in the next (reported, not delivered again); an empty id means "generate
//! one", for starting prompts too; and a resume rejection during core-driven continuation neither
//! replays the starting prompt nor acknowledges the unsent input as delivered.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::driver::{
    ContinueMode, Descriptor, Driver, FailureCode, InvalidConfig, MessageFailure, Request, Response, RunIo,
    SessionCodec, SessionPlan, Timing,
};
use agent_adaptor::runtime::{MessageOptions, MessageState, Payload, Stream};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use futures::StreamExt;

use super::shapes::shapes;

const PROMPT: &str = "one two three four five six seven eight nine ten";

fn slow() -> ReferenceDriver {
    ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    })
}

/// Sends `text` with `opts` once the first content delta streamed, then drains; returns the events.
async fn send_mid_run(
    stream: &Stream,
    text: &str,
    opts: MessageOptions,
) -> Vec<agent_adaptor::runtime::Event> {
    let mut events = stream.events();
    let mut all = Vec::new();
    let mut sent = false;
    while let Some(e) = events.next().await {
        let delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if delta && !sent {
            sent = true;
            stream.send(text, opts.clone()).await.expect("admitted");
        }
    }
    all
}

shapes!(
    an_id_delivered_in_one_run_is_a_duplicate_in_the_next,
    |shape| async move {
        let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
        let a = shape.agent(slow(), store.clone());
        let t = a.thread("receipts");
        let first = t.send(PROMPT, shape.opts());
        send_mid_run(&first, "use the staging cluster", MessageOptions::new().id("m-1")).await;
        let r1 = first.result().await.expect("first run");
        assert_eq!(r1.messages()[0].state, MessageState::Delivered, "{shape:?}");
        assert!(r1.text.contains("(noted: use the staging cluster)"), "{shape:?}");
        let kept = store
            .has_receipts(shape.store_tenant(), "", "receipts", &["m-1".to_string()])
            .await
            .unwrap();
        assert_eq!(
            kept,
            vec![true],
            "{shape:?}: the receipt is kept under the shape's tenant"
        );

        let second = t.send(PROMPT, shape.opts());
        let events = send_mid_run(
            &second,
            "use the staging cluster",
            MessageOptions::new().id("m-1"),
        )
        .await;
        let r2 = second.result().await.expect("second run");
        assert!(
            !r2.text.contains("(noted: use the staging cluster)"),
            "{shape:?}: m-1 was delivered again in the second run: {}",
            r2.text
        );
        let outcome = r2
            .messages()
            .into_iter()
            .find(|m| m.id == "m-1")
            .expect("reported");
        assert_eq!(
            (outcome.state, outcome.turn, outcome.mechanism.as_str()),
            (MessageState::Delivered, 0, "duplicate"),
            "{shape:?}: reported as an earlier delivery"
        );
        assert!(
            r2.transcript().iter().all(|i| i.message.is_none()),
            "{shape:?}: no delivery in the second run's transcript"
        );
        let turn_ids: Vec<String> = events
            .iter()
            .filter_map(|e| match &e.payload {
                Payload::TurnEnd(t) => Some(t.message_ids.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert!(turn_ids.is_empty(), "{shape:?}: no turn lists m-1: {turn_ids:?}");
    }
);

shapes!(
    receipts_in_a_durable_store_survive_a_restart,
    |shape| async move {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("threads.db").display());
        // The first process: a starting prompt with an id, and a supplemental message delivered.
        {
            let store = agent_adaptor::store::open(&url).await.unwrap();
            let a = shape.agent(slow(), store);
            let t = a.thread("restart");
            let first = t.send(PROMPT, shape.opts().message_id("start-1"));
            send_mid_run(&first, "use the staging cluster", MessageOptions::new().id("m-1")).await;
            let r = first.result().await.expect("first run");
            assert_eq!(r.messages()[0].state, MessageState::Delivered, "{shape:?}");
            a.close(Duration::from_secs(5)).await.unwrap();
        }
        // A restarted process on the same file (a new driver: nothing survives but the store).
        let store = agent_adaptor::store::open(&url).await.unwrap();
        let b = shape.agent(slow(), store);
        let t = b.thread("restart");
        let dup = t
            .send(PROMPT, shape.opts().message_id("start-1"))
            .result()
            .await
            .expect("a duplicate completes");
        assert_eq!(
            (dup.turns, dup.text.as_str()),
            (0, ""),
            "{shape:?}: the starting prompt's receipt survived"
        );
        let second = t.send(PROMPT, shape.opts());
        send_mid_run(
            &second,
            "use the staging cluster",
            MessageOptions::new().id("m-1"),
        )
        .await;
        let r = second.result().await.expect("second run");
        // The fresh session's recovery context quotes the earlier reply; the reply itself follows it.
        let reply = r.text.rsplit("[End of earlier context]").next().unwrap_or("");
        assert!(
            !reply.contains("(noted: use the staging cluster)"),
            "{shape:?}: m-1 delivered again after the restart: {}",
            r.text
        );
        assert!(
            r.transcript().iter().all(|i| i.message.is_none()),
            "{shape:?}: no delivery in the transcript"
        );
        let m = r
            .messages()
            .into_iter()
            .find(|m| m.id == "m-1")
            .expect("reported");
        assert_eq!(
            (m.state, m.mechanism.as_str()),
            (MessageState::Delivered, "duplicate"),
            "{shape:?}"
        );
    }
);

shapes!(an_empty_starting_prompt_id_generates_one, |shape| async move {
    let a = shape.agent(
        ReferenceDriver::new(ReferenceConfig::default()),
        Arc::new(MemoryStore::new()),
    );
    let t = a.thread("empty-ids");
    for n in 0..3 {
        let r = t
            .send("hello", shape.opts().message_id(""))
            .result()
            .await
            .expect("run");
        assert_eq!(
            r.turns, 1,
            "{shape:?}: run {n} with an empty id was treated as a duplicate"
        );
        assert!(!r.text.is_empty(), "{shape:?}: run {n}");
    }
});

/// The reference driver in core-driven Resume continuation whose resumes are always rejected; it
/// records every prompt it receives.
#[derive(Clone)]
struct RejectsResume {
    inner: ReferenceDriver,
    prompts: Arc<Mutex<Vec<(String, bool)>>>,
}

#[async_trait::async_trait]
impl Driver for RejectsResume {
    fn descriptor(&self) -> Descriptor {
        self.inner.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.inner.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.inner.session_fingerprint()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        let resume = matches!(req.session, SessionPlan::Resume(_));
        self.prompts.lock().unwrap().push((req.prompt.clone(), resume));
        if resume {
            return Response::failed(FailureCode::ResumeRejected, "no conversation found with that id");
        }
        self.inner.run(req, io).await
    }
}

shapes!(
    a_rejected_resume_during_continuation_replays_nothing,
    |shape| async move {
        let driver = RejectsResume {
            inner: ReferenceDriver::new(ReferenceConfig {
                chunk_delay: Duration::from_millis(20),
                continue_mode: ContinueMode::Resume,
                ..Default::default()
            }),
            prompts: Default::default(),
        };
        let a = shape.agent(driver.clone(), Arc::new(MemoryStore::new()));
        let t = a.thread("continuation");
        let stream = t.send(PROMPT, shape.opts());
        let events = send_mid_run(
            &stream,
            "and then the follow-up",
            MessageOptions::new().id("after").when(Timing::AfterTurn),
        )
        .await;
        let prompts = driver.prompts.lock().unwrap().clone();
        let replays = prompts.iter().skip(1).filter(|(p, _)| p.contains(PROMPT)).count();
        assert_eq!(
            replays, 0,
            "{shape:?}: the delivered starting prompt was sent again: {prompts:?}"
        );
        let r = stream.result().await.expect("the first part succeeded");
        let m = r
            .messages()
            .into_iter()
            .find(|m| m.id == "after")
            .expect("outcome");
        assert_eq!(
            (m.state, m.reason),
            (MessageState::Failed, Some(MessageFailure::ProviderRejected)),
            "{shape:?}: the unsent follow-up is not acknowledged as delivered"
        );
        assert_eq!(m.text, "and then the follow-up", "{shape:?}: original text kept");
        assert!(
            !events
                .iter()
                .any(|e| matches!(&e.payload, Payload::MessageUpdate(u)
            if u.id == "after" && u.state == MessageState::Delivered)),
            "{shape:?}: no Delivered update"
        );
        assert_eq!(r.turns, 1, "{shape:?}");
    }
);
