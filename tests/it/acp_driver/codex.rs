//! The ACP driver over the REAL Codex adapter (`@agentclientprotocol/codex-acp`, run by `node`) driving
//! the REAL Codex binary (`CODEX_PATH`, its `app-server`), against the mock Responses API on 127.0.0.1
//! with the offline `config.toml` of `testkit::codex_env`: text with reasoning, an escalated command
//! approved and denied through `session/request_permission`, cancel, and a resume in a new process on a
//! new Agent. Skipped loudly without the binary, the adapter or `node`.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalPolicy, Driver, FallbackAction, Policy, notice_kind};
use agent_adaptor::providers::acp::{AcpConfig, AcpDriver};
use agent_adaptor::runtime::{Agent, ApprovalHandler, CallOptions, Payload, approve_all};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::codex_env::{CodexEnv, CodexEnvOptions};
use agent_adaptor::testkit::mock::responses::{MockResponses, RecordedRequest, Reply, Script};
use futures::StreamExt;

use super::claude::node;
use super::{drain, run_error};

/// The mock's model: "touch it" asks for an escalated command, a command's output is answered "Done.",
/// "slow" is a paced answer, anything else reasoning and an echo.
fn script() -> Script {
    Script::new().otherwise(|log: &[RecordedRequest]| {
        let last = log.last();
        if last.is_some_and(|r| !r.tool_outputs().is_empty()) {
            return Reply::new().text("Done.");
        }
        let text = last.and_then(RecordedRequest::last_user_text).unwrap_or_default();
        if text.contains("touch it") {
            return Reply::new().exec_command_escalated("touch acp-codex-marker.txt", "Need to write");
        }
        if text.contains("slow") {
            let pieces: Vec<String> = (0..40).map(|i| format!("piece {i} ")).collect();
            return Reply::new().text_paced(pieces, Duration::from_millis(150));
        }
        Reply::new().reasoning("Thinking.").text(format!("Echo: {text}"))
    })
}

pub struct CodexAcp {
    pub mock: MockResponses,
    pub env: CodexEnv,
    pub config: AcpConfig,
    pub driver: AcpDriver,
    _dir: tempfile::TempDir,
}

impl CodexAcp {
    pub async fn new() -> Option<CodexAcp> {
        let bin = require(Cli::Codex)?;
        let js = require(Cli::CodexAcp)?;
        let node = node()?;
        let mock = MockResponses::start(script()).await.unwrap();
        let dir = tempfile::Builder::new().prefix("acp-codex").tempdir().unwrap();
        let env = CodexEnv::create(dir.path(), &mock.base_url(), &CodexEnvOptions::default()).unwrap();
        let mut config = AcpConfig::command(node, &[js.to_str().unwrap()]);
        config.common.env = env.env().into_iter().collect();
        config
            .common
            .env
            .insert("CODEX_PATH".into(), bin.to_string_lossy().into_owned());
        config.common.directory = Some(env.cwd.clone());
        config.common.grace_period = Some(Duration::from_secs(2));
        // codex-acp starts sessions in its `agent` mode, where Codex's model-based guardian reviews
        // escalations itself; `workspace-write` asks the client (the run's policy) instead.
        config.mode = Some("workspace-write".into());
        let driver = AcpDriver::connect(config.clone()).await.unwrap();
        Some(CodexAcp {
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
}

#[tokio::test]
async fn codex_acp_streams_reasoning_and_text() {
    let Some(cx) = CodexAcp::new().await else { return };
    let d = cx.driver.descriptor();
    assert!(
        d.sessions.resume && d.sessions.fork && d.mcp.http && !d.mcp.sse,
        "{d:?}"
    );
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("hello codex", cx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Echo: hello codex");
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Thinking(t) if !t.text.is_empty())),
        "reasoning arrives as agent_thought_chunk"
    );
    assert_eq!(r.metadata["agent"], "@agentclientprotocol/codex-acp");
    assert_eq!(cx.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn codex_acp_asks_permission_for_an_escalated_command_approved_then_denied() {
    let Some(cx) = CodexAcp::new().await else { return };
    let agent = Agent::new(cx.driver.clone());
    let marker = cx.env.cwd.join("acp-codex-marker.txt");
    let approve = ApprovalHandler::new(|req| async move { approve_all(&req).map_err(|e| e.to_string()) });
    let stream = agent.send("touch it", cx.opts().on_approval(approve));
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Done.");
    assert!(marker.exists(), "the approved command ran");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::APPROVAL_REQUESTED))
            .count(),
        1
    );
    std::fs::remove_file(&marker).unwrap();

    // codex-acp offers one reject option, `cancel` ("No, and tell Codex what to do differently"), and
    // ends the turn on it: a refusal stops the turn even when the policy says Continue, and the run
    // reports the refusal (not a generic agent error).
    let deny = ApprovalHandler::new(|req| async move { req.deny("no").map_err(|e| e.to_string()) });
    for on_reject in [FallbackAction::Continue, FallbackAction::Abort] {
        let policy = Policy::default().with_approvals(ApprovalPolicy {
            on_reject,
            ..Default::default()
        });
        let outcome = agent
            .send("touch it", cx.opts().policy(policy).on_approval(deny.clone()))
            .result()
            .await;
        assert_eq!(
            run_error(&outcome).reason.as_str(),
            "approval_denied",
            "{on_reject:?}"
        );
        assert!(!marker.exists(), "the denied command did not run");
    }
    assert_eq!(cx.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn codex_acp_cancel_ends_the_turn_and_reaps() {
    let Some(cx) = CodexAcp::new().await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("slow please", cx.opts());
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
    assert_eq!(cx.driver.registry().live_count(), 0);
}

#[tokio::test]
async fn codex_acp_resumes_a_session_in_a_new_process_on_a_new_agent() {
    let Some(cx) = CodexAcp::new().await else { return };
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let first = Agent::builder(cx.driver.clone())
        .thread_store(store.clone())
        .build();
    let one = first
        .thread("t")
        .send("remember alpha", cx.opts())
        .result()
        .await
        .unwrap();
    let again = Agent::builder(AcpDriver::connect(cx.config.clone()).await.unwrap())
        .thread_store(store)
        .build();
    let two = again
        .thread("t")
        .send("and beta", cx.opts())
        .result()
        .await
        .unwrap();
    assert_eq!(two.metadata["session_id"], one.metadata["session_id"]);
    assert_eq!(two.text, "Echo: and beta");
    let last = cx.mock.responses_requests().last().cloned().unwrap();
    let users = last.texts_of_role("user").join("\n");
    assert!(
        users.contains("remember alpha"),
        "the model saw the first turn: {users}"
    );
}
