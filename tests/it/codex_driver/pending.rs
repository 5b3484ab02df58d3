//! Input that arrives while a command approval waits for the host, on the real app-server: `Soon` is
//! steered once the decision is answered and reaches the model after the command's output;
//! `AfterTurn` starts the next turn; `Interrupt` withdraws the pending approval (the host sees it
//! expire, the command never runs) and starts the next turn with the input. Each message is
//! acknowledged exactly once.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{Policy, Timing};
use agent_adaptor::runtime::{
    Agent, ApprovalError, ApprovalHandler, Event, MessageOptions, MessageState, Payload, RunResult,
};
use agent_adaptor::testkit::mock::responses::{RecordedRequest, Reply, Script};
use futures::StreamExt;
use tokio::sync::{Notify, mpsc};

use super::Cx;

/// A command that needs approval in a read-only sandbox, then a reply naming the tool output and
/// the last user text the model saw.
fn script() -> Script {
    Script::new()
        .then(Reply::new().exec_command_escalated("touch approved-marker.txt", "Need to write"))
        .otherwise(|log: &[RecordedRequest]| {
            let req = log.last().unwrap();
            let out = req.tool_outputs().pop().map(|(_, o)| o).unwrap_or_default();
            let user = req.last_user_text().unwrap_or_default();
            Reply::new().text(format!("tool: {out} | user: {user}"))
        })
}

/// A handler that holds every request until `release` is notified, then approves it and reports
/// what approving returned.
fn held(release: Arc<Notify>, tx: mpsc::UnboundedSender<Result<(), ApprovalError>>) -> ApprovalHandler {
    ApprovalHandler::new(move |req| {
        let (release, tx) = (release.clone(), tx.clone());
        async move {
            release.notified().await;
            let _ = tx.send(req.approve());
            Ok(())
        }
    })
}

fn is_notice(e: &Event, kind: &str) -> bool {
    matches!(&e.payload, Payload::Notice(n) if n.kind == kind)
}

fn position(events: &[Event], what: impl Fn(&Event) -> bool) -> usize {
    events
        .iter()
        .position(what)
        .unwrap_or_else(|| panic!("event not found in {} events", events.len()))
}

fn turn_ends(events: &[Event]) -> Vec<usize> {
    (0..events.len())
        .filter(|&i| matches!(events[i].payload, Payload::TurnEnd(_)))
        .collect()
}

/// Asserts that message `id` reached a final state exactly once, and that it is `state`.
fn settled_once(events: &[Event], r: &RunResult, id: &str, state: MessageState) {
    let finals: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::MessageUpdate(u)
                if u.id == id && matches!(u.state, MessageState::Delivered | MessageState::Failed) =>
            {
                Some(u.state)
            }
            _ => None,
        })
        .collect();
    assert_eq!(finals, vec![state], "one final update for {id}");
    assert_eq!(r.messages().len(), 1);
    assert_eq!(r.messages()[0].state, state);
}

/// Runs "touch a file" under Ask; when the approval is requested, sends `text` with `timing` and
/// then releases the handler after `release_after`. Returns the events and the result.
async fn run(
    cx: &Cx,
    timing: Timing,
    release_now: bool,
) -> (Vec<Event>, Arc<RunResult>, Vec<Result<(), ApprovalError>>) {
    let agent = Agent::new(cx.driver.clone());
    let release = Arc::new(Notify::new());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let stream = agent.send(
        "touch a file",
        cx.opts()
            .policy(Policy::read_only())
            .on_approval(held(release.clone(), tx)),
    );
    let mut events = stream.events();
    let mut all = Vec::new();
    while let Some(e) = events.next().await {
        let asked =
            is_notice(&e, "approval.requested") && !all.iter().any(|x| is_notice(x, "approval.requested"));
        all.push(e);
        if asked {
            stream
                .send(
                    "zz while pending",
                    MessageOptions::new().id("m-pending").when(timing),
                )
                .await
                .unwrap();
            if release_now {
                // Leave the driver a moment to see the queued input while the decision is pending.
                tokio::time::sleep(Duration::from_millis(300)).await;
                release.notify_one();
            }
        }
    }
    let r = stream.result().await.unwrap();
    release.notify_one();
    let mut approvals = Vec::new();
    if let Ok(Some(a)) = tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
        approvals.push(a);
    }
    (all, r, approvals)
}

#[tokio::test]
async fn soon_input_during_a_pending_approval_is_steered_after_the_decision() {
    let Some(cx) = Cx::new(script()).await else { return };
    let (events, r, approvals) = run(&cx, Timing::Soon, true).await;
    assert_eq!(approvals, vec![Ok(())], "the approval was answered");
    assert!(cx.ws.join("approved-marker.txt").exists(), "the command ran");
    assert_eq!(r.turns, 1, "the input joined the running turn");
    settled_once(&events, &r, "m-pending", MessageState::Delivered);
    let m = &r.messages()[0];
    assert_eq!((m.boundary.as_str(), m.mechanism.as_str()), ("in_turn", "steer"));
    let reqs = cx.mock.requests();
    assert_eq!(
        reqs.len(),
        2,
        "{:?}",
        reqs.iter().map(|r| r.input_summary()).collect::<Vec<_>>()
    );
    let input = reqs[1].input();
    let output_at = input.iter().position(|i| i["type"] == "function_call_output");
    let steer_at = input
        .iter()
        .rposition(|i| i["type"] == "message" && i["content"].to_string().contains("zz while pending"));
    assert!(
        matches!((output_at, steer_at), (Some(o), Some(s)) if o < s && s == input.len() - 1),
        "the input follows the command output: {:?}",
        reqs[1].input_summary()
    );
    assert!(
        r.text.contains("| user: ") && r.text.contains("zz while pending"),
        "{}",
        r.text
    );
    let requested = position(&events, |e| is_notice(e, "approval.requested"));
    let resolved = position(&events, |e| is_notice(e, "approval.resolved"));
    let delivered = position(
        &events,
        |e| matches!(&e.payload, Payload::MessageUpdate(u) if u.state == MessageState::Delivered),
    );
    assert!(
        requested < resolved && resolved < delivered,
        "{requested} < {resolved} < {delivered}"
    );
    assert!(delivered < turn_ends(&events)[0]);
    cx.assert_reaped();
}

#[tokio::test]
async fn after_turn_input_during_a_pending_approval_starts_the_next_turn() {
    let Some(cx) = Cx::new(script()).await else { return };
    let (events, r, approvals) = run(&cx, Timing::AfterTurn, true).await;
    assert_eq!(approvals, vec![Ok(())]);
    assert!(cx.ws.join("approved-marker.txt").exists());
    assert_eq!(r.turns, 2);
    settled_once(&events, &r, "m-pending", MessageState::Delivered);
    let m = &r.messages()[0];
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("turn_end", "turn_start")
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        reqs[1].last_user_text().as_deref(),
        Some("touch a file"),
        "not steered"
    );
    let last = reqs[2].last_user_text().unwrap_or_default();
    assert!(last.contains("zz while pending"), "{last}");
    let ends = turn_ends(&events);
    assert_eq!(ends.len(), 2);
    let resolved = position(&events, |e| is_notice(e, "approval.resolved"));
    let delivered = position(
        &events,
        |e| matches!(&e.payload, Payload::MessageUpdate(u) if u.state == MessageState::Delivered),
    );
    assert!(resolved < ends[0] && ends[0] < delivered && delivered < ends[1]);
    cx.assert_reaped();
}

#[tokio::test]
async fn interrupt_input_during_a_pending_approval_withdraws_it_and_starts_the_next_turn() {
    let Some(cx) = Cx::new(script()).await else { return };
    let (events, r, approvals) = run(&cx, Timing::Interrupt, false).await;
    assert_eq!(
        approvals,
        vec![Err(ApprovalError::Expired)],
        "the host's late answer finds the request withdrawn"
    );
    assert!(
        !cx.ws.join("approved-marker.txt").exists(),
        "the command never ran"
    );
    assert_eq!(r.turns, 2, "the interrupted turn and the new one");
    settled_once(&events, &r, "m-pending", MessageState::Delivered);
    let m = &r.messages()[0];
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("interrupt", "interrupt")
    );
    let reqs = cx.mock.requests();
    assert_eq!(reqs.len(), 2);
    let aborted = reqs[1].tool_outputs().pop().map(|(_, o)| o).unwrap_or_default();
    assert!(
        aborted.contains("aborted"),
        "the model is told the call was aborted: {aborted}"
    );
    let users = reqs[1].texts_of_role("user");
    assert!(users.iter().any(|u| u.contains("<turn_aborted>")), "{users:?}");
    let last = reqs[1].last_user_text().unwrap_or_default();
    assert!(last.contains("zz while pending"), "{last}");
    let requested = position(&events, |e| is_notice(e, "approval.requested"));
    let withdrawn = position(
        &events,
        |e| matches!(&e.payload, Payload::Notice(n) if n.kind == "approval.resolved" && n.data["outcome"] == "withdrawn"),
    );
    let said = position(
        &events,
        |e| matches!(&e.payload, Payload::Notice(n) if n.metadata.get("source").map(String::as_str) == Some("codex.interrupt")),
    );
    let ends = turn_ends(&events);
    assert_eq!(ends.len(), 2);
    let first_end = match &events[ends[0]].payload {
        Payload::TurnEnd(t) => t.clone(),
        _ => unreachable!(),
    };
    assert!(first_end.error.is_some(), "the first turn was interrupted");
    assert!(
        requested < said && said < ends[0],
        "{requested} < {said} < {}",
        ends[0]
    );
    assert!(
        requested < withdrawn && withdrawn < ends[1],
        "{requested} < {withdrawn} < {}",
        ends[1]
    );
    cx.assert_reaped();
}
