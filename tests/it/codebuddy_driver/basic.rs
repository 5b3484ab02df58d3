//! Text, resume (and its rejection), model errors, cancellation with reaping, aborted streams,
//! instructions and native structured output, against the real CLI.

use std::time::{Duration, Instant};

use agent_adaptor::driver::{TranscriptKind, notice_kind};
use agent_adaptor::runtime::{Agent, Payload, SchemaOptions};

use super::{Cb, code, delta_text, drain, run_error, transport};

#[tokio::test]
async fn headless_text_streams_and_a_thread_resumes_the_session() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-resume");
    let stream = thread.send("say hi", cb.headless());
    let events = drain(&stream).await;
    let first = stream.result().await;
    assert_eq!(transport(&first), "headless");
    let first = first.unwrap();
    assert_eq!(first.text, "Reply n=1 to say hi");
    assert_eq!(delta_text(&events), "Reply n=1 to say hi", "deltas rendered once");
    assert_eq!(first.provider, "codebuddy");
    let usage = first.usage.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (10, 5));
    let kinds: Vec<_> = first.transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(kinds.first(), Some(&TranscriptKind::Init));
    assert_eq!(kinds.last(), Some(&TranscriptKind::Result));
    let sid = first.metadata["session_id"].clone();
    assert!(
        cb.config_dir.join("projects").is_dir(),
        "sessions live in the SDK-owned config dir"
    );

    let second = thread.send("again please", cb.headless()).result().await.unwrap();
    assert_eq!(second.metadata["session_id"], sid, "the same session continues");
    let req = cb.mock.completion_requests().pop().unwrap();
    assert_eq!(req.user_queries(), ["say hi", "again please"], "history replayed");
    cb.assert_reaped();
}

#[tokio::test]
async fn an_unknown_session_is_a_resume_rejection_and_the_thread_starts_fresh() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let thread = agent.thread("cb-lost");
    thread.send("first", cb.headless()).result().await.unwrap();
    std::fs::remove_dir_all(cb.config_dir.join("projects")).unwrap();
    let stream = thread.send("second", cb.headless());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(r.text.ends_with("second"), "{}", r.text);
    assert!(
        r.text.contains("An earlier reply of yours: Reply n=1 to first"),
        "the fresh session carries bounded recovery context: {}",
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
    cb.assert_reaped();
}

#[tokio::test]
async fn model_errors_fail_with_their_classification() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    // Headless for one, control for the other: both transports classify the same way.
    let outcome = agent.send("zzerr429 now", cb.headless()).result().await;
    assert_eq!(code(&outcome), "rate_limited", "{}", run_error(&outcome).message);
    assert!(run_error(&outcome).message.starts_with("429"));
    let outcome = agent.send("zzerr500 now", cb.opts()).result().await;
    assert_eq!(transport(&outcome), "control");
    assert_eq!(code(&outcome), "provider_server_error");
    let r = &run_error(&outcome).result;
    assert!(
        r.raw()
            .terminal
            .is_some_and(|t| t.json["subtype"] == "error_during_execution")
    );
    cb.assert_reaped();
}

#[tokio::test]
async fn an_aborted_model_stream_is_ended_by_the_driver() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let outcome = agent.send("zzabort now", cb.headless()).result().await;
    assert_eq!(code(&outcome), "network_error", "{}", run_error(&outcome).message);
    cb.assert_reaped();
}

#[tokio::test]
async fn cancel_mid_stream_stops_and_reaps_the_cli() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let stream = agent.send("zzslow answer please", cb.opts());
    let mut events = stream.events();
    use futures::StreamExt;
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    let started = Instant::now();
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "took {:?}",
        started.elapsed()
    );
    cb.assert_reaped();
}

#[tokio::test]
async fn instructions_reach_the_system_prompt_and_schemas_are_native() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let schema = br#"{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"]}"#;
    let opts = cb
        .headless()
        .instructions("Always answer in haiku ZZMARK.")
        .schema_json(schema, SchemaOptions::new());
    let r = agent.send("zzschema please", opts).result().await.unwrap();
    assert_eq!(
        r.structured().unwrap(),
        &serde_json::json!({"answer": "forty-two", "n": 42})
    );
    let req = &cb.mock.completion_requests()[0];
    let system = req
        .messages()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(agent_adaptor::testkit::mock::chat::message_text)
        .collect::<String>();
    assert!(system.contains("ZZMARK"), "instructions in the system prompt");
    assert!(
        !req.last_user_query().contains("ZZMARK"),
        "not prefixed to the prompt"
    );
    assert!(req.tool_names().contains(&"StructuredOutput"));

    // The default policy asks for permissions: the control transport carries the schema too.
    let outcome = agent
        .send(
            "zzschema again",
            cb.opts().schema_json(schema, SchemaOptions::new()),
        )
        .result()
        .await;
    assert_eq!(transport(&outcome), "control");
    assert_eq!(outcome.unwrap().structured().unwrap()["n"], 42);
    cb.assert_reaped();
}

/// A minimal stdio MCP server (node is there: the CLI needs it): initialize, tools/list, tools/call.
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
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\n');
});
"#;

#[tokio::test]
async fn per_call_mcp_servers_are_materialized_and_loaded() {
    let Some(cb) = Cb::new().await else { return };
    let script = cb.ws.join("probe-mcp.js");
    std::fs::write(&script, MCP_SERVER_JS).unwrap();
    let server =
        agent_adaptor::vocab::McpServer::stdio("probe", "node", vec![script.to_string_lossy().into_owned()]);
    let agent = Agent::new(cb.driver.clone());
    let r = agent
        .send("say hi", cb.headless().mcp([server]))
        .result()
        .await
        .unwrap();
    crate::driver_support::assert_mcp_connected(&r, "probe");
    // CodeBuddy defers MCP tools (`ToolSearch` / `DeferExecuteTool`) instead of listing them as tools;
    // the server's tool is announced in the conversation.
    let req = &cb.mock.completion_requests()[0];
    assert!(req.tool_names().contains(&"DeferExecuteTool"));
    let body = req.body.as_ref().unwrap().to_string();
    assert!(body.contains("probe"), "the MCP server is announced to the model");
    let leftover = std::fs::read_dir(cb.config_dir.join("agent-adaptor/mcp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(leftover, 0, "the per-run MCP file is removed");
    cb.assert_reaped();
}

#[tokio::test]
async fn a_fork_branches_the_session_and_leaves_the_parent_alone() {
    let Some(cb) = Cb::new().await else { return };
    let agent = Agent::new(cb.driver.clone());
    let tenant = agent_adaptor::driver::Identity {
        tenant: "t".into(),
        ..Default::default()
    };
    let opts = || cb.headless().identity(tenant.clone());
    let parent = agent.thread("cb-parent");
    let first = parent.send("root prompt", opts()).result().await.unwrap();
    let parent_sid = first.metadata["session_id"].clone();
    let child = parent.fork("cb-child");
    let forked = child.send("branch prompt", opts()).result().await.unwrap();
    let child_sid = forked.metadata["session_id"].clone();
    assert_ne!(child_sid, parent_sid, "a new session");
    let req = cb.mock.completion_requests().pop().unwrap();
    assert_eq!(
        req.user_queries(),
        ["root prompt", "branch prompt"],
        "with the parent's history"
    );
    let again = parent.send("parent again", opts()).result().await.unwrap();
    assert_eq!(again.metadata["session_id"], parent_sid);
    let req = cb.mock.completion_requests().pop().unwrap();
    assert_eq!(
        req.user_queries(),
        ["root prompt", "parent again"],
        "the branch is not in the parent"
    );
    cb.assert_reaped();
}

#[tokio::test]
async fn the_common_config_directory_and_timeout_are_honoured() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let d = dir.clone();
    let Some(cb) = Cb::with(move |c| {
        c.common.directory = Some(d);
        c.common.timeout = Some(Duration::from_millis(800));
    })
    .await
    else {
        return;
    };
    let agent = Agent::new(cb.driver.clone());
    let auto = || {
        agent_adaptor::runtime::CallOptions::new().policy(
            agent_adaptor::driver::Policy::default()
                .with_approvals(agent_adaptor::driver::ApprovalPolicy::auto_approve()),
        )
    };
    // No workspace option: the CLI reports CommonConfig.directory as its cwd.
    let r = agent
        .send("hello", auto().timeout(Duration::from_secs(60)))
        .result()
        .await
        .unwrap();
    let cwd = r
        .transcript()
        .into_iter()
        .find(|i| i.kind == TranscriptKind::Init)
        .and_then(|i| i.metadata.get("cwd").map(std::path::PathBuf::from));
    assert_eq!(cwd, Some(dir.clone()), "the CLI ran in CommonConfig.directory");
    // CommonConfig.timeout bounds the execution.
    let started = Instant::now();
    let outcome = agent.send("zzslow", auto()).result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "deadline_exceeded");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "took {:?}",
        started.elapsed()
    );
    cb.assert_reaped();
    let r = agent
        .send("zzslow", auto().timeout(Duration::from_secs(60)))
        .result()
        .await;
    assert!(r.is_ok(), "a call's own timeout wins: {r:?}");
}
