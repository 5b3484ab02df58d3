//! `session/list`, `session/resume` and `session/fork` on `agent-adaptor acp` (the built binary over
//! stdio, the reference agent): declared in `sessionCapabilities`, listing pages of 50 with titles,
//! working directories and times, resume without replay in a new process, and a fork whose history
//! starts as a copy of its parent's while the parent stays as it was.

use serde_json::{Value, json};

use super::{Client, agent_text, prompt, updates};

fn result(frames: &[Value]) -> &Value {
    let last = frames.last().expect("frames");
    assert!(last.get("error").is_none(), "an error answer: {last}");
    &last["result"]
}

fn error_code(frames: &[Value]) -> Value {
    frames.last().expect("frames")["error"]["code"].clone()
}

impl Client {
    async fn initialize(&mut self) -> Value {
        let init = self.call(1, "initialize", json!({"protocolVersion": 1})).await;
        result(&init).clone()
    }

    async fn open(&mut self, cwd: &std::path::Path) -> String {
        let new = self
            .call(2, "session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        result(&new)["sessionId"]
            .as_str()
            .expect("a sessionId")
            .to_owned()
    }

    async fn ask(&mut self, session: &str, text: &str) -> Vec<Value> {
        let frames = self.call(3, "session/prompt", prompt(session, text)).await;
        assert_eq!(result(&frames)["stopReason"], "end_turn", "{frames:#?}");
        frames
    }

    async fn list(&mut self, params: Value) -> Vec<Value> {
        self.call(4, "session/list", params).await
    }
}

fn ids(page: &Value) -> Vec<String> {
    page["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .map(|s| s["sessionId"].as_str().expect("sessionId").to_owned())
        .collect()
}

fn user_texts(frames: &[Value]) -> Vec<String> {
    updates(frames, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn initialize_declares_list_resume_fork_and_close() {
    let mut c = Client::spawn(&[]);
    let init = c.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"],
        json!({"list": {}, "resume": {}, "fork": {}, "close": {}})
    );
}

#[tokio::test]
async fn list_shows_prompted_sessions_with_title_cwd_and_updated_at() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut c = Client::spawn(&[]);
    c.initialize().await;
    let first = c.open(a.path()).await;
    c.ask(&first, "\n   \n  Fix the parser  \nthen run the tests")
        .await;
    let second = c.open(b.path()).await;
    let long = "word ".repeat(40);
    c.ask(&second, &long).await;
    // Never prompted: not listed.
    let _idle = c.open(a.path()).await;

    let page = c.list(json!({})).await;
    let page = result(&page);
    assert_eq!(ids(page), vec![first.clone(), second.clone()]);
    assert!(page.get("nextCursor").is_none(), "{page}");
    let sessions = page["sessions"].as_array().unwrap();
    assert_eq!(sessions[0]["title"], "Fix the parser");
    assert_eq!(sessions[0]["cwd"], a.path().to_str().unwrap());
    assert_eq!(sessions[1]["cwd"], b.path().to_str().unwrap());
    let title = sessions[1]["title"].as_str().unwrap();
    assert!(
        title.chars().count() <= 80 && long.starts_with(title),
        "{title:?}"
    );
    assert!(
        title.len() >= 75,
        "cut near 80 characters, not shorter: {title:?}"
    );
    for s in sessions {
        let at = s["updatedAt"].as_str().expect("updatedAt");
        chrono::DateTime::parse_from_rfc3339(at).unwrap_or_else(|e| panic!("{at:?}: {e}"));
    }

    // The cwd filter, params omitted, and bad input.
    let only_a = c.list(json!({"cwd": a.path()})).await;
    assert_eq!(ids(result(&only_a)), vec![first.clone()]);
    c.send(json!({"jsonrpc": "2.0", "id": 5, "method": "session/list"}))
        .await;
    assert_eq!(ids(result(&c.until_response(5).await)).len(), 2);
    assert_eq!(error_code(&c.list(json!({"cwd": "relative"})).await), -32602);
    assert_eq!(error_code(&c.list(json!({"cursor": "bogus"})).await), -32602);
}

#[tokio::test]
async fn list_pages_by_fifty_with_an_opaque_cursor() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::spawn(&[]);
    c.initialize().await;
    let mut created = Vec::new();
    for i in 0..53 {
        let s = c.open(dir.path()).await;
        c.ask(&s, &format!("session {i}")).await;
        created.push(s);
    }
    let first = c.list(json!({})).await;
    let first = result(&first).clone();
    assert_eq!(ids(&first), created[..50]);
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a nextCursor after a full page");
    let second = c.list(json!({"cursor": cursor})).await;
    let second = result(&second);
    assert_eq!(ids(second), created[50..]);
    assert!(second.get("nextCursor").is_none(), "{second}");
    assert_eq!(second["sessions"][2]["title"], "session 52");
}

#[tokio::test]
async fn resume_attaches_in_a_new_process_without_replaying_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("acp.db").display());
    let session = {
        let mut c = Client::spawn(&["--store", &store]);
        c.initialize().await;
        let s = c.open(dir.path()).await;
        c.ask(&s, "remember this").await;
        s
    };
    let mut c = Client::spawn(&["--store", &store]);
    c.initialize().await;
    // mcpServers is optional on session/resume.
    let resumed = c
        .call(
            6,
            "session/resume",
            json!({"sessionId": session, "cwd": dir.path()}),
        )
        .await;
    assert_eq!(resumed.len(), 1, "nothing replayed: {resumed:#?}");
    assert_eq!(result(&resumed), &json!({}));
    // The reference agent keeps conversations in process: the thread goes on from its record with
    // the earlier turn as recovery context.
    let next = c.ask(&session, "and now").await;
    let reply = agent_text(&next);
    assert!(
        reply.contains("Reference reply: remember this") && reply.ends_with("and now"),
        "the resumed thread carries the earlier turn: {reply:?}"
    );
    // Listed from the store by the new process.
    let page = c.list(json!({})).await;
    assert_eq!(ids(result(&page)), vec![session.clone()]);
    let missing = c
        .call(
            7,
            "session/resume",
            json!({"sessionId": "acp-missing", "cwd": dir.path()}),
        )
        .await;
    assert_eq!(error_code(&missing), -32002);
}

#[tokio::test]
async fn fork_copies_history_into_a_new_session_and_leaves_the_parent_alone() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("acp.db").display());
    let (parent, fork) = {
        let mut c = Client::spawn(&["--store", &store]);
        c.initialize().await;
        let parent = c.open(dir.path()).await;
        c.ask(&parent, "remember this").await;
        let forked = c
            .call(
                6,
                "session/fork",
                json!({"sessionId": parent, "cwd": dir.path(), "mcpServers": []}),
            )
            .await;
        assert_eq!(forked.len(), 1, "nothing replayed: {forked:#?}");
        let fork = result(&forked)["sessionId"]
            .as_str()
            .expect("a sessionId")
            .to_owned();
        assert!(fork.starts_with("acp-") && fork != parent, "{fork}");
        c.ask(&fork, "on the fork").await;
        let page = c.list(json!({})).await;
        let page = result(&page);
        assert_eq!(ids(page), vec![parent.clone(), fork.clone()]);
        assert_eq!(page["sessions"][1]["title"], "remember this");
        let missing = c
            .call(
                7,
                "session/fork",
                json!({"sessionId": "acp-missing", "cwd": dir.path()}),
            )
            .await;
        assert_eq!(error_code(&missing), -32002);
        (parent, fork)
    };
    let mut c = Client::spawn(&["--store", &store]);
    c.initialize().await;
    let load = |id: &str| json!({"sessionId": id, "cwd": dir.path(), "mcpServers": []});
    let forked = c.call(8, "session/load", load(&fork)).await;
    assert_eq!(user_texts(&forked), vec!["remember this", "on the fork"]);
    assert_eq!(
        agent_text(&forked),
        "Reference reply: remember thisReference reply: on the fork"
    );
    let original = c.call(9, "session/load", load(&parent)).await;
    assert_eq!(user_texts(&original), vec!["remember this"]);
}

/// A session that was created and never prompted (what `acpx sessions new` does before its first
/// `prompt`, from another process) loads and resumes in a new process. Before, both answered -32002
/// `Resource not found`: only a prompt recorded anything, so acpx 0.19.1 printed "session reconnect
/// failed, started fresh session" and the user's named session was lost.
#[tokio::test]
async fn an_unprompted_session_loads_and_resumes_in_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("acp.db").display());
    let session = {
        let mut c = Client::spawn(&["--store", &store]);
        c.initialize().await;
        c.open(dir.path()).await
    };
    let mut c = Client::spawn(&["--store", &store]);
    c.initialize().await;
    let loaded = c
        .call(
            6,
            "session/load",
            json!({"sessionId": session, "cwd": dir.path(), "mcpServers": []}),
        )
        .await;
    assert_eq!(loaded.len(), 1, "no history to replay: {loaded:#?}");
    assert!(result(&loaded).is_object(), "{loaded:#?}");
    let resumed = c
        .call(
            7,
            "session/resume",
            json!({"sessionId": session, "cwd": dir.path()}),
        )
        .await;
    assert_eq!(result(&resumed), &json!({}));
    let reply = agent_text(&c.ask(&session, "first words").await);
    assert!(reply.contains("first words"), "{reply:?}");
}

#[tokio::test]
async fn close_cancels_the_running_prompt_and_forgets_the_session_until_it_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::spawn(&[]);
    c.initialize().await;
    let session = c.open(dir.path()).await;
    c.ask(&session, "first turn").await;
    c.send(json!({"jsonrpc": "2.0", "id": 10, "method": "session/prompt",
        "params": prompt(&session, &format!("slow {}", "word ".repeat(60)))}))
        .await;
    loop {
        let f = c.next().await;
        if f["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    c.send(json!({"jsonrpc": "2.0", "id": 11, "method": "session/close", "params": {"sessionId": session}}))
        .await;
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 2 {
        let f = c.next().await;
        if f.get("method").is_none() {
            answers.insert(f["id"].as_u64().unwrap(), f);
        }
    }
    assert_eq!(answers[&11]["result"], json!({}), "{:?}", answers[&11]);
    assert_eq!(
        answers[&10]["result"]["stopReason"], "cancelled",
        "close cancels the turn"
    );

    // Closed: a prompt no longer finds it, nor does a second close.
    let frames = c
        .call(12, "session/prompt", prompt(&session, "still there?"))
        .await;
    assert_eq!(error_code(&frames), -32002);
    let frames = c.call(13, "session/close", json!({"sessionId": session})).await;
    assert_eq!(error_code(&frames), -32002);
    // Its history stays: loading it reopens it, and it continues.
    let loaded = c
        .call(
            14,
            "session/load",
            json!({"sessionId": session, "cwd": dir.path(), "mcpServers": []}),
        )
        .await;
    assert!(
        updates(&loaded, "user_message_chunk")
            .iter()
            .any(|u| u["content"]["text"] == "first turn")
    );
    c.ask(&session, "after the close").await;
}

#[tokio::test]
async fn a_driver_that_cannot_fork_declares_no_fork_and_refuses_it() {
    // The Cursor driver (over the fake Cursor CLI) keeps no forkable sessions.
    let fake = env!("CARGO_BIN_EXE_fake-cursor-agent");
    let mut c = Client::spawn_agent("cursor", &[], &[("AGENT_ADAPTOR_CURSOR_BIN", fake)]);
    let init = c.initialize().await;
    assert_eq!(
        init["agentCapabilities"]["sessionCapabilities"],
        json!({"list": {}, "resume": {}, "close": {}}),
        "no fork capability"
    );
    let dir = tempfile::tempdir().unwrap();
    let session = c.open(dir.path()).await;
    let frames = c
        .call(
            5,
            "session/fork",
            json!({"sessionId": session, "cwd": dir.path()}),
        )
        .await;
    assert_eq!(error_code(&frames), -32601, "{frames:?}");
    assert!(
        c.call(6, "session/list", json!({}))
            .await
            .last()
            .unwrap()
            .get("result")
            .is_some(),
        "the connection goes on"
    );
}

#[tokio::test]
async fn a_prompt_sent_during_a_turn_joins_it_as_a_supplemental_message() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = Client::spawn(&[]);
    c.initialize().await;
    let session = c.open(dir.path()).await;
    c.send(json!({"jsonrpc": "2.0", "id": 20, "method": "session/prompt",
        "params": prompt(&session, &format!("slow {}", "word ".repeat(40)))}))
        .await;
    loop {
        let f = c.next().await;
        if f["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    c.send(json!({"jsonrpc": "2.0", "id": 21, "method": "session/prompt",
        "params": prompt(&session, "also say bye")}))
        .await;
    let mut frames = Vec::new();
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 2 {
        let f = c.next().await;
        if f.get("method").is_none() {
            answers.insert(f["id"].as_u64().unwrap(), f.clone());
        }
        frames.push(f);
    }
    assert_eq!(
        answers[&20]["result"]["stopReason"], "end_turn",
        "{:?}",
        answers[&20]
    );
    assert_eq!(
        answers[&21]["result"]["stopReason"], "end_turn",
        "the joined prompt ends with the turn: {:?}",
        answers[&21]
    );
    // (end_turn for the joined prompt means the turn delivered its message: an undelivered one fails it)
    assert!(
        agent_text(&frames).contains("reply: slow word"),
        "{}",
        agent_text(&frames)
    );

    // The history shows the user's message (the memory store lives in this process: load here).
    let loaded = c
        .call(
            22,
            "session/load",
            json!({"sessionId": session, "cwd": dir.path(), "mcpServers": []}),
        )
        .await;
    let said: Vec<_> = updates(&loaded, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert!(said.iter().any(|t| t == "also say bye"), "{said:?}");
}
