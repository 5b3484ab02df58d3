//! The Cursor driver over its second transport, `agent acp` (`transport = "acp"`), against the fake CLI's
//! ACP mode (`fake-cursor-agent acp`, following Cursor's ACP documentation): `cursor_login`
//! authentication, streamed text, permissions with Cursor's option ids, resume by `session/load` in a new
//! process, a mode, no crossing between transports, cancel with reaping, and the conformance kit.

use std::sync::Arc;
use std::time::Duration;

use agent_adaptor::driver::{Driver, Request, notice_kind};
use agent_adaptor::providers::cursor::{CursorDriver, CursorMode, CursorTransport};
use agent_adaptor::runtime::{Agent, ApprovalHandler, Payload, approve_all};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::conformance::{Options, RunProbe, check_driver};
use futures::StreamExt;

use crate::cursor_driver::{Fx, assert_reaped};
use crate::driver_support::{delta_text, drain, run_error};

fn acp(fx: &Fx) -> CursorDriver {
    let mut c = fx.config();
    c.transport = CursorTransport::Acp;
    CursorDriver::new(c)
}

#[tokio::test]
async fn text_streams_over_agent_acp_after_cursor_login() {
    let fx = Fx::new();
    let driver = acp(&fx);
    let d = driver.descriptor();
    assert!(d.stream.hitl && d.sessions.resume && !d.sessions.fork && !d.mcp.stdio);
    let agent = Agent::new(driver.clone());
    let stream = agent.send("hello over acp", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Hello from fake-acp (turn 1, 0 earlier): hello over acp");
    assert_eq!(delta_text(&events), r.text);
    assert_eq!(
        (r.provider.as_str(), r.metadata["transport"].as_str()),
        ("cursor", "acp")
    );
    assert_eq!(r.metadata["agent"], "cursor-agent");
    let sessions = fx.profile.join("data/acp/sessions");
    assert_eq!(
        std::fs::read_dir(sessions).unwrap().count(),
        1,
        "the session lives in CURSOR_DATA_DIR"
    );
    assert_reaped(&driver);
}

#[tokio::test]
async fn a_thread_resumes_by_session_load_and_a_print_chat_is_not_crossed() {
    let fx = Fx::new();
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let agent = Agent::builder(acp(&fx)).thread_store(store.clone()).build();
    let t = agent.thread("t");
    t.send("one", fx.opts()).result().await.unwrap();
    let stream = t.send("two", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Hello from fake-acp (turn 2, 1 earlier): two");
    assert!(
        !delta_text(&events).contains("one"),
        "the loaded history is not re-emitted"
    );

    let print = Agent::builder(fx.driver()).thread_store(store).build();
    let stream = print.thread("t").send("three", fx.opts());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(
        r.text
            .starts_with("Hello from fake cursor-agent (turn 1, 0 earlier): ")
            && r.text.ends_with("three"),
        "an ACP session is not resumed by the print transport (a fresh chat with recovery context): {}",
        r.text
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == notice_kind::THREAD_CONTINUITY))
    );
}

#[tokio::test]
async fn permissions_use_cursor_s_option_ids_and_a_mode_is_set() {
    let fx = Fx::new();
    let mut c = fx.config();
    c.transport = CursorTransport::Acp;
    c.mode = Some(CursorMode::Ask);
    let driver = CursorDriver::new(c);
    let agent = Agent::new(driver.clone());
    let approve = ApprovalHandler::new(|req| async move {
        let keys: Vec<_> = req.choices.iter().map(|c| c.key.clone()).collect();
        assert_eq!(keys, ["allow-once", "allow-always", "reject-once"]);
        approve_all(&req).map_err(|e| e.to_string())
    });
    let r = agent
        .send("scenario=tools", fx.opts().on_approval(approve))
        .result()
        .await
        .unwrap();
    assert_eq!(r.text, "I will create a file. Ran it (allow-once).");
    assert!(fx.ws.join("fake-acp-marker.txt").exists());
    assert_reaped(&driver);
}

#[tokio::test]
async fn cancelling_a_hung_acp_turn_stops_and_reaps_the_cli() {
    let fx = Fx::new();
    let driver = acp(&fx);
    let agent = Agent::new(driver.clone());
    let stream = agent.send("scenario=hang", fx.opts());
    let mut events = stream.events();
    while let Some(e) = events.next().await {
        if matches!(&e.payload, Payload::TextDelta(t) if !t.text.is_empty()) {
            break;
        }
    }
    stream.cancel();
    let outcome = stream.result().await;
    assert_eq!(run_error(&outcome).reason.as_str(), "cancelled");
    assert_reaped(&driver);
}

#[tokio::test]
async fn the_cursor_acp_transport_passes_the_conformance_kit() {
    for prompt in ["hello", "scenario=tools", "scenario=crash"] {
        let fx = Arc::new(Fx::new());
        let mut config = fx.config();
        config.transport = CursorTransport::Acp;
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
        for clause in ["DRV-01", "CAP-01", "SES-04", "EVT-11", "RUN-04", "MSG-01"] {
            assert!(
                report.checked.contains(&clause),
                "{clause} unchecked for {prompt}"
            );
        }
    }
}
