//! Mid-run user frames with `uuid` and `priority` (next / later / now) and the `interrupt` control
//! request, with the `command_lifecycle` and `system/status` frames that acknowledge delivery.

use std::time::Duration;

use serde_json::Value;

use super::brain;
use super::frames::{bidi, cancel_async, interrupt, until_allowing, user_with};
use super::runner::{Lab, Transcript};

const DONE: Duration = Duration::from_secs(30);
const U1: &str = "11111111-0000-4000-8000-000000000001";
const U2: &str = "11111111-0000-4000-8000-000000000002";

fn is_tool_use(v: &Value) -> bool {
    v["type"] == "assistant" && v["message"]["content"][0]["type"] == "tool_use"
}

fn is_text_delta(v: &Value) -> bool {
    v["type"] == "stream_event" && v["event"]["delta"]["type"] == "text_delta"
}

/// The `state`s of the lifecycle frames for one uuid, in order.
fn lifecycle(t: &Transcript, uuid: &str) -> Vec<String> {
    t.of("command_lifecycle", None)
        .iter()
        .filter(|f| f["command_uuid"] == uuid)
        .filter_map(|f| f["state"].as_str().map(str::to_owned))
        .collect()
}

/// Sends `priority` (None = omitted) while a 2 s Bash tool runs; returns the transcript.
/// With `--include-partial-messages`, which is what makes the CLI emit `system/status requesting`.
async fn during_tool(name: &str, priority: Option<&str>) -> Option<(Lab, Transcript)> {
    let lab = Lab::new(brain::script()).await?;
    let mut run = lab.spawn(&bidi(&["--include-partial-messages"]));
    run.send(user_with("please run sleep", U1, None)).await;
    until_allowing(&mut run, "tool_use", is_tool_use).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    run.send(user_with("SECOND while tool runs", U2, priority)).await;
    until_allowing(&mut run, "result", |v| v["type"] == "result").await;
    if priority == Some("later") {
        until_allowing(&mut run, "second result", |v| v["type"] == "result").await;
    }
    let t = run.finish(DONE).await;
    lab.record(name, &t);
    Some((lab, t))
}

#[tokio::test]
async fn midrun_next_during_tool() {
    let Some((lab, t)) = during_tool("midrun_next", Some("next")).await else {
        return;
    };
    // Folded into the same turn: one result listing both uuids.
    assert_eq!(t.results().len(), 1);
    assert_eq!(t.result()["user_message_uuids"], serde_json::json!([U1, U2]));
    assert_eq!(lifecycle(&t, U2), ["queued", "started", "completed"]);
    let texts = lab.mock.message_requests()[1].last_user_texts();
    assert!(
        texts.iter().any(
            |x| x.contains("The user sent a new message while you were working")
                && x.contains("SECOND while tool runs")
        ),
        "{texts:?}"
    );
    let requesting: Vec<_> = t
        .of("system", Some("status"))
        .into_iter()
        .filter(|s| s["user_message_uuids"].as_array().is_some_and(|a| a.len() == 2))
        .collect();
    assert_eq!(requesting.len(), 1, "the request carrying U2 is announced");
}

#[tokio::test]
async fn midrun_later_during_tool() {
    let Some((lab, t)) = during_tool("midrun_later", Some("later")).await else {
        return;
    };
    let results = t.results();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["user_message_uuids"], serde_json::json!([U1]));
    assert_eq!(results[1]["user_message_uuids"], serde_json::json!([U2]));
    assert_eq!(lifecycle(&t, U2), ["queued", "started", "completed"]);
    let reqs = lab.mock.message_requests();
    assert!(
        reqs[1].last_user_texts().is_empty(),
        "not folded into the tool turn"
    );
    assert_eq!(
        reqs[2].last_user_text().as_deref(),
        Some("SECOND while tool runs")
    );
}

#[tokio::test]
async fn midrun_now_during_stream() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&["--include-partial-messages"]));
    run.send(user_with("slow please", U1, None)).await;
    run.until("text delta", is_text_delta).await;
    run.send(user_with("NOW while streaming", U2, Some("now"))).await;
    let first = run.until_result().await;
    let second = run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("midrun_now", &t);
    assert_eq!(first["subtype"], "success");
    assert_eq!(first["terminal_reason"], "aborted_streaming");
    assert_eq!(second["result"], "ECHO n=2: NOW while streaming");
    assert_eq!(lifecycle(&t, U2), ["queued", "started", "completed"]);
}

#[tokio::test]
async fn interrupt_during_stream() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&["--include-partial-messages"]));
    run.send(user_with("slow please", U1, None)).await;
    run.until("text delta", is_text_delta).await;
    run.send(interrupt("req_int")).await;
    run.send(user_with("AFTER INTERRUPT", U2, None)).await;
    let ack = run
        .until("interrupt ack", |v| v["type"] == "control_response")
        .await;
    let first = run.until_result().await;
    let second = run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("interrupt_stream", &t);
    assert_eq!(ack["response"]["request_id"], "req_int");
    assert!(ack["response"]["response"]["still_queued"].is_array(), "{ack}");
    assert_eq!(first["subtype"], "error_during_execution");
    assert_eq!(first["terminal_reason"], "aborted_streaming");
    assert!(t.of("assistant", None).iter().any(|a| a["aborted"] == true));
    assert_eq!(second["subtype"], "success");
    assert_eq!(lifecycle(&t, U1).last().map(String::as_str), Some("cancelled"));
    let texts = lab.mock.message_requests()[1].all_texts();
    assert!(
        texts
            .iter()
            .any(|x| x.starts_with("[Request interrupted by user]")),
        "{texts:?}"
    );
}

#[tokio::test]
async fn interrupt_during_tool() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(user_with("please run sleep", U1, None)).await;
    until_allowing(&mut run, "tool_use", is_tool_use).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    run.send(interrupt("req_int")).await;
    let first = run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("interrupt_tool", &t);
    assert_eq!(first["subtype"], "error_during_execution");
    assert_eq!(first["terminal_reason"], "aborted_tools");
    assert_eq!(lab.mock.message_requests().len(), 1);
}

#[tokio::test]
async fn cancel_async_message() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&["--include-partial-messages"]));
    run.send(user_with("slow please", U1, None)).await;
    run.until("text delta", is_text_delta).await;
    run.send(user_with("QUEUED then withdrawn", U2, Some("later")))
        .await;
    run.until("queued", |v| {
        v["type"] == "command_lifecycle" && v["command_uuid"] == U2
    })
    .await;
    run.send(cancel_async("req_cancel", U2)).await;
    let ack = run.until("cancel ack", |v| v["type"] == "control_response").await;
    run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("cancel_async_message", &t);
    assert_eq!(ack["response"]["response"]["cancelled"], true, "{ack}");
    assert_eq!(lifecycle(&t, U2), ["queued", "cancelled"]);
    assert_eq!(t.results().len(), 1);
    assert_eq!(lab.mock.message_requests().len(), 1);
}
