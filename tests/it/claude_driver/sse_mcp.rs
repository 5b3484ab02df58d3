//! Legacy HTTP+SSE MCP servers through the REAL Claude CLI: the mock model calls
//! `mcp__sseprobe__echo`, Claude reaches the testkit's SSE MCP server (`GET /sse`, then JSON-RPC POSTed
//! to the announced endpoint, answers on the event stream), and the echo reaches the model's next
//! request. An unreachable required SSE server ends the run with a typed failure, not a hang.

use std::time::Duration;

use agent_adaptor::runtime::Agent;
use agent_adaptor::testkit::mock::anthropic::{Reply, Script};
use agent_adaptor::testkit::mock::sse_mcp::{ECHO_PREFIX, SseMcpServer};
use agent_adaptor::vocab::McpServer;

use super::{Cl, code, run_error, transport};

const TOOL: &str = "mcp__sseprobe__echo";

/// The model: a tool result → text quoting it; otherwise a `tool_use` of the SSE server's echo.
fn script() -> Script {
    Script::from_fn(|req| {
        if let Some(r) = req.tool_results().first() {
            let tag = if r.is_error { "Tool failed" } else { "Tool said" };
            return Reply::text(format!("{tag}: {}", r.content));
        }
        Reply::tool_use(TOOL, serde_json::json!({"text": "hi"}))
    })
}

#[tokio::test]
async fn sse_mcp_server_is_reached_by_the_real_claude_cli_and_the_model_sees_the_echo() {
    let Some(cl) = Cl::scripted(script(), |_| {}).await else {
        return;
    };
    let server = SseMcpServer::start().await.unwrap();
    let agent = Agent::new(cl.driver.clone());
    let opts = cl.oneshot().mcp([McpServer::sse("sseprobe", server.url())]);
    let r = tokio::time::timeout(
        Duration::from_secs(120),
        agent.send("use the sse probe", opts).result(),
    )
    .await
    .expect("the run finished")
    .unwrap();
    crate::driver_support::assert_mcp_connected(&r, "sseprobe");
    let echo = format!("{ECHO_PREFIX}{{\"text\":\"hi\"}}");
    assert_eq!(r.text, format!("Tool said: {echo}"));
    assert_eq!(server.calls(), vec![serde_json::json!({"text": "hi"})]);
    let methods = server.methods();
    for m in [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
    ] {
        assert!(methods.iter().any(|x| x == m), "{m} missing in {methods:?}");
    }
    let reqs = cl.requests();
    let results = reqs.last().unwrap().tool_results();
    assert_eq!(results.len(), 1, "the next model request carries the tool result");
    assert_eq!(results[0].content, echo);
    assert!(!results[0].is_error);
    cl.assert_reaped();
}

#[tokio::test]
async fn a_required_unreachable_sse_mcp_server_fails_typed_without_hanging() {
    let Some(cl) = Cl::scripted(script(), |_| {}).await else {
        return;
    };
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/sse");
    let mut required = McpServer::sse("sseprobe", url.clone());
    required.required = true;
    let agent = Agent::new(cl.driver.clone());
    // Both transports: one-shot (auto-approve) and bidirectional (the default policy).
    for (opts, want) in [(cl.oneshot(), "one_shot"), (cl.opts(), "bidi")] {
        let outcome = tokio::time::timeout(
            Duration::from_secs(90),
            agent
                .send("use the sse probe", opts.mcp([required.clone()]))
                .result(),
        )
        .await
        .expect("no hang");
        assert_eq!(transport(&outcome), want);
        assert_eq!(code(&outcome), "agent_error", "{outcome:?}");
        let msg = run_error(&outcome).to_string();
        assert!(
            msg.contains("required MCP server not connected: sseprobe (failed)"),
            "{msg}"
        );
        cl.assert_reaped();
    }
    // The same server, not required: Claude carries on without the tool and the run succeeds.
    let optional = McpServer::sse("sseprobe", url);
    let r = agent
        .send("use the sse probe", cl.oneshot().mcp([optional]))
        .result()
        .await
        .unwrap();
    assert!(
        r.text.contains("No such tool available: mcp__sseprobe__echo"),
        "{}",
        r.text
    );
    cl.assert_reaped();
}
