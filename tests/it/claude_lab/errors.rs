//! Model errors and broken runs in print mode: 529 retried then fine, 529 until retries run out, 401,
//! 400, a stream cut mid-SSE, and a CLI killed mid-stream (a truncated stdout).

use std::time::Duration;

use agent_adaptor::testkit::mock::anthropic::{Reply, Script};

use super::brain::{SLOW_EVENT, SLOW_TEXT};
use super::runner::Lab;

#[tokio::test]
async fn error_529_retried() {
    let script = Script::queue([Reply::error(529), Reply::error(529), Reply::text("finally")]);
    let Some(mut lab) = Lab::new(script).await else {
        return;
    };
    lab.set_var("CLAUDE_CODE_MAX_RETRIES", "3");
    let t = lab.print(&[], "hello").await;
    lab.record("error_529_retried", &t);
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    let retries = t.of("system", Some("api_retry"));
    assert_eq!(retries.len(), 2);
    assert_eq!(retries[0]["attempt"], 1);
    assert_eq!(retries[0]["error_status"], 529);
    assert_eq!(retries[1]["attempt"], 2);
    assert_eq!(t.result()["result"], "finally");
    assert_eq!(lab.mock.message_requests().len(), 3);
}

#[tokio::test]
async fn error_529_exhausted() {
    let Some(mut lab) = Lab::new(Script::from_fn(|_| Reply::error(529))).await else {
        return;
    };
    lab.set_var("CLAUDE_CODE_MAX_RETRIES", "1");
    let t = lab.print(&[], "hello").await;
    lab.record("error_529_exhausted", &t);
    assert_eq!(t.code, Some(1));
    assert_eq!(t.of("system", Some("api_retry")).len(), 1);
    assert_eq!(t.result()["is_error"], true);
    assert_eq!(t.result()["api_error_status"], 529);
    assert_eq!(lab.mock.message_requests().len(), 2);
}

#[tokio::test]
async fn error_401() {
    let Some(lab) = Lab::new(Script::from_fn(|_| Reply::error(401))).await else {
        return;
    };
    let t = lab.print(&[], "hello").await;
    lab.record("error_401", &t);
    assert_eq!(t.code, Some(1));
    assert_eq!(t.result()["is_error"], true);
    assert_eq!(t.result()["api_error_status"], 401);
    let assistant = t.of("assistant", None);
    assert_eq!(assistant.last().unwrap()["error"], "authentication_failed");
}

#[tokio::test]
async fn error_400() {
    let Some(lab) = Lab::new(Script::from_fn(|_| Reply::error(400))).await else {
        return;
    };
    let t = lab.print(&[], "hello").await;
    lab.record("error_400", &t);
    assert_eq!(t.code, Some(1));
    assert_eq!(t.result()["api_error_status"], 400);
    assert_eq!(t.result()["terminal_reason"], "api_error");
    // Not retries (CLAUDE_CODE_MAX_RETRIES=0): the CLI re-sends altered request shapes (without
    // thinking.display, then with the full non-deferred tool list), 6 requests in all.
    let reqs = lab.mock.message_requests();
    assert_eq!(reqs.len(), 6);
    assert!(
        reqs[2].body.as_ref().unwrap()["thinking"]
            .get("display")
            .is_none()
    );
    assert!(reqs[3].tool_names().len() > reqs[0].tool_names().len());
}

#[tokio::test]
async fn stream_cut() {
    let text = "This answer will be cut in the middle of the stream.";
    let script = Script::queue([Reply::text(text).cut_after(5), Reply::text("recovered")]);
    let Some(lab) = Lab::new(script).await else {
        return;
    };
    let t = lab.print(&["--include-partial-messages"], "hello").await;
    lab.record("stream_cut", &t);
    // The CLI closes the open blocks, then repeats the request WITHOUT streaming and succeeds.
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    assert_eq!(t.result()["result"], "recovered");
    let reqs = lab.mock.message_requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].is_streaming() && !reqs[1].is_streaming());
    assert_eq!(reqs[1].body.as_ref().unwrap()["stream"], false);
    let streamed: String = t
        .of("stream_event", None)
        .iter()
        .filter_map(|f| f["event"]["delta"]["text"].as_str())
        .collect();
    // Whatever streamed before the cut (nothing, under heavy load) is a prefix of the answer.
    assert!(text.starts_with(&streamed), "{streamed:?}");
}

#[tokio::test]
async fn killed_mid_stream() {
    let Some(lab) = Lab::new(Script::queue([Reply::text(SLOW_TEXT).slow(SLOW_EVENT)])).await else {
        return;
    };
    let mut args = agent_adaptor::testkit::claude_env::ClaudeEnv::print_args();
    args.extend(["--include-partial-messages".to_owned(), "slow please".to_owned()]);
    let mut run = lab.spawn(&args);
    run.close_stdin();
    run.until("first text delta", |v| {
        v["event"]["delta"]["type"] == "text_delta"
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = run.kill().await;
    lab.record("killed_mid_stream", &t);
    assert_eq!(t.code, None, "killed by a signal");
    assert!(t.results().is_empty());
    assert!(t.frames.iter().all(|f| f.is_object()));
}
