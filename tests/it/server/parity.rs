//! One run log for every output: the same scripted run (reasoning, a tool call, a notice with data, an
//! approval whose `details` carry a secret, text, usage) viewed over REST SSE, Standby SSE and AG-UI shows
//! the same exposed content — the REST and Standby streams are the same records, AG-UI is a projection of
//! them — the secret appears nowhere (not in any stream, not in the thread history), and usage counts stay
//! numbers.

use serde_json::{Map, Value, json};

use super::{Frame, all_frames, client, get_json, post_json, read_frames, start_run, start_with};
use agent_adaptor::recorder::ExposurePolicy;
use agent_adaptor::server::ServerConfig;

const SECRET: &str = "hunter2-parity-secret-value";

/// Reasoning, the echo tool call, a notice whose data and an approval whose details are the object.
fn prompt() -> String {
    format!(
        "please approve the change and post a notice {}",
        json!({"api_key": SECRET, "note": "visible note", "max_tokens": 64})
    )
}

fn config() -> ServerConfig {
    let mut config = ServerConfig::for_tests();
    config.agents[0].exposure = ExposurePolicy {
        include_usage: true,
        include_metadata: true,
        ..Default::default()
    };
    config
}

/// A frame's data with what differs between two runs of the same script taken out: coordinates
/// (`meta`), times, and the run's and approval's ids.
fn normalized(data: &str, run: &str) -> Value {
    /// `s` with every approval id (`apr-` and its hex digits and dashes) replaced by `APR`.
    fn without_approval_ids(s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("apr-") {
            out.push_str(&rest[..i]);
            out.push_str("APR");
            rest = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_hexdigit() || c == '-');
        }
        out + rest
    }
    fn walk(v: &mut Value, run: &str) {
        match v {
            Value::Object(m) => {
                for k in ["meta", "time", "created_at", "deadline", "at", "thread_id"] {
                    m.remove(k);
                }
                m.values_mut().for_each(|x| walk(x, run));
            }
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, run)),
            Value::String(s) => *s = without_approval_ids(&s.replace(run, "RUN")),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_str(data).unwrap();
    walk(&mut v, run);
    v
}

/// Reads `resp` to the run's `done`, answering its approval on the way; the frames.
async fn approve_through(
    base: &str,
    resp: reqwest::Response,
    run_of: impl Fn(&Frame) -> String,
) -> Vec<Frame> {
    let mut asked = Vec::new();
    let frames = read_frames(resp, |f| {
        if f.event.as_deref() == Some("approval_request") {
            asked.push((run_of(f), f.json()["id"].as_str().unwrap().to_owned()));
            return false;
        }
        f.event.as_deref() != Some("done")
    })
    .await;
    let mut all = frames;
    if let Some((run, id)) = asked.pop() {
        let answered = post_json(
            base,
            &format!("/v1/runs/{run}/approvals/{id}"),
            json!({"decision": "approve"}),
        )
        .await;
        assert_eq!(answered.status(), 200);
        let after = all.last().unwrap().id.clone().unwrap();
        let rest = client()
            .get(format!("{base}{}", resume_path(&all, &run)))
            .header("last-event-id", after)
            .send()
            .await
            .unwrap();
        all.extend(read_frames(rest, |f| f.event.as_deref() != Some("done")).await);
    }
    all
}

/// Where to resume the stream the frames came from: a Standby's events (ids `<run>:<seq>`) or the run's.
fn resume_path(frames: &[Frame], run: &str) -> String {
    let standby = frames
        .iter()
        .any(|f| f.id.as_deref().is_some_and(|i| i.contains(':')));
    if standby {
        "/v1/agents/reference/threads/parity-sb/standby/events".into()
    } else {
        format!("/v1/runs/{run}/events")
    }
}

/// What AG-UI can show of a run, from the exposed records: text, reasoning, tool calls with their
/// arguments, notice data, approval details.
#[derive(Debug, Default, PartialEq)]
struct Shown {
    text: String,
    reasoning: String,
    tools: Vec<(String, Value)>,
    notices: Vec<(String, Value)>,
    approvals: Vec<Value>,
}

fn shown_by_records(frames: &[Frame]) -> Shown {
    let mut s = Shown::default();
    for f in frames.iter().filter(|f| f.id.is_some()) {
        let j = f.json();
        match f.event.as_deref().unwrap() {
            "text_delta" if j["channel"] != "thinking" => {
                s.text.push_str(j["text"].as_str().unwrap_or_default())
            }
            "thinking" => s.reasoning.push_str(j["text"].as_str().unwrap_or_default()),
            "tool_call" if j["phase"] == "start" => {
                s.tools
                    .push((j["name"].as_str().unwrap().to_owned(), Value::Null));
            }
            "tool_call" if j["phase"] == "end" => {
                s.tools.last_mut().unwrap().1 = j["args"].clone();
            }
            "notice" if j["kind"] == "reference.note" => {
                s.notices
                    .push((j["kind"].as_str().unwrap().to_owned(), j["data"].clone()));
            }
            "approval_request" => s.approvals.push(j["details"].clone()),
            _ => {}
        }
    }
    s
}

fn shown_by_agui(frames: &[Frame]) -> Shown {
    let mut s = Shown::default();
    let mut names: Map<String, Value> = Map::new();
    let mut args: Map<String, Value> = Map::new();
    for f in frames {
        let j = f.json();
        match j["type"].as_str().unwrap_or_default() {
            "TEXT_MESSAGE_CONTENT" => s.text.push_str(j["delta"].as_str().unwrap()),
            "REASONING_MESSAGE_CONTENT" => s.reasoning.push_str(j["delta"].as_str().unwrap()),
            "TOOL_CALL_START" => {
                names.insert(
                    j["toolCallId"].as_str().unwrap().into(),
                    j["toolCallName"].clone(),
                );
            }
            "TOOL_CALL_ARGS" => {
                let id = j["toolCallId"].as_str().unwrap().to_owned();
                let so_far = args
                    .get(&id)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                args.insert(id, Value::String(so_far + j["delta"].as_str().unwrap()));
            }
            "CUSTOM" if j["name"] == "reference.note" => {
                s.notices
                    .push(("reference.note".into(), j["value"]["data"].clone()));
            }
            _ => {}
        }
    }
    for (id, name) in names {
        let name = name.as_str().unwrap().to_owned();
        let parsed: Value = args
            .get(&id)
            .and_then(Value::as_str)
            .map(|a| serde_json::from_str(a).unwrap())
            .unwrap_or(Value::Null);
        if name.starts_with("dec.") {
            s.approvals.push(parsed["payload"].clone());
        } else {
            s.tools.push((name, parsed));
        }
    }
    s
}

#[tokio::test]
async fn parity_rest_standby_and_agui_show_the_same_exposed_run_and_no_secret() {
    let server = start_with(config()).await;
    let base = server.url();

    // REST.
    let run = start_run(
        &base,
        "/v1/agents/reference/threads/parity-rest/runs",
        json!({"prompt": prompt()}),
    )
    .await;
    let rest_run = run["run_id"].as_str().unwrap().to_owned();
    let resp = client()
        .get(format!("{base}/v1/runs/{rest_run}/events"))
        .send()
        .await
        .unwrap();
    let rest = approve_through(&base, resp, |_| rest_run.clone()).await;

    // Standby.
    let sb = "/v1/agents/reference/threads/parity-sb/standby";
    assert_eq!(post_json(&base, sb, json!({})).await.status(), 201);
    assert_eq!(
        post_json(&base, &format!("{sb}/messages"), json!({"text": prompt()}))
            .await
            .status(),
        202
    );
    let resp = client().get(format!("{base}{sb}/events")).send().await.unwrap();
    let run_of = |f: &Frame| f.id.as_deref().unwrap().rsplit_once(':').unwrap().0.to_owned();
    let standby = approve_through(&base, resp, run_of).await;
    let sb_run = run_of(&standby[0]);

    // AG-UI (stream mode: the approval is answered over the approval POST while the stream stays open).
    let input = json!({
        "threadId": "parity-agui", "runId": "parity-1", "state": {}, "tools": [], "context": [],
        "forwardedProps": {}, "messages": [{"id": "u-1", "role": "user", "content": prompt()}]
    });
    let resp = post_json(&base, "/v1/agents/reference/agui", input).await;
    assert_eq!(resp.status(), 200);
    let key = agent_adaptor::agui::thread_key("parity-agui");
    let answer = {
        let base = base.clone();
        tokio::spawn(async move {
            loop {
                let thread = get_json(&base, &format!("/v1/agents/reference/threads/{key}")).await;
                if let Some(run) = thread["active_run"].as_str() {
                    let listed = get_json(&base, &format!("/v1/runs/{run}/approvals?pending=true")).await;
                    if let Some(id) = listed["approvals"][0]["id"].as_str() {
                        let url = format!("/v1/runs/{run}/approvals/{id}");
                        assert_eq!(
                            post_json(&base, &url, json!({"decision": "approve"}))
                                .await
                                .status(),
                            200
                        );
                        return run.to_owned();
                    }
                }
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        })
    };
    let agui = all_frames(resp).await;
    let agui_run = answer.await.unwrap();

    // REST and Standby: the same records, event for event.
    let rest_n: Vec<(Option<String>, Value)> = rest
        .iter()
        .filter(|f| f.id.is_some())
        .map(|f| (f.event.clone(), normalized(&f.data, &rest_run)))
        .collect();
    let sb_n: Vec<(Option<String>, Value)> = standby
        .iter()
        .filter(|f| f.id.is_some())
        .map(|f| (f.event.clone(), normalized(&f.data, &sb_run)))
        .collect();
    assert_eq!(rest_n, sb_n, "REST SSE and Standby SSE show the same records");
    let kinds: Vec<&str> = rest.iter().filter_map(|f| f.event.as_deref()).collect();
    for kind in [
        "thinking",
        "tool_call",
        "notice",
        "approval_request",
        "text_delta",
        "done",
    ] {
        assert!(kinds.contains(&kind), "the script has a {kind}: {kinds:?}");
    }

    // AG-UI is a projection of the same exposed records.
    let by_records = shown_by_records(&rest);
    let by_agui = shown_by_agui(&agui);
    assert!(
        !by_records.notices.is_empty() && !by_records.approvals.is_empty(),
        "{by_records:?}"
    );
    assert_eq!(
        by_agui.notices, by_records.notices,
        "notice data as REST shows it"
    );
    assert_eq!(
        by_agui.approvals, by_records.approvals,
        "approval details as REST shows them"
    );
    assert_eq!(by_agui.reasoning, by_records.reasoning);
    assert_eq!(by_agui.tools, by_records.tools);
    assert!(
        by_agui.text.contains(&by_records.text),
        "{:?} vs {:?}",
        by_agui.text,
        by_records.text
    );
    assert_eq!(
        by_records.notices[0].1["note"], "visible note",
        "non-secret data survives"
    );
    assert_eq!(
        by_records.notices[0].1["max_tokens"], 64,
        "a count named *tokens survives"
    );

    // The secret is nowhere: not in any stream, not in the thread histories.
    let everything: Vec<&str> = rest
        .iter()
        .chain(&standby)
        .chain(&agui)
        .map(|f| f.data.as_str())
        .collect();
    for data in &everything {
        assert!(!data.contains(SECRET), "the secret leaked: {data}");
    }
    for key in [
        "parity-rest",
        "parity-sb",
        agent_adaptor::agui::thread_key("parity-agui").as_str(),
    ] {
        let history = get_json(&base, &format!("/v1/agents/reference/threads/{key}/events")).await;
        assert!(
            !history.to_string().contains(SECRET),
            "the secret is in {key}'s history"
        );
        assert!(
            history["events"].as_array().is_some_and(|e| !e.is_empty()),
            "{key} has history"
        );
    }
    for run in [&rest_run, &sb_run, &agui_run] {
        let replay = all_frames(
            client()
                .get(format!("{base}/v1/runs/{run}/events"))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert!(
            replay.iter().all(|f| !f.data.contains(SECRET)),
            "the secret is in {run}'s log"
        );
        // Usage counts are numbers, in the live records and in the durable replay alike.
        let done = replay
            .iter()
            .rev()
            .find(|f| f.event.as_deref() == Some("done"))
            .unwrap()
            .json();
        let usage = &done["result"]["usage"];
        assert!(
            usage["input_tokens"].is_u64() && usage["output_tokens"].is_u64(),
            "{done}"
        );
    }
    let live_done = rest
        .iter()
        .rev()
        .find(|f| f.event.as_deref() == Some("done"))
        .unwrap()
        .json();
    assert!(
        live_done["result"]["usage"]["input_tokens"].is_u64(),
        "{live_done}"
    );
    server.shutdown().await.unwrap();
}
