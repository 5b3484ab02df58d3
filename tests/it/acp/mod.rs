//! `agent-adaptor acp` end to end: the built binary over stdio with the reference agent —
//! initialize, new, prompt with streamed chunks, permission answered allow and reject, cancel,
//! malformed frames, and `session/load` of a session in a new process (SQLite store).

mod remote;
mod sessions;

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

struct Client {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Client {
    fn spawn(extra: &[&str]) -> Client {
        Client::spawn_agent("reference", extra, &[])
    }

    /// `agent-adaptor acp --agent <agent> <extra>` with `env` added.
    fn spawn_agent(agent: &str, extra: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
            .arg("acp")
            .args(["--agent", agent])
            .args(extra)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn agent-adaptor acp");
        let stdin = child.stdin.take().unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            _child: child,
            stdin,
            lines,
        }
    }

    async fn raw(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn send(&mut self, frame: Value) {
        self.raw(&frame.to_string()).await;
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("a frame within 20 s")
            .unwrap()
            .expect("stdout open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"))
    }

    /// Frames up to the response to `id`, which comes last.
    async fn until_response(&mut self, id: u64) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let f = self.next().await;
            let done = f.get("id") == Some(&json!(id)) && f.get("method").is_none();
            out.push(f);
            if done {
                return out;
            }
        }
    }

    async fn call(&mut self, id: u64, method: &str, params: Value) -> Vec<Value> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.until_response(id).await
    }

    async fn new_session(&mut self) -> String {
        let init = self.call(1, "initialize", json!({"protocolVersion": 1})).await;
        assert_eq!(init.last().unwrap()["result"]["protocolVersion"], 1);
        let new = self
            .call(
                2,
                "session/new",
                json!({"cwd": std::env::temp_dir(), "mcpServers": []}),
            )
            .await;
        new.last().unwrap()["result"]["sessionId"]
            .as_str()
            .expect("a sessionId")
            .to_owned()
    }
}

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

fn updates<'a>(frames: &'a [Value], kind: &str) -> Vec<&'a Value> {
    frames
        .iter()
        .filter(|f| f["method"] == "session/update" && f["params"]["update"]["sessionUpdate"] == kind)
        .map(|f| &f["params"]["update"])
        .collect()
}

fn agent_text(frames: &[Value]) -> String {
    updates(frames, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn a_prompt_streams_chunks_and_ends_the_turn() {
    let mut c = Client::spawn(&[]);
    let session = c.new_session().await;
    let frames = c.call(3, "session/prompt", prompt(&session, "hello there")).await;
    let chunks = updates(&frames, "agent_message_chunk");
    assert!(chunks.len() > 1, "text arrives in chunks: {frames:#?}");
    assert_eq!(agent_text(&frames), "Reference reply: hello there");
    assert!(!updates(&frames, "agent_thought_chunk").is_empty());
    let call = updates(&frames, "tool_call");
    assert_eq!(call.len(), 1);
    assert_eq!(call[0]["title"], "echo");
    assert!(
        updates(&frames, "tool_call_update")
            .iter()
            .any(|u| u["status"] == "completed" && u["toolCallId"] == call[0]["toolCallId"])
    );
    for f in &frames {
        if f["method"] == "session/update" {
            assert_eq!(f["params"]["sessionId"], session.as_str());
        }
    }
    let result = &frames.last().unwrap()["result"];
    assert_eq!(result["stopReason"], "end_turn");
    assert_eq!(result["usage"]["inputTokens"], 12);
    assert_eq!(result["usage"]["outputTokens"], 34);
}

/// Answers the permission request among the frames before the prompt's response with `option`,
/// and returns every frame up to that response.
async fn prompt_with_permission(c: &mut Client, session: &str, option: &str) -> (Value, Vec<Value>) {
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
        "params": prompt(session, "please ask permission")}))
        .await;
    let mut frames = Vec::new();
    let request = loop {
        let f = c.next().await;
        assert!(f.get("result").is_none(), "the prompt ended before asking: {f}");
        if f["method"] == "session/request_permission" {
            break f;
        }
        frames.push(f);
    };
    assert_eq!(request["params"]["sessionId"], session);
    let options: Vec<_> = request["params"]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["optionId"].as_str().unwrap().to_owned(),
                o["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        options,
        vec![
            ("allow".to_owned(), "allow_once".to_owned()),
            ("reject".to_owned(), "reject_once".to_owned())
        ]
    );
    c.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": option}}}))
        .await;
    frames.extend(c.until_response(3).await);
    (request, frames)
}

#[tokio::test]
async fn a_permission_answered_allow_runs_the_tool() {
    let mut c = Client::spawn(&[]);
    let session = c.new_session().await;
    let (request, frames) = prompt_with_permission(&mut c, &session, "allow").await;
    assert_eq!(request["params"]["toolCall"]["title"], "write_file notes.txt");
    assert!(
        updates(&frames, "tool_call")
            .iter()
            .any(|u| u["title"] == "write_file"),
        "the approved tool ran: {frames:#?}"
    );
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn a_permission_answered_reject_continues_and_a_second_answer_changes_nothing() {
    // Under the default `--on-reject continue` the driver is told and the turn goes on.
    let mut c = Client::spawn(&[]);
    let session = c.new_session().await;
    let (request, frames) = prompt_with_permission(&mut c, &session, "reject").await;
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");
    // A repeated answer to the same request is not applied again and the server goes on.
    c.send(json!({"jsonrpc": "2.0", "id": request["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}))
        .await;
    let again = c.call(9, "session/prompt", prompt(&session, "hi")).await;
    assert_eq!(again.last().unwrap()["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn rejecting_under_abort_ends_the_turn_with_refusal() {
    let mut c = Client::spawn(&["--on-reject", "abort"]);
    let session = c.new_session().await;
    let (_, frames) = prompt_with_permission(&mut c, &session, "reject").await;
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "refusal");
}

#[tokio::test]
async fn cancel_mid_prompt_ends_with_cancelled() {
    let mut c = Client::spawn(&[]);
    let session = c.new_session().await;
    let long = format!("slow {}", "word ".repeat(200));
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt(&session, &long)}))
        .await;
    // Wait for the first streamed chunk, then cancel.
    loop {
        let f = c.next().await;
        if f["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    c.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
        .await;
    let frames = c.until_response(3).await;
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "cancelled");
    assert!(agent_text(&frames).len() < long.len(), "the turn stopped early");
}

#[tokio::test]
async fn malformed_frames_are_errors_and_the_server_goes_on() {
    let mut c = Client::spawn(&[]);
    c.raw("{not json").await;
    assert_eq!(c.next().await["error"]["code"], -32700);
    c.raw("[1,2]").await;
    assert_eq!(c.next().await["error"]["code"], -32600);
    c.send(json!({"jsonrpc": "2.0", "id": 7, "method": "no/such"}))
        .await;
    let f = c.next().await;
    assert_eq!(
        (f["id"].clone(), f["error"]["code"].clone()),
        (json!(7), json!(-32601))
    );
    c.send(json!({"jsonrpc": "2.0", "id": 8, "method": "session/new", "params": {"cwd": 5}}))
        .await;
    assert_eq!(c.next().await["error"]["code"], -32602);
    c.send(
        json!({"jsonrpc": "2.0", "id": 9, "method": "session/prompt", "params": prompt("acp-nope", "hi")}),
    )
    .await;
    assert_eq!(c.next().await["error"]["code"], -32002);
    c.send(json!({"jsonrpc": "2.0", "id": 10, "method": "session/new", "params": {"cwd": "relative", "mcpServers": []}}))
        .await;
    assert_eq!(c.next().await["error"]["code"], -32602);
    // Still serving.
    let session = c.new_session().await;
    let frames = c.call(3, "session/prompt", prompt(&session, "still here")).await;
    assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");
}

#[tokio::test]
async fn a_session_loads_in_a_new_process_with_its_history() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite://{}", dir.path().join("acp.db").display());
    let session = {
        let mut c = Client::spawn(&["--store", &store]);
        let session = c.new_session().await;
        let frames = c
            .call(3, "session/prompt", prompt(&session, "remember this"))
            .await;
        assert_eq!(frames.last().unwrap()["result"]["stopReason"], "end_turn");
        session
    };
    let mut c = Client::spawn(&["--store", &store]);
    let init = c.call(1, "initialize", json!({"protocolVersion": 1})).await;
    assert_eq!(init[0]["result"]["agentCapabilities"]["loadSession"], true);
    let frames = c
        .call(
            2,
            "session/load",
            json!({"sessionId": session, "cwd": std::env::temp_dir(), "mcpServers": []}),
        )
        .await;
    let user: String = updates(&frames, "user_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(user, "remember this");
    assert_eq!(agent_text(&frames), "Reference reply: remember this");
    assert!(frames.last().unwrap().get("result").is_some(), "{frames:#?}");
    // The loaded session takes prompts; an unknown one is not found.
    let next = c.call(3, "session/prompt", prompt(&session, "and now")).await;
    assert_eq!(next.last().unwrap()["result"]["stopReason"], "end_turn");
    let missing = c
        .call(
            4,
            "session/load",
            json!({"sessionId": "acp-missing", "cwd": "/tmp", "mcpServers": []}),
        )
        .await;
    assert_eq!(missing.last().unwrap()["error"]["code"], -32002);
}
