//! Host tools through the REAL Claude CLI: the mock Anthropic model calls
//! `mcp__agent_adaptor_tools__add`, Claude reaches the Agent's loopback MCP server over streamable HTTP
//! with the bearer token it expanded from `${VAR}` in `--mcp-config`, and the handler's result (or its
//! rejection, or a sanitized panic) is what the model sees in its next request. The token travels only
//! in the child's environment: never in argv, never in the MCP config file.

use std::time::Duration;

use agent_adaptor::driver::{ApprovalMode, ApprovalPolicy, Policy};
use agent_adaptor::runtime::{Agent, CallOptions, Event, Payload};
use agent_adaptor::testkit::mock::anthropic::{Reply, Script};

use super::{Calls, add, operands, recorded, recording_wrapper};
use crate::claude_driver::{Cl, drain, transport};

const TOOL: &str = "mcp__agent_adaptor_tools__add";

/// The model: `please add A B` → a `tool_use` of the host tool; a tool result → text quoting it.
fn script() -> Script {
    Script::from_fn(|req| {
        if let Some(r) = req.tool_results().first() {
            let tag = if r.is_error { "Tool failed" } else { "Tool said" };
            return Reply::text(format!("{tag}: {}", r.content));
        }
        let prompt = req.last_user_texts().join(" ");
        match operands(&prompt) {
            Some((a, b)) => Reply::tool_use(TOOL, serde_json::json!({"a": a, "b": b})),
            None => Reply::text(format!("no tool for: {prompt}")),
        }
    })
}

/// Every permission request auto-denied: only pre-approved tools can run.
fn deny_all(cl: &Cl) -> CallOptions {
    cl.opts().policy(Policy::default().with_approvals(ApprovalPolicy {
        permission: ApprovalMode::AutoDeny,
        ..Default::default()
    }))
}

fn tool_events(events: &[Event]) -> (Vec<String>, Vec<String>) {
    let calls = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolCall(c) if !c.name.is_empty() => Some(c.name.clone()),
            _ => None,
        })
        .collect();
    let results = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolResult(t) => Some(serde_json::Value::Object(t.result.clone()).to_string()),
            _ => None,
        })
        .collect();
    (calls, results)
}

#[tokio::test]
async fn the_real_claude_cli_calls_a_host_tool_and_the_model_sees_the_result() {
    let rec_dir = tempfile::tempdir().unwrap();
    let Some(cl) = Cl::scripted(script(), |c| {
        let real = c.common.command.clone().unwrap();
        c.common.command = Some(recording_wrapper(rec_dir.path(), &real));
    })
    .await
    else {
        return;
    };
    let calls = Calls::default();
    let agent = Agent::builder(cl.driver.clone()).tool(add(calls.clone())).build();

    // The default policy asks for permissions (bidirectional transport): the host tool is pre-approved,
    // so no permission request is raised and nobody needs to answer one.
    let stream = agent.send("please add 2 40", cl.opts());
    let events = tokio::time::timeout(Duration::from_secs(120), drain(&stream))
        .await
        .expect("the run finished");
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "bidi");
    let r = outcome.unwrap();
    assert_eq!(r.text, "Tool said: 42");
    assert_eq!(
        *calls.lock().unwrap(),
        vec![(2, 40)],
        "the handler ran once with the model's arguments"
    );
    let reqs = cl.requests();
    let last = reqs.last().unwrap();
    let results = last.tool_results();
    assert_eq!(results.len(), 1, "the next model request carries the tool result");
    assert_eq!(results[0].content, "42");
    assert!(!results[0].is_error);
    let (names, outputs) = tool_events(&events);
    assert!(names.iter().any(|n| n == TOOL), "{names:?}");
    assert!(outputs.iter().any(|o| o.contains("42")), "{outputs:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, Payload::ApprovalRequest(_))),
        "host tools never ask"
    );

    // The token: in the child's environment under the random name, nowhere in argv or the config file.
    let hosted = agent.hosted_tools().unwrap();
    let (token, var) = (hosted.token().to_owned(), hosted.token_env().to_owned());
    let argv = recorded(rec_dir.path(), "argv.log");
    let files = recorded(rec_dir.path(), "mcp-files.log");
    let env = recorded(rec_dir.path(), "env.log");
    assert!(
        argv.contains("--mcp-config") && argv.contains("mcp__agent_adaptor_tools"),
        "{argv}"
    );
    assert!(!argv.contains(&token), "the token is not in argv");
    assert!(files.contains(&format!("Bearer ${{{var}}}")), "{files}");
    assert!(!files.contains(&token), "the token is not in the MCP config file");
    assert!(
        env.contains(&format!("{var}={token}")),
        "the child's env carries the token"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}

#[tokio::test]
async fn a_rejection_reaches_the_model_and_a_panic_only_as_a_sanitized_error() {
    let Some(cl) = Cl::scripted(script(), |_| {}).await else {
        return;
    };
    let calls = Calls::default();
    let agent = Agent::builder(cl.driver.clone()).tool(add(calls.clone())).build();

    // Every permission auto-denied: pre-approval is what lets the tool run at all.
    let stream = agent.send("please add 13 1", deny_all(&cl));
    let events = drain(&stream).await;
    let outcome = stream.result().await;
    assert_eq!(transport(&outcome), "bidi");
    let r = outcome.unwrap();
    // Claude appends a hint about the deferred tool's schema to an MCP error; the rejection comes first.
    assert!(
        r.text
            .starts_with("Tool failed: unlucky: 13 is not a number I add"),
        "{}",
        r.text
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, Payload::ApprovalRequest(_))),
        "no permission decision for a host tool"
    );

    // The one-shot transport (auto-approve) reaches the server the same way.
    let outcome = agent.send("please add 666 1", cl.oneshot()).result().await;
    assert_eq!(transport(&outcome), "one_shot");
    let r = outcome.unwrap();
    assert!(r.text.starts_with("Tool failed: "), "{}", r.text);
    assert!(r.text.contains("internal_error"), "{}", r.text);
    for secret in ["hunter2", "secret", "panic"] {
        assert!(!r.text.contains(secret), "{secret} leaked: {}", r.text);
    }
    let seen: Vec<String> = cl
        .requests()
        .iter()
        .flat_map(|q| q.tool_results())
        .map(|t| t.content)
        .collect();
    assert!(seen.iter().all(|t| !t.contains("hunter2")), "{seen:?}");
    assert_eq!(*calls.lock().unwrap(), vec![(13, 1), (666, 1)]);
    agent.close(Duration::from_secs(10)).await.unwrap();
    cl.assert_reaped();
}
