//! The Cursor driver end to end, through the public runtime API, against the repo's faithful fake CLI
//! (`fake-cursor-agent`): every scenario of the fake, resume by chat id, the fresh fallback after a
//! rejected resume, fork refused before launch, turn-end continuation through resume, cancellation with
//! reaping, and the conformance kit.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, Driver, Identity, Policy, Request, notice_kind};
use agent_adaptor::providers::cursor::{CursorConfig, CursorDriver};
use agent_adaptor::runtime::{Agent, CallOptions, Event, MessageOptions, MessageState, Payload, Stream};
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};
use futures::StreamExt;

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_fake-cursor-agent");

/// A workspace and a profile root, both temporary.
pub(crate) struct Fx {
    _dir: tempfile::TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) profile: PathBuf,
}

impl Fx {
    pub(crate) fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let profile = dir.path().join("profile");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("README.md"), "# Demo\n").unwrap();
        Fx {
            _dir: dir,
            ws,
            profile,
        }
    }

    pub(crate) fn config(&self) -> CursorConfig {
        let mut c = CursorConfig {
            profile_dir: Some(self.profile.clone()),
            ..Default::default()
        };
        c.common.command = Some(BIN.into());
        c.common.grace_period = Some(Duration::from_millis(500));
        c
    }

    pub(crate) fn driver(&self) -> CursorDriver {
        CursorDriver::new(self.config())
    }

    pub(crate) fn opts(&self) -> CallOptions {
        CallOptions::new().workspace(&self.ws).identity(Identity {
            tenant: "t".into(),
            ..Default::default()
        })
    }

    fn chats(&self) -> usize {
        std::fs::read_dir(self.profile.join("data/chats")).map_or(0, |d| d.count())
    }
}

async fn drain(stream: &Stream) -> Vec<Event> {
    stream.events().collect().await
}

fn run_error(outcome: &agent_adaptor::runtime::RunOutcome) -> &agent_adaptor::runtime::RunError {
    outcome
        .as_ref()
        .err()
        .and_then(|e| e.as_run())
        .unwrap_or_else(|| panic!("expected a run failure, got {outcome:?}"))
}

fn code(outcome: &agent_adaptor::runtime::RunOutcome) -> String {
    run_error(outcome).details["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn assert_reaped(driver: &CursorDriver) {
    assert_eq!(
        driver.registry().live_count(),
        0,
        "a cursor-agent process is left"
    );
}

#[tokio::test]
async fn text_streams_the_answer_and_checkpoints_the_chat() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let stream = agent.send("hello there", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(
        r.text,
        "Hello from fake cursor-agent (turn 1, 0 earlier): hello there"
    );
    assert_eq!(r.turns, 1);
    assert_eq!(r.provider, "cursor");
    assert_eq!(r.model, "Auto");
    let deltas: String = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::TextDelta(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(deltas, r.text);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::ProcessInfo(p) if p.metadata.contains_key("pid")))
    );
    assert!(r.raw().terminal.is_some_and(|t| t.json["subtype"] == "success"));
    assert_eq!(fx.chats(), 1, "the chat lives in the profile's CURSOR_DATA_DIR");
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_thread_resumes_its_chat_by_id() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let thread = agent.thread("t-resume");
    let first = thread.send("one", fx.opts()).result().await.unwrap();
    assert!(first.text.contains("(turn 1, 0 earlier)"), "{}", first.text);
    let second = thread.send("two", fx.opts()).result().await.unwrap();
    assert!(
        second.text.contains("(turn 2, 1 earlier): two"),
        "{}",
        second.text
    );
    assert_eq!(fx.chats(), 1);
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_rejected_resume_falls_back_to_one_fresh_chat() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver());
    let thread = agent.thread("t-lost");
    thread.send("one", fx.opts()).result().await.unwrap();
    std::fs::remove_dir_all(fx.profile.join("data/chats")).unwrap();
    let stream = thread.send("two", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(r.text.contains("(turn 1, 0 earlier)"), "a fresh chat: {}", r.text);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::THREAD_CONTINUITY)),
        "the fallback is visible"
    );
}

#[tokio::test]
async fn fork_is_refused_before_any_process_starts() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let parent = agent.thread("t-parent");
    parent.send("one", fx.opts()).result().await.unwrap();
    let child = parent.fork("t-child");
    let stream = child.send("two", fx.opts());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    // The thread layer refuses before launch because the descriptor declares no fork support; the
    // driver keeps its own `FORK_UNSUPPORTED` failure for callers that drive it without a thread.
    let err = outcome.unwrap_err();
    assert_eq!(
        err.kind(),
        agent_adaptor::runtime::ErrorKind::Thread(agent_adaptor::runtime::ThreadErrorKind::Incompatible),
        "{err}"
    );
    assert!(err.to_string().contains("cannot fork"), "{err}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, Payload::ProcessInfo(_))),
        "nothing was spawned"
    );
    assert_eq!(
        fx.chats(),
        1,
        "the parent chat is untouched and no chat was added"
    );
    // The parent continues normally.
    let r = parent.send("three", fx.opts()).result().await.unwrap();
    assert!(r.text.contains("(turn 2, 1 earlier)"), "{}", r.text);
}

#[tokio::test]
async fn tools_need_auto_approve_for_shell_commands() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver());
    // Only permission is declared (auto-approve); plan reviews and questions stay inherited.
    let approve = Policy::default().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoApprove,
        ..Default::default()
    });
    let stream = agent.send("scenario=tools go", fx.opts().policy(approve));
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Let me look around. Ran the command.");
    let names: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) if !c.name.is_empty() => Some(c.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(names, ["read", "write", "shell"]);
    let results: Vec<bool> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolResult(t) => t.result["is_error"].as_bool(),
            _ => None,
        })
        .collect();
    assert_eq!(results, [false, false, false]);
    assert!(fx.ws.join("fake-cursor-output.txt").is_file());

    let r = agent.send("scenario=tools go", fx.opts()).result().await.unwrap();
    assert_eq!(
        r.text, "Let me look around. The command was not allowed.",
        "no --force without auto-approve"
    );
    let shell = r
        .transcript()
        .into_iter()
        .find(|i| i.tool_use_id == "call_shell_1" && i.is_error)
        .expect("the refused shell call");
    assert!(shell.text.contains("--force"));
}

#[tokio::test]
async fn mcp_and_subagent_calls_are_reported() {
    let fx = Fx::new();
    std::fs::create_dir_all(fx.profile.join("home")).unwrap();
    std::fs::write(
        fx.profile.join("home/mcp.json"),
        r#"{"mcpServers":{"host-tools":{"url":"http://127.0.0.1:9/mcp"}}}"#,
    )
    .unwrap();
    let agent = Agent::new(fx.driver());
    let stream = agent.send("scenario=mcp", fx.opts());
    let events = drain(&stream).await;
    stream.result().await.unwrap();
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::ToolCall(c) if c.name == "host-tools-echo")),
        "the MCP server from CURSOR_HOME/mcp.json"
    );
    let stream = agent.send("scenario=task", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Delegating to a subagent. The subagent made a plan.");
    let kinds: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::SubagentUpdate(s) => Some((s.kind, s.member.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(kinds.len(), 2);
    assert_eq!(kinds[0].1, "fake-planner");
}

#[tokio::test]
async fn failures_are_classified_per_scenario() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    for (scenario, want, text) in [
        ("error", "agent_error", "upstream returned 500"),
        ("fail", "agent_error", "fake upstream failure"),
        ("malformed", "protocol_error", "not a frame"),
        ("inconsistent-session", "protocol_error", "differs"),
        ("no-terminal", "protocol_error", "no terminal result"),
        ("crash", "agent_error", "signal 6"),
    ] {
        let outcome = agent
            .send(&format!("scenario={scenario}"), fx.opts())
            .result()
            .await;
        let err = run_error(&outcome);
        assert_eq!(code(&outcome), want, "{scenario}: {}", err.message);
        assert!(err.message.contains(text), "{scenario}: {}", err.message);
        assert!(
            !err.result.text.is_empty() || scenario != "error",
            "{scenario}: text kept"
        );
        assert_reaped(&driver);
    }
}

#[tokio::test]
async fn the_terminal_text_is_the_fallback_and_slow_messages_concatenate() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver());
    let stream = agent.send("scenario=slow", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "This answer arrives slowly.");
    let starts = events
        .iter()
        .filter(
            |e| matches!(&e.payload, Payload::TextDelta(t) if t.phase == agent_adaptor::driver::Phase::Start),
        )
        .count();
    assert_eq!(starts, 5, "one text lifecycle per assistant message");
}

#[tokio::test]
async fn the_common_config_directory_and_timeout_are_honoured() {
    let fx = Fx::new();
    let mut config = fx.config();
    config.common.directory = Some(fx.ws.clone());
    config.common.timeout = Some(Duration::from_millis(400));
    let driver = CursorDriver::new(config);
    let agent = Agent::new(driver.clone());
    // No workspace option: the run works in CommonConfig.directory.
    let no_workspace = || {
        CallOptions::new().identity(Identity {
            tenant: "t".into(),
            ..Default::default()
        })
    };
    let r = agent.send("hello", no_workspace()).result().await.unwrap();
    let init = r
        .transcript()
        .into_iter()
        .find(|i| i.kind == agent_adaptor::driver::TranscriptKind::Init)
        .expect("init");
    assert_eq!(
        init.metadata.get("cwd").map(PathBuf::from),
        Some(fx.ws.clone()),
        "the CLI ran in CommonConfig.directory"
    );
    // CommonConfig.timeout bounds the execution (the slow scenario takes about 1.5 s).
    let started = std::time::Instant::now();
    let outcome = agent.send("scenario=slow", no_workspace()).result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "deadline_exceeded");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "took {:?}",
        started.elapsed()
    );
    assert_reaped(&driver);
    // A call's own timeout wins over the driver's default.
    let r = agent
        .send("scenario=slow", no_workspace().timeout(Duration::from_secs(30)))
        .result()
        .await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn cancelling_a_hung_cli_stops_and_reaps_it() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let stream = agent.send("scenario=hang", fx.opts());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if t.text == "Working...") {
            break;
        }
    }
    let started = std::time::Instant::now();
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_reaped(&driver);
}

#[tokio::test]
async fn queued_input_continues_through_resume() {
    let fx = Fx::new();
    let driver = fx.driver();
    let agent = Agent::new(driver.clone());
    let stream = agent.send("scenario=slow", fx.opts());
    let mut events = stream.events();
    let mut sent = None;
    let mut all = Vec::new();
    while let Some(e) = events.next().await {
        let first_text = matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty());
        all.push(e);
        if first_text && sent.is_none() {
            sent = Some(
                stream
                    .send("and then this", MessageOptions::new().id("m-1"))
                    .await
                    .unwrap(),
            );
        }
    }
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(
        r.text
            .starts_with("Hello from fake cursor-agent (turn 2, 1 earlier): ")
            && r.text.contains("and then this"),
        "the core's framed message continued the chat: {}",
        r.text
    );
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.mechanism.as_str()),
        (MessageState::Delivered, "resume")
    );
    assert_eq!(fx.chats(), 1, "both turns are in one chat");
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_hook_relay_is_announced_as_unavailable() {
    let fx = Fx::new();
    let mut config = fx.config();
    config.hook_relay = Some(vec!["/usr/bin/host".into(), "relay".into()]);
    let agent = Agent::new(CursorDriver::new(config));
    let stream = agent.send("hi", fx.opts());
    let events = drain(&stream).await;
    stream.result().await.unwrap();
    assert!(events.iter().any(|e| matches!(&e.payload, Payload::Notice(n)
        if n.kind == notice_kind::LIFECYCLE && n.metadata.get("code").map(String::as_str) == Some("cursor_hook_unavailable"))));
}

#[tokio::test]
async fn the_cursor_driver_passes_the_conformance_kit() {
    for prompt in ["hello", "scenario=tools", "scenario=task", "scenario=error"] {
        let fx = Arc::new(Fx::new());
        let config = fx.config();
        let factory = move || Arc::new(CursorDriver::new(config.clone())) as Arc<dyn Driver>;
        let ws = fx.ws.clone();
        let options = Options {
            run: Some(RunProbe {
                request: Box::new(move || Request::new("conformance", prompt, ws.clone())),
                message: Some("a supplemental note".into()),
                timeout: Duration::from_secs(30),
            }),
            session_state: None,
        };
        let report = check_driver(&factory, options).await;
        report.assert_passed();
        let mut clauses = vec!["DRV-01", "CAP-01", "SES-04", "EVT-11", "RUN-04", "RSP-05"];
        if prompt != "scenario=error" {
            clauses.push("EVT-03");
        }
        if prompt == "scenario=tools" {
            clauses.push("EVT-05");
        }
        for clause in clauses {
            assert!(
                report.checked.contains(&clause),
                "{clause} unchecked for {prompt}"
            );
        }
    }
}
