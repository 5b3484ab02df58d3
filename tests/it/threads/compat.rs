//! The compatibility fingerprint covers what the provider session depends on (§5): skill content (not
//! the directory it was read from), the workspace spec, the environment variables and MCP servers that
//! runtime services publish; and a resume-capable driver without a session fingerprint is refused
//! before any lease is taken.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use agent_adaptor::driver::{Descriptor, Driver, InvalidConfig, Request, Response, RunIo, SessionCodec};
use agent_adaptor::runtime::{
    Agent, CallOptions, ErrorKind, ServiceError, ServiceManager, ServiceRequest, ThreadErrorKind,
};
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use agent_adaptor::vocab::{McpServer, ServiceRef, ServiceSpec, SkillRef};
use agent_adaptor::workspace::WorkspaceSpec;

use super::flaky::Flaky;
use super::shapes::shapes;
use super::{history, notices, run};

fn resources() -> ReferenceDriver {
    ReferenceDriver::new(ReferenceConfig {
        report_resources: true,
        ..Default::default()
    })
}

/// Runs `prompt` on `t` and returns (continuity notices, history length).
async fn turn(t: &agent_adaptor::runtime::Thread, opts: CallOptions) -> (usize, usize) {
    let (events, outcome) = run(t.send("next", opts)).await;
    (notices(&events, "thread.continuity").len(), history(&outcome))
}

fn skill_dir(root: &std::path::Path, name: &str, body: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: review\ndescription: Reviews code\n---\n{body}\n"),
    )
    .unwrap();
    dir
}

shapes!(skill_content_not_its_path_is_fingerprinted, |shape| async move {
    let tmp = tempfile::tempdir().unwrap();
    let a = shape.agent(resources(), Arc::new(MemoryStore::new()));
    let t = a.thread("skills");
    let dir = skill_dir(tmp.path(), "one", "Be thorough.");
    let with = |d: &std::path::Path| shape.opts().skills([SkillRef::dir("review", d)]);
    assert_eq!(turn(&t, with(&dir)).await, (0, 1), "{shape:?}: first run");
    assert_eq!(
        turn(&t, with(&dir)).await,
        (0, 2),
        "{shape:?}: unchanged skill resumes"
    );
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: review\ndescription: Reviews code\n---\nBe brief.\n",
    )
    .unwrap();
    assert_eq!(
        turn(&t, with(&dir)).await,
        (1, 1),
        "{shape:?}: edited skill content at the same path starts fresh"
    );
    let moved = skill_dir(tmp.path(), "two", "Be brief.");
    assert_eq!(
        turn(&t, with(&moved)).await,
        (0, 2),
        "{shape:?}: the same content read from another directory resumes"
    );
});

shapes!(the_workspace_spec_is_fingerprinted, |shape| async move {
    let a = shape.agent(resources(), Arc::new(MemoryStore::new()));
    let t = a.thread("spec");
    assert_eq!(turn(&t, shape.opts()).await, (0, 1), "{shape:?}");
    assert_eq!(
        turn(&t, shape.opts().workspace_spec(WorkspaceSpec::DriverManaged)).await,
        (1, 1),
        "{shape:?}: another provisioning strategy starts fresh"
    );
    assert_eq!(
        turn(&t, shape.opts().workspace_spec(WorkspaceSpec::DriverManaged)).await,
        (0, 2),
        "{shape:?}"
    );
});

/// Publishes whatever the test sets, per run.
#[derive(Default)]
struct Publishing {
    refs: Mutex<Vec<ServiceRef>>,
}

#[async_trait::async_trait]
impl ServiceManager for Publishing {
    async fn ensure(&self, _req: ServiceRequest) -> Result<Vec<ServiceRef>, ServiceError> {
        Ok(self.refs.lock().unwrap().clone())
    }
    async fn release_by_run(&self, _run_id: &str) -> Result<(), ServiceError> {
        Ok(())
    }
    async fn release_by_labels(&self, _labels: &BTreeMap<String, String>) -> Result<(), ServiceError> {
        Ok(())
    }
}

shapes!(
    service_published_env_and_mcp_are_fingerprinted,
    |shape| async move {
        let manager = Arc::new(Publishing::default());
        let a = shape
            .builder(Agent::builder(resources()).thread_store(Arc::new(MemoryStore::new())))
            .service_manager(manager.clone())
            .services([ServiceSpec::new("db")])
            .build();
        let t = a.thread("services");
        let publish = |refs: Vec<ServiceRef>| *manager.refs.lock().unwrap() = refs;
        publish(vec![
            ServiceRef::new("db", "127.0.0.1:5001").env("DB_URL", "postgres://127.0.0.1:5001/x"),
        ]);
        assert_eq!(turn(&t, shape.opts()).await, (0, 1), "{shape:?}");
        publish(vec![
            ServiceRef::new("db", "127.0.0.1:5002").env("DB_URL", "postgres://127.0.0.1:5002/x"),
        ]);
        assert_eq!(
            turn(&t, shape.opts()).await,
            (0, 2),
            "{shape:?}: a new ephemeral port behind the same variable resumes"
        );
        publish(vec![
            ServiceRef::new("db", "127.0.0.1:5002")
                .env("DB_URL", "postgres://127.0.0.1:5002/x")
                .env("CACHE_URL", "redis://127.0.0.1:6379"),
        ]);
        assert_eq!(
            turn(&t, shape.opts()).await,
            (1, 1),
            "{shape:?}: another published variable starts fresh"
        );
        let mut with_mcp = ServiceRef::new("db", "127.0.0.1:5002")
            .env("DB_URL", "postgres://127.0.0.1:5002/x")
            .env("CACHE_URL", "redis://127.0.0.1:6379");
        with_mcp.mcp = Some(McpServer::http("db-tools", "http://127.0.0.1:5003/mcp"));
        publish(vec![with_mcp]);
        assert_eq!(
            turn(&t, shape.opts()).await,
            (1, 1),
            "{shape:?}: a published MCP server starts fresh"
        );
    }
);

/// Declares resume with a codec but has no session fingerprint.
struct NoFingerprint(ReferenceDriver);

#[async_trait::async_trait]
impl Driver for NoFingerprint {
    fn descriptor(&self) -> Descriptor {
        self.0.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.0.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        Some(String::new())
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.0.run(req, io).await
    }
}

shapes!(
    a_resume_capable_driver_without_a_session_fingerprint_is_refused_before_any_lease,
    |shape| async move {
        let flaky = Flaky::new(Arc::new(MemoryStore::new()));
        let a = shape.agent(
            NoFingerprint(ReferenceDriver::new(ReferenceConfig::default())),
            flaky.clone(),
        );
        let (events, outcome) = run(a.thread("nofp").send("x", shape.opts())).await;
        let err = outcome.expect_err("refused");
        assert_eq!(
            err.kind(),
            ErrorKind::Thread(ThreadErrorKind::Incompatible),
            "{shape:?}: {err}"
        );
        assert_eq!(
            flaky.acquires.load(Ordering::SeqCst),
            0,
            "{shape:?}: no lease was taken"
        );
        assert_eq!(events.len(), 1, "{shape:?}: refused before admission (only Done)");
    }
);

/// A reference driver of the `claude` family (profiles apply) reporting `model` (its session
/// fingerprint follows the model).
fn claude_family(model: &str) -> ReferenceDriver {
    let mut d =
        agent_adaptor::testkit::reference::reference_descriptor(agent_adaptor::driver::ContinueMode::InRun);
    d.driver_type = "claude".into();
    ReferenceDriver::new(ReferenceConfig {
        model: model.into(),
        descriptor: Some(d),
        ..Default::default()
    })
}

/// An Agent of `shape` on `store` with a dedicated profile under `dir` holding `instructions`.
fn profiled(
    shape: super::shapes::Shape,
    driver: ReferenceDriver,
    store: Arc<MemoryStore>,
    dir: &std::path::Path,
    instructions: &str,
) -> Agent {
    use agent_adaptor::profile::{Resources, Selection};
    shape
        .builder(Agent::builder(driver).thread_store(store))
        .profile(Selection::dedicated(dir))
        .profile_resources(Resources {
            instructions: Some(instructions.into()),
            ..Default::default()
        })
        .build()
}

fn reasons(events: &[agent_adaptor::runtime::Event]) -> Vec<String> {
    notices(events, "thread.continuity")
        .iter()
        .map(|n| {
            n.data
                .get("reason")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

shapes!(
    the_session_and_profile_fingerprints_guard_resume_separately,
    |shape| async move {
        let tmp = tempfile::tempdir().unwrap();
        let store = Arc::new(MemoryStore::new());
        let fp = |store: &Arc<MemoryStore>| {
            let store = store.clone();
            async move {
                use agent_adaptor::store::ThreadStore;
                store
                    .resolve(&agent_adaptor::store::Query::key(
                        shape.store_tenant(),
                        "",
                        "guards",
                    ))
                    .await
                    .unwrap()
                    .expect("a record")
                    .compatibility_fingerprint
            }
        };
        let a = profiled(
            shape,
            claude_family("m1"),
            store.clone(),
            &tmp.path().join("p1"),
            "one",
        );
        let (_, first) = run(a.thread("guards").send("one", shape.opts())).await;
        assert_eq!(history(&first), 1);
        let (events, again) = run(a.thread("guards").send("two", shape.opts())).await;
        assert_eq!(
            (reasons(&events).len(), history(&again)),
            (0, 2),
            "{shape:?}: resumes"
        );
        let compat = fp(&store).await;

        // Only the profile changes: the profile guard refuses the resume, the session/compatibility
        // fingerprint is unchanged.
        let b = profiled(
            shape,
            claude_family("m1"),
            store.clone(),
            &tmp.path().join("p2"),
            "two",
        );
        let (events, fresh) = run(b.thread("guards").send("three", shape.opts())).await;
        assert_eq!(history(&fresh), 1, "{shape:?}: a fresh session");
        let why = reasons(&events);
        assert!(
            why.len() == 1 && why[0].starts_with("profile resources changed"),
            "{shape:?}: the profile guard: {why:?}"
        );
        assert_eq!(
            fp(&store).await,
            compat,
            "{shape:?}: the profile is not in the compatibility fingerprint"
        );

        // Only the driver's session configuration changes (same profile): the session fingerprint
        // refuses the resume, not the profile guard.
        let c = profiled(
            shape,
            claude_family("m2"),
            store.clone(),
            &tmp.path().join("p2"),
            "two",
        );
        let (events, fresh) = run(c.thread("guards").send("four", shape.opts())).await;
        assert_eq!(history(&fresh), 1, "{shape:?}: a fresh session");
        assert_eq!(
            reasons(&events),
            ["configuration changed"],
            "{shape:?}: the session guard"
        );
        assert_ne!(
            fp(&store).await,
            compat,
            "{shape:?}: the session fingerprint is in it"
        );
    }
);
