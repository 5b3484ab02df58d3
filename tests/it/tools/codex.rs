//! Host tools through the REAL Codex app-server: the mock Responses model runs the `tool_search_call`
//! round trip, then calls the namespaced `mcp__agent_adaptor_tools` `add`; Codex reaches the Agent's
//! loopback MCP server with the bearer token it reads from the variable named by
//! `bearer_token_env_var` (pre-approved with `default_tools_approval_mode = "approve"`), and the
//! handler's result (or its rejection, or a sanitized panic) is the `function_call_output` the model
//! sees next. The token is never in argv or `config.toml`.

use std::time::Duration;

use agent_adaptor::runtime::{Agent, Payload};
use agent_adaptor::testkit::mock::responses::{RecordedRequest, Reply, Script};
use agent_adaptor::vocab::McpServer;
use serde_json::{Value, json};

use super::{Calls, add, operands, recorded, recording_wrapper};
use crate::codex_driver::{Cx, drain};
use crate::driver_support::STDIO_MCP_SERVER_JS;

const NAMESPACE: &str = "mcp__agent_adaptor_tools";

/// The type of the last input item of the current request.
fn last_item_type(log: &[RecordedRequest]) -> String {
    log.last()
        .and_then(|r| r.input().last())
        .and_then(|i| i.get("type"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// `please add A B` → `tool_search_call` → namespaced `function_call` → text quoting the output.
fn script() -> Script {
    script_for(NAMESPACE)
}

/// [`script`] calling `add` in `namespace`.
fn script_for(namespace: &'static str) -> Script {
    Script::new().otherwise(move |log| {
        let req = log.last().unwrap();
        let prompt = req.last_user_text().unwrap_or_default();
        match (last_item_type(log).as_str(), operands(&prompt)) {
            ("function_call_output", _) => {
                let out = req.tool_outputs().pop().map(|(_, o)| o).unwrap_or_default();
                Reply::new().text(format!("Tool said: {out}"))
            }
            ("tool_search_output", Some((a, b))) => {
                Reply::new().namespaced_call(namespace, "add", json!({"a": a, "b": b}))
            }
            (_, Some(_)) => Reply::new().tool_search("add two integers"),
            (_, None) => Reply::new().text(format!("no tool for: {prompt}")),
        }
    })
}

#[tokio::test]
async fn the_real_codex_app_server_calls_a_host_tool_after_tool_search() {
    let rec_dir = tempfile::tempdir().unwrap();
    let Some(cx) = Cx::with(script(), |c| {
        let real = c.common.command.clone().unwrap();
        c.common.command = Some(recording_wrapper(rec_dir.path(), &real));
    })
    .await
    else {
        return;
    };
    let calls = Calls::default();
    let agent = Agent::builder(cx.driver.clone()).tool(add(calls.clone())).build();

    // The default policy asks: the host tool is pre-approved, so nothing waits for an answer.
    let stream = agent.send("please add 2 40", cx.opts());
    let events = tokio::time::timeout(Duration::from_secs(150), drain(&stream))
        .await
        .expect("the run finished");
    let r = stream.result().await.unwrap();
    assert_eq!(
        *calls.lock().unwrap(),
        vec![(2, 40)],
        "the handler ran with the model's arguments"
    );
    assert!(
        r.text.starts_with("Tool said: ") && r.text.contains("42"),
        "{}",
        r.text
    );
    let reqs = cx.mock.responses_requests();
    let search = reqs
        .iter()
        .flat_map(|q| q.input().to_vec())
        .find(|i| i["type"] == "tool_search_output")
        .expect("Codex answered the tool search");
    assert!(search.to_string().contains(NAMESPACE), "{search}");
    let outputs = reqs.last().unwrap().tool_outputs();
    assert!(outputs.iter().any(|(_, o)| o.contains("42")), "{outputs:?}");
    let tool = "agent_adaptor_tools/add";
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::ToolCall(c) if c.name == tool)),
        "a tool call event for {tool}"
    );
    assert!(
        events.iter().any(|e| matches!(&e.payload,
            Payload::ToolResult(t) if Value::Object(t.result.clone()).to_string().contains("42"))),
        "a tool result event with the handler's answer"
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e.payload, Payload::ApprovalRequest(_))),
        "host tools never ask"
    );

    // The token: in the child's environment under the random name, nowhere in argv or config.toml.
    let hosted = agent.hosted_tools().unwrap();
    let (token, var) = (hosted.token().to_owned(), hosted.token_env().to_owned());
    let argv = recorded(rec_dir.path(), "argv.log");
    let env = recorded(rec_dir.path(), "env.log");
    assert!(
        argv.contains(&format!("bearer_token_env_var = \"{var}\"")),
        "{argv}"
    );
    assert!(!argv.contains(&token), "the token is not in argv");
    let config = std::fs::read_to_string(cx.codex_home.join("config.toml")).unwrap();
    assert!(!config.contains(&token), "the token is not in config.toml");
    assert!(
        env.contains(&format!("{var}={token}")),
        "the child's env carries the token"
    );
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn codex_shows_the_model_a_rejection_and_only_a_sanitized_panic() {
    let Some(cx) = Cx::new(script()).await else {
        return;
    };
    let calls = Calls::default();
    let agent = Agent::builder(cx.driver.clone()).tool(add(calls.clone())).build();
    let r = agent.send("please add 13 1", cx.opts()).result().await.unwrap();
    assert!(r.text.contains("unlucky: 13 is not a number I add"), "{}", r.text);
    let r = agent.send("please add 666 1", cx.opts()).result().await.unwrap();
    assert!(r.text.contains("internal_error"), "{}", r.text);
    let outputs: Vec<String> = cx
        .mock
        .responses_requests()
        .iter()
        .flat_map(|q| q.tool_outputs())
        .map(|(_, o)| o)
        .collect();
    assert!(
        outputs
            .iter()
            .all(|o| !o.contains("hunter2") && !o.contains("secret")),
        "{outputs:?}"
    );
    assert_eq!(*calls.lock().unwrap(), vec![(13, 1), (666, 1)]);
    agent.close(Duration::from_secs(10)).await.unwrap();
    cx.assert_reaped();
}

#[tokio::test]
async fn a_declared_stdio_mcp_server_is_materialized_and_callable() {
    let Some(cx) = Cx::new(script_for("mcp__probe")).await else {
        return;
    };
    let js = cx.ws.join("probe-mcp.js");
    std::fs::write(&js, STDIO_MCP_SERVER_JS).unwrap();
    let mut server = McpServer::stdio("probe", "node", vec![js.to_string_lossy().into_owned()]);
    if let agent_adaptor::vocab::McpTransport::Stdio { env, .. } = &mut server.transport {
        env.insert("PROBE_MARK".into(), "env-reached".into());
    }
    let agent = Agent::new(cx.driver.clone());
    let stream = agent.send("please add 5 6", cx.auto().mcp([server]));
    let events = tokio::time::timeout(Duration::from_secs(150), drain(&stream))
        .await
        .expect("the run finished");
    let r = stream.result().await.unwrap();
    assert!(r.text.contains("SUM=11 env-reached"), "{}", r.text);
    assert!(
        events
            .iter()
            .any(|e| matches!(&e.payload, Payload::ToolCall(c) if c.name == "probe/add")),
        "a tool call event for probe/add"
    );
    // Without auto-approval Codex asks first: `codex_driver::mcp` covers Ask, deny and AutoDeny.
    cx.assert_reaped();
}
