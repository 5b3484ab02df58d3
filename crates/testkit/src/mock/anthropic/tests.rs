//! Unit tests of the mock over real HTTP on loopback (reqwest as the client).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;

fn body(prompt: &str, stream: bool) -> Value {
    json!({
        "model": "claude-opus-5-5",
        "stream": stream,
        "tools": [{"name": "Bash"}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": prompt}]}],
    })
}

async fn post(mock: &MockAnthropic, b: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/v1/messages?beta=true", mock.base_url()))
        .header("x-api-key", "dummy-key")
        .json(b)
        .send()
        .await
        .unwrap()
}

/// The `data:` payloads of an SSE body.
fn sse_data(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[tokio::test]
async fn streams_text_and_logs_the_request() {
    let mock = MockAnthropic::start(Script::queue([Reply::text("Hello from the mock")]))
        .await
        .unwrap();
    let resp = post(&mock, &body("say hi", true)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    assert_eq!(resp.headers()["request-id"], "req_mock_0001");
    let events = sse_data(&resp.text().await.unwrap());
    assert_eq!(events.first().unwrap()["type"], "message_start");
    assert_eq!(events.last().unwrap()["type"], "message_stop");
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello from the mock");

    let log = mock.message_requests();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].query.as_deref(), Some("beta=true"));
    assert_eq!(log[0].header("X-Api-Key"), Some("dummy-key"));
    assert_eq!(log[0].last_user_text().as_deref(), Some("say hi"));
    assert_eq!(log[0].status, 200);
    mock.shutdown().await;
}

#[tokio::test]
async fn closure_script_sees_the_request_and_exhausted_queue_answers() {
    let mock = MockAnthropic::start(Script::from_fn(|req| {
        Reply::text(format!(
            "echo {}: {}",
            req.n,
            req.last_user_text().unwrap_or_default()
        ))
    }))
    .await
    .unwrap();
    let mut no_tools = body("title?", false);
    no_tools["tools"] = json!([]);
    // No tools: a side request, answered by the default side reply as plain JSON (not streaming).
    let side: Value = post(&mock, &no_tools).await.json().await.unwrap();
    assert_eq!(side["content"][0]["text"], "Mock session title");
    let events = sse_data(&post(&mock, &body("ping", true)).await.text().await.unwrap());
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "echo 2: ping");
    assert_eq!(mock.message_requests().len(), 1);
    let full: Value = post(&mock, &body("again", false)).await.json().await.unwrap();
    assert_eq!(full["content"][0]["text"], "echo 3: again");
    assert_eq!(full["stop_reason"], "end_turn");

    let q = MockAnthropic::start(Script::queue([])).await.unwrap();
    let events = sse_data(&post(&q, &body("x", true)).await.text().await.unwrap());
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "mock script exhausted (request 1)");
}

#[tokio::test]
async fn errors_have_anthropic_bodies() {
    let mock = MockAnthropic::start(Script::queue([Reply::error(529), Reply::error(401)]))
        .await
        .unwrap();
    let r = post(&mock, &body("a", true)).await;
    assert_eq!(r.status(), 529);
    let j: Value = r.json().await.unwrap();
    assert_eq!(j["type"], "error");
    assert_eq!(j["error"]["type"], "overloaded_error");
    let r = post(&mock, &body("a", true)).await;
    assert_eq!(r.status(), 401);
    let statuses: Vec<u16> = mock.requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, vec![529, 401]);
}

#[tokio::test]
async fn cut_stream_fails_the_body_read() {
    let mock = MockAnthropic::start(Script::queue([
        Reply::text("abcdefghijklmnopqrstuvwxyz").cut_after(4)
    ]))
    .await
    .unwrap();
    let r = post(&mock, &body("a", true)).await;
    assert_eq!(r.status(), 200);
    assert!(r.text().await.is_err(), "a cut stream must not end cleanly");
}

#[tokio::test]
async fn slow_stream_and_latency_take_time() {
    let reply = Reply::text("0123456789")
        .latency(Duration::from_millis(100))
        .slow(Duration::from_millis(20));
    let mock = MockAnthropic::start(Script::queue([reply])).await.unwrap();
    let t = Instant::now();
    let text = post(&mock, &body("a", true)).await.text().await.unwrap();
    // 1 start + ping + start + 1 delta + stop + delta + stop = 7 events, 6 delays.
    assert_eq!(sse_data(&text).len(), 7);
    assert!(t.elapsed() >= Duration::from_millis(100 + 6 * 20));
    assert!(mock.wait_for_messages(1, Duration::from_millis(10)).await);
    assert!(!mock.wait_for_messages(2, Duration::from_millis(10)).await);
}

#[tokio::test]
async fn preflight_count_tokens_and_unknown_routes() {
    let mock = MockAnthropic::start(Script::queue([])).await.unwrap();
    let c = reqwest::Client::new();
    let r = c
        .head(format!("{}/api/hello", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = c
        .post(format!("{}/v1/messages/count_tokens?beta=true", mock.base_url()))
        .json(&json!({"messages": []}))
        .send()
        .await
        .unwrap();
    let j: Value = r.json().await.unwrap();
    assert!(j["input_tokens"].as_u64().unwrap() >= 1);
    let r = c
        .get(format!("{}/v1/models", mock.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let log = mock.requests();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2].path, "/v1/models");
    assert_eq!(log[2].status, 404);
    assert!(log.iter().all(|r| r.n == 0));
}
