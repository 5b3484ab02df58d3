//! The `codex exec --json` transport against the real CLI: one-shot text, command, file change and
//! usage; structured output with `--output-schema`; model errors; `exec resume` on a thread and the
//! fresh retry after a rejection; turn-end input continuing with `exec resume`; the transport rule
//! (observable through the `originator` header Codex sends: `codex_exec` on exec, the `initialize`
//! client name on app-server); web search on both transports and the web-search policy.

use agent_adaptor::driver::{
    ApprovalMode, ApprovalPolicy, FallbackAction, FeatureLevel, MessagePolicy, Policy, SandboxLevel, Timing,
    TranscriptKind,
};
use agent_adaptor::providers::codex::TransportPreference;
use agent_adaptor::runtime::{Agent, CallOptions, MessageOptions, MessageState, Payload, SchemaOptions};
use agent_adaptor::testkit::mock::responses::{Reply, Script, StreamOutcome};

use super::{Cx, code, drain, run_error, tool_call, tool_result};

/// A setup whose configuration forces the exec transport.
async fn exec_cx(script: Script) -> Option<Cx> {
    Cx::with(script, |c| c.transport = TransportPreference::Exec).await
}

fn originator(cx: &Cx, n: usize) -> String {
    cx.mock.requests()[n]
        .headers
        .get("originator")
        .cloned()
        .unwrap_or_default()
}

/// Permission requests denied without asking, and the model carries on: what exec's `never` does.
fn deny_and_continue() -> ApprovalPolicy {
    ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        on_reject: FallbackAction::Continue,
        ..Default::default()
    }
}

#[tokio::test]
async fn exec_runs_a_command_and_reports_text_tools_usage_and_a_checkpoint() {
    let script = Script::new()
        .then(
            Reply::new()
                .reasoning("Plan: run it.")
                .exec_command("printf 'exec-line\\n'"),
        )
        .then(Reply::new().text("Ran it."));
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("run one line", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Ran it.");
    assert_eq!(r.metadata["transport"], "exec");
    assert_eq!(originator(&cx, 0), "codex_exec");
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::ProcessInfo(p) if p.metadata.get("transport").map(String::as_str) == Some("exec"))),
        "the exec process is reported"
    );
    // exec has no deltas: the final text arrives whole, once.
    assert_eq!(super::delta_text(&events), "Ran it.");
    let start = tool_call(&events, "shell").expect("a shell tool");
    assert!(
        start.args.unwrap()["command"]
            .as_str()
            .unwrap()
            .contains("exec-line")
    );
    let result = tool_result(&events, None).expect("a tool result");
    assert_eq!(result["output"], "exec-line\n");
    assert_eq!(result["exit_code"], 0);
    let usage = r.usage.unwrap();
    assert!(usage.input_tokens > 0 && usage.output_tokens > 0, "{usage:?}");
    let kinds: Vec<_> = r.transcript().into_iter().map(|i| i.kind).collect();
    assert_eq!(kinds.first(), Some(&TranscriptKind::Init));
    assert!(kinds.contains(&TranscriptKind::Thinking));
    assert!(kinds.contains(&TranscriptKind::ToolResult));
    assert_eq!(kinds.last(), Some(&TranscriptKind::Result));
    let raw = r.raw();
    assert_eq!(raw.terminal.unwrap().event, "turn.completed");
    let outputs: String = cx.mock.requests()[1]
        .tool_outputs()
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert!(outputs.contains("exec-line"), "{outputs}");
    cx.assert_reaped();
}

#[tokio::test]
async fn exec_applies_a_patch_in_the_workspace_sandbox() {
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from exec\n*** End Patch\n";
    let script = Script::new()
        .then(Reply::new().apply_patch(patch))
        .then(Reply::new().text("Created hello.txt."));
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("create hello.txt", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "Created hello.txt.");
    let result = tool_result(&events, None).expect("an apply_patch result");
    assert_eq!(result["status"], "completed");
    assert!(result["paths"][0].as_str().unwrap().ends_with("hello.txt"));
    assert_eq!(
        std::fs::read_to_string(cx.ws.join("hello.txt")).unwrap(),
        "hello from exec\n"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn exec_structured_output_uses_the_output_schema_file() {
    let script = Script::new().then(Reply::new().text(r#"{"answer":"forty-two","n":42}"#));
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let schema = br#"{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"],"additionalProperties":false}"#;
    let opts = cx
        .auto()
        .instructions("Answer tersely EXECMARK.")
        .schema_json(schema, SchemaOptions::new());
    let r = agent.send("the answer?", opts).result().await.unwrap();
    assert_eq!(r.metadata["transport"], "exec");
    assert_eq!(
        r.structured().unwrap(),
        &serde_json::json!({"answer": "forty-two", "n": 42})
    );
    let req = &cx.mock.requests()[0];
    let fmt = req.text_format().expect("text.format");
    assert_eq!(fmt["type"], "json_schema");
    assert_eq!(fmt["schema"]["required"], serde_json::json!(["answer", "n"]));
    assert!(
        req.texts_of_role("developer").join("\n").contains("EXECMARK"),
        "instructions are developer instructions on exec too"
    );
    assert_eq!(req.last_user_text().as_deref(), Some("the answer?"));
    let schemas = cx.codex_home.join("exec-schemas");
    assert!(
        !schemas.exists() || std::fs::read_dir(&schemas).unwrap().next().is_none(),
        "the schema file is removed after the run"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn exec_model_errors_are_typed_failures() {
    let script = Script::new()
        .then(Reply::bad_request("Bad request (mock)"))
        .then(Reply::unauthorized())
        .then(Reply::unauthorized())
        .then(Reply::new().text("cut short").drop_after(4))
        .then(Reply::new().text("cut short").drop_after(4));
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let outcome = agent.send("first", cx.auto()).result().await;
    assert_eq!(code(&outcome), "agent_error", "{}", run_error(&outcome).message);
    let err = run_error(&outcome);
    assert_eq!(
        err.message, "Bad request (mock)",
        "the provider error body is unwrapped"
    );
    assert_eq!(err.result.raw().terminal.unwrap().event, "turn.failed");
    assert!(
        err.result
            .transcript()
            .iter()
            .any(|i| i.kind == TranscriptKind::Result && i.is_error)
    );

    let outcome = agent.send("second", cx.auto()).result().await;
    assert_eq!(code(&outcome), "agent_error", "{}", run_error(&outcome).message);
    assert!(
        run_error(&outcome).message.contains("401"),
        "{}",
        run_error(&outcome).message
    );

    let stream = agent.send("third", cx.auto());
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(code(&outcome), "network_error", "{}", run_error(&outcome).message);
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == agent_adaptor::driver::notice_kind::PROVIDER_RETRY)),
        "the retry is announced"
    );
    assert!(
        cx.mock
            .requests()
            .iter()
            .any(|r| r.outcome == StreamOutcome::Dropped)
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn exec_resume_continues_a_thread_and_a_lost_thread_starts_fresh() {
    let Some(cx) = exec_cx(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let thread = agent.thread("cx-exec-resume");
    let first = thread.send("remember MANGO", cx.auto()).result().await.unwrap();
    assert_eq!(first.metadata["transport"], "exec");
    let tid = first.metadata["thread_id"].clone();
    assert!(!tid.is_empty());
    assert_eq!(cx.driver.idle_processes(), 0, "exec keeps no process");
    let second = thread.send("what word?", cx.auto()).result().await.unwrap();
    assert_eq!(second.metadata["thread_id"], tid, "exec resume keeps the thread");
    assert_eq!(second.text, "ECHO n=2: what word?");
    let users = cx.mock.requests()[1].texts_of_role("user");
    assert!(users.iter().any(|t| t == "remember MANGO"), "history: {users:?}");

    std::fs::remove_dir_all(&cx.codex_home).unwrap();
    let stream = thread.send("third", cx.auto());
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert!(
        r.text.starts_with("ECHO n=3: ") && r.text.ends_with("third"),
        "{}",
        r.text
    );
    assert_ne!(r.metadata["thread_id"], tid, "a new thread");
    assert!(
        events.iter().any(|e| matches!(&e.payload, Payload::Notice(n) if n.kind == agent_adaptor::driver::notice_kind::THREAD_CONTINUITY)),
        "the fresh fallback is announced"
    );
    let users = cx.mock.requests()[2].texts_of_role("user");
    assert!(
        !users.iter().any(|t| t == "remember MANGO"),
        "no history: {users:?}"
    );
    cx.assert_reaped();
}

#[tokio::test]
async fn exec_turn_end_input_continues_the_thread_in_a_new_process() {
    let script = Script::new()
        .then(Reply::new().exec_command("sleep 1; echo slept"))
        .otherwise(Script::echo_reply);
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("nap first", cx.auto());
    stream
        .send(
            "and then PEAR",
            MessageOptions::new().id("m-1").when(Timing::Soon),
        )
        .await
        .unwrap();
    let events = drain(&stream).await;
    let r = stream.result().await.unwrap();
    assert_eq!(r.turns, 2);
    assert!(r.text.contains("and then PEAR"), "{}", r.text);
    let m = &r.messages()[0];
    assert_eq!(m.state, MessageState::Delivered, "{m:?}");
    assert_eq!(
        (m.boundary.as_str(), m.mechanism.as_str()),
        ("turn_end", "exec_resume")
    );
    let spawns = events
        .iter()
        .filter(|e| matches!(&e.payload, Payload::ProcessInfo(p) if p.metadata.get("transport").map(String::as_str) == Some("exec")))
        .count();
    assert_eq!(spawns, 2, "one exec process per turn");
    let reqs = cx.mock.requests();
    let users = reqs.last().unwrap().texts_of_role("user");
    assert!(users.iter().any(|t| t == "nap first"), "same thread: {users:?}");
    cx.assert_reaped();
}

#[tokio::test]
async fn the_transport_rule_picks_exec_only_where_nothing_differs() {
    let Some(cx) = Cx::new(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    let quiet = Policy {
        messages: MessagePolicy {
            disabled: true,
            ..Default::default()
        },
        ..Policy::workspace_write().with_approvals(deny_and_continue())
    };
    // A direct run nobody can message, whose denials continue: exec.
    let r = agent
        .send("one", cx.opts().policy(quiet.clone()))
        .result()
        .await
        .unwrap();
    assert_eq!(r.metadata["transport"], "exec");
    assert_eq!(originator(&cx, 0), "codex_exec");
    // The same policy with messages allowed (a stream that may send): app-server.
    let open = Policy::workspace_write().with_approvals(deny_and_continue());
    let r = agent.send("two", cx.opts().policy(open)).result().await.unwrap();
    assert_eq!(r.metadata["transport"], "app-server");
    assert_eq!(originator(&cx, 1), "agent-adaptor");
    // Auto-approve: app-server would approve an escalation that exec refuses, so app-server.
    let approve = Policy {
        messages: quiet.messages.clone(),
        ..Policy::workspace_write().with_approvals(super::auto_approve())
    };
    let r = agent
        .send("three", cx.opts().policy(approve))
        .result()
        .await
        .unwrap();
    assert_eq!(r.metadata["transport"], "app-server");
    // On a thread the app-server is kept for the next run.
    let r = agent
        .thread("cx-rule")
        .send("four", cx.opts().policy(quiet))
        .result()
        .await
        .unwrap();
    assert_eq!(r.metadata["transport"], "app-server");
    assert_eq!(cx.mock.requests().len(), 4);
    drop(r);
    agent.close(std::time::Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn a_forced_exec_transport_refuses_what_it_cannot_carry() {
    let Some(cx) = exec_cx(Script::echo()).await else {
        return;
    };
    let agent = Agent::new(cx.driver.clone());
    // The default policy asks for permissions: exec cannot ask.
    let outcome = agent.send("hi", cx.opts()).result().await;
    assert_eq!(code(&outcome), "transport_unsupported");
    assert!(run_error(&outcome).message.contains("permission Ask"));
    assert!(cx.mock.requests().is_empty(), "refused before launch");
    cx.assert_reaped();
}

#[tokio::test]
async fn web_search_is_a_tool_call_on_both_transports_and_follows_the_policy() {
    for transport in [TransportPreference::AppServer, TransportPreference::Exec] {
        let script = Script::new()
            .then(
                Reply::new()
                    .web_search("rust serde tolerant enums")
                    .text("Found it."),
            )
            .otherwise(Script::echo_reply);
        let Some(cx) = Cx::with(script, |c| c.transport = transport).await else {
            return;
        };
        let agent = Agent::new(cx.driver.clone());
        let allow = Policy {
            web_search: FeatureLevel::Allow,
            ..Policy::workspace_write().with_approvals(super::auto_approve())
        };
        let stream = agent.send("search the web", cx.opts().policy(allow));
        let events = drain(&stream).await;
        let r = stream.result().await.unwrap();
        assert_eq!(r.text, "Found it.", "{transport:?}");
        let start = tool_call(&events, "web_search").expect("a web_search tool call");
        let result = tool_result(&events, Some(&start.id)).expect("its result");
        assert_eq!(
            start.args.unwrap()["query"],
            "rust serde tolerant enums",
            "{transport:?}"
        );
        assert_eq!(result["query"], "rust serde tolerant enums");
        assert_eq!(result["action"]["type"], "search");
        let t = r.transcript();
        assert!(
            t.iter()
                .any(|i| i.kind == TranscriptKind::ToolCall && i.tool_name == "web_search"),
            "{transport:?}"
        );
        assert!(
            cx.mock.requests()[0]
                .tool_names()
                .iter()
                .any(|n| n == "web_search"),
            "live: the model is offered web search ({transport:?})"
        );
        let deny = Policy {
            web_search: FeatureLevel::Deny,
            ..Policy::workspace_write().with_approvals(super::auto_approve())
        };
        agent
            .send("no search", cx.opts().policy(deny))
            .result()
            .await
            .unwrap();
        let last = cx.mock.requests().pop().unwrap();
        assert!(
            !last.tool_names().iter().any(|n| n == "web_search"),
            "disabled: no web search tool ({transport:?}): {:?}",
            last.tool_names()
        );
        cx.assert_reaped();
    }
}

/// The sandbox level reaches exec as `-s`, like app-server's `sandbox`: a read-only run cannot write.
#[tokio::test]
async fn exec_maps_the_sandbox_like_app_server() {
    let script = Script::new()
        .then(Reply::new().exec_command("touch ro-marker.txt"))
        .then(Reply::new().text("tried"));
    let Some(cx) = exec_cx(script).await else { return };
    let agent = Agent::new(cx.driver.clone());
    let policy = Policy {
        sandbox: SandboxLevel::ReadOnly,
        ..Policy::default().with_approvals(super::auto_approve())
    };
    let r = agent
        .send(
            "write a file",
            CallOptions::new().workspace(&cx.ws).policy(policy),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(r.metadata["transport"], "exec");
    assert!(!cx.ws.join("ro-marker.txt").exists(), "read-only sandbox");
    let out = cx.mock.requests()[1]
        .tool_outputs()
        .into_iter()
        .map(|(_, o)| o)
        .collect::<String>();
    assert!(out.contains("Read-only file system"), "{out}");
    cx.assert_reaped();
}
