//! Text, thinking, usage, resume and fork (and rejection), structured output, model errors, a crashing
//! CLI, a killed CLI, and cancellation with the process group reaped — against the real CLI.

use std::time::{Duration, Instant};

use agent_adaptor::driver::{TranscriptKind, notice_kind};
use agent_adaptor::runtime::{Agent, Payload, SchemaOptions};
use agent_adaptor::testkit::mock::anthropic::{Reply, Script};
use futures::StreamExt;

use super::{Cl, code, delta_text, drain, reply, run_error, transport};
use crate::driver_support::spawned;

#[tokio::test]
async fn one_shot_text_streams_with_usage_and_a_thread_resumes_the_session() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-resume");
    let stream = thread.send("say hi", cl.oneshot());
    let events = drain(&stream).await;
    let first = stream.result().await;
    assert_eq!(transport(&first), "one_shot");
    let first = first.unwrap();
    assert_eq!(first.text, "ECHO n=1: say hi");
    assert_eq!(delta_text(&events), "ECHO n=1: say hi", "deltas rendered once");
    assert_eq!(first.provider, "claude");
    let usage = first.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (100, 20));
    let kinds: Vec<_> = first.transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(kinds.first(), Some(&TranscriptKind::Init));
    assert_eq!(kinds.last(), Some(&TranscriptKind::Result));
    let raw = first.raw();
    assert!(raw.terminal.as_ref().is_some_and(|t| t.json["type"] == "result"));
    assert!(String::from_utf8_lossy(&raw.stdout).contains("\"subtype\":\"init\""));
    let sid = first.metadata["session_id"].clone();
    assert!(
        cl.env.config_dir.join("projects").is_dir(),
        "sessions live in the SDK-owned config dir"
    );

    let second = thread.send("again please", cl.oneshot()).result().await.unwrap();
    assert_eq!(second.metadata["session_id"], sid, "the same session continues");
    assert_eq!(second.text, "ECHO n=2: again please");
    let req = cl.requests().pop().unwrap();
    let history = req.all_texts().join("|");
    assert!(
        history.contains("say hi") && history.contains("ECHO n=1"),
        "{history}"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn bidi_streams_thinking_and_text_and_the_final_text_is_the_result() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("think first please", cl.opts());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "bidi");
    let r = outcome.unwrap();
    assert_eq!(r.text, "Thought about it: 42.");
    let thinking: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Thinking(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(thinking, "The user wants me to think. Let me consider it.");
    assert_eq!(delta_text(&events), "Thought about it: 42.");
    assert_eq!(r.metadata["cli_version"], "2.1.332");
    assert!(
        String::from_utf8_lossy(&r.raw().stdout).contains("agent-adaptor-init"),
        "the handshake is in the raw stdout"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn an_unknown_session_is_a_resume_rejection_and_the_thread_starts_fresh() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let thread = agent.thread("cl-lost");
    thread.send("first", cl.oneshot()).result().await.unwrap();
    std::fs::remove_dir_all(cl.env.config_dir.join("projects")).unwrap();
    let stream = thread.send("second", cl.oneshot());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(
        r.text.starts_with("ECHO n=2: ") && r.text.ends_with("second"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("ECHO n=1: first"),
        "the core's recovery context: {}",
        r.text
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::THREAD_CONTINUITY)),
        "the fresh fallback is announced"
    );
    let raw = String::from_utf8_lossy(&r.raw().stdout).into_owned();
    assert!(raw.contains("No conversation found with session ID"), "{raw}");
    cl.assert_reaped();
}

#[tokio::test]
async fn a_fork_branches_the_session_and_leaves_the_parent_alone() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let parent = agent.thread("cl-parent");
    let stream = parent.send("root prompt", cl.opts());
    let parent_pid = spawned(&drain(&stream).await)[0];
    let first = stream.result().await.unwrap();
    let parent_sid = first.metadata["session_id"].clone();
    let child = parent.fork("cl-child");
    let stream = child.send("branch prompt", cl.opts());
    let fork_pids = spawned(&drain(&stream).await);
    let forked = stream.result().await.unwrap();
    let child_sid = forked.metadata["session_id"].clone();
    assert_ne!(child_sid, parent_sid, "a new session");
    assert_eq!(fork_pids.len(), 1, "a fork runs in a process of its own");
    assert_eq!(forked.metadata["process_kept"], "false", "a one-off process");
    assert!(!agent_adaptor::driver::process::group_exists(fork_pids[0] as i32));
    let history = cl.requests().pop().unwrap().all_texts().join("|");
    assert!(
        history.contains("root prompt"),
        "with the parent's history: {history}"
    );
    let stream = parent.send("parent again", cl.opts());
    let events = drain(&stream).await;
    let again = stream.result().await.unwrap();
    assert_eq!(again.metadata["session_id"], parent_sid);
    assert_eq!(
        crate::driver_support::reused(&events, "claude.process"),
        Some(parent_pid),
        "the parent's kept process"
    );
    let history = cl.requests().pop().unwrap().all_texts().join("|");
    assert!(
        !history.contains("branch prompt"),
        "the branch is not in the parent: {history}"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn structured_output_is_native_and_instructions_reach_the_system_prompt() {
    let script = Script::from_fn(|req| {
        if req.tool_names().iter().any(|t| t == "StructuredOutput") && req.tool_results().is_empty() {
            Reply::tool_use(
                "StructuredOutput",
                serde_json::json!({"answer": "forty-two", "n": 42}),
            )
        } else {
            reply(req)
        }
    });
    let Some(cl) = Cl::scripted(script, |_| {}).await else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    let schema = br#"{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"]}"#;
    for (opts, want) in [(cl.oneshot(), "one_shot"), (cl.opts(), "bidi")] {
        let opts = opts
            .instructions("Always answer in haiku ZZMARK.")
            .schema_json(schema, SchemaOptions::new());
        let outcome = agent.send("the answer please", opts).result().await;
        assert_eq!(transport(&outcome), want);
        let r = outcome.unwrap();
        assert_eq!(
            r.structured().unwrap(),
            &serde_json::json!({"answer": "forty-two", "n": 42})
        );
    }
    let req = &cl.requests()[0];
    assert!(
        req.system_text().contains("ZZMARK"),
        "instructions in the system prompt"
    );
    assert!(
        !req.last_user_texts().join(" ").contains("ZZMARK"),
        "not in the prompt"
    );
    cl.assert_reaped();
}

#[tokio::test]
async fn model_errors_show_retries_as_notices_and_fail_typed_with_the_partial_result() {
    let Some(cl) = Cl::with(|c| {
        c.common.env.insert("CLAUDE_CODE_MAX_RETRIES".into(), "1".into());
    })
    .await
    else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("please fail with 529", cl.opts());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(
        code(&outcome),
        "provider_server_error",
        "{}",
        run_error(&outcome).message
    );
    let retries = events
        .iter()
        .filter(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::PROVIDER_RETRY))
        .count();
    assert_eq!(retries, 1, "the retry is visible");
    let partial = &run_error(&outcome).result;
    assert!(
        partial
            .transcript()
            .iter()
            .any(|i| i.kind == TranscriptKind::Init)
    );
    assert!(
        partial
            .raw()
            .terminal
            .is_some_and(|t| t.json["api_error_status"] == 529)
    );
    assert!(
        partial.text.is_empty(),
        "final text only from a successful result"
    );

    let outcome = agent.send("now fail with 400", cl.oneshot()).result().await;
    assert_eq!(code(&outcome), "agent_error");
    assert!(
        run_error(&outcome).message.contains("400"),
        "{}",
        run_error(&outcome).message
    );
    let outcome = agent.send("now fail with 429", cl.oneshot()).result().await;
    assert_eq!(code(&outcome), "rate_limited", "{}", run_error(&outcome).message);
    cl.assert_reaped();
}

#[tokio::test]
async fn a_crashing_cli_is_a_typed_failure_with_its_output() {
    let Some(cl) = Cl::new().await else { return };
    let fake = cl.env.root.join("crashing-claude");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s-crash\",\"model\":\"m\"}'\n\
         echo 'not json at all'\necho 'segfault: boom' >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = cl.driver.config().clone();
    config.common.command = Some(fake);
    let agent = Agent::new(agent_adaptor::providers::claude::ClaudeDriver::new(config));
    let stream = agent.send("hello", cl.oneshot());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(
        code(&outcome),
        "protocol_error",
        "{}",
        run_error(&outcome).message
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::PROVIDER_INVALID)),
        "the noise line is a notice"
    );
    let partial = &run_error(&outcome).result;
    assert!(String::from_utf8_lossy(&partial.raw().stderr).contains("segfault: boom"));
    assert_eq!(partial.metadata["session_id"], "s-crash");

    let mut config = cl.driver.config().clone();
    config.common.command = Some(cl.env.root.join("no-such-claude"));
    let agent = Agent::new(agent_adaptor::providers::claude::ClaudeDriver::new(config));
    let outcome = agent.send("hello", cl.opts()).result().await;
    assert_eq!(code(&outcome), "agent_error");
    assert!(run_error(&outcome).message.contains("cannot start Claude"));
}

/// Live (non-zombie) processes whose command line contains `cmd` and whose environment contains
/// `marker` (the test's own temp dir), from `/proc`.
fn tool_pids(cmd: &str, marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let read = |f: &str| {
            std::fs::read(entry.path().join(f)).map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        };
        let (Ok(cmdline), Ok(environ), Ok(stat)) = (read("cmdline"), read("environ"), read("stat")) else {
            continue;
        };
        let zombie = stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
        if cmdline.contains(cmd) && environ.contains(marker) && !zombie {
            out.push(pid);
        }
    }
    out
}

#[tokio::test]
async fn cancel_mid_tool_stops_and_reaps_the_whole_process_group() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("please run sleep", cl.oneshot());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::ToolCall(c) if c.name == "Bash") {
            break;
        }
    }
    // Wait for the tool's shell (`sleep 2 && echo done`, a grandchild of the driver) to be running.
    let marker = cl.env.root.to_string_lossy().into_owned();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut tools = Vec::new();
    while tools.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        tools = tool_pids("sleep 2", &marker);
    }
    assert!(!tools.is_empty(), "the Bash tool started");
    let started = Instant::now();
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    cl.assert_reaped();
    let left: Vec<u32> = tool_pids("sleep 2", &marker)
        .into_iter()
        .filter(|p| tools.contains(p))
        .collect();
    assert!(left.is_empty(), "the tool's processes outlived the run: {left:?}");
}

#[tokio::test]
async fn a_cli_killed_mid_stream_fails_with_the_partial_stream() {
    let Some(cl) = Cl::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("a slow answer please", cl.opts());
    let mut events = stream.events();
    let mut pid = None;
    let mut text = String::new();
    while let Some(e) = events.next().await {
        match &e.payload {
            Payload::ProcessInfo(p) => pid = p.metadata.get("pid").and_then(|p| p.parse::<i32>().ok()),
            Payload::TextDelta(t) if !t.text.is_empty() => {
                text.push_str(&t.text);
                break;
            }
            _ => {}
        }
    }
    let pid = pid.expect("the spawn was reported");
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let outcome = stream.result().await;
    assert_eq!(
        code(&outcome),
        "protocol_error",
        "{}",
        run_error(&outcome).message
    );
    assert!(!text.is_empty());
    let partial = &run_error(&outcome).result;
    assert!(
        partial
            .transcript()
            .iter()
            .any(|i| i.kind == TranscriptKind::Init)
    );
    assert!(
        String::from_utf8_lossy(&partial.raw().stdout).contains("text_delta"),
        "the partial stream is kept"
    );
    cl.assert_reaped();
}

/// A minimal stdio MCP server (node): initialize, tools/list, tools/call.
const MCP_SERVER_JS: &str = r#"
const rl = require('readline').createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch (e) { return; }
  if (m.id === undefined) return;
  let result = {};
  if (m.method === 'initialize') {
    result = { protocolVersion: (m.params && m.params.protocolVersion) || '2024-11-05',
               capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1.0.0' } };
  } else if (m.method === 'tools/list') {
    result = { tools: [{ name: 'echo', description: 'Echo the text',
               inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] };
  } else if (m.method === 'tools/call') {
    result = { content: [{ type: 'text', text: 'ECHO ' + JSON.stringify(m.params.arguments) }] };
  } else {
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } }) + '\n');
    return;
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\n');
});
"#;

#[tokio::test]
async fn per_call_stdio_mcp_servers_are_materialized_and_callable() {
    let script = Script::from_fn(|req| {
        if req.tool_results().is_empty() && req.last_user_texts().join(" ").contains("use the probe") {
            Reply::tool_use("mcp__probe__echo", serde_json::json!({"text": "hi"}))
        } else {
            reply(req)
        }
    });
    let Some(cl) = Cl::scripted(script, |_| {}).await else {
        return;
    };
    let server_js = cl.env.root.join("probe-mcp.js");
    std::fs::write(&server_js, MCP_SERVER_JS).unwrap();
    let server = agent_adaptor::vocab::McpServer::stdio(
        "probe",
        "node",
        vec![server_js.to_string_lossy().into_owned()],
    );
    let agent = Agent::new(cl.driver.clone());
    let r = agent
        .send("use the probe please", cl.oneshot().mcp([server]))
        .result()
        .await
        .unwrap();
    crate::driver_support::assert_mcp_connected(&r, "probe");
    assert_eq!(r.text, "Tool said: ECHO {\"text\":\"hi\"}");
    let leftover = std::fs::read_dir(cl.env.config_dir.join("agent-adaptor/mcp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftover, 0, "the per-run MCP file is removed");
    cl.assert_reaped();
}

/// The cwd the CLI reported in its init event.
fn init_cwd(r: &agent_adaptor::runtime::RunResult) -> Option<std::path::PathBuf> {
    r.transcript()
        .into_iter()
        .find(|i| i.kind == TranscriptKind::Init)
        .and_then(|i| i.metadata.get("cwd").map(std::path::PathBuf::from))
}

#[tokio::test]
async fn the_common_config_directory_and_timeout_are_honoured() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let d = dir.clone();
    let Some(cl) = Cl::with(move |c| {
        c.common.directory = Some(d);
        c.common.timeout = Some(Duration::from_millis(1200));
    })
    .await
    else {
        return;
    };
    let agent = Agent::new(cl.driver.clone());
    // No workspace option: the run works in CommonConfig.directory (the tool's file lands there).
    let auto = || {
        agent_adaptor::runtime::CallOptions::new().policy(
            agent_adaptor::driver::Policy::default()
                .with_approvals(agent_adaptor::driver::ApprovalPolicy::auto_approve()),
        )
    };
    let r = agent
        .send("please run touch", auto().timeout(Duration::from_secs(60)))
        .result()
        .await
        .unwrap();
    assert_eq!(
        init_cwd(&r),
        Some(dir.clone()),
        "the CLI ran in CommonConfig.directory"
    );
    assert!(dir.join("created-by-tool.txt").is_file(), "the tool worked there");
    // CommonConfig.timeout bounds the execution (the slow answer takes about 2 s).
    let started = Instant::now();
    let outcome = agent.send("answer slow", auto()).result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "deadline_exceeded");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "took {:?}",
        started.elapsed()
    );
    cl.assert_reaped();
    // A call's own timeout wins over the driver's default.
    let r = agent
        .send("answer slow", auto().timeout(Duration::from_secs(60)))
        .result()
        .await;
    assert!(r.is_ok(), "{r:?}");
}
