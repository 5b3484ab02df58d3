//! A run service publishing an MCP server reaches the REAL Claude CLI: the provider starts the testkit's
//! SSE MCP server on attach, publishes it through `ServiceRef::mcp` (with a preamble), the mock model
//! calls `mcp__svcprobe__echo`, Claude reaches the server and the echo reaches the model; the provider
//! is detached (its server stopped) before the result, which reports the service.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use agent_adaptor::runtime::{Agent, RunAttachment, RunServiceProvider, ServiceError};
use agent_adaptor::testkit::mock::anthropic::{Reply, Script};
use agent_adaptor::testkit::mock::sse_mcp::{ECHO_PREFIX, SseMcpServer};
use agent_adaptor::vocab::{McpServer, ServiceOrigin, ServiceRef};

use super::Cl;

const TOOL: &str = "mcp__svcprobe__echo";
const PREAMBLE: &str = "The svcprobe service is attached to this run.";

/// Starts an SSE MCP server per attached run and stops it on detach.
#[derive(Default)]
struct SseService {
    live: Mutex<Option<SseMcpServer>>,
    /// What the server saw (`tools/call` arguments), kept when it stops.
    calls: Mutex<Vec<serde_json::Value>>,
}

#[async_trait::async_trait]
impl RunServiceProvider for SseService {
    async fn attach_run(&self, _run_id: &str) -> Result<RunAttachment, ServiceError> {
        let server = SseMcpServer::start()
            .await
            .map_err(|e| ServiceError::Backend(e.to_string()))?;
        let url = server.url();
        *self.live.lock().unwrap() = Some(server);
        Ok(RunAttachment {
            preamble: PREAMBLE.into(),
            services: vec![ServiceRef::new("svcprobe", url.clone()).mcp(McpServer::sse("svcprobe", url))],
            ..Default::default()
        })
    }
    async fn detach_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        let server = self.live.lock().unwrap().take();
        match server {
            Some(s) => {
                *self.calls.lock().unwrap() = s.calls();
                Ok(())
            }
            None => Err(ServiceError::Backend("not attached".into())),
        }
    }
}

#[tokio::test]
async fn a_run_service_mcp_server_reaches_the_real_claude_cli() {
    let script = Script::from_fn(|req| {
        if let Some(r) = req.tool_results().first() {
            return Reply::text(format!("Tool said: {}", r.content));
        }
        Reply::tool_use(TOOL, serde_json::json!({"text": "hi"}))
    });
    let Some(cl) = Cl::scripted(script, |_| {}).await else {
        return;
    };
    let service = Arc::new(SseService::default());
    let agent = Agent::builder(cl.driver.clone())
        .run_service_provider(service.clone())
        .build();
    let r = tokio::time::timeout(
        Duration::from_secs(120),
        agent.send("use the service probe", cl.oneshot()).result(),
    )
    .await
    .expect("the run finished")
    .unwrap();
    crate::driver_support::assert_mcp_connected(&r, "svcprobe");
    let echo = format!("{ECHO_PREFIX}{{\"text\":\"hi\"}}");
    assert_eq!(r.text, format!("Tool said: {echo}"));
    assert!(
        service.live.lock().unwrap().is_none(),
        "detached before the result"
    );
    assert_eq!(
        *service.calls.lock().unwrap(),
        vec![serde_json::json!({"text": "hi"})]
    );
    let first = cl.requests().first().unwrap().last_user_texts().join("\n");
    assert!(
        first.starts_with(PREAMBLE),
        "the preamble leads the prompt: {first:?}"
    );
    assert!(first.ends_with("use the service probe"), "{first:?}");
    let services = r.services();
    assert_eq!(services.len(), 1);
    assert_eq!(services[0].origin, ServiceOrigin::Run);
    assert_eq!(services[0].state, "released");
    assert_eq!(services[0].mcp_server.as_deref(), Some("svcprobe"));
    cl.assert_reaped();
}
