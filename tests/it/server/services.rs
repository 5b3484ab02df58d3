//! Runtime services on the service's routes: an agent's declared services reach every run through the
//! service manager the host gave it in code, a request names catalog services only with the operator's
//! grant, the run view reports the services (never a secret value), a cleanup failure reaches the run's
//! result, and a run service provider's event source folds into the SSE stream.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agent_adaptor::runtime::{
    Payload, RunAttachment, RunServiceProvider, ServiceError, ServiceManager, ServiceRequest,
};
use agent_adaptor::server::{HostResources, RunningServer, Server, ServerConfig};
use agent_adaptor::vocab::{ServiceRef, ServiceSpec};
use futures::StreamExt;
use serde_json::{Value, json};

use super::{all_frames, error_code, finished_state, get, get_json, post_json, run_id, start_run};

const SECRET: &str = "hunter2-secret-value";

/// A service manager that records what it was asked to ensure and release.
#[derive(Default)]
struct Recorder {
    fail_release: bool,
    log: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl ServiceManager for Recorder {
    async fn ensure(&self, req: ServiceRequest) -> Result<Vec<ServiceRef>, ServiceError> {
        let names: Vec<&str> = req.desired.iter().map(|s| s.name.as_str()).collect();
        self.log
            .lock()
            .unwrap()
            .push(format!("ensure {} {}", req.run_id, names.join(",")));
        Ok(req
            .desired
            .iter()
            .map(|s| {
                ServiceRef::new(&s.name, format!("tcp://127.0.0.1:1/{}", s.name))
                    .env("SVC_HOST", "127.0.0.1")
                    .secret_env(format!("{}_PASSWORD", s.name.to_uppercase()), SECRET)
            })
            .collect())
    }
    async fn release_by_run(&self, run_id: &str) -> Result<(), ServiceError> {
        self.log.lock().unwrap().push(format!("release {run_id}"));
        match self.fail_release {
            true => Err(ServiceError::Backend("the container refused to stop".into())),
            false => Ok(()),
        }
    }
    async fn release_by_labels(&self, _: &BTreeMap<String, String>) -> Result<(), ServiceError> {
        Ok(())
    }
}

impl Recorder {
    fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// A run service provider whose event source emits one notice and flushes another when cancelled.
struct Ticker;

#[async_trait::async_trait]
impl RunServiceProvider for Ticker {
    async fn attach_run(&self, _: &str) -> Result<RunAttachment, ServiceError> {
        Ok(RunAttachment {
            events: Some(Box::new(|token, _run_id| {
                let notice = |kind: &str| {
                    Payload::Notice(agent_adaptor::driver::Notice::new(kind, "from a run service"))
                };
                let first = futures::stream::iter([notice("svc.hello")]);
                let flushed = futures::stream::once(async move {
                    token.cancelled().await;
                    notice("svc.flushed")
                });
                first.chain(flushed).boxed()
            })),
            ..Default::default()
        })
    }
    async fn detach_run(&self, _: &str) -> Result<(), ServiceError> {
        Ok(())
    }
}

fn config(tweak: impl FnOnce(&mut agent_adaptor::server::AgentSpec)) -> ServerConfig {
    let mut config = ServerConfig::for_tests();
    tweak(&mut config.agents[0]);
    config
}

async fn start(config: ServerConfig, host: HostResources) -> RunningServer {
    Server::start_with(config, host).await.expect("the server starts")
}

/// Runs `body` on the reference agent; the run view once finished.
async fn run(base: &str, body: Value) -> (String, Value) {
    let id = run_id(&start_run(base, "/v1/agents/reference/runs", body).await);
    let done = finished_state(base, &id).await;
    (id, done)
}

#[tokio::test]
async fn declared_and_requested_services_reach_the_run_and_its_view_without_secrets() {
    let manager = Arc::new(Recorder::default());
    let server = start(
        config(|a| {
            a.services = vec![ServiceSpec::new("db").setting("image", "postgres:16")];
            a.service_catalog = vec![ServiceSpec::new("cache"), ServiceSpec::new("queue")];
            a.allow_request.services = true;
        }),
        HostResources::default().service_manager("reference", manager.clone()),
    )
    .await;
    let base = server.url();
    let view = get_json(&base, "/v1/agents/reference").await;
    assert_eq!(view["resources"]["services"], json!(["db"]));
    assert_eq!(view["resources"]["service_catalog"], json!(["cache", "queue"]));
    assert_eq!(view["resources"]["request_services"], true);

    let (id, done) = run(&base, json!({"prompt": "hi"})).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let services = &done["result"]["services"];
    assert_eq!(services[0]["name"], "db", "{done}");
    assert_eq!(services[0]["endpoint"], "tcp://127.0.0.1:1/db");
    assert_eq!(services[0]["state"], "released");
    assert_eq!(services[0]["env_names"], json!(["SVC_HOST", "DB_PASSWORD"]));
    assert_eq!(
        manager.log(),
        [format!("ensure {id} db"), format!("release {id}")]
    );

    // A request adds a catalog service (and naming a declared one again changes nothing).
    let (id, done) = run(&base, json!({"prompt": "hi", "services": ["cache", "cache"]})).await;
    let names: Vec<&str> = done["result"]["services"]
        .as_array()
        .unwrap_or_else(|| panic!("services in {done}"))
        .iter()
        .filter_map(|s| s["name"].as_str())
        .collect();
    assert_eq!(names, ["db", "cache"]);
    assert!(manager.log().contains(&format!("ensure {id} db,cache")));

    // Neither the live nor the stored view, nor the event log, carries a secret value.
    let view = get(&base, &format!("/v1/runs/{id}")).await.text().await.unwrap();
    assert!(!view.contains(SECRET), "{view}");
    let frames = all_frames(get(&base, &format!("/v1/runs/{id}/events")).await).await;
    assert!(frames.iter().all(|f| !f.data.contains(SECRET)));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn requests_name_services_only_with_the_grant_and_only_from_the_catalog() {
    let manager = Arc::new(Recorder::default());
    let host = || HostResources::default().service_manager("reference", manager.clone());
    let server = start(
        config(|a| a.service_catalog = vec![ServiceSpec::new("cache")]),
        host(),
    )
    .await;
    let path = "/v1/agents/reference/runs";
    let (s, code, err) =
        error_code(post_json(&server.url(), path, json!({"prompt": "x", "services": ["cache"]})).await).await;
    assert_eq!((s, code.as_str()), (403, "resource_not_allowed"), "{err}");
    assert_eq!(err["error"]["field"], "services");
    server.shutdown().await.unwrap();

    let server = start(
        config(|a| {
            a.service_catalog = vec![ServiceSpec::new("cache")];
            a.allow_request.services = true;
        }),
        host(),
    )
    .await;
    let body = json!({"prompt": "x", "services": ["cache", "db"]});
    let (s, code, err) = error_code(post_json(&server.url(), path, body).await).await;
    assert_eq!((s, code.as_str()), (422, "unknown_service"), "{err}");
    assert_eq!(err["error"]["field"], "services[1]");
    assert!(manager.log().is_empty(), "nothing ensured for a refused request");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn services_without_a_manager_or_for_an_unknown_agent_refuse_to_start() {
    let declared = config(|a| a.services = vec![ServiceSpec::new("db")]);
    let e = Server::start(declared).await.unwrap_err().to_string();
    assert!(
        e.contains("\"db\"") && e.contains("service_manager_missing"),
        "{e}"
    );
    let e = Server::start(config(|a| a.service_catalog = vec![ServiceSpec::new("cache")]))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("no service manager"), "{e}");
    let granted_empty = config(|a| a.allow_request.services = true);
    let e = Server::start(granted_empty).await.unwrap_err().to_string();
    assert!(e.contains("service_catalog is empty"), "{e}");
    let host = HostResources::default().service_manager("ghost", Arc::new(Recorder::default()));
    let e = Server::start_with(ServerConfig::for_tests(), host)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown agent \"ghost\""), "{e}");
}

#[tokio::test]
async fn a_release_failure_reaches_the_run_result_and_a_provider_source_folds_into_the_sse_stream() {
    let manager = Arc::new(Recorder {
        fail_release: true,
        ..Default::default()
    });
    let server = start(
        config(|a| a.services = vec![ServiceSpec::new("db")]),
        HostResources::default()
            .service_manager("reference", manager.clone())
            .run_service_provider("reference", Arc::new(Ticker)),
    )
    .await;
    let base = server.url();
    let (id, done) = run(&base, json!({"prompt": "hi"})).await;
    assert_eq!(done["state"], "failed", "{done}");
    assert_eq!(
        done["error"]["details"]["code"], "service_cleanup_failed",
        "{done}"
    );
    let db = &done["result"]["services"][0];
    assert_eq!(db["state"], "release_failed", "{done}");
    assert!(
        db["error"]
            .as_str()
            .unwrap_or_default()
            .contains("refused to stop"),
        "{done}"
    );
    assert_eq!(
        manager.log(),
        [format!("ensure {id} db"), format!("release {id}")]
    );

    let frames = all_frames(get(&base, &format!("/v1/runs/{id}/events")).await).await;
    let kinds: Vec<String> = frames
        .iter()
        .filter(|f| f.event.as_deref() == Some("notice"))
        .filter_map(|f| f.json()["kind"].as_str().map(str::to_owned))
        .collect();
    assert!(
        kinds.contains(&"svc.hello".to_owned()) && kinds.contains(&"svc.flushed".to_owned()),
        "{kinds:?}"
    );
    assert_eq!(frames.last().unwrap().event.as_deref(), Some("done"));
    server.shutdown().await.unwrap();
}
