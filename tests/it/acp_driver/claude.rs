//! The ACP driver over the REAL Claude adapter (`@agentclientprotocol/claude-agent-acp`, run by `node`)
//! wrapping the REAL Claude Code binary (`CLAUDE_CODE_EXECUTABLE`), against the mock Anthropic API on
//! 127.0.0.1 with the offline environment of `testkit::claude_env` and the lab's keyword brain: text, a
//! Bash call approved and denied through `session/request_permission`, cancel, and a resume in a new
//! process on a new Agent. Skipped loudly without the binary, the adapter or `node`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, DecisionKind, Driver, FallbackAction, Policy, notice_kind};
use agent_adaptor::providers::acp::{AcpConfig, AcpDriver};
use agent_adaptor::runtime::{Agent, ApprovalHandler, CallOptions, Payload, approve_all};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, RequestLog, Script};
use futures::StreamExt;

use super::{delta_text, drain, run_error, tool_result};
use crate::claude_lab::brain;

/// `node` on `PATH`, or a loud skip.
pub fn node() -> Option<PathBuf> {
    let found = agent_adaptor::providers::registry::find_cli("node", "AGENT_ADAPTOR_NODE_BIN");
    if found.is_none() {
        assert!(
            std::env::var(agent_adaptor::testkit::cli::REQUIRE_ENV).as_deref() != Ok("1"),
            "node is required to run the ACP adapters"
        );
        eprintln!("SKIPPED: node not found on PATH (the ACP adapters are node programs)");
    }
    found
}

/// One isolated setup: the mock, the offline environment, the driver.
pub struct ClaudeAcp {
    pub mock: MockAnthropic,
    pub env: ClaudeEnv,
    pub config: AcpConfig,
    pub driver: AcpDriver,
    _dir: tempfile::TempDir,
}

impl ClaudeAcp {
    /// A setup, or `None` (after a SKIPPED line) when a piece is missing.
    pub async fn new() -> Option<ClaudeAcp> {
        let bin = require(Cli::Claude)?;
        let js = require(Cli::ClaudeAcp)?;
        let node = node()?;
        let mock = MockAnthropic::start(Script::from_fn(brain::brain)).await.unwrap();
        let dir = tempfile::Builder::new().prefix("acp-claude").tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).unwrap();
        let mut config = AcpConfig::command(node, &[js.to_str().unwrap()]);
        config.common.env = env.vars().clone();
        config.common.env.insert(
            "CLAUDE_CODE_EXECUTABLE".into(),
            bin.to_string_lossy().into_owned(),
        );
        config.common.directory = Some(env.cwd.clone());
        config.common.grace_period = Some(Duration::from_secs(2));
        // claude-agent-acp starts sessions in Claude's `auto` mode, where Claude's own classifier
        // approves tool calls; `default` routes every permission to the client (the run's policy).
        config.mode = Some("default".into());
        let driver = AcpDriver::connect(config.clone()).await.unwrap();
        Some(ClaudeAcp {
            mock,
            env,
            config,
            driver,
            _dir: dir,
        })
    }

    pub fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(&self.env.cwd)
    }

    pub fn requests(&self) -> Vec<RequestLog> {
        self.mock.message_requests()
    }
}

#[tokio::test]
async fn claude_agent_acp_streams_text_and_declares_its_sessions() {
    let Some(cl) = ClaudeAcp::new().await else { return };
    let d = cl.driver.descriptor();
    assert_eq!(d.display_name, "Claude Agent");
    assert!(
        d.sessions.resume && d.sessions.fork && d.mcp.http && d.mcp.sse,
        "{d:?}"
    );
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("hello from acp", cl.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(r.text.starts_with("ECHO n="), "{}", r.text);
    assert!(r.text.ends_with("hello from acp"), "{}", r.text);
    assert_eq!(delta_text(&events), r.text);
    assert_eq!(r.metadata["agent"], "@agentclientprotocol/claude-agent-acp");
    assert_eq!(r.metadata["stop_reason"], "end_turn");
    assert!(!cl.requests().is_empty());
    assert_eq!(cl.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn claude_agent_acp_asks_permission_for_bash_approved_then_denied() {
    let Some(cl) = ClaudeAcp::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let approve = ApprovalHandler::new(|req| async move {
        assert_eq!(req.kind, DecisionKind::Permission);
        approve_all(&req).map_err(|e| e.to_string())
    });
    let stream = agent.send("please run touch", cl.opts().on_approval(approve));
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(
        cl.env.cwd.join("created-by-tool.txt").exists(),
        "the approved call ran"
    );
    assert!(r.text.contains("Tool said: created-by-tool.txt"), "{}", r.text);
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::APPROVAL_REQUESTED))
            .count(),
        1
    );
    assert_eq!(tool_result(&events, None).unwrap()["is_error"], false);
    std::fs::remove_file(cl.env.cwd.join("created-by-tool.txt")).unwrap();

    let deny = ApprovalHandler::new(|req| async move { req.deny("not today").map_err(|e| e.to_string()) });
    let policy = Policy::default().with_approvals(ApprovalPolicy {
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send(
            "please run touch",
            cl.opts().policy(policy).on_approval(deny.clone()),
        )
        .result()
        .await
        .unwrap();
    assert!(
        !cl.env.cwd.join("created-by-tool.txt").exists(),
        "the denied call did not run"
    );
    assert!(r.text.contains("Tool failed"), "{}", r.text);

    let outcome = agent
        .send("please run touch", cl.opts().on_approval(deny))
        .result()
        .await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_denied");
    assert!(!cl.env.cwd.join("created-by-tool.txt").exists());
    assert_eq!(cl.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn claude_agent_acp_cancel_ends_the_turn_and_reaps() {
    let Some(cl) = ClaudeAcp::new().await else { return };
    let agent = Agent::new(cl.driver.clone());
    let stream = agent.send("answer slow please", cl.opts());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    let started = std::time::Instant::now();
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(cl.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn claude_agent_acp_resumes_a_session_in_a_new_process_on_a_new_agent() {
    let Some(cl) = ClaudeAcp::new().await else { return };
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let first = Agent::builder(cl.driver.clone())
        .thread_store(store.clone())
        .build();
    let one = first
        .thread("t")
        .send("remember alpha", cl.opts())
        .result()
        .await
        .unwrap();
    let sid = one.metadata["session_id"].clone();
    let again = Agent::builder(AcpDriver::connect(cl.config.clone()).await.unwrap())
        .thread_store(store)
        .build();
    let two = again
        .thread("t")
        .send("and beta", cl.opts())
        .result()
        .await
        .unwrap();
    assert_eq!(two.metadata["session_id"], sid, "the same ACP session continued");
    let last = cl.requests().last().cloned().unwrap();
    let history = last.all_texts().join("\n");
    assert!(
        history.contains("remember alpha"),
        "the model saw the first turn: {history}"
    );
    assert!(two.text.ends_with("and beta"), "{}", two.text);
}
