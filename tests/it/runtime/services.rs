//! Runtime services against the reference driver: a service manager's ensured services and run service
//! providers' attachments reach the driver request (environment, secret environment, MCP, preamble),
//! provider event sources fold into the run's one stream (their lifecycle events filtered), results are
//! collected before detach, and the cleanup is bounded, fair and joined to the outcome before `Done` —
//! also when the run is cancelled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_adaptor::driver::{
    ContinueMode, Descriptor, Driver, InvalidConfig, McpCaps, Notice, Request, Response, RunIo, SessionCodec,
    SessionPlan,
};
use agent_adaptor::recorder::{ExposurePolicy, expose};
use agent_adaptor::runtime::{
    Agent, CallOptions, Done, Error, ErrorKind, Event, Payload, RunAttachment, RunFinished,
    RunServiceProvider, RunStarted, ServiceError, ServiceManager, ServiceRequest, SubagentResult,
};
use agent_adaptor::testkit::reference::{
    ReferenceConfig, ReferenceDriver, Script, Step, reference_descriptor,
};
use agent_adaptor::vocab::{McpServer, McpTransport, ServiceOrigin, ServiceRef, ServiceSpec};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::{assert_envelope, collect, names};

const SECRET: &str = "s3cr3t-service-value-4711";

/// The reference driver (with MCP declared when asked), recording every request.
#[derive(Clone)]
struct Recording {
    inner: ReferenceDriver,
    mcp: bool,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Recording {
    fn new(inner: ReferenceDriver) -> Self {
        Recording {
            inner,
            mcp: false,
            seen: Default::default(),
        }
    }
    fn with_mcp(mut self) -> Self {
        self.mcp = true;
        self
    }
    fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Driver for Recording {
    fn descriptor(&self) -> Descriptor {
        let mut d = self.inner.descriptor();
        if self.mcp {
            d.mcp = McpCaps {
                stdio: true,
                http: true,
                sse: false,
            };
        }
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.inner.validate_config()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.seen.lock().unwrap().push(req.clone());
        self.inner.run(req, io).await
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.inner.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.inner.session_fingerprint()
    }
}

/// A service manager that hands out fixed references and logs its calls.
#[derive(Default)]
struct Manager {
    refs: Vec<ServiceRef>,
    fail_ensure: bool,
    fail_release: bool,
    log: Mutex<Vec<String>>,
    requests: Mutex<Vec<ServiceRequest>>,
}

#[async_trait::async_trait]
impl ServiceManager for Manager {
    async fn ensure(&self, req: ServiceRequest) -> Result<Vec<ServiceRef>, ServiceError> {
        self.log.lock().unwrap().push(format!("ensure {}", req.run_id));
        self.requests.lock().unwrap().push(req);
        if self.fail_ensure {
            return Err(ServiceError::Unavailable {
                name: "db".into(),
                reason: "no capacity".into(),
            });
        }
        Ok(self.refs.clone())
    }
    async fn release_by_run(&self, run_id: &str) -> Result<(), ServiceError> {
        self.log.lock().unwrap().push(format!("release {run_id}"));
        match self.fail_release {
            true => Err(ServiceError::Backend("the container refused to stop".into())),
            false => Ok(()),
        }
    }
    async fn release_by_labels(&self, _labels: &BTreeMap<String, String>) -> Result<(), ServiceError> {
        Ok(())
    }
}

/// How a provider's event source behaves.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    None,
    /// Emits its early events (with lifecycle events to filter), waits for cancellation, then flushes
    /// one `svc.flushed` notice and closes.
    Polite,
    /// Never closes, whatever the token says.
    Stubborn,
}

/// A run service provider with a configurable attachment and detach behaviour.
struct Provider {
    preamble: Mutex<String>,
    services: Vec<ServiceRef>,
    source: Source,
    fail_attach: bool,
    fail_detach: bool,
    hang_detach: bool,
    results: Vec<SubagentResult>,
    attached: AtomicUsize,
    detached: AtomicUsize,
    /// Set when the core dropped the source's stream (nothing left running).
    source_dropped: Arc<AtomicBool>,
}

impl Default for Provider {
    fn default() -> Self {
        Provider {
            preamble: Mutex::new(String::new()),
            services: Vec::new(),
            source: Source::None,
            fail_attach: false,
            fail_detach: false,
            hang_detach: false,
            results: Vec::new(),
            attached: AtomicUsize::new(0),
            detached: AtomicUsize::new(0),
            source_dropped: Arc::new(AtomicBool::new(false)),
        }
    }
}

fn notice(kind: &str) -> Payload {
    Payload::Notice(Notice::new(kind, "from a run service"))
}

fn source_stream(
    kind: Source,
    token: CancellationToken,
    run_id: String,
    dropped: Arc<AtomicBool>,
) -> futures::stream::BoxStream<'static, Payload> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        let early = [
            Payload::RunStarted(RunStarted {
                run_id: run_id.clone(),
                thread_id: "provider".into(),
            }),
            notice("svc.early"),
            Payload::RunFinished(RunFinished {
                run_id: run_id.clone(),
                thread_id: "provider".into(),
                usage: None,
                failed: false,
                reason: String::new(),
                message: String::new(),
            }),
            Payload::Done(Done {
                outcome: Err(Error::AgentClosed),
            }),
        ];
        for p in early {
            let _ = tx.send(p).await;
        }
        match kind {
            Source::Stubborn => tx.closed().await,
            _ => {
                token.cancelled().await;
                let _ = tx.send(notice("svc.flushed")).await;
            }
        }
        dropped.store(true, Ordering::SeqCst);
    });
    tokio_stream::wrappers::ReceiverStream::new(rx).boxed()
}

#[async_trait::async_trait]
impl RunServiceProvider for Provider {
    async fn attach_run(&self, _run_id: &str) -> Result<RunAttachment, ServiceError> {
        self.attached.fetch_add(1, Ordering::SeqCst);
        if self.fail_attach {
            return Err(ServiceError::Backend("the sidecar did not start".into()));
        }
        let kind = self.source;
        let dropped = self.source_dropped.clone();
        let results = self.results.clone();
        Ok(RunAttachment {
            preamble: self.preamble.lock().unwrap().clone(),
            results: Some(Box::new(move || results)),
            services: self.services.clone(),
            events: (kind != Source::None).then(|| {
                Box::new(move |token, run_id| source_stream(kind, token, run_id, dropped))
                    as agent_adaptor::runtime::RunEventSource
            }),
        })
    }
    async fn detach_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        if self.hang_detach {
            std::future::pending::<()>().await;
        }
        self.detached.fetch_add(1, Ordering::SeqCst);
        match self.fail_detach {
            true => Err(ServiceError::Backend("the sidecar is stuck".into())),
            false => Ok(()),
        }
    }
    fn name(&self) -> String {
        "test-provider".into()
    }
}

/// An HTTP MCP server whose bearer token travels in `TOOLS_TOKEN`.
fn tools_mcp() -> McpServer {
    let mut m = McpServer::http("svc_tools", "http://127.0.0.1:9/mcp");
    if let McpTransport::Http { bearer_token_env, .. } = &mut m.transport {
        *bearer_token_env = Some("TOOLS_TOKEN".into());
    }
    m
}

fn notice_kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::Notice(n) => Some(n.kind.clone()),
            _ => None,
        })
        .collect()
}

fn position(events: &[Event], pred: impl Fn(&Payload) -> bool) -> usize {
    events
        .iter()
        .position(|e| pred(&e.payload))
        .expect("event present")
}

fn code(err: &Error) -> String {
    err.as_run()
        .and_then(|r| r.details.get("code"))
        .and_then(|c| c.as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn folded_events_sit_between_run_started_and_done_and_provider_lifecycle_is_filtered() {
    let provider = Arc::new(Provider {
        source: Source::Polite,
        results: vec![SubagentResult {
            member: "reviewer".into(),
            state: "done".into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let script = Script::new(vec![
        Step::Sleep(Duration::from_millis(100)),
        Step::text("answer"),
    ]);
    let agent = Agent::builder(ReferenceDriver::scripted(script))
        .run_service_provider(provider.clone())
        .build();
    let stream = agent.send("go", CallOptions::new());
    let events = collect(&stream).await;
    assert_envelope(&events);
    let count = |f: fn(&Payload) -> bool| events.iter().filter(|e| f(&e.payload)).count();
    assert_eq!(
        count(|p| matches!(p, Payload::RunStarted(_))),
        1,
        "{:?}",
        names(&events)
    );
    assert_eq!(
        count(|p| matches!(p, Payload::RunFinished(_))),
        1,
        "{:?}",
        names(&events)
    );
    let started = position(&events, |p| matches!(p, Payload::RunStarted(_)));
    let finished = position(&events, |p| matches!(p, Payload::RunFinished(_)));
    let RunStarted { thread_id, .. } = match &events[started].payload {
        Payload::RunStarted(r) => r.clone(),
        _ => unreachable!(),
    };
    assert_ne!(thread_id, "provider", "the core's RunStarted, not the provider's");
    let kinds = notice_kinds(&events);
    assert_eq!(
        kinds.iter().filter(|k| k.starts_with("svc.")).collect::<Vec<_>>(),
        ["svc.early", "svc.flushed"],
        "the early event and the flush on cancellation, once each"
    );
    for kind in ["svc.early", "svc.flushed"] {
        let at = position(&events, |p| matches!(p, Payload::Notice(n) if n.kind == kind));
        assert!(
            started < at && at < finished,
            "{kind} at {at}: {:?}",
            names(&events)
        );
    }
    let r = stream.result().await.unwrap();
    assert_eq!(r.text, "answer");
    assert_eq!(r.subagents().len(), 1, "attachment results collected");
    assert_eq!(r.subagents()[0].member, "reviewer");
    assert_eq!(provider.attached.load(Ordering::SeqCst), 1);
    assert_eq!(provider.detached.load(Ordering::SeqCst), 1);
    assert!(provider.source_dropped.load(Ordering::SeqCst));
}

#[tokio::test]
async fn service_env_and_mcp_reach_the_driver_request_but_secrets_never_reach_events_or_records() {
    let rec = Recording::new(ReferenceDriver::new(ReferenceConfig {
        descriptor: Some(reference_descriptor(ContinueMode::InRun)),
        ..Default::default()
    }))
    .with_mcp();
    let manager = Arc::new(Manager {
        refs: vec![
            ServiceRef::new("db", "postgres://127.0.0.1:5432/app")
                .env("DB_HOST", "127.0.0.1")
                .secret_env("DB_PASSWORD", SECRET)
                .label("team", "a"),
        ],
        ..Default::default()
    });
    let provider = Arc::new(Provider {
        services: vec![
            ServiceRef::new("tools", "http://127.0.0.1:9/mcp")
                .secret_env("TOOLS_TOKEN", SECRET)
                .mcp(tools_mcp()),
        ],
        ..Default::default()
    });
    let agent = Agent::builder(rec.clone())
        .service_manager(manager.clone())
        .services([ServiceSpec::new("db").setting("image", "postgres:16")])
        .mcp([McpServer::stdio("declared", "node", vec![])])
        .build();
    let stream = agent.send(
        "hello",
        CallOptions::new()
            .metadata("ticket", "T-1")
            .run_service_provider(provider.clone()),
    );
    let events = collect(&stream).await;
    let r = stream.result().await.unwrap();

    let reqs = rec.requests();
    assert_eq!(reqs.len(), 1);
    let env = &reqs[0].env;
    assert_eq!(env.get("DB_HOST").map(String::as_str), Some("127.0.0.1"));
    assert_eq!(env.get("DB_PASSWORD").map(String::as_str), Some(SECRET));
    assert_eq!(env.get("TOOLS_TOKEN").map(String::as_str), Some(SECRET));
    let mcp: Vec<&str> = reqs[0].mcp.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        mcp,
        ["declared", "svc_tools"],
        "service MCP appended to the declared set"
    );

    let ensure = manager.requests.lock().unwrap()[0].clone();
    assert_eq!(ensure.run_id, r.run_id);
    assert_eq!(
        ensure.desired,
        [ServiceSpec::new("db").setting("image", "postgres:16")]
    );
    assert_eq!(ensure.driver_type, "reference");
    assert_eq!(ensure.metadata.get("ticket").map(String::as_str), Some("T-1"));
    assert_eq!(
        *manager.log.lock().unwrap(),
        [format!("ensure {}", r.run_id), format!("release {}", r.run_id)]
    );

    let services = r.services();
    assert_eq!(services.len(), 2);
    assert_eq!(
        (services[0].name.as_str(), services[0].origin),
        ("db", ServiceOrigin::Manager)
    );
    assert_eq!(
        (services[1].name.as_str(), services[1].origin),
        ("tools", ServiceOrigin::Run)
    );
    assert!(
        services
            .iter()
            .all(|s| s.state == "released" && s.error.is_none())
    );
    assert_eq!(services[0].env_names, ["DB_HOST", "DB_PASSWORD"]);
    assert_eq!(services[1].mcp_server.as_deref(), Some("svc_tools"));

    // Nothing a host can see or store carries the secret: the events under the most permissive
    // exposure, their plain serialization, the result.
    for e in &events {
        let exposed = expose(e, &ExposurePolicy::all()).to_string();
        assert!(!exposed.contains(SECRET), "{exposed}");
        assert!(!format!("{:?}", e.payload).contains(SECRET), "{:?}", e.payload);
    }
    let done = events.iter().find(|e| e.is_done()).unwrap();
    assert!(
        expose(done, &ExposurePolicy::all())
            .to_string()
            .contains("DB_PASSWORD"),
        "the report names the variable (and proves services are exposed at all)"
    );
    assert!(!serde_json::to_string(&*r).unwrap().contains(SECRET));
}

#[tokio::test]
async fn the_preamble_leads_the_prompt_and_a_thread_continues_when_it_changes() {
    let rec = Recording::new(ReferenceDriver::new(ReferenceConfig::default()));
    let provider = Arc::new(Provider {
        preamble: Mutex::new("Service context v1.".into()),
        ..Default::default()
    });
    let agent = Agent::builder(rec.clone())
        .run_service_provider(provider.clone())
        .build();
    let thread = agent.thread("svc-thread");
    let r1 = thread.send("first", CallOptions::new()).result().await.unwrap();
    assert_eq!(r1.text, "Reference reply: Service context v1.\n\nfirst");
    *provider.preamble.lock().unwrap() = "Service context v2.".into();
    let r2 = thread.send("second", CallOptions::new()).result().await.unwrap();
    assert_eq!(r2.text, "Reference reply: Service context v2.\n\nsecond");
    let reqs = rec.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].session, SessionPlan::Fresh);
    assert!(
        matches!(reqs[1].session, SessionPlan::Resume(_)),
        "the thread resumed after the preamble changed: {:?}",
        reqs[1].session
    );
}

#[tokio::test]
async fn cleanup_errors_join_the_outcome_and_keep_the_result() {
    let manager = Arc::new(Manager {
        refs: vec![ServiceRef::new("db", "postgres://127.0.0.1:5432/app")],
        fail_release: true,
        ..Default::default()
    });
    let provider = Arc::new(Provider {
        services: vec![ServiceRef::new("cache", "redis://127.0.0.1:6379")],
        fail_detach: true,
        ..Default::default()
    });
    let agent = Agent::builder(ReferenceDriver::scripted(Script::new(vec![Step::text("answer")])))
        .service_manager(manager.clone())
        .services([ServiceSpec::new("db")])
        .run_service_provider(provider.clone())
        .build();
    let stream = agent.send("go", CallOptions::new());
    let events = collect(&stream).await;
    assert_envelope(&events);
    let err = stream.result().await.unwrap_err();
    let run = err.as_run().expect("a run failure carrying the result");
    assert_eq!(run.reason.to_string(), "infrastructure_error");
    assert_eq!(code(&err), "service_cleanup_failed");
    assert!(
        run.message.contains("the container refused to stop"),
        "{}",
        run.message
    );
    assert!(
        run.message.contains(
            "detaching run service test-provider failed: service backend failed: the sidecar is stuck"
        ),
        "{}",
        run.message
    );
    assert_eq!(run.result.text, "answer", "the partial result is kept");
    let services = run.result.services();
    assert_eq!(services.len(), 2);
    assert!(
        services.iter().all(|s| s.state == "release_failed"),
        "{services:?}"
    );
    assert!(services[0].error.as_deref().unwrap().contains("refused to stop"));
    assert!(services[1].error.as_deref().unwrap().contains("sidecar is stuck"));
    let finished = events.iter().find_map(|e| match &e.payload {
        Payload::RunFinished(f) => Some(f.clone()),
        _ => None,
    });
    assert!(finished.unwrap().failed, "RunFinished reports the joined failure");
}

#[tokio::test]
async fn a_hanging_detach_and_a_stubborn_source_are_bounded_and_the_others_still_clean_up() {
    let hanging = Arc::new(Provider {
        hang_detach: true,
        source: Source::Stubborn,
        ..Default::default()
    });
    let polite = Arc::new(Provider::default());
    let manager = Arc::new(Manager::default());
    let agent = Agent::builder(ReferenceDriver::scripted(Script::new(vec![Step::text("answer")])))
        .service_manager(manager.clone())
        .services([ServiceSpec::new("db")])
        .run_service_provider(hanging.clone())
        .run_service_provider(polite.clone())
        .service_cleanup_timeout(Duration::from_millis(300))
        .build();
    let started = Instant::now();
    let stream = agent.send("go", CallOptions::new());
    let events = collect(&stream).await;
    let elapsed = started.elapsed();
    assert_envelope(&events);
    assert!(elapsed < Duration::from_secs(5), "bounded: {elapsed:?}");
    let err = stream.result().await.unwrap_err();
    assert_eq!(code(&err), "service_cleanup_failed");
    let msg = &err.as_run().unwrap().message;
    assert!(msg.contains("event source did not close within 300ms"), "{msg}");
    assert!(msg.contains("did not finish within 300ms"), "{msg}");
    assert_eq!(
        polite.detached.load(Ordering::SeqCst),
        1,
        "the other provider still detached"
    );
    assert_eq!(hanging.detached.load(Ordering::SeqCst), 0);
    assert_eq!(manager.log.lock().unwrap().len(), 2, "ensure and release");
    // The stubborn source was dropped by the core: its producer saw the receiver go.
    tokio::time::timeout(Duration::from_secs(2), async {
        while !hanging.source_dropped.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the stubborn source's stream was dropped");
    assert_eq!(agent.active_executions(), 0);
}

#[tokio::test]
async fn cancel_mid_run_flushes_sources_and_still_cleans_up() {
    let provider = Arc::new(Provider {
        source: Source::Polite,
        ..Default::default()
    });
    let manager = Arc::new(Manager::default());
    let agent = Agent::builder(ReferenceDriver::scripted(Script::new(vec![
        Step::Sleep(Duration::from_secs(30)),
        Step::text("never"),
    ])))
    .service_manager(manager.clone())
    .services([ServiceSpec::new("db")])
    .run_service_provider(provider.clone())
    .build();
    let stream = agent.send("go", CallOptions::new());
    let mut events = stream.events();
    let mut seen = Vec::new();
    while let Some(e) = events.next().await {
        let early = matches!(&e.payload, Payload::Notice(n) if n.kind == "svc.early");
        seen.push(e);
        if early {
            stream.cancel();
        }
    }
    assert_envelope(&seen);
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.as_run().unwrap().reason.to_string(), "cancelled");
    assert!(
        notice_kinds(&seen).contains(&"svc.flushed".to_owned()),
        "the source flushed on cancellation: {:?}",
        names(&seen)
    );
    assert_eq!(provider.detached.load(Ordering::SeqCst), 1);
    assert_eq!(manager.log.lock().unwrap().len(), 2, "released after cancel");
    assert!(provider.source_dropped.load(Ordering::SeqCst));
    assert_eq!(agent.active_executions(), 0);
}

#[tokio::test]
async fn an_ensure_failure_fails_before_driver_entry_and_still_releases() {
    let rec = Recording::new(ReferenceDriver::scripted(Script::new(vec![Step::text("x")])));
    let manager = Arc::new(Manager {
        fail_ensure: true,
        ..Default::default()
    });
    let provider = Arc::new(Provider::default());
    let agent = Agent::builder(rec.clone())
        .service_manager(manager.clone())
        .services([ServiceSpec::new("db")])
        .run_service_provider(provider.clone())
        .build();
    let stream = agent.send("go", CallOptions::new());
    assert_envelope(&collect(&stream).await);
    let err = stream.result().await.unwrap_err();
    assert_eq!(code(&err), "service_unavailable");
    assert!(err.to_string().contains("no capacity"), "{err}");
    assert!(rec.requests().is_empty(), "the driver was not entered");
    assert_eq!(
        manager.log.lock().unwrap().len(),
        2,
        "release_by_run follows a failed ensure"
    );
    assert_eq!(
        provider.attached.load(Ordering::SeqCst),
        0,
        "nothing attached after the failure"
    );
}

#[tokio::test]
async fn declared_services_without_a_manager_are_refused_before_admission() {
    let rec = Recording::new(ReferenceDriver::scripted(Script::new(vec![Step::text("x")])));
    let agent = Agent::new(rec.clone());
    let stream = agent.send("go", CallOptions::new().services([ServiceSpec::new("db")]));
    let events = collect(&stream).await;
    assert_eq!(names(&events), ["done"], "no RunStarted, no endpoint invented");
    let err = stream.result().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Service);
    assert_eq!(err.code(), "service_manager_missing");
    assert!(rec.requests().is_empty());
    // An empty per-call set clears an Agent default: no manager needed.
    let agent = Agent::builder(rec.clone())
        .services([ServiceSpec::new("db")])
        .build();
    agent
        .send("go", CallOptions::new().services([]))
        .result()
        .await
        .unwrap();
}

#[tokio::test]
async fn the_same_provider_attaches_once_and_service_mcp_is_checked_against_the_driver() {
    let provider = Arc::new(Provider {
        services: vec![
            ServiceRef::new("tools", "").mcp(McpServer::http("svc_tools", "http://127.0.0.1:9/mcp")),
        ],
        ..Default::default()
    });
    // The plain reference driver declares no MCP support.
    let rec = Recording::new(ReferenceDriver::scripted(Script::new(vec![Step::text("x")])));
    let agent = Agent::builder(rec.clone())
        .run_service_provider(provider.clone())
        .build();
    let stream = agent.send("go", CallOptions::new().run_service_provider(provider.clone()));
    let err = stream.result().await.unwrap_err();
    assert_eq!(provider.attached.load(Ordering::SeqCst), 1, "deduplicated");
    assert_eq!(
        provider.detached.load(Ordering::SeqCst),
        1,
        "detached although refused"
    );
    assert_eq!(code(&err), "mcp_unsupported", "{err}");
    assert!(rec.requests().is_empty(), "refused before driver entry");
}

#[tokio::test]
async fn an_attach_failure_fails_before_driver_entry_and_every_attach_is_detached() {
    let rec = Recording::new(ReferenceDriver::scripted(Script::new(vec![Step::text("x")])));
    let good = Arc::new(Provider::default());
    let bad = Arc::new(Provider {
        fail_attach: true,
        ..Default::default()
    });
    let never = Arc::new(Provider::default());
    let agent = Agent::builder(rec.clone())
        .run_service_provider(good.clone())
        .run_service_provider(bad.clone())
        .run_service_provider(never.clone())
        .build();
    let err = agent.send("go", CallOptions::new()).result().await.unwrap_err();
    assert_eq!(code(&err), "service_attach_failed");
    assert!(err.to_string().contains("the sidecar did not start"), "{err}");
    assert!(rec.requests().is_empty(), "the driver was not entered");
    for (p, attached, detached) in [(&good, 1, 1), (&bad, 1, 1), (&never, 0, 0)] {
        assert_eq!(p.attached.load(Ordering::SeqCst), attached);
        assert_eq!(
            p.detached.load(Ordering::SeqCst),
            detached,
            "detach is owed to every attach call"
        );
    }
}

#[tokio::test]
async fn two_services_setting_one_variable_differently_are_refused() {
    let rec = Recording::new(ReferenceDriver::scripted(Script::new(vec![Step::text("x")])));
    let a = Arc::new(Provider {
        services: vec![ServiceRef::new("a", "").env("SHARED", "1")],
        ..Default::default()
    });
    let b = Arc::new(Provider {
        services: vec![ServiceRef::new("b", "").secret_env("SHARED", "2")],
        ..Default::default()
    });
    let agent = Agent::builder(rec.clone())
        .run_service_provider(a.clone())
        .run_service_provider(b.clone())
        .build();
    let err = agent.send("go", CallOptions::new()).result().await.unwrap_err();
    assert_eq!(code(&err), "service_env_conflict");
    let msg = err.to_string();
    assert!(
        msg.contains("SHARED") && !msg.contains('2'),
        "names the variable, not the values: {msg}"
    );
    assert!(rec.requests().is_empty());
    // The same value from both is no conflict.
    let c = Arc::new(Provider {
        services: vec![ServiceRef::new("c", "").env("SHARED", "1")],
        ..Default::default()
    });
    let agent = Agent::builder(rec.clone())
        .run_service_provider(a.clone())
        .run_service_provider(c)
        .build();
    agent.send("go", CallOptions::new()).result().await.unwrap();
    assert_eq!(rec.requests()[0].env.get("SHARED").map(String::as_str), Some("1"));
}
