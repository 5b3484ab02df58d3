//! The ecosystem option surface (spec §3.4): options implemented outside this crate.
//!
//! A third-party crate writes an option as a type implementing one of three traits, and applies it
//! with [`CallOptions::with`] (a send) or [`AgentBuilder::with`] (construction):
//!
//! | trait | accepted by | its setters |
//! |---|---|---|
//! | [`CallOption`] | `CallOptions::with` | [`RunSettings`]: the shared setters and the output schema |
//! | [`AgentOption`] | `AgentBuilder::with` | [`AgentSettings`]: the shared setters and the construction-only ones |
//! | [`SharedOption`] | both | [`SharedSettings`]: the setters both scopes have |
//!
//! The settings are controlled setter surfaces: the execution state behind them stays private, and
//! every setter has the merge rule of the built-in option it corresponds to (the built-in shared
//! options are implemented by these very setters): a non-empty model, timeout, instructions,
//! workspace, workspace spec, identity and policy replace; metadata merges by key; skills append (a
//! duplicate key with other content fails the send); MCP servers and services replace the whole set
//! (an empty set clears it); run service providers append (the same provider once); profile resource
//! families replace (an empty one clears it); schema derivation errors are sticky.
//!
//! Scopes stay typed: [`RunSettings`] and [`AgentSettings`] both dereference to
//! [`SharedSettings`] (Go's `AgentSettings` embeds `RunSettings`), the output-schema setters exist
//! only on [`RunSettings`] (an output schema is call-only, §3.3) and the construction-only setters only
//! on [`AgentSettings`].
//!
//! An option defined outside the crate, used at both scopes:
//!
//! ```
//! use agent_adaptor::runtime::settings::{SharedOption, SharedSettings};
//! use agent_adaptor::runtime::{Agent, CallOptions};
//! use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
//!
//! /// A house style: one model and a review tag.
//! struct HouseStyle(&'static str);
//!
//! impl SharedOption for HouseStyle {
//!     fn apply(&self, s: &mut SharedSettings<'_>) {
//!         s.set_model(self.0);
//!         s.set_metadata("style", "house");
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let agent = Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
//!     .with(HouseStyle("model-a"))
//!     .build();
//! let result = agent.send("hi", ()).result().await.unwrap();
//! assert_eq!(result.model, "model-a");
//! // Nearer scope wins, as for the built-in option.
//! let result = agent.send("hi", CallOptions::new().with(HouseStyle("model-b"))).result().await.unwrap();
//! assert_eq!(result.model, "model-b");
//! # });
//! ```
//!
//! A call-only option cannot be passed at construction:
//!
//! ```compile_fail,E0277
//! use agent_adaptor::runtime::settings::{CallOption, RunSettings};
//! use agent_adaptor::runtime::Agent;
//! use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
//!
//! struct Schema;
//! impl CallOption for Schema {
//!     fn apply_run(&self, s: &mut RunSettings<'_>) {
//!         s.set_output_schema_json(br#"{"type":"object"}"#, Default::default());
//!     }
//! }
//! let _ = Agent::builder(ReferenceDriver::new(ReferenceConfig::default())).with(Schema);
//! ```

use std::ops::{Deref, DerefMut};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::agent::AgentBuilder;
use super::approval::ApprovalHandler;
use super::error::ConfigError;
use super::options::{CallOptions, Shared};
use super::services::{RunServiceProvider, ServiceManager};
use super::structured::{OutputSpec, SchemaOptions};
use crate::driver::{Identity, OutputSchema, Policy};
use crate::profile::{AgentSpec, ConfigPatch, HookSpec, Resources};
use crate::vocab::{McpServer, ServiceSpec, SkillRef};
use crate::workspace::{WorkspaceManager, WorkspaceSpec};

/// An option accepted by both scopes: [`CallOptions::with`] and [`AgentBuilder::with`].
pub trait SharedOption {
    /// Applies the option through the shared setters.
    fn apply(&self, settings: &mut SharedSettings<'_>);
}

/// An option for one send (Go's `CallOption`, `ApplyRun`), applied by [`CallOptions::with`].
pub trait CallOption {
    /// Applies the option through the run setters.
    fn apply_run(&self, settings: &mut RunSettings<'_>);
}

/// A construction option (Go's `Option`, `ApplyNew`), applied by [`AgentBuilder::with`].
pub trait AgentOption {
    /// Applies the option through the Agent setters.
    fn apply_new(&self, settings: &mut AgentSettings<'_>);
}

impl<T: SharedOption + ?Sized> CallOption for T {
    fn apply_run(&self, settings: &mut RunSettings<'_>) {
        self.apply(settings);
    }
}

impl<T: SharedOption + ?Sized> AgentOption for T {
    fn apply_new(&self, settings: &mut AgentSettings<'_>) {
        self.apply(settings);
    }
}

/// Where a scope keeps its profile resources: the call's live in its `Shared`, the Agent's beside it.
enum ProfileSlot<'a> {
    InShared,
    Agent(&'a mut Resources),
}

/// The setters both scopes have. Obtained through [`RunSettings`] or [`AgentSettings`].
pub struct SharedSettings<'a> {
    shared: &'a mut Shared,
    profile: ProfileSlot<'a>,
}

impl<'a> SharedSettings<'a> {
    /// The settings of a call's (or the builder's) shared options; profile resources in `shared`.
    pub(crate) fn of(shared: &'a mut Shared) -> Self {
        SharedSettings {
            shared,
            profile: ProfileSlot::InShared,
        }
    }

    fn profile(&mut self) -> &mut Resources {
        match &mut self.profile {
            ProfileSlot::InShared => &mut self.shared.profile_resources,
            ProfileSlot::Agent(r) => r,
        }
    }

    fn merge_profile(&mut self, resources: Resources) {
        let slot = self.profile();
        *slot = std::mem::take(slot).merge(resources);
    }

    /// A non-empty model replaces the default (an empty one changes nothing).
    pub fn set_model(&mut self, model: impl Into<String>) -> &mut Self {
        let m = model.into();
        if !m.is_empty() {
            self.shared.model = Some(m);
        }
        self
    }

    /// The execution deadline (the whole execution, including continuations); replaces.
    pub fn set_timeout(&mut self, timeout: Duration) -> &mut Self {
        self.shared.timeout = Some(timeout);
        self
    }

    /// Forces a fresh provider process, not registered for later reuse.
    pub fn set_spawn(&mut self) -> &mut Self {
        self.shared.spawn = true;
        self
    }

    /// Replaces the extra instruction text.
    pub fn set_instructions(&mut self, text: impl Into<String>) -> &mut Self {
        self.shared.instructions = Some(text.into());
        self
    }

    /// Replaces the base working directory.
    pub fn set_workspace(&mut self, dir: impl Into<PathBuf>) -> &mut Self {
        self.shared.workspace = Some(dir.into());
        self
    }

    /// Replaces how the workspace is provisioned.
    pub fn set_workspace_spec(&mut self, spec: WorkspaceSpec) -> &mut Self {
        self.shared.workspace_spec = Some(spec);
        self
    }

    /// Merges one metadata entry by key (the same key is replaced).
    pub fn set_metadata(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.shared.metadata.insert(key.into(), value.into());
        self
    }

    /// Replaces the caller identity as a whole.
    pub fn set_identity(&mut self, identity: Identity) -> &mut Self {
        self.shared.identity = Some(identity);
        self
    }

    /// Replaces the entire policy (approvals and messages included).
    pub fn set_policy(&mut self, policy: Policy) -> &mut Self {
        self.shared.policy = Some(policy);
        self
    }

    /// Replaces the approval handler; `None` restores event-form routing (requests arrive as events).
    pub fn set_approval_handler(&mut self, handler: Option<ApprovalHandler>) -> &mut Self {
        self.shared.approval_handler = Some(handler);
        self
    }

    /// Appends skills; a duplicate key with different content fails the send.
    pub fn add_skills(&mut self, skills: impl IntoIterator<Item = SkillRef>) -> &mut Self {
        self.shared.skills.extend(skills);
        self
    }

    /// Replaces the whole MCP server set; an empty set clears it.
    pub fn set_mcp_servers(&mut self, servers: impl IntoIterator<Item = McpServer>) -> &mut Self {
        self.shared.mcp = Some(servers.into_iter().collect());
        self
    }

    /// Replaces the declarative services; an empty set clears them.
    pub fn set_services(&mut self, services: impl IntoIterator<Item = ServiceSpec>) -> &mut Self {
        self.shared.services = Some(services.into_iter().collect());
        self
    }

    /// Appends a run service provider (the same provider twice counts once).
    pub fn add_run_service_provider(&mut self, provider: Arc<dyn RunServiceProvider>) -> &mut Self {
        self.shared.run_services.add(provider);
        self
    }

    /// Replaces the profile's subagents (an empty list clears them).
    pub fn set_agents(&mut self, agents: Vec<AgentSpec>) -> &mut Self {
        self.merge_profile(Resources {
            agents: Some(agents),
            ..Resources::default()
        });
        self
    }

    /// Replaces the profile's hooks (an empty list clears them).
    pub fn set_hooks(&mut self, hooks: Vec<HookSpec>) -> &mut Self {
        self.merge_profile(Resources {
            hooks: Some(hooks),
            ..Resources::default()
        });
        self
    }

    /// Replaces the profile's settings patches (an empty list clears them).
    pub fn set_config_patches(&mut self, patches: Vec<ConfigPatch>) -> &mut Self {
        self.merge_profile(Resources {
            config: Some(patches),
            ..Resources::default()
        });
        self
    }

    /// Replaces the profile's instructions (its memory file block; Go's instructions bundle).
    pub fn set_instructions_bundle(&mut self, instructions: impl Into<String>) -> &mut Self {
        self.merge_profile(Resources {
            instructions: Some(instructions.into()),
            ..Resources::default()
        });
        self
    }

    /// Merges profile resources by their family rules ([`Resources::merge`]): skills append, a
    /// declared family replaces.
    pub fn merge_profile_resources(&mut self, resources: Resources) -> &mut Self {
        self.merge_profile(resources);
        self
    }
}

/// The setters of one send (Go's `*RunSettings`): the shared ones (through `Deref`) and the output
/// schema, which is call-only.
pub struct RunSettings<'a> {
    shared: SharedSettings<'a>,
    schema: &'a mut Option<Result<OutputSpec, ConfigError>>,
}

impl RunSettings<'_> {
    /// Sets a schema unless an earlier derivation error is already recorded (errors are sticky).
    pub(crate) fn set_schema(
        slot: &mut Option<Result<OutputSpec, ConfigError>>,
        spec: Result<OutputSpec, ConfigError>,
    ) {
        *slot = Some(match slot.take() {
            Some(Err(e)) => Err(e),
            _ => spec,
        });
    }

    /// Structured output: the JSON Schema derived from `T`.
    pub fn set_output_schema_of<T: schemars::JsonSchema>(&mut self, opts: SchemaOptions) -> &mut Self {
        RunSettings::set_schema(self.schema, OutputSpec::derive::<T>(opts));
        self
    }

    /// Structured output from an explicit JSON Schema document.
    pub fn set_output_schema_json(&mut self, schema: &[u8], opts: SchemaOptions) -> &mut Self {
        RunSettings::set_schema(self.schema, OutputSpec::from_json(schema, opts));
        self
    }

    /// Structured output from a driver-level schema (its name unless `opts` names one).
    pub fn set_output_schema(&mut self, schema: OutputSchema, mut opts: SchemaOptions) -> &mut Self {
        if opts.name.is_none() && !schema.name.is_empty() {
            opts.name = Some(schema.name.clone());
        }
        let spec = match serde_json::to_vec(&schema.schema) {
            Ok(bytes) => OutputSpec::from_json(&bytes, opts),
            Err(e) => Err(ConfigError::InvalidOutputSchema(e.to_string())),
        };
        RunSettings::set_schema(self.schema, spec);
        self
    }

    /// Records a schema derivation error (the option could not build its schema): the send fails with
    /// `invalid_output_schema`, and a later schema does not clear it.
    pub fn set_output_schema_error(&mut self, error: impl std::fmt::Display) -> &mut Self {
        RunSettings::set_schema(
            self.schema,
            Err(ConfigError::InvalidOutputSchema(error.to_string())),
        );
        self
    }
}

impl<'a> Deref for RunSettings<'a> {
    type Target = SharedSettings<'a>;
    fn deref(&self) -> &Self::Target {
        &self.shared
    }
}

impl DerefMut for RunSettings<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.shared
    }
}

/// The setters of construction (Go's `*AgentSettings`): the shared ones (through `Deref`) and the
/// construction-only ones.
pub struct AgentSettings<'a> {
    shared: SharedSettings<'a>,
    agent: super::agent::BuilderOnly<'a>,
}

impl AgentSettings<'_> {
    /// The thread store (default: a private in-memory store).
    pub fn set_thread_store(&mut self, store: Arc<dyn crate::store::ThreadStore>) -> &mut Self {
        *self.agent.store = Some(store);
        self
    }

    /// Ordinary event capacity (default 1024, at least 1).
    pub fn set_event_buffer(&mut self, capacity: usize) -> &mut Self {
        *self.agent.event_buffer = capacity.max(1);
        self
    }

    /// Ordinary producers wait for capacity instead of dropping.
    pub fn set_blocking_events(&mut self) -> &mut Self {
        *self.agent.blocking = true;
        self
    }

    /// The provider profile strategy.
    pub fn set_profile(&mut self, selection: crate::profile::Selection) -> &mut Self {
        *self.agent.profile = selection;
        self
    }

    /// Bare-key skill resolution.
    pub fn set_skill_provider(&mut self, provider: Arc<dyn crate::skills::SkillProvider>) -> &mut Self {
        *self.agent.skill_provider = Some(provider);
        self
    }

    /// Skill source materialization.
    pub fn set_skill_materializer(
        &mut self,
        materializer: Arc<dyn crate::skills::SkillMaterializer>,
    ) -> &mut Self {
        *self.agent.skill_materializer = Some(materializer);
        self
    }

    /// The workspace lease backend.
    pub fn set_workspace_manager(&mut self, manager: Arc<dyn WorkspaceManager>) -> &mut Self {
        *self.agent.workspace_manager = Some(manager);
        self
    }

    /// The runtime service backend.
    pub fn set_service_manager(&mut self, manager: Arc<dyn ServiceManager>) -> &mut Self {
        *self.agent.service_manager = Some(manager);
        self
    }
}

impl<'a> Deref for AgentSettings<'a> {
    type Target = SharedSettings<'a>;
    fn deref(&self) -> &Self::Target {
        &self.shared
    }
}

impl DerefMut for AgentSettings<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.shared
    }
}

impl CallOptions {
    /// Applies an option implemented outside the crate ([`CallOption`], or a [`SharedOption`]).
    pub fn with(mut self, option: impl CallOption) -> Self {
        let mut settings = RunSettings {
            shared: SharedSettings::of(&mut self.shared),
            schema: &mut self.schema,
        };
        option.apply_run(&mut settings);
        self
    }
}

impl AgentBuilder {
    /// Applies an option implemented outside the crate ([`AgentOption`], or a [`SharedOption`]).
    pub fn with(mut self, option: impl AgentOption) -> Self {
        let (shared, profile, agent) = self.settings_parts();
        let mut settings = AgentSettings {
            shared: SharedSettings {
                shared,
                profile: ProfileSlot::Agent(profile),
            },
            agent,
        };
        option.apply_new(&mut settings);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::options::resolve;

    /// An ecosystem option from a closure over the run setters.
    struct Run<F: Fn(&mut RunSettings<'_>)>(F);
    impl<F: Fn(&mut RunSettings<'_>)> CallOption for Run<F> {
        fn apply_run(&self, s: &mut RunSettings<'_>) {
            (self.0)(s)
        }
    }

    /// An ecosystem option from a closure over the shared setters (both scopes).
    struct Both<F: Fn(&mut SharedSettings<'_>)>(F);
    impl<F: Fn(&mut SharedSettings<'_>)> SharedOption for Both<F> {
        fn apply(&self, s: &mut SharedSettings<'_>) {
            (self.0)(s)
        }
    }

    /// An ecosystem option from a closure over the Agent setters.
    struct New<F: Fn(&mut AgentSettings<'_>)>(F);
    impl<F: Fn(&mut AgentSettings<'_>)> AgentOption for New<F> {
        fn apply_new(&self, s: &mut AgentSettings<'_>) {
            (self.0)(s)
        }
    }

    struct Provider;
    #[async_trait::async_trait]
    impl RunServiceProvider for Provider {
        async fn attach_run(
            &self,
            _: &str,
        ) -> Result<super::super::RunAttachment, super::super::ServiceError> {
            Ok(Default::default())
        }
        async fn detach_run(&self, _: &str) -> Result<(), super::super::ServiceError> {
            Ok(())
        }
    }

    fn state(o: &CallOptions) -> String {
        let schema = match &o.schema {
            None => "none".to_owned(),
            Some(Ok(s)) => format!("{}:{}", s.name, s.schema),
            Some(Err(e)) => format!("err:{e}"),
        };
        format!("{:?} {schema}", o.shared)
    }

    /// Every shared setter does exactly what the built-in option of the same family does, in the call
    /// scope, applied over a non-empty call so replacement, merging and appending all show.
    #[test]
    fn every_call_setter_matches_its_builtin_option() {
        let provider: Arc<dyn RunServiceProvider> = Arc::new(Provider);
        let handler = ApprovalHandler::new(|_req| async { Ok(()) });
        let base = || {
            CallOptions::new()
                .model("m0")
                .metadata("a", "1")
                .skills([SkillRef::inline("s0", "zero")])
                .mcp([McpServer::http("old", "http://127.0.0.1:1/mcp")])
                .services([ServiceSpec::new("old")])
                .run_service_provider(provider.clone())
        };
        type Builtin = Box<dyn Fn(CallOptions) -> CallOptions>;
        type Eco = Box<dyn Fn(&mut RunSettings<'_>)>;
        let (p1, p2, h1, h2) = (
            provider.clone(),
            provider.clone(),
            handler.clone(),
            handler.clone(),
        );
        let cases: Vec<(&str, Builtin, Eco)> = vec![
            (
                "model",
                Box::new(|o| o.model("m1")),
                Box::new(|s| {
                    s.set_model("m1");
                }),
            ),
            (
                "empty model",
                Box::new(|o| o.model("")),
                Box::new(|s| {
                    s.set_model("");
                }),
            ),
            (
                "timeout",
                Box::new(|o| o.timeout(Duration::from_secs(3))),
                Box::new(|s| {
                    s.set_timeout(Duration::from_secs(3));
                }),
            ),
            (
                "spawn",
                Box::new(|o| o.spawn()),
                Box::new(|s| {
                    s.set_spawn();
                }),
            ),
            (
                "instructions",
                Box::new(|o| o.instructions("be brief")),
                Box::new(|s| {
                    s.set_instructions("be brief");
                }),
            ),
            (
                "workspace",
                Box::new(|o| o.workspace("/w")),
                Box::new(|s| {
                    s.set_workspace("/w");
                }),
            ),
            (
                "workspace spec",
                Box::new(|o| o.workspace_spec(WorkspaceSpec::DriverManaged)),
                Box::new(|s| {
                    s.set_workspace_spec(WorkspaceSpec::DriverManaged);
                }),
            ),
            (
                "metadata",
                Box::new(|o| o.metadata("a", "2").metadata("b", "3")),
                Box::new(|s| {
                    s.set_metadata("a", "2").set_metadata("b", "3");
                }),
            ),
            (
                "identity",
                Box::new(|o| {
                    o.identity(Identity {
                        tenant: "t".into(),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_identity(Identity {
                        tenant: "t".into(),
                        ..Default::default()
                    });
                }),
            ),
            (
                "policy",
                Box::new(|o| o.policy(Policy::read_only())),
                Box::new(|s| {
                    s.set_policy(Policy::read_only());
                }),
            ),
            (
                "approval handler",
                Box::new(move |o| o.on_approval(h1.clone())),
                Box::new(move |s| {
                    s.set_approval_handler(Some(h2.clone()));
                }),
            ),
            (
                "approvals as events",
                Box::new(|o| o.approvals_as_events()),
                Box::new(|s| {
                    s.set_approval_handler(None);
                }),
            ),
            (
                "skills",
                Box::new(|o| o.skills([SkillRef::inline("s1", "one")])),
                Box::new(|s| {
                    s.add_skills([SkillRef::inline("s1", "one")]);
                }),
            ),
            (
                "mcp",
                Box::new(|o| o.mcp([McpServer::http("new", "http://127.0.0.1:2/mcp")])),
                Box::new(|s| {
                    s.set_mcp_servers([McpServer::http("new", "http://127.0.0.1:2/mcp")]);
                }),
            ),
            (
                "mcp cleared",
                Box::new(|o| o.mcp([])),
                Box::new(|s| {
                    s.set_mcp_servers([]);
                }),
            ),
            (
                "services",
                Box::new(|o| o.services([ServiceSpec::new("new")])),
                Box::new(|s| {
                    s.set_services([ServiceSpec::new("new")]);
                }),
            ),
            (
                "services cleared",
                Box::new(|o| o.services([])),
                Box::new(|s| {
                    s.set_services([]);
                }),
            ),
            (
                "same run service provider",
                Box::new(move |o| o.run_service_provider(p1.clone())),
                Box::new(move |s| {
                    s.add_run_service_provider(p2.clone());
                }),
            ),
            (
                "another run service provider",
                Box::new(|o| o.run_service_provider(Arc::new(Provider))),
                Box::new(|s| {
                    s.add_run_service_provider(Arc::new(Provider));
                }),
            ),
            (
                "profile agents",
                Box::new(|o| {
                    o.profile_resources(Resources {
                        agents: Some(vec![]),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_agents(vec![]);
                }),
            ),
            (
                "profile hooks",
                Box::new(|o| {
                    o.profile_resources(Resources {
                        hooks: Some(vec![HookSpec::new("Stop", "true")]),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_hooks(vec![HookSpec::new("Stop", "true")]);
                }),
            ),
            (
                "profile config",
                Box::new(|o| {
                    o.profile_resources(Resources {
                        config: Some(vec![ConfigPatch {
                            patch: serde_json::json!({"a": 1}),
                        }]),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_config_patches(vec![ConfigPatch {
                        patch: serde_json::json!({"a": 1}),
                    }]);
                }),
            ),
            (
                "profile instructions",
                Box::new(|o| {
                    o.profile_resources(Resources {
                        instructions: Some("mem".into()),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_instructions_bundle("mem");
                }),
            ),
            (
                "schema json",
                Box::new(|o| o.schema_json(br#"{"type":"object"}"#, SchemaOptions::new().name("n"))),
                Box::new(|s| {
                    s.set_output_schema_json(br#"{"type":"object"}"#, SchemaOptions::new().name("n"));
                }),
            ),
            (
                "schema of",
                Box::new(|o| o.schema::<Vec<u32>>(SchemaOptions::new())),
                Box::new(|s| {
                    s.set_output_schema_of::<Vec<u32>>(SchemaOptions::new());
                }),
            ),
            (
                "schema error is sticky",
                Box::new(|o| {
                    o.schema_json(b"not json", SchemaOptions::new())
                        .schema_json(br#"{"type":"object"}"#, SchemaOptions::new())
                }),
                Box::new(|s| {
                    s.set_output_schema_json(b"not json", SchemaOptions::new())
                        .set_output_schema_json(br#"{"type":"object"}"#, SchemaOptions::new());
                }),
            ),
        ];
        for (name, builtin, eco) in cases {
            let want = builtin(base());
            let got = base().with(Run(eco));
            assert_eq!(
                state(&got),
                state(&want),
                "{name}: the setter differs from the built-in option"
            );
        }
    }

    /// Through `resolve`, an ecosystem option merges over the Agent's defaults exactly like the
    /// built-in one: nearer scope wins, metadata by key, skills append (a conflicting key fails).
    #[test]
    fn ecosystem_call_options_merge_over_defaults_by_the_same_rules() {
        let defaults = CallOptions::new()
            .model("agent-model")
            .metadata("k", "agent")
            .metadata("only", "agent")
            .skills([SkillRef::inline("x", "one")])
            .shared;
        let eco = CallOptions::new().with(Both(|s: &mut SharedSettings<'_>| {
            s.set_model("call-model")
                .set_metadata("k", "call")
                .add_skills([SkillRef::inline("y", "two")]);
        }));
        let r = resolve(&defaults, &eco.shared).unwrap();
        assert_eq!(r.model.as_deref(), Some("call-model"));
        assert_eq!(r.metadata.get("k").map(String::as_str), Some("call"));
        assert_eq!(r.metadata.get("only").map(String::as_str), Some("agent"));
        assert_eq!(
            r.skills.iter().map(|s| s.key.as_str()).collect::<Vec<_>>(),
            ["x", "y"]
        );
        let conflict = CallOptions::new().with(Both(|s: &mut SharedSettings<'_>| {
            s.add_skills([SkillRef::inline("x", "other")]);
        }));
        assert_eq!(
            resolve(&defaults, &conflict.shared).unwrap_err(),
            ConfigError::SkillKeyConflict("x".into())
        );
        let err = CallOptions::new().with(Run(|s: &mut RunSettings<'_>| {
            s.set_output_schema_error("no schema for this type")
                .set_output_schema_json(br#"{"type":"object"}"#, SchemaOptions::new());
        }));
        assert!(
            matches!(err.schema, Some(Err(ConfigError::InvalidOutputSchema(m))) if m == "no schema for this type")
        );
        let driver_schema = CallOptions::new().with(Run(|s: &mut RunSettings<'_>| {
            s.set_output_schema(
                OutputSchema {
                    schema: serde_json::json!({"type": "object"}),
                    name: "answer".into(),
                },
                SchemaOptions::new(),
            );
        }));
        assert!(matches!(&driver_schema.schema, Some(Ok(s)) if s.name == "answer"));
    }

    /// A driver that is never run (the builder needs one; the runtime may not import the testkit's).
    #[derive(Debug)]
    struct NoDriver;

    #[async_trait::async_trait]
    impl crate::driver::Driver for NoDriver {
        fn descriptor(&self) -> crate::driver::Descriptor {
            crate::driver::Descriptor::default()
        }
        fn validate_config(&self) -> Result<(), crate::driver::InvalidConfig> {
            Ok(())
        }
        async fn run(&self, _: crate::driver::Request, _: crate::driver::RunIo) -> crate::driver::Response {
            crate::driver::Response::default()
        }
    }

    fn builder() -> AgentBuilder {
        super::super::Agent::builder(NoDriver)
    }

    fn builder_state(b: &mut AgentBuilder) -> String {
        let (shared, profile, only) = b.settings_parts();
        format!(
            "{shared:?} {profile:?} store={} buffer={} blocking={} profile={:?} skills={} materializer={} workspace={} services={}",
            only.store.is_some(),
            only.event_buffer,
            only.blocking,
            only.profile,
            only.skill_provider.is_some(),
            only.skill_materializer.is_some(),
            only.workspace_manager.is_some(),
            only.service_manager.is_some(),
        )
    }

    /// At construction, the shared setters (profile resources included, which the Agent keeps apart)
    /// and the construction-only setters do what the builder's own options do.
    #[test]
    fn every_agent_setter_matches_its_builder_option() {
        let base = || {
            builder()
                .model("m0")
                .metadata("a", "1")
                .profile_resources(Resources {
                    instructions: Some("old".into()),
                    ..Default::default()
                })
        };
        type Builtin = Box<dyn Fn(AgentBuilder) -> AgentBuilder>;
        type Eco = Box<dyn Fn(&mut AgentSettings<'_>)>;
        let cases: Vec<(&str, Builtin, Eco)> = vec![
            (
                "model",
                Box::new(|b| b.model("m1")),
                Box::new(|s| {
                    s.set_model("m1");
                }),
            ),
            (
                "metadata",
                Box::new(|b| b.metadata("a", "2")),
                Box::new(|s| {
                    s.set_metadata("a", "2");
                }),
            ),
            (
                "identity",
                Box::new(|b| {
                    b.identity(Identity {
                        id: "u".into(),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_identity(Identity {
                        id: "u".into(),
                        ..Default::default()
                    });
                }),
            ),
            (
                "profile instructions",
                Box::new(|b| {
                    b.profile_resources(Resources {
                        instructions: Some("new".into()),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_instructions_bundle("new");
                }),
            ),
            (
                "profile agents",
                Box::new(|b| {
                    b.profile_resources(Resources {
                        agents: Some(vec![]),
                        ..Default::default()
                    })
                }),
                Box::new(|s| {
                    s.set_agents(vec![]);
                }),
            ),
            (
                "event buffer",
                Box::new(|b| b.event_buffer(0)),
                Box::new(|s| {
                    s.set_event_buffer(0);
                }),
            ),
            (
                "blocking",
                Box::new(|b| b.blocking_events()),
                Box::new(|s| {
                    s.set_blocking_events();
                }),
            ),
            (
                "thread store",
                Box::new(|b| b.thread_store(crate::store::in_memory())),
                Box::new(|s| {
                    s.set_thread_store(crate::store::in_memory());
                }),
            ),
            (
                "profile",
                Box::new(|b| b.profile(crate::profile::Selection::Native)),
                Box::new(|s| {
                    s.set_profile(crate::profile::Selection::Native);
                }),
            ),
            (
                "skill provider",
                Box::new(|b| b.skill_provider(Arc::new(crate::skills::SkillSet::default()))),
                Box::new(|s| {
                    s.set_skill_provider(Arc::new(crate::skills::SkillSet::default()));
                }),
            ),
            (
                "skill materializer",
                Box::new(|b| {
                    b.skill_materializer(Arc::new(crate::skills::DefaultSkillMaterializer::default()))
                }),
                Box::new(|s| {
                    s.set_skill_materializer(Arc::new(crate::skills::DefaultSkillMaterializer::default()));
                }),
            ),
            (
                "workspace manager",
                Box::new(|b| b.workspace_manager(Arc::new(crate::workspace::Passthrough))),
                Box::new(|s| {
                    s.set_workspace_manager(Arc::new(crate::workspace::Passthrough));
                }),
            ),
        ];
        for (name, builtin, eco) in cases {
            let mut want = builtin(base());
            let mut got = base().with(New(eco));
            assert_eq!(
                builder_state(&mut got),
                builder_state(&mut want),
                "{name}: the setter differs from the builder option"
            );
        }
        // A shared option works at construction too, with the Agent's profile slot.
        let mut shared = base().with(Both(|s: &mut SharedSettings<'_>| {
            s.set_hooks(vec![]);
        }));
        let mut want = base().profile_resources(Resources {
            hooks: Some(vec![]),
            ..Default::default()
        });
        assert_eq!(builder_state(&mut shared), builder_state(&mut want));
    }
}
