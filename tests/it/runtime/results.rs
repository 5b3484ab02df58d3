//! The Result (§6, §8, §8.1, §16): `result()` is concurrency-safe and repeatable (every caller, and
//! `Done`, gets the very same outcome); usage is the sum of observed turn usage and `None` only when
//! nothing was observed; the core appends actual supplemental deliveries to the transcript as
//! `message` items; subagent summaries reach `subagents()` and `with_subagents` replaces them without
//! touching usage; the caller's cancellation and deadline stay apart from a driver-classified
//! cancellation.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{AuthorKind, ContinueMode, FailureCode, Timing, TranscriptKind, Usage};
use agent_adaptor::runtime::{
    Agent, CallOptions, ErrorKind, FailureReason, MessageOptions, MessageState, Payload, RunAttachment,
    RunServiceProvider, ServiceError, Stream, SubagentResult,
};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, Script, Step};

use super::collect;

fn scripted(steps: Vec<Step>, usage: Option<(u64, u64)>, mode: ContinueMode) -> ReferenceDriver {
    let mut script = Script::new(steps);
    if let Some((i, o)) = usage {
        script = script.with_usage(i, o);
    }
    ReferenceDriver::new(ReferenceConfig {
        script: Some(script),
        continue_mode: mode,
        ..Default::default()
    })
}

/// 32 concurrent `result()` callers on clones of `stream`, started before it ends.
async fn concurrent_results(stream: &Stream) -> Vec<agent_adaptor::runtime::RunOutcome> {
    let calls: Vec<_> = (0..32)
        .map(|_| {
            let s = stream.clone();
            tokio::spawn(async move { s.result().await })
        })
        .collect();
    let mut out = Vec::new();
    for c in calls {
        out.push(
            tokio::time::timeout(Duration::from_secs(10), c)
                .await
                .expect("no caller hangs")
                .unwrap(),
        );
    }
    out
}

#[tokio::test]
async fn result_is_concurrency_safe_and_repeatable() {
    // A success: every caller, later calls, `try_result` and `Done` share one result.
    let agent = Agent::new(scripted(
        vec![Step::Sleep(Duration::from_millis(100)), Step::text("ok")],
        None,
        ContinueMode::InRun,
    ));
    let stream = agent.send("go", ());
    let events = collect(&stream).await;
    let all = concurrent_results(&stream).await;
    let first = all[0].clone().expect("success");
    for r in all.iter().chain([&stream.result().await, &stream.result().await]) {
        assert!(
            Arc::ptr_eq(r.as_ref().expect("success"), &first),
            "the same result"
        );
    }
    assert!(Arc::ptr_eq(&stream.try_result().unwrap().unwrap(), &first));
    let Payload::Done(done) = &events.last().unwrap().payload else {
        panic!("Done last")
    };
    assert!(
        Arc::ptr_eq(done.outcome.as_ref().unwrap(), &first),
        "Done carries it"
    );

    // A failure: the same error (and partial result) for everyone, however often asked.
    let agent = Agent::new(scripted(
        vec![
            Step::Sleep(Duration::from_millis(100)),
            Step::Fail {
                code: FailureCode::AgentError,
                message: "boom".into(),
            },
        ],
        None,
        ContinueMode::InRun,
    ));
    let stream = agent.send("go", ());
    let all = concurrent_results(&stream).await;
    let first = all[0].clone().expect_err("failure");
    let partial = &first.as_run().expect("a run error").result;
    for r in all.iter().chain([&stream.result().await]) {
        let e = r.as_ref().expect_err("failure");
        assert_eq!(e.info(), first.info());
        assert!(
            Arc::ptr_eq(&e.as_run().unwrap().result, partial),
            "the same partial result"
        );
    }
}

#[tokio::test]
async fn usage_sums_observed_turns_and_none_means_unobserved() {
    // Core continuation (resume mode): two invocations of 5/7 tokens each.
    let agent = Agent::new(scripted(
        vec![Step::Sleep(Duration::from_millis(50)), Step::text("ok")],
        Some((5, 7)),
        ContinueMode::Resume,
    ));
    let stream = agent.send("go", ());
    stream
        .send("more", MessageOptions::new().when(Timing::AfterTurn))
        .await
        .unwrap();
    let r = stream.result().await.expect("run");
    assert_eq!(r.turns, 2);
    let u = r.usage.expect("observed");
    assert_eq!((u.input_tokens, u.output_tokens), (10, 14), "summed over turns");

    // In-run continuation: the turns the driver reports are summed too.
    let agent = Agent::new(scripted(
        vec![Step::Sleep(Duration::from_millis(50)), Step::text("ok")],
        Some((5, 7)),
        ContinueMode::InRun,
    ));
    let stream = agent.send("go", ());
    stream
        .send("more", MessageOptions::new().when(Timing::AfterTurn))
        .await
        .unwrap();
    let r = stream.result().await.expect("run");
    assert_eq!(r.turns, 2);
    let u = r.usage.expect("observed");
    assert_eq!((u.input_tokens, u.output_tokens), (10, 14));

    // Nothing observed is `None`; an observed zero is a zero, not `None`.
    let none = Agent::new(scripted(vec![Step::text("ok")], None, ContinueMode::InRun))
        .send("go", ())
        .result()
        .await
        .unwrap();
    assert_eq!(none.usage, None, "unobserved");
    let zero = Agent::new(scripted(
        vec![Step::text("ok")],
        Some((0, 0)),
        ContinueMode::InRun,
    ))
    .send("go", ())
    .result()
    .await
    .unwrap();
    assert_eq!(zero.usage, Some(Usage::default()), "observed zero");
}

#[tokio::test]
async fn supplemental_deliveries_join_the_transcript_as_message_items() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig {
        chunk_delay: Duration::from_millis(20),
        ..Default::default()
    }));
    let stream = agent.send("one two three four five six seven eight", ());
    let author = agent_adaptor::driver::Author {
        kind: AuthorKind::Agent,
        id: "peer-1".into(),
        name: "Peer".into(),
    };
    stream
        .send(
            "in the turn",
            MessageOptions::new().id("m-in").from(author.clone()),
        )
        .await
        .unwrap();
    stream
        .send(
            "after the turn",
            MessageOptions::new().id("m-after").when(Timing::AfterTurn),
        )
        .await
        .unwrap();
    // Withdrawn before any claim: never delivered, so never in the transcript.
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let _ = stream
        .send_cancellable(
            "withdrawn",
            MessageOptions::new().id("m-gone").when(Timing::AfterTurn),
            token,
        )
        .await;
    let r = stream.result().await.expect("run");
    let delivered: Vec<_> = r
        .messages()
        .into_iter()
        .filter(|m| m.state == MessageState::Delivered)
        .map(|m| m.id)
        .collect();
    assert_eq!(delivered, ["m-in", "m-after"]);
    let items: Vec<_> = r
        .transcript()
        .into_iter()
        .filter(|i| i.kind == TranscriptKind::Message)
        .collect();
    let ids: Vec<_> = items
        .iter()
        .map(|i| i.message.as_ref().expect("message payload").id.clone())
        .collect();
    assert_eq!(
        ids,
        ["m-in", "m-after"],
        "exactly the actual deliveries, in order"
    );
    let first = items[0].message.as_ref().unwrap();
    assert_eq!(first.from, author);
    assert_eq!(first.text, "in the turn", "the original text, not the framed one");
    assert_eq!(first.boundary, "in_turn");
    assert_eq!(first.mechanism, "reference.in_turn");
    assert_eq!(items[1].message.as_ref().unwrap().boundary, "turn_end");
}

/// Reports subagent summaries from its attachment.
struct Team(Vec<SubagentResult>);

#[async_trait::async_trait]
impl RunServiceProvider for Team {
    async fn attach_run(&self, _run_id: &str) -> Result<RunAttachment, ServiceError> {
        let results = self.0.clone();
        Ok(RunAttachment {
            results: Some(Box::new(move || results)),
            ..Default::default()
        })
    }
    async fn detach_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}

fn member(name: &str, tokens: u64) -> SubagentResult {
    SubagentResult {
        member: name.into(),
        task: format!("task-{name}"),
        state: "completed".into(),
        summary: format!("{name} done"),
        usage: Some(Usage {
            input_tokens: tokens,
            ..Default::default()
        }),
        unread: vec![],
    }
}

#[tokio::test]
async fn subagent_summaries_reach_the_result_and_with_subagents_replaces_them_keeping_usage() {
    let team = vec![member("a", 1), member("b", 2)];
    let agent = Agent::new(scripted(
        vec![Step::text("ok")],
        Some((3, 4)),
        ContinueMode::InRun,
    ));
    let r = agent
        .send(
            "go",
            CallOptions::new().run_service_provider(Arc::new(Team(team.clone()))),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(r.subagents(), team, "collected in order");
    let usage = r.usage;
    // A copy: changing what was returned leaves the result's.
    let mut copy = r.subagents();
    copy[0].summary = "edited".into();
    assert_eq!(r.subagents()[0].summary, "a done");

    let snapshot = vec![member("c", 50)];
    let replaced = r.with_subagents(snapshot.clone());
    assert_eq!(
        replaced.subagents(),
        snapshot,
        "the snapshot replaces the summaries"
    );
    assert_eq!(replaced.usage, usage, "usage is not changed (no double counting)");
    assert_eq!(
        (replaced.text.as_str(), replaced.turns, replaced.run_id.as_str()),
        (r.text.as_str(), r.turns, r.run_id.as_str()),
        "every other field preserved"
    );
    assert_eq!(replaced.transcript(), r.transcript());
    assert_eq!(r.subagents(), team, "the original is untouched");
}

/// A driver that classifies its own failure as cancelled (the provider reported a cancelled turn)
/// without the caller cancelling anything.
fn self_cancelling() -> ReferenceDriver {
    scripted(
        vec![
            Step::text("partial"),
            Step::Fail {
                code: FailureCode::Cancelled,
                message: "the provider cancelled the turn".into(),
            },
        ],
        None,
        ContinueMode::InRun,
    )
}

#[tokio::test]
async fn caller_cancellation_and_deadline_are_separate_from_driver_classified_cancellation() {
    let long = || {
        scripted(
            vec![Step::Sleep(Duration::from_secs(30))],
            None,
            ContinueMode::InRun,
        )
    };
    // The caller's cancellation: cancelled, attributed to the caller, no driver code.
    let stream = Agent::new(long()).send("go", ());
    tokio::time::sleep(Duration::from_millis(30)).await;
    stream.cancel();
    let caller = stream.result().await.unwrap_err();
    let caller = caller.as_run().expect("a run error");
    assert_eq!(caller.reason, FailureReason::Cancelled);
    assert!(caller.details.get("code").is_none(), "{:?}", caller.details);
    // The caller's deadline: its own reason, not a cancellation.
    let deadline = Agent::new(long())
        .send("go", CallOptions::new().timeout(Duration::from_millis(50)))
        .result()
        .await
        .unwrap_err();
    assert_eq!(deadline.reason(), Some(FailureReason::DeadlineExceeded));
    // The driver's own classification: cancelled, carrying the driver's code and message.
    let driver = Agent::new(self_cancelling())
        .send("go", ())
        .result()
        .await
        .unwrap_err();
    assert_eq!(driver.kind(), ErrorKind::Run);
    let driver = driver.as_run().unwrap();
    assert_eq!(driver.reason, FailureReason::Cancelled);
    assert_eq!(
        driver.details.get("code").and_then(|v| v.as_str()),
        Some("cancelled"),
        "classified by the driver"
    );
    assert_eq!(driver.message, "the provider cancelled the turn");
    assert_eq!(driver.result.text, "partial", "with its partial result");
}

#[tokio::test]
async fn a_composite_limit_aborts_work_as_limit_exceeded_with_the_partial_result() {
    let stream = Agent::new(scripted(
        vec![Step::text("partial"), Step::Sleep(Duration::from_secs(30))],
        None,
        ContinueMode::InRun,
    ))
    .send("go", ());
    let mut events = stream.events();
    use futures::StreamExt;
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    let mut details = agent_adaptor::driver::JsonMap::new();
    details.insert("limit".into(), "team_turns".into());
    stream.fail(
        FailureReason::LimitExceeded,
        "the team's turn budget is spent",
        details,
    );
    stream.cancel();
    let err = tokio::time::timeout(Duration::from_secs(5), stream.result())
        .await
        .expect("ends promptly")
        .unwrap_err();
    let run = err.as_run().expect("a run error");
    assert_eq!(
        run.reason,
        FailureReason::LimitExceeded,
        "the first cause wins over the later cancel"
    );
    assert_eq!(run.reason.as_str(), "limit_exceeded");
    assert_eq!(
        run.details.get("limit").and_then(|v| v.as_str()),
        Some("team_turns")
    );
    assert!(run.result.text.starts_with("partial"), "{:?}", run.result.text);
}
