//! Helpers the driver tests (`claude_driver`, `codebuddy_driver`, `codex_driver`) share: draining a stream,
//! its text, the failure and transport a run reported, and the processes it spawned or reused.

use std::time::{Duration, Instant};

use agent_adaptor::driver::{JsonMap, ProcessKind, ToolCall, TranscriptKind};
use agent_adaptor::runtime::{Event, Payload, RunError, RunOutcome, RunResult, Stream};
use futures::StreamExt;

/// Drains a stream's events.
pub async fn drain(stream: &Stream) -> Vec<Event> {
    stream.events().collect().await
}

/// A stream's events up to and including its first non-empty text delta.
pub async fn until_first_delta(stream: &Stream) -> Vec<Event> {
    let mut events = stream.events();
    let mut seen = Vec::new();
    while let Some(e) = events.next().await {
        let delta = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        seen.push(e);
        if delta {
            break;
        }
    }
    seen
}

/// The concatenated assistant text deltas.
pub fn delta_text(events: &[Event]) -> String {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TextDelta(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect()
}

/// The first tool call event named `name` (its start).
pub fn tool_call(events: &[Event], name: &str) -> Option<ToolCall> {
    events.iter().find_map(|e| match &e.payload {
        Payload::ToolCall(c) if c.name == name => Some(c.clone()),
        _ => None,
    })
}

/// The result map of the first tool result (of tool `id`, when given).
pub fn tool_result(events: &[Event], id: Option<&str>) -> Option<JsonMap> {
    events.iter().find_map(|e| match &e.payload {
        Payload::ToolResult(t) if id.is_none_or(|i| i == t.id) => Some(t.result.clone()),
        _ => None,
    })
}

/// The run failure of `outcome` (panics on success).
pub fn run_error(outcome: &RunOutcome) -> &RunError {
    outcome
        .as_ref()
        .err()
        .and_then(|e| e.as_run())
        .unwrap_or_else(|| panic!("expected a run failure, got {outcome:?}"))
}

/// The driver's failure code of `outcome`.
pub fn code(outcome: &RunOutcome) -> String {
    run_error(outcome).details["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The `transport` the driver reported in the result metadata.
pub fn transport(outcome: &RunOutcome) -> String {
    let r = match outcome {
        Ok(r) => r.clone(),
        Err(e) => e.as_run().map(|e| e.result.clone()).unwrap(),
    };
    r.metadata.get("transport").cloned().unwrap_or_default()
}

/// Asserts that the CLI reported MCP server `name` as `connected` in its init transcript item.
pub fn assert_mcp_connected(result: &RunResult, name: &str) {
    let init = result
        .transcript()
        .into_iter()
        .find(|i| i.kind == TranscriptKind::Init)
        .expect("an init transcript item");
    let servers = init.data["mcp_servers"].as_array().cloned().unwrap_or_default();
    assert!(
        servers
            .iter()
            .any(|s| s["name"] == name && s["status"] == "connected"),
        "{name} not connected: {servers:?}"
    );
}

/// The pids of the processes a run spawned.
pub fn spawned(events: &[Event]) -> Vec<u32> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ProcessInfo(p) if p.kind == ProcessKind::Spawn => p.metadata.get("pid")?.parse().ok(),
            _ => None,
        })
        .collect()
}

/// The pid of the kept process a run reused (the driver's notice with `source` = `source`), if any.
pub fn reused(events: &[Event], source: &str) -> Option<u32> {
    events.iter().find_map(|e| match &e.payload {
        Payload::Notice(n) if n.metadata.get("source").map(String::as_str) == Some(source) => {
            n.metadata.get("pid")?.parse().ok()
        }
        _ => None,
    })
}

/// Polls `f` every 50 ms until it holds; panics after 15 s naming `what`.
pub async fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !f() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A stdio MCP server (node) named `probe` with one tool, `add`, answering `SUM=<a+b> $PROBE_MARK`
/// (write it to a file and run it with `node`).
pub const STDIO_MCP_SERVER_JS: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
rl.on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (m.id === undefined) return;
  if (m.method === 'initialize') {
    send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion,
      capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1.0.0' } } });
  } else if (m.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'add', description: 'Adds two integers',
      inputSchema: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } } } }] } });
  } else if (m.method === 'tools/call') {
    const a = m.params.arguments;
    send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'SUM=' + (a.a + a.b) + ' ' + process.env.PROBE_MARK }] } });
  } else {
    send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
  }
});
"#;

/// An inline skill whose description is a marker the request body can be searched for.
pub fn marked_skill(key: &str, marker: &str) -> agent_adaptor::vocab::SkillRef {
    agent_adaptor::vocab::SkillRef::inline(
        key,
        format!(
            "---\nname: {key}\ndescription: {marker} use this skill when asked about {key}\n---\n\nSay {marker}.\n"
        ),
    )
}

/// Asserts that two concurrent runs' model requests each list only their own skill: `alpha`'s carry
/// `marked_skill("zebra-notes", "ZEBRA-MARKER-7")`, `beta`'s `marked_skill("yak-notes", "YAK-MARKER-9")`,
/// and both runs asked the model at least once.
pub fn assert_skills_kept_apart(alpha: &[&String], beta: &[&String]) {
    assert!(
        !alpha.is_empty() && !beta.is_empty(),
        "both runs asked the model: {} and {} requests",
        alpha.len(),
        beta.len()
    );
    for body in alpha {
        assert!(
            body.contains("zebra-notes") && body.contains("ZEBRA-MARKER-7"),
            "alpha lists its skill"
        );
        assert!(!body.contains("YAK-MARKER-9"), "alpha does not see beta's skill");
    }
    for body in beta {
        assert!(
            body.contains("yak-notes") && body.contains("YAK-MARKER-9"),
            "beta lists its skill"
        );
        assert!(
            !body.contains("ZEBRA-MARKER-7"),
            "beta does not see alpha's skill"
        );
    }
}

/// The overlays under the system temp dir whose name mentions `run_id`.
pub fn overlays_of(run_id: &str) -> Vec<std::path::PathBuf> {
    let dir = std::env::temp_dir().join("agent-adaptor-skill-overlays");
    let tag = agent_adaptor::driver::file_label(run_id);
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().contains(&tag))
                .collect()
        })
        .unwrap_or_default()
}
