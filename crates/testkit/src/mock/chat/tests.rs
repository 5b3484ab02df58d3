//! Tests of the mock over real HTTP on 127.0.0.1 (reqwest).

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

use super::*;

fn body(prompt: &str, stream: bool) -> Value {
    json!({"model": "default-model", "stream": stream, "stream_options": {"include_usage": true},
           "messages": [{"role": "user", "content": format!("<user_query>{prompt}</user_query>")}]})
}

async fn post(mock: &MockChat, prompt: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", mock.base_url()))
        .json(&body(prompt, true))
        .send()
        .await
        .unwrap()
}

/// The `data:` payloads of an SSE body (ignores blank lines).
fn data_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn queue_streams_text_then_exhausts_with_500() {
    let mock = MockChat::start(Script::queue([Reply::text("Hello there")]))
        .await
        .unwrap();
    let resp = post(&mock, "hi").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let data = data_lines(&resp.text().await.unwrap());
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let text: String = data
        .iter()
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "Hello there");
    let second = post(&mock, "again").await;
    assert_eq!(second.status(), 500);
    let reqs = mock.completion_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].last_user_query(), "hi");
    assert_eq!(reqs[1].n, 2);
    mock.shutdown().await;
}

#[tokio::test]
async fn closure_sees_the_log_and_streams_tool_calls() {
    let mock = MockChat::start(Script::func(|cur, log| {
        if cur.last_user_query() == "tool" {
            Reply::tool_call("Bash", &json!({"command": "echo hi"}))
        } else {
            Reply::text(&format!("seen {}", log.len()))
        }
    }))
    .await
    .unwrap();
    let data = data_lines(&post(&mock, "tool").await.text().await.unwrap());
    let chunks: Vec<Value> = data.iter().filter_map(|d| serde_json::from_str(d).ok()).collect();
    assert_eq!(
        chunks[0]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"],
        "Bash"
    );
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );
    assert!(chunks.iter().any(|c| c["usage"]["total_tokens"] == 15));
    let data = data_lines(&post(&mock, "text").await.text().await.unwrap());
    assert!(data[0].contains("seen 2"), "{data:?}");
    mock.shutdown().await;
}

#[tokio::test]
async fn errors_carry_status_body_and_retry_after() {
    let mock = MockChat::start(Script::queue([
        Reply::rate_limited(),
        Reply::server_error(),
        Reply::bad_request(),
        Reply::unauthorized(),
    ]))
    .await
    .unwrap();
    let r = post(&mock, "a").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["type"], "rate_limit_error");
    for (status, kind) in [
        (500, "server_error"),
        (400, "invalid_request_error"),
        (401, "authentication_error"),
    ] {
        let r = post(&mock, "b").await;
        assert_eq!(r.status().as_u16(), status);
        let b: Value = r.json().await.unwrap();
        assert_eq!(b["error"]["type"], kind);
    }
    let statuses: Vec<u16> = mock.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [429, 500, 400, 401]);
    mock.shutdown().await;
}

#[tokio::test]
async fn abort_cut_is_a_transport_error_and_eof_cut_has_no_done() {
    let mock = MockChat::start(Script::queue([
        Reply::Stream(StreamReply::text("abcdefghijklmnopqrstuvwxyz").cut_after(2, CutKind::Abort)),
        Reply::Stream(StreamReply::text("abcdefghijklmnopqrstuvwxyz").cut_after(2, CutKind::Eof)),
    ]))
    .await
    .unwrap();
    let mut stream = post(&mock, "a").await.bytes_stream();
    let mut got = Vec::new();
    let mut failed = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(b) => got.extend_from_slice(&b),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "an aborted stream must end with a transport error");
    assert_eq!(data_lines(&String::from_utf8_lossy(&got)).len(), 2);
    let text = post(&mock, "b").await.text().await.unwrap();
    let data = data_lines(&text);
    assert_eq!(data.len(), 2);
    assert!(!text.contains("[DONE]"));
    mock.shutdown().await;
}

#[tokio::test]
async fn paced_stream_is_slow_and_hang_ends_on_shutdown() {
    let mock = MockChat::start(Script::queue([
        Reply::Stream(StreamReply::text_chunks(["a", "b", "c"]).paced(Duration::from_millis(60))),
        Reply::Stream(StreamReply::text("x").cut_after(1, CutKind::Hang)),
    ]))
    .await
    .unwrap();
    let t = Instant::now();
    let data = data_lines(&post(&mock, "slow").await.text().await.unwrap());
    assert!(t.elapsed() >= Duration::from_millis(300), "{:?}", t.elapsed());
    assert_eq!(data.len(), 6);
    let resp = post(&mock, "hang").await;
    let mut stream = resp.bytes_stream();
    let first = stream.next().await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&first).starts_with("data: "));
    let stalled = tokio::time::timeout(Duration::from_millis(300), stream.next()).await;
    assert!(stalled.is_err(), "a hanging stream must not send more");
    let url = mock.base_url();
    mock.shutdown().await;
    let ended = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(Ok(_)) = stream.next().await {}
    })
    .await;
    assert!(ended.is_ok(), "shutdown must end a hanging stream");
    assert!(
        reqwest::get(format!("{url}/models")).await.is_err(),
        "server is gone"
    );
}

#[tokio::test]
async fn other_routes_models_non_streaming_and_404() {
    let mock = MockChat::start(Script::queue([Reply::text("plain")]))
        .await
        .unwrap();
    let c = reqwest::Client::new();
    let models: Value = c
        .get(format!("{}/v1/models", mock.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "default-model");
    let r = c
        .get(format!("{}/nope?x=1", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let r: Value = c
        .post(format!("{}/v1/chat/completions", mock.base_url()))
        .json(&body("x", false))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(r["object"], "chat.completion");
    assert_eq!(r["choices"][0]["message"]["content"], "plain");
    let unknown = mock.unknown_requests();
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0].query.as_deref(), Some("x=1"));
    assert!(mock.wait_for_completions(1, Duration::from_millis(10)).await);
    assert!(!mock.wait_for_completions(2, Duration::from_millis(10)).await);
    mock.shutdown().await;
}
