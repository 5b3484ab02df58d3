//! The Agent's side of host tools: the hosted declaration and token reach every invocation (also under a
//! per-call empty MCP set), aliasing the token variable or the reserved name fails before launch, a
//! driver without HTTP MCP refuses, a Thread needs revisions (which feed its fingerprint), and
//! `Agent::close` stops the server.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::driver::{Descriptor, Driver, InvalidConfig, McpCaps, Request, Response, RunIo};
use agent_adaptor::runtime::{Agent, CallOptions, ErrorKind};
use agent_adaptor::tools::{HOSTED_SERVER_NAME, define};
use agent_adaptor::vocab::{McpServer, McpTransport};

use super::{City, weather};

/// Records every request; answers with a fixed text.
#[derive(Clone, Default)]
struct Recorder {
    http_mcp: bool,
    seen: Arc<Mutex<Vec<Request>>>,
}

#[async_trait::async_trait]
impl Driver for Recorder {
    fn descriptor(&self) -> Descriptor {
        Descriptor {
            driver_type: "recorder".into(),
            display_name: "recorder".into(),
            mcp: McpCaps {
                stdio: true,
                http: self.http_mcp,
                sse: false,
            },
            ..Default::default()
        }
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    async fn run(&self, req: Request, _io: RunIo) -> Response {
        self.seen.lock().unwrap().push(req);
        Response {
            text: "ok".into(),
            ..Default::default()
        }
    }
}

fn recorder() -> Recorder {
    Recorder {
        http_mcp: true,
        ..Default::default()
    }
}

#[tokio::test]
async fn every_invocation_gets_the_hosted_declaration_even_with_an_empty_mcp_set() {
    let rec = recorder();
    let agent = Agent::builder(rec.clone())
        .tool(weather())
        .mcp([McpServer::stdio("other", "node", vec![])])
        .build();
    let hosted = agent.hosted_tools().unwrap().clone();
    agent.send("a", CallOptions::new()).result().await.unwrap();
    agent
        .send("b", CallOptions::new().mcp([]))
        .result()
        .await
        .unwrap();
    let seen = rec.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    let names = |r: &Request| r.mcp.iter().map(|s| s.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&seen[0]), ["other", HOSTED_SERVER_NAME]);
    assert_eq!(
        names(&seen[1]),
        [HOSTED_SERVER_NAME],
        "an empty per-call set keeps host tools"
    );
    for r in &seen {
        let decl = r.mcp.iter().find(|s| s.name == HOSTED_SERVER_NAME).unwrap();
        let McpTransport::Http {
            url,
            bearer_token_env,
            ..
        } = &decl.transport
        else {
            panic!("hosted tools are streamable HTTP")
        };
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let var = bearer_token_env.as_deref().unwrap();
        assert_eq!(var, hosted.token_env());
        assert_eq!(r.env.get(var).map(String::as_str), Some(hosted.token()));
    }
    agent.close(Duration::from_secs(5)).await.unwrap();
    assert!(hosted.is_shut_down());
    let after = reqwest::Client::new().post(hosted.url()).body("{}").send().await;
    assert!(after.is_err(), "Agent::close stops the hosted server");
}

#[tokio::test]
async fn aliasing_the_token_variable_or_the_reserved_name_fails_before_launch() {
    let rec = recorder();
    let agent = Agent::builder(rec.clone()).tool(weather()).build();
    let var = agent.hosted_tools().unwrap().token_env().to_owned();
    let mut alias = McpServer::http("thief", "http://127.0.0.1:9/mcp");
    if let McpTransport::Http { bearer_token_env, .. } = &mut alias.transport {
        *bearer_token_env = Some(var.clone());
    }
    let mut stdio = McpServer::stdio("thief2", "node", vec![]);
    if let McpTransport::Stdio { env, .. } = &mut stdio.transport {
        env.insert("T".into(), format!("${{{var}}}"));
    }
    let reserved = McpServer::http(HOSTED_SERVER_NAME, "http://127.0.0.1:9/mcp");
    for server in [alias, stdio, reserved] {
        let err = agent
            .send("x", CallOptions::new().mcp([server.clone()]))
            .result()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Mcp, "{server:?}: {err}");
        assert_eq!(err.code(), "invalid_mcp_config");
    }
    assert!(rec.seen.lock().unwrap().is_empty(), "nothing was launched");
}

#[tokio::test]
async fn a_driver_without_http_mcp_refuses_host_tools() {
    let rec = Recorder::default();
    let agent = Agent::builder(rec.clone()).tool(weather()).build();
    let err = agent.send("x", CallOptions::new()).result().await.unwrap_err();
    assert_eq!(err.code(), "mcp_transport_unsupported", "{err}");
    assert!(rec.seen.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_invalid_tool_set_refuses_every_launch() {
    let rec = recorder();
    let agent = Agent::builder(rec.clone()).tools([weather(), weather()]).build();
    assert!(agent.hosted_tools().is_none());
    let err = agent.send("x", CallOptions::new()).result().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidDriverConfig, "{err}");
    assert!(err.to_string().contains("duplicate"), "{err}");
}

#[tokio::test]
async fn a_thread_needs_tool_revisions_and_they_feed_its_fingerprint() {
    let unrevised = define("echo", "echo", |c: City| async move { Ok(c.city) });
    let rec = recorder();
    let agent = Agent::builder(rec.clone()).tool(unrevised.clone()).build();
    let err = agent
        .thread("t1")
        .send("x", CallOptions::new())
        .result()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidDriverConfig, "{err}");
    assert!(err.to_string().contains("revision"), "{err}");
    // A direct (thread-less) send does not need one.
    agent.send("x", CallOptions::new()).result().await.unwrap();

    // A thread's fingerprint carries the tool revisions: same tools, same fingerprint; a new revision,
    // a new one.
    let fp = |tool: agent_adaptor::tools::Tool, key: &'static str| async move {
        let agent = Agent::builder(reference()).tool(tool).build();
        let t = agent.thread(key);
        t.send("hello", CallOptions::new()).result().await.unwrap();
        let info = t.checkpoint("").await.unwrap().expect("a checkpoint");
        agent.close(Duration::from_secs(5)).await.unwrap();
        info.fingerprint
    };
    let a = fp(unrevised.clone().revision("1"), "a").await;
    let a_again = fp(unrevised.clone().revision("1"), "b").await;
    let b = fp(unrevised.revision("2"), "c").await;
    assert_eq!(a, a_again);
    assert_ne!(a, b, "a new tool revision is a new thread fingerprint");
}

/// The reference driver declaring streamable-HTTP MCP.
fn reference() -> agent_adaptor::testkit::reference::ReferenceDriver {
    use agent_adaptor::driver::ContinueMode;
    use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, reference_descriptor};
    let mut d = reference_descriptor(ContinueMode::InRun);
    d.mcp.http = true;
    ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(d),
        ..Default::default()
    })
}

#[tokio::test]
async fn the_last_tools_declaration_replaces_the_set_and_an_empty_one_clears_it() {
    let rec = recorder();
    let calls = Default::default();
    let agent = Agent::builder(rec.clone())
        .tool(weather())
        .tools([super::add(calls)])
        .build();
    let names: Vec<&str> = agent
        .hosted_tools()
        .expect("tools")
        .tools()
        .iter()
        .map(|t| t.name())
        .collect();
    assert_eq!(names, ["add"], "the last declaration replaces the whole set");
    agent.close(Duration::from_secs(5)).await.unwrap();

    let cleared = Agent::builder(rec.clone()).tool(weather()).tools([]).build();
    assert!(
        cleared.hosted_tools().is_none(),
        "an empty declaration clears the set"
    );
    cleared.send("a", CallOptions::new()).result().await.unwrap();
    let seen = rec.seen.lock().unwrap().clone();
    assert!(
        seen.last()
            .unwrap()
            .mcp
            .iter()
            .all(|s| s.name != HOSTED_SERVER_NAME),
        "no hosted declaration is offered"
    );
}
