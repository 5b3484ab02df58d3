//! Standby over HTTP with the reference agent: open (201, then 200 for the same one), input answered by an
//! execution whose events stream over SSE with resumable ids, thread runs refused while it lives, cancel,
//! release (the thread is free again), and typed errors.

use serde_json::{Value, json};

use super::{
    Frame, client, error_code, get, get_json, post_json, read_frames, start_run, start_with, with_metadata,
};

const STANDBY: &str = "/v1/agents/reference/threads/sb-1/standby";

/// The `(execution, seq)` of a Standby frame's `id:` (`<execution>:<seq>`).
fn cursor(f: &Frame) -> (String, u64) {
    let id = f.id.as_deref().expect("an id");
    let (run, seq) = id
        .rsplit_once(':')
        .unwrap_or_else(|| panic!("a Standby cursor: {id:?}"));
    (run.to_owned(), seq.parse().expect("a decimal sequence"))
}

async fn events(base: &str, last_event_id: Option<&str>) -> reqwest::Response {
    let mut req = client().get(format!("{base}{STANDBY}/events"));
    if let Some(id) = last_event_id {
        req = req.header("last-event-id", id);
    }
    let resp = req.send().await.unwrap();
    assert_eq!(resp.status(), 200);
    resp
}

/// Reads the Standby's events until the `n`-th `done`.
async fn until_done(base: &str, after: Option<&str>, n: usize) -> Vec<Frame> {
    let mut seen = 0;
    read_frames(events(base, after).await, |f| {
        if f.event.as_deref() == Some("done") {
            seen += 1;
        }
        seen < n
    })
    .await
}

#[tokio::test]
async fn a_standby_answers_input_streams_its_executions_and_releases_the_thread() {
    let server = start_with(with_metadata()).await;
    let base = server.url();
    let opened = post_json(&base, STANDBY, json!({})).await;
    assert_eq!(opened.status(), 201);
    let opened: Value = opened.json().await.unwrap();
    assert_eq!(opened["live"], true);
    assert_eq!(opened["key"], "sb-1");
    let again = post_json(&base, STANDBY, json!({})).await;
    assert_eq!(again.status(), 200, "the live Standby is answered again");
    assert_eq!(get_json(&base, STANDBY).await["opened_at"], opened["opened_at"]);
    assert_eq!(
        get_json(&base, "/v1/agents/reference/threads/sb-1").await["standby"],
        true
    );

    // Input starts an execution; its events stream with ids `<execution>:<seq>`, the run's own sequence.
    let sent = post_json(
        &base,
        &format!("{STANDBY}/messages"),
        json!({"text": "hello standby", "id": "sb-msg-1"}),
    )
    .await;
    assert_eq!(sent.status(), 202);
    assert_eq!(sent.json::<Value>().await.unwrap()["message_id"], "sb-msg-1");
    let first = until_done(&base, None, 1).await;
    assert_eq!(first.first().unwrap().event.as_deref(), Some("run_started"));
    let ids: Vec<(String, u64)> = first.iter().map(cursor).collect();
    let run = ids[0].0.clone();
    assert!(ids.iter().all(|(r, _)| *r == run), "one execution: {ids:?}");
    assert_eq!(
        ids.iter().map(|(_, s)| *s).collect::<Vec<_>>(),
        (1..=ids.len() as u64).collect::<Vec<_>>(),
        "dense sequence from 1"
    );
    let done = first.last().unwrap().json();
    assert_eq!(done["result"]["text"], "Reference reply: hello standby", "{done}");

    // While it lives, task runs on the thread are refused.
    let busy = post_json(
        &base,
        "/v1/agents/reference/threads/sb-1/runs",
        json!({"prompt": "a task"}),
    )
    .await;
    assert_eq!(error_code(busy).await.1, "thread_busy");

    // A second input: a new execution on the same conversation; resuming after the first `done` shows
    // only the second execution.
    let last = first.last().unwrap().id.clone().unwrap();
    let second = post_json(&base, &format!("{STANDBY}/messages"), json!({"text": "again"})).await;
    assert_eq!(second.status(), 202);
    let tail = until_done(&base, Some(&last), 1).await;
    let (next_run, next_seq) = cursor(tail.first().unwrap());
    assert_ne!(next_run, run, "the second execution is another run");
    assert_eq!(next_seq, 1, "it numbers its own events from 1");
    assert_eq!(tail.first().unwrap().event.as_deref(), Some("run_started"));
    let done = tail.last().unwrap().json();
    assert_eq!(done["result"]["text"], "Reference reply: again");
    assert_eq!(done["result"]["metadata"]["history_len"], "2", "{done}");
    // The Standby's executions are in the thread's history.
    let history = get_json(&base, "/v1/agents/reference/threads/sb-1/events").await;
    let dones = history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "done")
        .count();
    assert_eq!(dones, 2);

    // Cancel keeps it open; typed errors; release frees the thread.
    let cancelled = post_json(&base, &format!("{STANDBY}/cancel"), json!({})).await;
    assert_eq!(cancelled.status(), 202);
    assert_eq!(cancelled.json::<Value>().await.unwrap()["live"], true);
    let empty = post_json(&base, &format!("{STANDBY}/messages"), json!({"text": " "})).await;
    assert_eq!(error_code(empty).await.0, 422);
    let released = client().delete(format!("{base}{STANDBY}")).send().await.unwrap();
    assert_eq!(released.status(), 200);
    assert_eq!(released.json::<Value>().await.unwrap()["live"], false);
    assert_eq!(error_code(get(&base, STANDBY).await).await.0, 404);
    let gone = post_json(&base, &format!("{STANDBY}/messages"), json!({"text": "x"})).await;
    assert_eq!(error_code(gone).await.0, 404);
    let run = start_run(
        &base,
        "/v1/agents/reference/threads/sb-1/runs",
        json!({"prompt": "free again"}),
    )
    .await;
    assert!(run["run_id"].is_string());
    let missing = post_json(&base, "/v1/agents/nope/threads/x/standby", json!({})).await;
    assert_eq!(error_code(missing).await.0, 404);
    server.shutdown().await.unwrap();
}

/// The library Standby's merged event stream is bounded: a consumer that stops reading holds at most
/// `STANDBY_EVENT_BUFFER` events, the execution still finishes (its content deltas dropped and counted,
/// §6.3), and reading on shows everything critical in order, ending in `done`.
#[tokio::test]
async fn a_stalled_library_standby_consumer_holds_a_bounded_backlog() {
    use agent_adaptor::runtime::{Agent, CallOptions, Payload, STANDBY_EVENT_BUFFER};
    use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
    use tokio_util::sync::CancellationToken;

    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![
        Step::Bulk { count: 20_000 },
        Step::text("end"),
    ])));
    let life = CancellationToken::new();
    let identity = CallOptions::new().identity(agent_adaptor::driver::Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let sb = agent.thread("stalled").standby(life.clone(), identity);
    let mut rx = sb.events().expect("the consumer");
    sb.send("go", ()).await.expect("admitted");
    // Stalled: nobody reads while the execution produces 20,000 deltas.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let backlog = rx.len();
    assert!(
        backlog <= STANDBY_EVENT_BUFFER,
        "a stalled consumer holds {backlog} events (bound {STANDBY_EVENT_BUFFER})"
    );
    let mut dropped = 0;
    let mut last = 0;
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(30), rx.recv())
            .await
            .expect("events keep coming")
            .expect("open");
        assert!(e.meta.sequence > last, "in order");
        last = e.meta.sequence;
        if let Payload::Dropped(d) = &e.payload {
            dropped += d.count;
        }
        if let Payload::Done(d) = &e.payload {
            assert!(d.outcome.is_ok(), "the run finished: {:?}", d.outcome);
            break;
        }
    }
    assert!(
        dropped > 0,
        "the stalled consumer's content was dropped and counted"
    );
    life.cancel();
}

/// A host that takes [`Standby::executions`] gets each execution subscribed before it is handed over:
/// the worker asks for the execution's result at once, and without the subscription that released the
/// producers as result-only, so content the host had not yet read was dropped (gaps in the sequence).
/// Across several executions, every sequence from 1 to `done` arrives, with no `dropped` event.
#[tokio::test]
async fn standby_executions_hand_over_drops_no_event() {
    use agent_adaptor::runtime::{Agent, CallOptions, Payload};
    use agent_adaptor::testkit::reference::{ReferenceDriver, Script, Step};
    use tokio_util::sync::CancellationToken;

    let agent = Agent::new(ReferenceDriver::scripted(Script::new(vec![
        Step::Bulk { count: 300 },
        Step::text("end"),
    ])));
    let life = CancellationToken::new();
    let identity = CallOptions::new().identity(agent_adaptor::driver::Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let sb = agent.thread("handover").standby(life.clone(), identity);
    let mut executions = sb.executions().expect("the executions");
    for n in 0..3 {
        sb.send(&format!("go {n}"), ()).await.expect("admitted");
        let stream = tokio::time::timeout(std::time::Duration::from_secs(10), executions.recv())
            .await
            .expect("an execution is handed over")
            .expect("open");
        // The host gets to the execution's events a little later than the hand-over.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let mut events = stream.events();
        let mut seqs = Vec::new();
        let mut dropped = Vec::new();
        while let Some(e) = tokio::time::timeout(std::time::Duration::from_secs(30), events.recv())
            .await
            .expect("events keep coming")
        {
            seqs.push(e.meta.sequence);
            if let Payload::Dropped(d) = &e.payload {
                dropped.push((d.first_sequence, d.last_sequence, d.reason.clone()));
            }
        }
        let missing: Vec<u64> = (1..=*seqs.last().unwrap())
            .filter(|s| !seqs.contains(s))
            .collect();
        assert!(
            missing.is_empty() && dropped.is_empty(),
            "execution {n}: missing seqs {missing:?}, dropped {dropped:?}"
        );
        assert!(seqs.len() > 300, "execution {n}: {} events", seqs.len());
        let _ = stream.result().await;
    }
    life.cancel();
}

/// The reference agent's `bulk:<n>` prompt emits `n` content deltas (the memory and throughput tests'
/// many-event run); over a Standby each of them arrives, numbered densely, before `done`.
#[tokio::test]
async fn standby_reference_bulk_prompt_emits_n_deltas() {
    use agent_adaptor::runtime::{Agent, CallOptions, Payload};
    use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
    use tokio_util::sync::CancellationToken;

    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let life = CancellationToken::new();
    let identity = CallOptions::new().identity(agent_adaptor::driver::Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let sb = agent.thread("bulk").standby(life.clone(), identity);
    let mut executions = sb.executions().expect("the executions");
    sb.send("emit bulk:700 please", ()).await.expect("admitted");
    let stream = executions.recv().await.expect("an execution");
    let mut events = stream.events();
    let (mut bulk, mut last) = (0, 0);
    while let Some(e) = tokio::time::timeout(std::time::Duration::from_secs(30), events.recv())
        .await
        .expect("events keep coming")
    {
        assert_eq!(e.meta.sequence, last + 1, "dense sequence");
        last = e.meta.sequence;
        if let Payload::TextDelta(d) = &e.payload
            && d.message_id == "bulk"
        {
            bulk += 1;
        }
    }
    assert_eq!(bulk, 700, "bulk:700 emits 700 deltas");
    life.cancel();
}

/// Issue #22 item 8: a Standby opening and a run starting on the same thread at the same moment get
/// one answer — exactly one is admitted, the other is 409 `thread_busy` — over many races.
#[tokio::test]
async fn a_standby_racing_a_run_on_one_thread_admits_exactly_one() {
    let server = super::start().await;
    let base = server.url();
    let http = client();
    for i in 0..150 {
        let path = format!("{base}/v1/agents/reference/threads/race-{i}");
        let (standby, run) = tokio::join!(
            http.post(format!("{path}/standby")).send(),
            http.post(format!("{path}/runs"))
                .json(&json!({"prompt": "hello"}))
                .send(),
        );
        let (standby, run) = (standby.unwrap(), run.unwrap());
        let statuses = (standby.status().as_u16(), run.status().as_u16());
        let loser = match statuses {
            (201, 409) => run,
            (409, 201) => standby,
            other => panic!("race {i}: exactly one admitted, got (standby, run) = {other:?}"),
        };
        let body: Value = loser.json().await.unwrap();
        assert_eq!(body["error"]["code"], "thread_busy", "race {i}: {body}");
        if statuses.0 == 201 {
            // Within the tenant's max_standbys.
            let released = http.delete(format!("{path}/standby")).send().await.unwrap();
            assert_eq!(released.status(), 200);
        }
    }
    server.shutdown().await.unwrap();
}
