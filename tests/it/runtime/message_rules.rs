//! Message-policy rules through the real queue (§3.3, §4.1, §6.1, §6.2): a custom `Format` replaces
//! the framing and the starting prompt stays unframed; negative limits are invalid; the wrap-up
//! guidance only rides an existing batch that fits the size limit; input is ordered within each
//! delivery boundary; a requeue reports `Accepted` again; input admitted after an in-run-only
//! driver's last boundary is reported failed, never lost; message options describe a starting
//! prompt, which starts at once whatever its timing.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::driver::policy::FormatFn;
use agent_adaptor::driver::{
    Ack, Author, AuthorKind, Boundary, ContinueMode, Descriptor, Driver, InvalidConfig, MessageFailure,
    MessagePolicy, Pending, Policy, Request, Response, RunIo, Timing, TurnReport,
};
use agent_adaptor::runtime::{Agent, CallOptions, ErrorKind, Event, MessageOptions, MessageState, Payload};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, reference_descriptor};
use tokio::sync::Notify;

use super::collect;

/// One claimed batch: (id, framed text, possible duplicate) per message.
type Batch = Vec<(String, String, bool)>;

/// What the scripted driver saw.
#[derive(Default)]
struct Seen {
    prompt: String,
    batches: Vec<(Boundary, Batch)>,
}

/// How the [`Claims`] driver proceeds.
#[derive(Clone, Copy)]
enum Plan {
    /// Wait for `ready`, then one turn per non-empty turn-end batch.
    TurnEnd,
    /// Wait for `ready`, claim in the turn, then at turn end, and so on.
    InTurnThenTurnEnd,
    /// Claim in the turn and requeue (possibly delivered), then deliver at turn end.
    Requeue,
    /// One turn, an empty final claim, then wait for the host before returning.
    FinalRace,
}

/// A driver scripted by [`Plan`] that records its prompt and every batch it claimed.
#[derive(Clone)]
struct Claims {
    plan: Plan,
    descriptor: Descriptor,
    ready: fn(Pending) -> bool,
    seen: Arc<Mutex<Seen>>,
    /// FinalRace: the driver made its last claim / the host admitted its late input.
    last_claim: Arc<Notify>,
    late_sent: Arc<Notify>,
}

impl Claims {
    fn new(plan: Plan, ready: fn(Pending) -> bool) -> Claims {
        let mut descriptor = reference_descriptor(ContinueMode::InRun);
        descriptor.driver_type = "claims".into();
        Claims {
            plan,
            descriptor,
            ready,
            seen: Default::default(),
            last_claim: Default::default(),
            late_sent: Default::default(),
        }
    }

    fn record(&self, boundary: Boundary, claims: &[agent_adaptor::driver::ClaimedMessage]) {
        self.seen.lock().unwrap().batches.push((
            boundary,
            claims
                .iter()
                .map(|c| (c.id.clone(), c.text.clone(), c.possible_duplicate))
                .collect(),
        ));
    }

    fn batches(&self) -> Vec<(Boundary, Batch)> {
        self.seen.lock().unwrap().batches.clone()
    }
}

async fn turn(io: &RunIo, n: u32) {
    io.events
        .turn_completed(TurnReport {
            text: format!("turn {n}"),
            usage: None,
            error: None,
        })
        .await;
}

fn deliver(claims: Vec<agent_adaptor::driver::ClaimedMessage>) {
    for c in claims {
        c.ack(Ack::Delivered {
            mechanism: "test".into(),
        });
    }
}

#[async_trait::async_trait]
impl Driver for Claims {
    fn descriptor(&self) -> Descriptor {
        self.descriptor.clone()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.seen.lock().unwrap().prompt.clone_from(&req.prompt);
        let Some(mut port) = io.messages.clone() else {
            return Response::default();
        };
        let ready = self.ready;
        let wait = async {
            while !ready(port.pending()) {
                port.changed().await;
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(5), wait).await;
        let mut n = 0;
        match self.plan {
            Plan::TurnEnd => loop {
                n += 1;
                turn(&io, n).await;
                let claims = port.claim(Boundary::TurnEnd);
                if claims.is_empty() {
                    break;
                }
                self.record(Boundary::TurnEnd, &claims);
                deliver(claims);
            },
            Plan::InTurnThenTurnEnd => {
                let claims = port.claim(Boundary::InTurn);
                self.record(Boundary::InTurn, &claims);
                deliver(claims);
                loop {
                    n += 1;
                    turn(&io, n).await;
                    let claims = port.claim(Boundary::TurnEnd);
                    if claims.is_empty() {
                        break;
                    }
                    self.record(Boundary::TurnEnd, &claims);
                    deliver(claims);
                }
            }
            Plan::Requeue => {
                let claims = port.claim(Boundary::InTurn);
                self.record(Boundary::InTurn, &claims);
                for c in claims {
                    c.ack(Ack::Requeue {
                        possible_duplicate: true,
                    });
                }
                turn(&io, 1).await;
                let claims = port.claim(Boundary::TurnEnd);
                self.record(Boundary::TurnEnd, &claims);
                deliver(claims);
                turn(&io, 2).await;
                n = 2;
            }
            Plan::FinalRace => {
                turn(&io, 1).await;
                n = 1;
                let claims = port.claim(Boundary::TurnEnd);
                self.record(Boundary::TurnEnd, &claims);
                deliver(claims);
                // The last boundary is behind us; input admitted now can no longer be delivered.
                self.last_claim.notify_one();
                let _ = tokio::time::timeout(Duration::from_secs(5), self.late_sent.notified()).await;
            }
        }
        Response {
            text: format!("turn {n}"),
            ..Default::default()
        }
    }
}

fn policy(messages: MessagePolicy) -> CallOptions {
    CallOptions::new().policy(Policy {
        messages,
        ..Default::default()
    })
}

fn updates<'a>(events: &'a [Event], id: &str) -> Vec<&'a agent_adaptor::runtime::MessageUpdate> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::MessageUpdate(u) if u.id == id => Some(u),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// §4.1 Format, and the unframed starting prompt.

#[tokio::test]
async fn a_custom_format_replaces_the_framing_and_the_starting_prompt_is_unframed() {
    let format: FormatFn =
        Arc::new(|ctx| format!("<<{}|{}|{:?}|{:?}>>", ctx.id, ctx.text, ctx.from.kind, ctx.timing));
    let peer = Author {
        kind: AuthorKind::Agent,
        id: "peer-1".into(),
        name: "Peer".into(),
    };
    for custom in [true, false] {
        let driver = Claims::new(Plan::TurnEnd, |p| p.after_turn >= 1);
        let agent = Agent::new(driver.clone());
        let messages = MessagePolicy {
            format: custom.then(|| format.clone()),
            ..Default::default()
        };
        let stream = agent.send("the starting prompt", policy(messages).from(peer.clone()));
        stream
            .send(
                "hello",
                MessageOptions::new()
                    .id("m1")
                    .from(peer.clone())
                    .when(Timing::AfterTurn),
            )
            .await
            .unwrap();
        stream.result().await.expect("run");
        let seen = driver.seen.lock().unwrap();
        assert_eq!(
            seen.prompt, "the starting prompt",
            "the starting prompt is unframed"
        );
        let text = &seen.batches[0].1[0].1;
        if custom {
            assert_eq!(
                text, "<<m1|hello|Agent|AfterTurn>>",
                "the custom format replaces the framing"
            );
        } else {
            assert!(
                text.contains("peer agent Peer") && text.contains("hello") && text != "hello",
                "the built-in author-aware framing: {text}"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// §4.1 Negative limits.

#[tokio::test]
async fn negative_message_limits_are_invalid_before_launch() {
    for messages in [
        MessagePolicy {
            max_turns: -1,
            ..Default::default()
        },
        MessagePolicy {
            max_pending: -1,
            ..Default::default()
        },
    ] {
        let driver = Claims::new(Plan::TurnEnd, |_| true);
        let agent = Agent::new(driver.clone());
        let stream = agent.send("go", policy(messages.clone()));
        let events = collect(&stream).await;
        let err = stream.result().await.expect_err("refused");
        assert_eq!(err.kind(), ErrorKind::InvalidPolicy, "{messages:?}: {err}");
        assert_eq!(events.len(), 1, "only Done: nothing started");
        assert!(
            driver.seen.lock().unwrap().prompt.is_empty(),
            "the driver never ran"
        );
    }
    // Zero means the default, not invalid.
    let agent = Agent::new(Claims::new(Plan::TurnEnd, |_| true));
    assert!(
        agent
            .send("go", policy(MessagePolicy::default()))
            .result()
            .await
            .is_ok()
    );
}

// ---------------------------------------------------------------------------------------------
// §4.1 Wrap-up guidance.

const WRAP_UP: &str = "turn limit for this task is near";

#[tokio::test]
async fn wrap_up_guidance_only_rides_an_existing_batch_that_fits() {
    let two_turns = || MessagePolicy {
        max_turns: 2,
        ..Default::default()
    };
    // It rides the batch that continues after the notice, after the host's text.
    let driver = Claims::new(Plan::TurnEnd, |p| p.after_turn >= 1);
    let stream = Agent::new(driver.clone()).send("go", policy(two_turns()));
    stream
        .send(
            "host input",
            MessageOptions::new().id("h").when(Timing::AfterTurn),
        )
        .await
        .unwrap();
    let r = stream.result().await.expect("run");
    assert_eq!(r.turns, 2);
    let text = &driver.batches()[0].1[0].1;
    assert!(text.contains(WRAP_UP), "rides the batch: {text}");
    assert!(
        text.find("host input") < text.find(WRAP_UP),
        "after the host's input, not displacing it: {text}"
    );

    // Without host input it never starts a turn of its own.
    let driver = Claims::new(Plan::TurnEnd, |_| true);
    let stream = Agent::new(driver.clone()).send("go", policy(two_turns()));
    let events = collect(&stream).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == "limit.approaching")),
        "the limit is approaching after one of two turns"
    );
    let r = stream.result().await.expect("run");
    assert_eq!(r.turns, 1, "no turn for the guidance alone");
    assert!(driver.batches().is_empty(), "nothing was claimed");

    // When the framed batch plus the guidance exceeds the size limit, the guidance stays out.
    let mut driver = Claims::new(Plan::TurnEnd, |p| p.after_turn >= 1);
    let input = "x".repeat(100);
    driver.descriptor.messages.max_units = 120;
    let stream = Agent::new(driver.clone()).send(
        "go",
        policy(MessagePolicy {
            format: Some(Arc::new(|ctx| ctx.text.clone())),
            ..two_turns()
        }),
    );
    stream
        .send(
            input.clone(),
            MessageOptions::new().id("big").when(Timing::AfterTurn),
        )
        .await
        .unwrap();
    let r = stream.result().await.expect("run");
    assert_eq!(r.turns, 2);
    assert_eq!(
        driver.batches()[0].1[0].1,
        input,
        "the input is delivered whole, without guidance that does not fit"
    );
}

// ---------------------------------------------------------------------------------------------
// §6.1 Order within a boundary.

#[tokio::test]
async fn input_is_ordered_within_each_delivery_boundary() {
    let driver = Claims::new(Plan::InTurnThenTurnEnd, |p| p.soon >= 3 && p.after_turn >= 2);
    let stream = Agent::new(driver.clone()).send("go", ());
    for (id, timing) in [
        ("a", Timing::AfterTurn),
        ("b", Timing::Soon),
        ("c", Timing::Soon),
        ("d", Timing::AfterTurn),
        ("e", Timing::Soon),
    ] {
        stream
            .send(id, MessageOptions::new().id(id).when(timing))
            .await
            .unwrap();
    }
    let events = collect(&stream).await;
    let r = stream.result().await.expect("run");
    let ids = |b: &Batch| b.iter().map(|(id, ..)| id.clone()).collect::<Vec<_>>();
    let batches = driver.batches();
    assert_eq!(batches[0].0, Boundary::InTurn);
    assert_eq!(
        ids(&batches[0].1),
        ["b", "c", "e"],
        "Soon input in admission order"
    );
    assert_eq!(batches[1].0, Boundary::TurnEnd);
    assert_eq!(
        ids(&batches[1].1),
        ["a", "d"],
        "AfterTurn input in admission order, deferred behind later Soon input"
    );
    let turn_ends: Vec<Vec<String>> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TurnEnd(t) => Some(t.message_ids.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(turn_ends[0], ["b", "c", "e"]);
    assert_eq!(turn_ends[1], ["a", "d"]);
    let order: Vec<String> = r.messages().into_iter().map(|m| m.id).collect();
    assert_eq!(order, ["a", "b", "c", "d", "e"], "outcomes in admission order");
}

// ---------------------------------------------------------------------------------------------
// §6.2 MessageState / MessageFailure values; a requeue reports Accepted again.

#[tokio::test]
async fn a_requeue_reports_accepted_again_and_the_states_have_their_values() {
    assert_eq!(
        [
            MessageState::Accepted,
            MessageState::Delivered,
            MessageState::Failed
        ]
        .map(|s| s as u8),
        [1, 2, 3]
    );
    assert_eq!(
        [
            MessageFailure::Cancelled,
            MessageFailure::ProviderRejected,
            MessageFailure::Timeout,
            MessageFailure::LimitExceeded,
            MessageFailure::RunFailed,
        ]
        .map(|f| f.as_str()),
        [
            "cancelled",
            "provider_rejected",
            "timeout",
            "limit_exceeded",
            "run_failed"
        ]
    );
    let driver = Claims::new(Plan::Requeue, |p| p.soon >= 1);
    let stream = Agent::new(driver.clone()).send("go", ());
    stream
        .send("again", MessageOptions::new().id("r1"))
        .await
        .unwrap();
    let events = collect(&stream).await;
    let r = stream.result().await.expect("run");
    let states: Vec<(MessageState, String)> = updates(&events, "r1")
        .iter()
        .map(|u| (u.state, u.boundary.clone()))
        .collect();
    assert!(
        states.ends_with(&[
            (MessageState::Accepted, "in_turn".into()),
            (MessageState::Delivered, "turn_end".into()),
        ]),
        "the requeue reports Accepted again with the attempted boundary, then the delivery: {states:?}"
    );
    let batches = driver.batches();
    assert!(
        !batches[0].1[0].2,
        "the first attempt is not a possible duplicate"
    );
    assert!(batches[1].1[0].2, "the retry is marked a possible duplicate");
    assert_eq!(r.messages()[0].state, MessageState::Delivered);
    assert_eq!(r.messages()[0].turn, 2);
}

// ---------------------------------------------------------------------------------------------
// §6.1 The final boundary race of an in-run-only driver without resume.

#[tokio::test]
async fn input_admitted_after_the_last_boundary_of_an_in_run_only_driver_is_reported_failed() {
    let mut driver = Claims::new(Plan::FinalRace, |_| true);
    driver.descriptor.sessions.resume = false;
    driver.descriptor.sessions.fork = false;
    let stream = Agent::new(driver.clone()).send("go", ());
    tokio::time::timeout(Duration::from_secs(5), driver.last_claim.notified())
        .await
        .expect("the driver's last claim");
    let admitted = stream
        .send("too late", MessageOptions::new().id("late"))
        .await
        .expect("still admitted: the execution has not ended");
    driver.late_sent.notify_one();
    let events = collect(&stream).await;
    let r = stream.result().await.expect("the run itself succeeds");
    let outcome = r
        .messages()
        .into_iter()
        .find(|m| m.id == admitted)
        .expect("reported, not silently lost");
    assert_eq!(
        (outcome.state, outcome.reason),
        (MessageState::Failed, Some(MessageFailure::RunFailed))
    );
    assert_eq!(outcome.text, "too late", "with its original text");
    assert_eq!(r.undelivered().len(), 1);
    assert!(
        updates(&events, "late")
            .iter()
            .any(|u| u.state == MessageState::Failed && u.text == "too late"),
        "and a failed MessageUpdate"
    );
}

// ---------------------------------------------------------------------------------------------
// §3.3 Message options on a starting prompt.

#[tokio::test]
async fn message_options_describe_a_starting_prompt_which_starts_at_once_whatever_its_timing() {
    // A driver without interrupt support: an Interrupt starting prompt is still no supplemental send.
    let mut descriptor = reference_descriptor(ContinueMode::InRun);
    descriptor.messages.interrupt = false;
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(descriptor),
        ..Default::default()
    }));
    let thread = agent.thread("starting");
    let peer = Author {
        kind: AuthorKind::Agent,
        id: "peer".into(),
        name: "Peer".into(),
    };
    for (i, timing) in [Timing::AfterTurn, Timing::Interrupt, Timing::Soon]
        .into_iter()
        .enumerate()
    {
        let opts = CallOptions::new()
            .message_id(format!("start-{i}"))
            .from(peer.clone())
            .when(timing);
        let stream = thread.send("begin", opts);
        let events = collect(&stream).await;
        let r = stream
            .result()
            .await
            .unwrap_or_else(|e| panic!("{timing:?}: {e}"));
        assert_eq!(r.turns, 1, "{timing:?}: started at once");
        assert!(matches!(events[0].payload, Payload::RunStarted(_)));
        assert_eq!(
            r.text, "Reference reply: begin",
            "{timing:?}: the prompt reached the driver unframed whatever its author"
        );
    }
    // The id describes the starting prompt: sent again on the thread, it is a duplicate.
    let r = thread
        .send("begin", CallOptions::new().message_id("start-0"))
        .result()
        .await
        .expect("a duplicate completes");
    assert_eq!(
        (r.turns, r.text.as_str()),
        (0, ""),
        "the starting prompt's id was its receipt"
    );
}
