//! The ACP driver against the scripted fake agent (`fake-acp-agent`): the happy paths, every failure the
//! fake can script, sessions across processes, and the conformance kit.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, DecisionKind, Driver, FallbackAction, Policy, Request, SessionPlan,
    SessionState, notice_kind,
};
use agent_adaptor::providers::acp::AcpDriver;
use agent_adaptor::runtime::{Agent, ApprovalHandler, MessageOptions, MessageState, Payload, approve_all};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver, record};
use futures::StreamExt;

use super::{Fx, assert_reaped, delta_text, drain, run_error, tool_result};

fn notices<'a>(
    events: &'a [agent_adaptor::runtime::Event],
    kind: &str,
) -> Vec<&'a agent_adaptor::driver::Notice> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Notice(n) if n.kind == kind => Some(n),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_probe_makes_a_truthful_descriptor() {
    let fx = Fx::new();
    let full = fx.driver(&[]).await;
    let d = full.descriptor();
    assert_eq!(d.driver_type, "acp");
    assert_eq!(d.display_name, "Fake ACP agent");
    assert!(d.sessions.resume && d.sessions.fork && d.mcp.http && !d.mcp.sse);
    assert!(d.stream.hitl && d.run_policy.permission.len() == 3);
    let minimal = fx.driver(&[("FAKE_ACP_CAPS", "minimal")]).await;
    let d = minimal.descriptor();
    assert!(!d.sessions.resume && !d.sessions.fork);
    let env = minimal.environment().await.unwrap();
    assert!(env.healthy, "{env:?}");
    assert_eq!(env.version.as_deref(), Some("0.0.0-fake"));
    let bad = AcpDriver::connect(fx.config(&[("FAKE_ACP_PROTOCOL", "2")])).await;
    assert!(bad.unwrap_err().to_string().contains("protocol version 2"));
    assert_reaped(&full);
    assert_reaped(&minimal);
}

#[tokio::test]
async fn text_streams_in_chunks_with_usage_and_a_valid_checkpoint() {
    let fx = Fx::new();
    let driver = fx.driver(&[]).await;
    let agent = Agent::new(driver.clone());
    let stream = agent.send("hello there", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Hello from fake-acp (turn 1, 0 earlier): hello there");
    assert_eq!(delta_text(&events), r.text);
    let chunks = events
        .iter()
        .filter(|e| matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()))
        .count();
    assert_eq!(chunks, 3, "every agent_message_chunk is a delta");
    let u = r.usage.unwrap();
    assert_eq!((u.input_tokens, u.estimated_cost_milli), (2, 2));
    assert_eq!(r.provider, "acp");
    assert_eq!(r.metadata["stop_reason"], "end_turn");
    assert!(!notices(&events, "usage").is_empty(), "usage_update is relayed");
    assert_eq!(r.raw().terminal.unwrap().json["stopReason"], "end_turn");
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_thread_resumes_its_session_in_a_new_process_and_on_a_new_agent() {
    let fx = Fx::new();
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let agent = Agent::builder(fx.driver(&[]).await)
        .thread_store(store.clone())
        .build();
    let thread = agent.thread("t1");
    thread.send("one", fx.opts()).result().await.unwrap();
    let second = thread.send("two", fx.opts()).result().await.unwrap();
    assert_eq!(second.text, "Hello from fake-acp (turn 2, 1 earlier): two");
    // A new driver and Agent over the same store: the session continues (session/resume).
    let again = Agent::builder(fx.driver(&[]).await).thread_store(store).build();
    let third = again
        .thread("t1")
        .send("three", fx.opts())
        .result()
        .await
        .unwrap();
    assert_eq!(third.text, "Hello from fake-acp (turn 3, 2 earlier): three");
}

#[tokio::test]
async fn load_is_used_without_resume_and_its_replay_is_not_re_emitted() {
    let fx = Fx::new();
    let mut config = fx.config(&[]);
    let mut caps = AcpDriver::connect(config.clone()).await.unwrap().caps().clone();
    caps.resume = false; // an agent with session/load only
    config.name = Some("load only".into());
    let agent = Agent::new(AcpDriver::new(config, caps));
    let thread = agent.thread("t-load");
    thread.send("one", fx.opts()).result().await.unwrap();
    let stream = thread.send("two", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Hello from fake-acp (turn 2, 1 earlier): two");
    assert!(
        !delta_text(&events).contains("turn 1"),
        "the replayed turn is not streamed again"
    );
    let replay = notices(&events, notice_kind::LIFECYCLE);
    assert!(
        replay
            .iter()
            .any(|n| n.metadata.get("code").map(String::as_str) == Some("acp_history_replayed")),
        "{replay:?}"
    );
}

#[tokio::test]
async fn fork_opens_a_new_session_and_an_agent_without_fork_refuses_it() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver(&[]).await);
    let parent = agent.thread("p");
    parent.send("one", fx.opts()).result().await.unwrap();
    let child = parent.fork("c");
    let r = child.send("two", fx.opts()).result().await.unwrap();
    assert_eq!(r.text, "Hello from fake-acp (turn 2, 1 earlier): two");
    let parent_again = parent.send("three", fx.opts()).result().await.unwrap();
    assert_eq!(
        parent_again.text, "Hello from fake-acp (turn 2, 1 earlier): three",
        "the fork did not touch the parent"
    );
    assert_ne!(r.metadata["session_id"], parent_again.metadata["session_id"]);
}

#[tokio::test]
async fn permissions_are_asked_once_approved_or_denied() {
    let fx = Fx::new();
    let driver = fx.driver(&[]).await;
    let agent = Agent::new(driver.clone());
    let approve = ApprovalHandler::new(|req| async move {
        assert_eq!(req.kind, DecisionKind::Permission);
        assert_eq!(req.title, "touch fake-acp-marker.txt");
        approve_all(&req).map_err(|e| e.to_string())
    });
    let stream = agent.send("scenario=tools", fx.opts().on_approval(approve));
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(
        r.text, "I will create a file. Ran it (allow).",
        "allow_once, never allow_always"
    );
    assert!(fx.ws.join("fake-acp-marker.txt").exists());
    assert_eq!(notices(&events, notice_kind::APPROVAL_REQUESTED).len(), 1);
    let result = tool_result(&events, Some("call-1")).unwrap();
    assert_eq!(result["is_error"], false);
    std::fs::remove_file(fx.ws.join("fake-acp-marker.txt")).unwrap();

    let deny = Policy::default().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let r = agent
        .send("scenario=tools", fx.opts().policy(deny))
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "I will create a file. It was not allowed (reject).");
    assert!(!fx.ws.join("fake-acp-marker.txt").exists());

    let refuse = ApprovalHandler::new(|req| async move { req.deny("no").map_err(|e| e.to_string()) });
    let outcome = agent
        .send("scenario=tools", fx.opts().on_approval(refuse))
        .result()
        .await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_denied");
    assert!(!fx.ws.join("fake-acp-marker.txt").exists());
    assert_reaped(&driver);

    // An agent that ends the turn on a rejection (codex-acp) reports the refusal, not an agent error.
    let ends = Agent::new(fx.driver(&[("FAKE_ACP_REJECT_ENDS_TURN", "1")]).await);
    let continue_policy = Policy::default().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    });
    let outcome = ends
        .send("scenario=tools", fx.opts().policy(continue_policy))
        .result()
        .await;
    assert_eq!(
        run_error(&outcome).reason.as_str(),
        "approval_denied",
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_hung_permission_times_out_per_policy_and_the_turn_is_cancelled() {
    let fx = Fx::new();
    let driver = fx.driver(&[]).await;
    let agent = Agent::new(driver.clone());
    let never = ApprovalHandler::new(|_req| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(())
    });
    let policy =
        Policy::default().with_approvals(ApprovalPolicy::default().with_timeout(Duration::from_millis(300)));
    let started = std::time::Instant::now();
    let outcome = agent
        .send("scenario=tools", fx.opts().policy(policy).on_approval(never))
        .result()
        .await;
    assert_eq!(run_error(&outcome).reason.as_str(), "approval_timeout");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!fx.ws.join("fake-acp-marker.txt").exists());
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_timed_out_permission_is_asked_again_under_the_retry_fallback() {
    // The agent's request stays open while the host is asked again: the Retry fallback is real.
    let fx = Fx::new();
    let agent = Agent::new(fx.driver(&[]).await);
    let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let second_time_lucky = ApprovalHandler::new(move |req| {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            if n == 0 {
                tokio::time::sleep(Duration::from_secs(60)).await;
            }
            approve_all(&req).map_err(|e| e.to_string())
        }
    });
    let policy = Policy::default().with_approvals(ApprovalPolicy {
        on_timeout: FallbackAction::Retry,
        max_retries: Some(1),
        ..ApprovalPolicy::default().with_timeout(Duration::from_millis(300))
    });
    let r = agent
        .send(
            "scenario=tools",
            fx.opts().policy(policy).on_approval(second_time_lucky),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert_eq!(r.text, "I will create a file. Ran it (allow).");
    assert!(fx.ws.join("fake-acp-marker.txt").exists());
}

#[tokio::test]
async fn malformed_frames_and_unknown_updates_are_notices_never_fatal() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver(&[]).await);
    let stream = agent.send("scenario=malformed", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Recovered.");
    assert!(
        notices(&events, notice_kind::PROVIDER_INVALID).len() >= 4,
        "{events:#?}"
    );

    let stream = agent.send("scenario=unknown", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(
        r.text, "Unknown things sent; the client refused (-32601).",
        "an unknown agent request is answered method-not-found"
    );
    let unknown = notices(&events, notice_kind::PROVIDER_UNKNOWN);
    assert_eq!(unknown.len(), 3, "update, notification, request: {unknown:#?}");

    let stream = agent.send("scenario=other-session", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Only this one is mine.");
    assert!(!delta_text(&events).contains("not yours"));
}

#[tokio::test]
async fn a_crash_mid_turn_fails_the_run_with_the_partial_text_and_closed_lifecycles() {
    let fx = Fx::new();
    let driver = fx.driver(&[]).await;
    let agent = Agent::new(driver.clone());
    let stream = agent.send("scenario=crash", fx.opts());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    let err = run_error(&outcome);
    assert_eq!(err.reason.as_str(), "agent_error");
    assert!(
        err.message.contains("exited before answering session/prompt"),
        "{}",
        err.message
    );
    assert_eq!(err.result.text, "About to run a tool.");
    let ends = events
        .iter()
        .filter(
            |e| matches!(&e.payload, Payload::ToolCall(c) if c.phase == agent_adaptor::driver::Phase::End),
        )
        .count();
    assert_eq!(ends, 1, "the tool call left open is closed");
    assert_reaped(&driver);
}

#[tokio::test]
async fn cancel_stops_a_slow_turn_politely_and_kills_a_hung_one() {
    let fx = Fx::new();
    let driver = fx.driver(&[]).await;
    let agent = Agent::new(driver.clone());
    for scenario in ["scenario=slow", "scenario=hang"] {
        let stream = agent.send(scenario, fx.opts());
        let mut events = stream.events();
        while let Some(e) = events.next().await {
            if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
                break;
            }
        }
        let started = std::time::Instant::now();
        stream.cancel();
        let outcome = stream.result().await;
        assert_eq!(run_error(&outcome).reason.as_str(), "cancelled", "{scenario}");
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{scenario}: {:?}",
            started.elapsed()
        );
        assert_reaped(&driver);
    }
}

#[tokio::test]
async fn fs_requests_are_served_inside_the_workspace_only() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver(&[]).await);
    let r = agent.send("scenario=fs", fx.opts()).result().await.unwrap();
    assert_eq!(
        r.text,
        "write: ok; read: \"note from fake-acp\\n\"; outside: error -32602"
    );
    assert_eq!(
        std::fs::read_to_string(fx.ws.join("fs-note.txt")).unwrap(),
        "note from fake-acp\n"
    );
    let mut config = fx.config(&[]);
    config.client_fs = false;
    let no_fs = Agent::new(AcpDriver::connect(config).await.unwrap());
    let r = no_fs.send("scenario=fs", fx.opts()).result().await.unwrap();
    assert_eq!(
        r.text,
        "write: error -32601; read: error -32601; outside: error -32601"
    );
}

#[tokio::test]
async fn refusals_and_unsupported_plans_fail_typed_before_or_after_launch() {
    let fx = Fx::new();
    let agent = Agent::new(fx.driver(&[]).await);
    let outcome = agent.send("scenario=refuse", fx.opts()).result().await;
    assert!(run_error(&outcome).message.contains("refused"), "{outcome:?}");

    let minimal = Arc::new(fx.driver(&[("FAKE_ACP_CAPS", "minimal")]).await);
    for (plan, expected) in [("fork", "fork_unsupported"), ("resume", "resume_rejected")] {
        let ws = fx.ws.clone();
        let probe = RunProbe {
            request: Box::new(move || {
                let mut req = Request::new("r", "hi", ws.clone());
                let state = SessionState {
                    resume_id: "x".into(),
                    ..Default::default()
                };
                req.session = if plan == "fork" {
                    SessionPlan::Fork(state)
                } else {
                    SessionPlan::Resume(state)
                };
                req
            }),
            message: None,
            timeout: Duration::from_secs(10),
        };
        let rec = record(minimal.clone(), &probe).await;
        let failure = rec.response.unwrap().failure.unwrap();
        assert_eq!(failure.code.as_str(), expected, "{plan}");
        assert_eq!(minimal.registry().live_count(), 0, "refused before launch");
    }
}

#[tokio::test]
async fn the_run_s_mcp_servers_are_passed_per_session_in_acp_shape() {
    let fx = Fx::new();
    let driver = Arc::new(fx.driver(&[("FAKE_ACP_SESSION_ID", "mcp-session")]).await);
    let ws = fx.ws.clone();
    let probe = RunProbe {
        request: Box::new(move || {
            let mut req = Request::new("r", "hi", ws.clone());
            let mut http = agent_adaptor::vocab::McpServer::http("docs", "http://127.0.0.1:9/mcp");
            if let agent_adaptor::vocab::McpTransport::Http { headers, .. } = &mut http.transport {
                headers.insert("X-Team".into(), "a".into());
            }
            req.mcp = vec![
                agent_adaptor::vocab::McpServer::stdio("tools", "/bin/tool", vec!["--stdio".into()]),
                http,
            ];
            req
        }),
        message: None,
        timeout: Duration::from_secs(10),
    };
    let rec = record(driver.clone(), &probe).await;
    assert!(rec.response.unwrap().failure.is_none());
    let stored: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fx.data.join("sessions/mcp-session.json")).unwrap())
            .unwrap();
    assert_eq!(
        stored["mcp_servers"],
        serde_json::json!([
            {"name": "tools", "command": "/bin/tool", "args": ["--stdio"], "env": []},
            {"type": "http", "name": "docs", "url": "http://127.0.0.1:9/mcp",
             "headers": [{"name": "X-Team", "value": "a"}]}
        ])
    );
}

#[tokio::test]
async fn turn_end_input_is_the_next_prompt_in_the_same_process() {
    let fx = Fx::new();
    let driver = fx.driver(&[("FAKE_ACP_DELAY_MS", "200")]).await;
    let agent = Agent::new(driver.clone());
    let stream = agent.send("scenario=slow", fx.opts());
    let mut events = stream.events();
    let mut sent = false;
    while let Some(e) = events.next().await {
        if !sent && matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            stream
                .send("and then this", MessageOptions::new().id("m-1"))
                .await
                .unwrap();
            sent = true;
        }
    }
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(
        r.text.starts_with("Hello from fake-acp (turn 2, 1 earlier): "),
        "{}",
        r.text
    );
    assert!(r.text.contains("and then this"));
    let m = &r.messages()[0];
    assert_eq!(
        (m.state, m.mechanism.as_str()),
        (MessageState::Delivered, "session/prompt")
    );
    assert_reaped(&driver);
}

#[tokio::test]
async fn the_acp_driver_passes_the_conformance_kit() {
    for prompt in [
        "hello",
        "scenario=think",
        "scenario=tools",
        "scenario=plan",
        "scenario=crash",
    ] {
        let fx = Arc::new(Fx::new());
        let config = fx.config(&[]);
        let caps = AcpDriver::connect(config.clone()).await.unwrap().caps().clone();
        let factory = move || Arc::new(AcpDriver::new(config.clone(), caps.clone())) as Arc<dyn Driver>;
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
        let mut clauses = vec![
            "DRV-01", "DRV-02", "CAP-01", "SES-04", "EVT-11", "RUN-04", "MSG-01",
        ];
        match prompt {
            "scenario=tools" => clauses.extend(["EVT-05", "APR-01", "APR-02"]),
            "scenario=think" => clauses.push("EVT-06"),
            "scenario=crash" => {}
            _ => clauses.push("EVT-03"),
        }
        for clause in clauses {
            assert!(
                report.checked.contains(&clause),
                "{clause} unchecked for {prompt}"
            );
        }
    }
}
