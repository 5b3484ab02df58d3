//! In-process tests of the fake ACP agent: the handshake per flavour, sessions across "processes"
//! (two serves over one data dir), a permission round trip, and malformed input answered, not fatal.

use std::io::Cursor;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::*;

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn frames(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Serves `input` and returns every frame written.
fn serve_all(flavor: Flavor, env: Env, input: String) -> (Outcome, Vec<Value>) {
    let out = Buf::default();
    let outcome = serve(flavor, env, Cursor::new(input.into_bytes()), out.clone());
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let values = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (outcome, values)
}

fn req(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn result(frames: &[Value], id: u64) -> Value {
    frames
        .iter()
        .find(|f| f["id"] == json!(id) && f.get("method").is_none())
        .cloned()
        .unwrap_or_else(|| panic!("no answer to {id} in {frames:?}"))
}

#[test]
fn sessions_survive_a_new_process_and_cursor_wants_its_login() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_string_lossy().into_owned();
    let env = Env {
        data_dir: Some(dir.path().join("data")),
        session_id: Some("s-1".into()),
        ..Default::default()
    };
    let (_, out) = serve_all(
        Flavor::Generic,
        env.clone(),
        frames(&[
            req(0, "initialize", json!({"protocolVersion": 1})),
            req(1, "session/new", json!({"cwd": cwd, "mcpServers": []})),
            req(
                2,
                "session/prompt",
                json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": "hi"}]}),
            ),
        ]),
    );
    assert_eq!(
        result(&out, 0)["result"]["agentCapabilities"]["loadSession"],
        true
    );
    assert_eq!(result(&out, 2)["result"]["stopReason"], "end_turn");
    let (_, out) = serve_all(
        Flavor::Generic,
        env,
        frames(&[
            req(
                0,
                "session/load",
                json!({"sessionId": "s-1", "cwd": cwd, "mcpServers": []}),
            ),
            req(
                1,
                "session/prompt",
                json!({"sessionId": "s-1", "prompt": [{"type": "text", "text": "again"}]}),
            ),
            req(
                2,
                "session/load",
                json!({"sessionId": "nope", "cwd": cwd, "mcpServers": []}),
            ),
        ]),
    );
    let replayed: Vec<_> = out
        .iter()
        .filter(|f| f["method"] == "session/update")
        .map(|f| f["params"]["update"]["sessionUpdate"].clone())
        .collect();
    assert_eq!(
        replayed[..2],
        [json!("user_message_chunk"), json!("agent_message_chunk")]
    );
    let said: String = out
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|f| f["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert!(said.contains("(turn 2, 1 earlier): again"), "{said}");
    assert_eq!(result(&out, 2)["error"]["code"], -32002);

    let cursor_env = Env {
        data_dir: Some(dir.path().join("cursor")),
        ..Default::default()
    };
    let (_, out) = serve_all(
        Flavor::Cursor,
        cursor_env,
        frames(&[
            req(0, "initialize", json!({"protocolVersion": 1})),
            req(1, "session/new", json!({"cwd": cwd, "mcpServers": []})),
            req(2, "authenticate", json!({"methodId": "cursor_login"})),
            req(3, "session/new", json!({"cwd": cwd, "mcpServers": []})),
        ]),
    );
    assert_eq!(result(&out, 0)["result"]["authMethods"][0]["id"], "cursor_login");
    assert_eq!(result(&out, 1)["error"]["message"], "Authentication required");
    assert!(result(&out, 3)["result"]["sessionId"].is_string());
}

#[test]
fn a_permission_is_asked_and_bad_input_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().to_string_lossy().into_owned();
    let env = Env {
        data_dir: Some(dir.path().join("data")),
        session_id: Some("s".into()),
        ..Default::default()
    };
    let input = format!(
        "{}not json\n{}",
        frames(&[
            req(1, "session/new", json!({"cwd": cwd, "mcpServers": []})),
            req(
                2,
                "session/prompt",
                json!({"sessionId": "s", "prompt": [{"type": "text", "text": "scenario=tools"}]})
            ),
        ]),
        frames(&[
            json!({"jsonrpc": "2.0", "id": "fake-1", "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}}),
            req(3, "bogus/method", json!({})),
        ])
    );
    let (outcome, out) = serve_all(Flavor::Generic, env, input);
    assert_eq!(outcome, Outcome::Exit(0));
    let ask = out
        .iter()
        .find(|f| f["method"] == "session/request_permission")
        .unwrap();
    assert_eq!(ask["params"]["options"].as_array().unwrap().len(), 3);
    assert_eq!(result(&out, 2)["result"]["stopReason"], "end_turn");
    assert!(dir.path().join("fake-acp-marker.txt").exists());
    assert_eq!(result(&out, 3)["error"]["code"], -32601);
    assert!(
        out.iter().any(|f| f["error"]["code"] == -32700),
        "the bad line is answered"
    );
}
