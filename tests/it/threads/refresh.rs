//! Resumed invocations refresh the complete current request (§15), under the three identity shapes:
//! the invocation the core continues through a checkpoint inside one execution gets the same
//! instructions, MCP servers, skills, policy, output schema, identity and metadata as the first; and a
//! thread's next execution, resumed, gets that execution's own current options, not the earlier ones.

use std::sync::{Arc, Mutex};

use agent_adaptor::driver::{
    ContinueMode, Descriptor, Driver, InvalidConfig, MessagePolicy, Policy, Request, Response, RunIo,
    SandboxLevel, SessionCodec, SessionPlan, Timing,
};
use agent_adaptor::runtime::{MessageOptions, SchemaOptions};
use agent_adaptor::store::memory::MemoryStore;
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use agent_adaptor::vocab::{McpServer, SkillRef};

use super::run;
use super::shapes::shapes;

/// The reference driver (core continuation through resume, resources declared) recording requests.
#[derive(Clone)]
struct Spy {
    inner: ReferenceDriver,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Spy {
    fn new() -> Spy {
        Spy {
            inner: ReferenceDriver::new(ReferenceConfig {
                continue_mode: ContinueMode::Resume,
                report_resources: true,
                ..Default::default()
            }),
            seen: Default::default(),
        }
    }
}

#[async_trait::async_trait]
impl Driver for Spy {
    fn descriptor(&self) -> Descriptor {
        self.inner.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        Ok(())
    }
    fn session_codec(&self) -> Option<Arc<dyn SessionCodec>> {
        self.inner.session_codec()
    }
    fn session_fingerprint(&self) -> Option<String> {
        self.inner.session_fingerprint()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        self.seen.lock().unwrap().push(req.clone());
        self.inner.run(req, io).await
    }
}

fn policy(sandbox: SandboxLevel, max_turns: i64) -> Policy {
    Policy {
        sandbox,
        messages: MessagePolicy {
            max_turns,
            ..Default::default()
        },
        ..Default::default()
    }
}

/// What must be refreshed on every invocation (the parts a resume must not drop).
fn current(r: &Request) -> impl PartialEq + std::fmt::Debug {
    (
        r.instructions.clone(),
        r.mcp.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
        r.skills.iter().map(|s| s.key.clone()).collect::<Vec<_>>(),
        r.policy.clone(),
        r.output_schema.clone(),
        r.identity.clone(),
        r.metadata.clone(),
        r.thread_key.clone(),
        r.model.clone(),
        r.cwd.clone(),
    )
}

shapes!(
    resumed_invocations_refresh_the_complete_current_request,
    |shape| async move {
        let spy = Spy::new();
        let agent = shape.agent(spy.clone(), Arc::new(MemoryStore::new()));
        let t = agent.thread("refresh");
        let base = || {
            shape
                .opts()
                .instructions("be careful")
                .mcp([McpServer::stdio("tools", "tool-server", vec![])])
                .skills([SkillRef::inline("style", "# style")])
        };
        let schema = br#"{"type":"object","properties":{"ok":{"type":"boolean"}}}"#;
        let first = base()
            .policy(policy(SandboxLevel::ReadOnly, 5))
            .metadata("ticket", "T-1")
            .schema_json(schema, SchemaOptions::new().name("first"));
        let stream = t.send("one", first);
        stream
            .send("and more", MessageOptions::new().when(Timing::AfterTurn))
            .await
            .unwrap();
        let (_, outcome) = run(stream).await;
        outcome.expect("the first execution");
        {
            let seen = spy.seen.lock().unwrap();
            assert_eq!(seen.len(), 2, "{shape:?}: the core continued once");
            assert!(matches!(seen[0].session, SessionPlan::Fresh));
            assert!(
                matches!(seen[1].session, SessionPlan::Resume(_)),
                "{shape:?}: through the checkpoint"
            );
            assert_eq!(
                current(&seen[1]),
                current(&seen[0]),
                "{shape:?}: the continuation carries the complete request"
            );
            assert!(seen[1].output_schema.is_some() && !seen[1].mcp.is_empty());
        }

        // The next execution resumes with its own options (those outside the compatibility
        // fingerprint may change).
        let second = base()
            .policy(policy(SandboxLevel::WorkspaceWrite, 7))
            .metadata("ticket", "T-2")
            .schema_json(schema, SchemaOptions::new().name("second"));
        run(t.send("two", second)).await.1.expect("the second execution");
        let seen = spy.seen.lock().unwrap();
        let last = seen.last().unwrap();
        assert!(
            matches!(last.session, SessionPlan::Resume(_)),
            "{shape:?}: resumed"
        );
        assert_eq!(
            last.policy,
            policy(SandboxLevel::WorkspaceWrite, 7),
            "{shape:?}: the current policy"
        );
        assert_eq!(last.metadata.get("ticket").map(String::as_str), Some("T-2"));
        assert_eq!(
            last.output_schema.as_ref().map(|s| s.name.as_str()),
            Some("second")
        );
        assert_eq!(last.instructions.as_deref(), Some("be careful"));
        assert_eq!(last.mcp.len(), 1);
        assert_eq!(last.skills.len(), 1);
    }
);
