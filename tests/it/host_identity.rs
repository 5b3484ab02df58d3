//! Identity reaches host components (spec §4 `IdentityFromContext`): the skill provider, the workspace
//! manager, the service manager, run service providers and their event sources each read the run's
//! effective identity through `identity_from_context()` while the runtime calls them — for a direct
//! send, a Thread send and a Standby send, under the three identity shapes (no identity, an Agent-level
//! default, an explicit per-call tenant over that default).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::driver::{
    Descriptor, Driver, Identity, InvalidConfig, Request, Response, RunIo, SessionCodec,
};
use agent_adaptor::runtime::{
    Agent, CallOptions, Payload, RunAttachment, RunServiceProvider, ServiceError, ServiceManager,
    ServiceRequest, identity_from_context,
};
use agent_adaptor::skills::SkillProvider;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use agent_adaptor::vocab::{ServiceRef, ServiceSpec, SkillRef};
use agent_adaptor::workspace::{
    Passthrough, ReleaseMode, WorkspaceError, WorkspaceLease, WorkspaceManager, WorkspaceRequest,
};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// What each host hook saw, as `(hook, identity_from_context())`.
type Seen = Arc<Mutex<Vec<(&'static str, Option<Identity>)>>>;

fn record(seen: &Seen, hook: &'static str) {
    seen.lock().unwrap().push((hook, identity_from_context()));
}

/// The reference driver with skills declared.
#[derive(Clone)]
struct WithSkills(ReferenceDriver);

#[async_trait::async_trait]
impl Driver for WithSkills {
    fn descriptor(&self) -> Descriptor {
        let mut d = self.0.descriptor();
        d.skills.supported = true;
        d
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.0.validate_config()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.0.run(req, io).await
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.0.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.0.session_fingerprint()
    }
}

struct Skills(Seen);
impl SkillProvider for Skills {
    fn resolve(&self, key: &str) -> Option<SkillRef> {
        record(&self.0, "skill_provider.resolve");
        Some(SkillRef::inline(key, "# a library skill"))
    }
}

struct Workspaces(Seen);
#[async_trait::async_trait]
impl WorkspaceManager for Workspaces {
    async fn resolve(&self, req: WorkspaceRequest) -> Result<WorkspaceLease, WorkspaceError> {
        record(&self.0, "workspace.resolve");
        Passthrough.resolve(req).await
    }
    async fn release(&self, lease: WorkspaceLease, mode: ReleaseMode) -> Result<(), WorkspaceError> {
        record(&self.0, "workspace.release");
        Passthrough.release(lease, mode).await
    }
}

struct Services(Seen);
#[async_trait::async_trait]
impl ServiceManager for Services {
    async fn ensure(&self, _req: ServiceRequest) -> Result<Vec<ServiceRef>, ServiceError> {
        record(&self.0, "service.ensure");
        Ok(Vec::new())
    }
    async fn release_by_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        record(&self.0, "service.release_by_run");
        Ok(())
    }
    async fn release_by_labels(&self, _labels: &BTreeMap<String, String>) -> Result<(), ServiceError> {
        Ok(())
    }
}

struct RunServices(Seen);
#[async_trait::async_trait]
impl RunServiceProvider for RunServices {
    async fn attach_run(&self, _run_id: &str) -> Result<RunAttachment, ServiceError> {
        record(&self.0, "run_service.attach_run");
        let seen = self.0.clone();
        Ok(RunAttachment {
            events: Some(Box::new(move |token: CancellationToken, _run_id| {
                // Polled by the runtime on its own task: the identity must be in scope there too.
                futures::stream::once(async move {
                    record(&seen, "run_service.events");
                    token.cancelled().await;
                })
                .filter_map(|()| async { None::<Payload> })
                .boxed()
            })),
            ..Default::default()
        })
    }
    async fn detach_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        record(&self.0, "run_service.detach_run");
        Ok(())
    }
}

const HOOKS: [&str; 8] = [
    "skill_provider.resolve",
    "workspace.resolve",
    "workspace.release",
    "service.ensure",
    "service.release_by_run",
    "run_service.attach_run",
    "run_service.events",
    "run_service.detach_run",
];

/// The three identity shapes: the Agent's default, the call's identity and what hooks must see.
fn shapes() -> Vec<(&'static str, Option<Identity>, Option<Identity>, Identity)> {
    let agent = Identity {
        id: "agent-user".into(),
        tenant: "agent-tenant".into(),
        profile: String::new(),
        name: "Agent default".into(),
    };
    let call = Identity {
        id: "caller".into(),
        tenant: "t-explicit".into(),
        ..Default::default()
    };
    vec![
        ("no identity", None, None, Identity::default()),
        ("agent default", Some(agent.clone()), None, agent.clone()),
        ("explicit tenant", Some(agent), Some(call.clone()), call),
    ]
}

fn agent(seen: &Seen, default: Option<Identity>) -> Agent {
    let mut b = Agent::builder(WithSkills(ReferenceDriver::new(ReferenceConfig::default())))
        .skill_provider(Arc::new(Skills(seen.clone())))
        .workspace_manager(Arc::new(Workspaces(seen.clone())))
        .service_manager(Arc::new(Services(seen.clone())))
        .run_service_provider(Arc::new(RunServices(seen.clone())))
        .services([ServiceSpec::new("db")]);
    if let Some(i) = default {
        b = b.identity(i);
    }
    b.build()
}

fn call(identity: &Option<Identity>) -> CallOptions {
    let opts = CallOptions::new().skills([SkillRef::key("lib")]);
    match identity {
        Some(i) => opts.identity(i.clone()),
        None => opts,
    }
}

fn assert_every_hook_saw(seen: &Seen, shape: &str, path: &str, want: &Identity) {
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    for hook in HOOKS {
        let got: Vec<_> = seen
            .iter()
            .filter(|(h, _)| *h == hook)
            .map(|(_, i)| i.clone())
            .collect();
        assert!(
            !got.is_empty(),
            "{shape}, {path}: {hook} was not called (saw {seen:?})"
        );
        for i in got {
            assert_eq!(
                i.as_ref(),
                Some(want),
                "{shape}, {path}: {hook} did not see the run's identity"
            );
        }
    }
}

#[tokio::test]
async fn every_host_component_sees_the_runs_identity_for_every_identity_shape() {
    assert_eq!(identity_from_context(), None, "no identity outside a host hook");
    for (shape, default, explicit, want) in shapes() {
        let seen: Seen = Default::default();
        let agent = agent(&seen, default);

        let r = agent.send("direct", call(&explicit)).result().await;
        assert!(r.is_ok(), "{shape}: direct send failed: {r:?}");
        assert_every_hook_saw(&seen, shape, "Agent::send", &want);

        let thread = agent.thread(&format!("k-{}", shape.replace(' ', "-")));
        for turn in ["first", "second"] {
            let r = thread.send(turn, call(&explicit)).result().await;
            assert!(r.is_ok(), "{shape}: thread send {turn} failed: {r:?}");
            assert_every_hook_saw(&seen, shape, "Thread::send", &want);
        }

        let lifetime = CancellationToken::new();
        // A Standby's defaults carry only its identity; the skill is a per-send option.
        let defaults = match &explicit {
            Some(i) => CallOptions::new().identity(i.clone()),
            None => CallOptions::new(),
        };
        let standby = agent
            .thread(&format!("s-{}", shape.replace(' ', "-")))
            .standby(lifetime.clone(), defaults);
        let mut events = standby
            .events()
            .expect("the first events() call takes the stream");
        standby
            .send("standby", CallOptions::new().skills([SkillRef::key("lib")]))
            .await
            .unwrap_or_else(|e| panic!("{shape}: standby send refused: {e:?}"));
        let done = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(ev) = events.recv().await {
                if let Payload::Done(d) = &ev.payload {
                    return d.outcome.as_ref().map(|_| ()).map_err(ToString::to_string);
                }
            }
            Ok(())
        })
        .await
        .unwrap_or_else(|_| panic!("{shape}: the standby execution did not finish"));
        assert!(done.is_ok(), "{shape}: standby execution failed: {done:?}");
        assert_every_hook_saw(&seen, shape, "Standby::send", &want);
        lifetime.cancel();
    }
    assert_eq!(
        identity_from_context(),
        None,
        "the scope does not leak into the caller"
    );
}
