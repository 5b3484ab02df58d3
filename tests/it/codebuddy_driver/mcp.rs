//! Remote MCP servers through the REAL CodeBuddy CLI: a legacy HTTP+SSE server (the testkit's SSE probe)
//! and the Agent's host tools over streamable HTTP. The mock model calls each tool, CodeBuddy reaches the
//! server, and the result is what the model sees next. Host tools are pre-approved (`--allowedTools`), so
//! under an Ask policy (the control transport) nobody is asked.

use std::time::Duration;

use agent_adaptor::runtime::Agent;
use agent_adaptor::testkit::mock::sse_mcp::{ECHO_PREFIX, SseMcpServer};
use agent_adaptor::vocab::McpServer;

use super::{Cb, transport};

#[tokio::test]
async fn an_sse_mcp_server_is_reached_and_the_model_sees_the_echo() {
    let Some(cb) = Cb::new().await else { return };
    let probe = SseMcpServer::start().await.unwrap();
    let agent = Agent::new(cb.driver.clone());
    let opts = cb.headless().mcp([McpServer::sse("sseprobe", probe.url())]);
    let outcome = tokio::time::timeout(Duration::from_secs(120), agent.send("zzecho", opts).result())
        .await
        .expect("the run finished");
    assert_eq!(transport(&outcome), "headless");
    let r = outcome.unwrap();
    crate::driver_support::assert_mcp_connected(&r, "sseprobe");
    assert_eq!(probe.calls(), vec![serde_json::json!({"text": "hi"})]);
    let results = cb.mock.requests().last().unwrap().tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains(ECHO_PREFIX), "{results:?}");
    assert!(r.text.starts_with("Done n="), "{}", r.text);
    cb.assert_reaped();
}

#[tokio::test]
async fn host_tools_run_over_http_without_asking_under_an_ask_policy() {
    let Some(cb) = Cb::new().await else { return };
    let calls = crate::tools::Calls::default();
    let agent = Agent::builder(cb.driver.clone())
        .tool(crate::tools::add(calls.clone()))
        .build();
    // The default policy asks: the control transport, where an un-preapproved tool would raise a request
    // nobody answers here.
    let outcome = tokio::time::timeout(Duration::from_secs(120), agent.send("zzadd", cb.opts()).result())
        .await
        .expect("the run finished");
    assert_eq!(transport(&outcome), "control");
    let r = outcome.unwrap();
    crate::driver_support::assert_mcp_connected(&r, agent_adaptor::vocab::HOSTED_TOOLS_SERVER);
    assert_eq!(*calls.lock().unwrap(), vec![(2, 40)]);
    let results = cb.mock.requests().last().unwrap().tool_results();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("42"), "{results:?}");
    agent.close(Duration::from_secs(5)).await.unwrap();
    cb.assert_reaped();
}
