//! Standby SSE is REST SSE: each execution of a Standby is a run of the registry, numbered by its own
//! sequence exactly as `/v1/runs/{run_id}/events` numbers it (`id:` = `<execution>:<seq>`), resumable with
//! `Last-Event-ID` across the Standby's executions, 422 on a malformed cursor, a `gap` frame for a cursor
//! that names no execution of this Standby.

use serde_json::{Value, json};

use super::{
    Frame, all_frames, client, error_code, get_json, post_json, read_frames, start_with, with_metadata,
};

const STANDBY: &str = "/v1/agents/reference/threads/sb-log/standby";

/// The `(execution, seq)` of a Standby frame's `id:`.
fn cursor(f: &Frame) -> (String, u64) {
    let id = f.id.as_deref().expect("an id");
    let (run, seq) = id
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("a Standby cursor: {id:?}"));
    (run.to_owned(), seq.parse().expect("a decimal sequence"))
}

async fn standby_events(base: &str, last_event_id: Option<&str>) -> reqwest::Response {
    let mut req = client().get(format!("{base}{STANDBY}/events"));
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id);
    }
    req.send().await.unwrap()
}

/// The Standby's frames from `after` until the `n`-th `done`.
async fn until_done(base: &str, after: Option<&str>, n: usize) -> Vec<Frame> {
    let resp = standby_events(base, after).await;
    assert_eq!(resp.status(), 200);
    let mut seen = 0;
    read_frames(resp, |f| {
        seen += usize::from(f.event.as_deref() == Some("done"));
        seen < n
    })
    .await
}

/// `(id, event, data)` of frames, for comparing streams.
fn triples(frames: &[Frame]) -> Vec<(Option<String>, Option<String>, String)> {
    frames
        .iter()
        .map(|f| (f.id.clone(), f.event.clone(), f.data.clone()))
        .collect()
}

#[tokio::test]
async fn standby_sse_numbers_each_execution_like_rest_and_resumes_across_executions() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    assert_eq!(post_json(&base, STANDBY, json!({})).await.status(), 201);
    for text in ["first input", "second input"] {
        let sent = post_json(&base, &format!("{STANDBY}/messages"), json!({"text": text})).await;
        assert_eq!(sent.status(), 202);
        // One at a time: the second input starts the next execution once the first is done.
        let n = if text == "first input" { 1 } else { 2 };
        until_done(&base, None, n).await;
    }
    let all = until_done(&base, None, 2).await;
    let runs: Vec<String> = {
        let mut r: Vec<String> = all.iter().map(|f| cursor(f).0).collect();
        r.dedup();
        r
    };
    assert_eq!(runs.len(), 2, "two executions, in order: {runs:?}");
    let view = get_json(&base, STANDBY).await;
    assert_eq!(view["executions"], 2, "{view}");
    assert_eq!(view["last_run_id"], runs[1].as_str(), "{view}");

    // Each execution is a run: its own events route sends exactly the Standby's frames of it, with the
    // run's sequence as the id.
    for run in &runs {
        let record = get_json(&base, &format!("/v1/runs/{run}")).await;
        assert_eq!(record["state"], "succeeded", "{record}");
        let rest = all_frames(
            client()
                .get(format!("{base}/v1/runs/{run}/events"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        let standby: Vec<Frame> = all
            .iter()
            .filter(|f| cursor(f).0 == *run)
            .map(|f| Frame {
                id: Some(cursor(f).1.to_string()),
                ..f.clone()
            })
            .collect();
        assert_eq!(triples(&standby), triples(&rest), "execution {run}");
        let seqs: Vec<u64> = standby.iter().map(|f| f.seq()).collect();
        assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    }

    // Resume in the middle of the first execution: the rest of it, then the second, no gap, no duplicate.
    let middle = all[2].id.clone().unwrap();
    let resumed = until_done(&base, Some(&middle), 2).await;
    assert_eq!(triples(&resumed), triples(&all[3..]));
    // Resume after the first execution's `done`: only the second.
    let first_done = all
        .iter()
        .position(|f| f.event.as_deref() == Some("done"))
        .unwrap();
    let tail = until_done(&base, all[first_done].id.as_deref(), 1).await;
    assert_eq!(triples(&tail), triples(&all[first_done + 1..]));
    // `?after=` takes the same cursor.
    let by_query = client()
        .get(format!("{base}{STANDBY}/events?after={middle}"))
        .send()
        .await
        .unwrap();
    let mut seen = 0;
    let by_query = read_frames(by_query, |f| {
        seen += usize::from(f.event.as_deref() == Some("done"));
        seen < 2
    })
    .await;
    assert_eq!(triples(&by_query), triples(&all[3..]));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn standby_sse_refuses_a_malformed_cursor_and_marks_an_unknown_one_with_a_gap() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    assert_eq!(post_json(&base, STANDBY, json!({})).await.status(), 201);
    for bad in ["5", "run-x:+1", ":3", "run-x:", "run x:1", "run-x:1:2"] {
        let (status, code, body) = error_code(standby_events(&base, Some(bad)).await).await;
        assert_eq!(
            (status, code.as_str()),
            (422, "invalid_request"),
            "{bad:?}: {body}"
        );
        assert_eq!(body["error"]["field"], "Last-Event-ID", "{body}");
        let encoded = bad.replace('+', "%2B").replace(' ', "%20").replace(':', "%3A");
        let by_query = client()
            .get(format!("{base}{STANDBY}/events?after={encoded}"))
            .send()
            .await
            .unwrap();
        let (status, _, body) = error_code(by_query).await;
        assert_eq!(status, 422, "after={bad:?}: {body}");
        assert_eq!(body["error"]["field"], "after", "{body}");
    }
    let sent = post_json(&base, &format!("{STANDBY}/messages"), json!({"text": "hello"})).await;
    assert_eq!(sent.status(), 202);
    let frames = until_done(&base, Some("run-not-of-this-standby:3"), 1).await;
    assert_eq!(frames[0].event.as_deref(), Some("gap"), "{frames:?}");
    assert!(frames[0].id.is_none(), "a gap frame has no id");
    let gap: Value = frames[0].json();
    assert_eq!(gap["code"], "unknown_cursor", "{gap}");
    assert_eq!(frames[1].event.as_deref(), Some("run_started"));
    assert_eq!(cursor(&frames[1]).1, 1, "from the first execution's start");
    server.shutdown().await.unwrap();
}

/// A Standby's execution waiting on an approval is a run like any other: its request is listed and
/// answered through `/v1/runs/{run_id}/approvals`, and the execution goes on.
#[tokio::test]
async fn standby_execution_approvals_are_answered_through_the_run_routes() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    assert_eq!(post_json(&base, STANDBY, json!({})).await.status(), 201);
    let sent = post_json(
        &base,
        &format!("{STANDBY}/messages"),
        json!({"text": "please ask permission first"}),
    )
    .await;
    assert_eq!(sent.status(), 202);
    let resp = standby_events(&base, None).await;
    let asked = read_frames(resp, |f| f.event.as_deref() != Some("approval_request")).await;
    let request = asked.last().unwrap();
    let run = cursor(request).0;
    let id = request.json()["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("an approval id: {}", request.data));
    let listed = get_json(&base, &format!("/v1/runs/{run}/approvals?pending=true")).await;
    assert_eq!(listed["approvals"][0]["id"], id.as_str(), "{listed}");
    let answered = post_json(
        &base,
        &format!("/v1/runs/{run}/approvals/{id}"),
        json!({"decision": "approve"}),
    )
    .await;
    assert_eq!(answered.status(), 200, "{:?}", answered.text().await);
    let rest = until_done(&base, request.id.as_deref(), 1).await;
    let done = rest.last().unwrap().json();
    assert!(done.to_string().contains("Reference reply"), "{done}");
    server.shutdown().await.unwrap();
}
