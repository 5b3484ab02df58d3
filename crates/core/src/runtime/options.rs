//! Options and their scopes, enforced by types: construction-only options exist only on
//! [`AgentBuilder`](super::agent::AgentBuilder), call-only options only on [`CallOptions`],
//! message options on [`MessageOptions`] (and on `CallOptions` for a starting prompt); shared
//! options on both the builder and `CallOptions`.
//!
//! Merge rules (nearer scope wins): model, timeout, instructions, workspace, workspace spec, identity and
//! policy replace; metadata merges by key; skills append and a duplicate key with different
//! content fails; MCP servers and services replace the whole set and an empty set clears it; run
//! service providers append (the same provider once); per-call profile resources merge over the
//! Agent's by their family rules ([`Resources::merge`](crate::profile::Resources::merge));
//! the approval handler replaces (and can be cleared back to event routing). Per-call options
//! never mutate Agent defaults.
//!
//! ```compile_fail
//! // A construction-only option is not a call option:
//! let _ = agent_adaptor::runtime::CallOptions::new().event_buffer(8);
//! ```
//!
//! ```compile_fail
//! // A call-only option is not a message option:
//! let _ = agent_adaptor::runtime::MessageOptions::new().model("m");
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::approval::ApprovalHandler;
use super::error::ConfigError;
use super::messages::MessageAttrs;
use super::services::RunProviders;
use super::structured::{OutputSpec, SchemaOptions};
use crate::driver::{Author, Identity, Policy, Timing};
use crate::vocab::{McpServer, ServiceSpec, SkillRef};
use crate::workspace::WorkspaceSpec;

/// Options that exist in both the construction and the call scope.
#[derive(Clone, Default, Debug)]
pub(crate) struct Shared {
    pub model: Option<String>,
    pub timeout: Option<Duration>,
    pub spawn: bool,
    pub instructions: Option<String>,
    pub workspace: Option<PathBuf>,
    pub workspace_spec: Option<WorkspaceSpec>,
    pub metadata: BTreeMap<String, String>,
    pub identity: Option<Identity>,
    pub policy: Option<Policy>,
    pub approval_handler: Option<Option<ApprovalHandler>>,
    pub skills: Vec<SkillRef>,
    pub mcp: Option<Vec<McpServer>>,
    pub services: Option<Vec<ServiceSpec>>,
    pub run_services: RunProviders,
    /// Profile resources merged over the Agent's for one call (call scope only: the Agent's come
    /// from `AgentBuilder::profile_resources`).
    pub profile_resources: crate::profile::Resources,
    /// A composite runner's cap on the inherited message turn budget (call scope only:
    /// [`CallOptions::cap_message_turns`]).
    pub message_turn_cap: Option<u32>,
}

/// Generates the shared option setters on a type with a `shared: Shared` field; each is the
/// ecosystem setter of the same name (`runtime::settings::SharedSettings`), so both follow one rule.
macro_rules! shared_options {
    ($ty:ty) => {
        impl $ty {
            /// A non-empty model replaces the default.
            pub fn model(mut self, model: impl Into<String>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_model(model);
                self
            }

            /// Execution deadline for the whole execution, including continuations. A positive value
            /// bounds it; zero means "no deadline" (it replaces an inherited one with none).
            pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_timeout(timeout);
                self
            }

            /// Force a fresh provider process; it is not registered for later reuse.
            pub fn spawn(mut self) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_spawn();
                self
            }

            /// Replaces the extra instruction text.
            pub fn instructions(mut self, text: impl Into<String>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_instructions(text);
                self
            }

            /// Replaces the base working directory.
            pub fn workspace(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_workspace(dir);
                self
            }

            /// Replaces how the workspace is provisioned from the base directory (default
            /// `WorkspaceSpec::Shared`); the Agent's workspace manager leases it per execution (see
            /// `AgentBuilder::workspace_manager`).
            pub fn workspace_spec(mut self, spec: $crate::workspace::WorkspaceSpec) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_workspace_spec(spec);
                self
            }

            /// Merges one metadata entry by key.
            pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_metadata(key, value);
                self
            }

            /// Replaces the caller identity as a whole.
            pub fn identity(mut self, identity: $crate::driver::Identity) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_identity(identity);
                self
            }

            /// Replaces the entire policy (approvals and messages included).
            pub fn policy(mut self, policy: $crate::driver::Policy) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_policy(policy);
                self
            }

            /// Installs an approval handler (replacing an inherited one).
            pub fn on_approval(mut self, handler: $crate::runtime::ApprovalHandler) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared)
                    .set_approval_handler(Some(handler));
                self
            }

            /// Clears an inherited approval handler: requests arrive as events.
            pub fn approvals_as_events(mut self) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_approval_handler(None);
                self
            }

            /// Appends skills; a duplicate key with different content fails the send.
            pub fn skills(mut self, skills: impl IntoIterator<Item = $crate::vocab::SkillRef>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).add_skills(skills);
                self
            }

            /// Replaces the whole MCP server set; an empty set clears it.
            pub fn mcp(mut self, servers: impl IntoIterator<Item = $crate::vocab::McpServer>) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_mcp_servers(servers);
                self
            }

            /// Replaces the declarative services; an empty set clears them.
            pub fn services(
                mut self,
                services: impl IntoIterator<Item = $crate::vocab::ServiceSpec>,
            ) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared).set_services(services);
                self
            }

            /// Appends a run-scoped service provider (the same provider twice counts once): it is
            /// attached to every execution before the driver starts and detached before `Done`
            /// (see `RunServiceProvider`).
            pub fn run_service_provider(
                mut self,
                provider: std::sync::Arc<dyn $crate::runtime::RunServiceProvider>,
            ) -> Self {
                $crate::runtime::settings::SharedSettings::of(&mut self.shared)
                    .add_run_service_provider(provider);
                self
            }
        }
    };
}
pub(crate) use shared_options;

/// Options for one send (shared, call-only and message options).
#[derive(Clone, Default, Debug)]
pub struct CallOptions {
    pub(crate) shared: Shared,
    pub(crate) schema: Option<Result<OutputSpec, ConfigError>>,
    pub(crate) message: MessageAttrs,
}

shared_options!(CallOptions);

impl CallOptions {
    /// Empty options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Structured output: the JSON Schema derived from `T`.
    pub fn schema<T: schemars::JsonSchema>(mut self, opts: SchemaOptions) -> Self {
        // Derivation errors are sticky: a later schema does not clear an earlier error.
        super::settings::RunSettings::set_schema(&mut self.schema, OutputSpec::derive::<T>(opts));
        self
    }

    /// Structured output from an explicit JSON Schema document.
    pub fn schema_json(mut self, schema: &[u8], opts: SchemaOptions) -> Self {
        super::settings::RunSettings::set_schema(&mut self.schema, OutputSpec::from_json(schema, opts));
        self
    }

    /// The starting prompt's message id (thread-scoped idempotency key); empty generates one.
    pub fn message_id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.message.id = (!id.is_empty()).then_some(id);
        self
    }

    /// The starting prompt's author.
    pub fn from(mut self, author: Author) -> Self {
        self.message.from = Some(author);
        self
    }

    /// Timing (starting prompts always start immediately).
    pub fn when(mut self, timing: Timing) -> Self {
        self.message.timing = timing;
        self
    }

    /// Profile resources for this call, merged over the Agent's by the family rules: skills append;
    /// a declared MCP, agents, hooks, instructions or config family replaces the Agent's (an empty
    /// one clears it). The profile is synced to the merged set before the launch and back to the
    /// Agent's by the next launch without them; the run's `profile_fingerprint` thread guard changes
    /// with them, so a thread resumed with other profile resources is rejected. Refused
    /// (`profile_resources_unsupported`) on a native profile, on a driver without profiles and for a
    /// family the provider does not support; refused (`profile_in_use`) while another execution runs
    /// on the same profile dir with other resources.
    pub fn profile_resources(mut self, resources: crate::profile::Resources) -> Self {
        self.shared.profile_resources = std::mem::take(&mut self.shared.profile_resources).merge(resources);
        self
    }

    /// True when any option beyond message attributes is set (Standby queues such sends as a
    /// separate execution).
    pub fn has_execution_options(&self) -> bool {
        let s = &self.shared;
        s.model.is_some()
            || s.timeout.is_some()
            || s.spawn
            || s.instructions.is_some()
            || s.workspace.is_some()
            || s.workspace_spec.is_some()
            || !s.metadata.is_empty()
            || s.identity.is_some()
            || s.policy.is_some()
            || s.approval_handler.is_some()
            || !s.skills.is_empty()
            || s.mcp.is_some()
            || s.services.is_some()
            || !s.run_services.0.is_empty()
            || !s.profile_resources.is_empty()
            || s.message_turn_cap.is_some()
            || self.schema.is_some()
    }

    /// Lowers the message turn budget of whatever policy the execution inherits (the Agent's, or
    /// this call's own), preserving every other policy field; it never raises the budget. Composite
    /// runners apply it after the caller's options. Repeated caps keep the lowest.
    ///
    /// # Panics
    /// When `remaining` is zero (a composite runner bug).
    pub fn cap_message_turns(mut self, remaining: u32) -> Self {
        assert!(remaining > 0, "cap_message_turns needs a positive budget");
        let cap = self
            .shared
            .message_turn_cap
            .map_or(remaining, |c| c.min(remaining));
        self.shared.message_turn_cap = Some(cap);
        self
    }
}

impl From<()> for CallOptions {
    fn from(_: ()) -> Self {
        CallOptions::default()
    }
}

/// Options for a supplemental message: only message attributes.
#[derive(Clone, Default, Debug)]
pub struct MessageOptions {
    pub(crate) attrs: MessageAttrs,
}

impl MessageOptions {
    /// Empty options (Soon, human, generated id).
    pub fn new() -> Self {
        Self::default()
    }

    /// Thread-scoped idempotency key; empty generates one.
    pub fn id(mut self, id: impl Into<String>) -> Self {
        let id = id.into();
        self.attrs.id = (!id.is_empty()).then_some(id);
        self
    }

    /// The author.
    pub fn from(mut self, author: Author) -> Self {
        self.attrs.from = Some(author);
        self
    }

    /// Delivery timing.
    pub fn when(mut self, timing: Timing) -> Self {
        self.attrs.timing = timing;
        self
    }
}

impl From<()> for MessageOptions {
    fn from(_: ()) -> Self {
        MessageOptions::default()
    }
}

/// Message attributes as a composite runner reads them: later values win, human/Soon defaults,
/// no generated id; execution options are ignored.
pub fn message_attributes(opts: &CallOptions) -> crate::driver::MessageContext {
    crate::driver::MessageContext {
        id: opts.message.id.clone().unwrap_or_default(),
        text: String::new(),
        from: opts.message.from.clone().unwrap_or_default(),
        timing: opts.message.timing,
    }
}

/// Settings after merging the Agent defaults with one call.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub model: Option<String>,
    pub timeout: Option<Duration>,
    pub spawn: bool,
    pub instructions: Option<String>,
    pub workspace: Option<PathBuf>,
    /// How the workspace is provisioned (the nearer scope replaces).
    pub workspace_spec: WorkspaceSpec,
    pub metadata: BTreeMap<String, String>,
    pub identity: Identity,
    pub policy: Policy,
    pub approval_handler: Option<ApprovalHandler>,
    pub skills: Vec<SkillRef>,
    pub mcp: Vec<McpServer>,
    /// Declarative services, ensured by the Agent's service manager.
    pub services: Vec<ServiceSpec>,
    /// Run service providers: the Agent's, then the call's (deduplicated).
    pub run_services: RunProviders,
    /// The Agent's profile fingerprint (`profile_fingerprint` thread guard); not an option: the Agent
    /// fills it at launch, empty without a profile.
    pub profile_fingerprint: String,
}

/// Merges `call` over `defaults` without touching either.
pub(crate) fn resolve(defaults: &Shared, call: &Shared) -> Result<Resolved, ConfigError> {
    let mut skills: Vec<SkillRef> = Vec::new();
    for s in defaults.skills.iter().chain(call.skills.iter()) {
        match skills.iter().find(|k| k.key == s.key) {
            Some(existing) if existing == s => {}
            Some(_) => return Err(ConfigError::SkillKeyConflict(s.key.clone())),
            None => {
                if s.key.trim().is_empty() {
                    return Err(ConfigError::SkillKeyMissing(format!("{:?}", s.source)));
                }
                skills.push(s.clone());
            }
        }
    }
    let mut metadata = defaults.metadata.clone();
    metadata.extend(call.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut run_services = defaults.run_services.clone();
    for p in &call.run_services.0 {
        run_services.add(p.clone());
    }
    let handler = match &call.approval_handler {
        Some(h) => h.clone(),
        None => defaults.approval_handler.clone().flatten(),
    };
    let mut policy = call
        .policy
        .clone()
        .or_else(|| defaults.policy.clone())
        .unwrap_or_default();
    if let Some(cap) = call.message_turn_cap {
        let current = policy.messages.effective_max_turns();
        policy.messages.max_turns = i64::from(current.min(cap));
    }
    Ok(Resolved {
        model: call.model.clone().or_else(|| defaults.model.clone()),
        // The nearer scope wins; zero (at whichever scope won) means no deadline.
        timeout: call.timeout.or(defaults.timeout).filter(|t| !t.is_zero()),
        spawn: call.spawn || defaults.spawn,
        instructions: call
            .instructions
            .clone()
            .or_else(|| defaults.instructions.clone()),
        workspace: call.workspace.clone().or_else(|| defaults.workspace.clone()),
        workspace_spec: call
            .workspace_spec
            .clone()
            .or_else(|| defaults.workspace_spec.clone())
            .unwrap_or_default(),
        metadata,
        identity: call
            .identity
            .clone()
            .or_else(|| defaults.identity.clone())
            .unwrap_or_default(),
        policy,
        approval_handler: handler,
        skills,
        mcp: call
            .mcp
            .clone()
            .or_else(|| defaults.mcp.clone())
            .unwrap_or_default(),
        services: call
            .services
            .clone()
            .or_else(|| defaults.services.clone())
            .unwrap_or_default(),
        run_services,
        profile_fingerprint: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::SandboxLevel;

    fn shared(f: impl FnOnce(CallOptions) -> CallOptions) -> Shared {
        f(CallOptions::new()).shared
    }

    #[test]
    fn nearer_scope_wins_and_defaults_are_untouched() {
        let defaults = shared(|o| o.model("a").timeout(Duration::from_secs(5)).instructions("base"));
        let before = format!("{defaults:?}");
        let call = shared(|o| o.model("b"));
        let r = resolve(&defaults, &call).unwrap();
        assert_eq!(r.model.as_deref(), Some("b"));
        assert_eq!(r.timeout, Some(Duration::from_secs(5)));
        assert_eq!(r.instructions.as_deref(), Some("base"));
        assert_eq!(
            format!("{defaults:?}"),
            before,
            "per-call options never mutate defaults"
        );
        let empty_model = shared(|o| o.model(""));
        assert_eq!(
            resolve(&defaults, &empty_model).unwrap().model.as_deref(),
            Some("a")
        );
    }

    #[test]
    fn metadata_merges_by_key() {
        let d = shared(|o| o.metadata("a", "1").metadata("b", "2"));
        let c = shared(|o| o.metadata("b", "3").metadata("c", "4"));
        let r = resolve(&d, &c).unwrap();
        assert_eq!(r.metadata.get("a").map(String::as_str), Some("1"));
        assert_eq!(r.metadata.get("b").map(String::as_str), Some("3"));
        assert_eq!(r.metadata.get("c").map(String::as_str), Some("4"));
    }

    #[test]
    fn skills_append_dedupe_and_conflict() {
        let d = shared(|o| o.skills([SkillRef::inline("x", "one")]));
        let same = shared(|o| o.skills([SkillRef::inline("x", "one"), SkillRef::inline("y", "two")]));
        let r = resolve(&d, &same).unwrap();
        assert_eq!(
            r.skills.len(),
            2,
            "identical duplicates collapse, new keys append"
        );
        let conflict = shared(|o| o.skills([SkillRef::inline("x", "different")]));
        assert_eq!(
            resolve(&d, &conflict).unwrap_err(),
            ConfigError::SkillKeyConflict("x".into())
        );
    }

    #[test]
    fn mcp_and_services_replace_and_empty_clears() {
        let d = shared(|o| {
            o.mcp([McpServer::http("a", "http://127.0.0.1:1/mcp")])
                .services([ServiceSpec::new("db")])
        });
        let replace = shared(|o| o.mcp([McpServer::http("b", "http://127.0.0.1:2/mcp")]));
        let r = resolve(&d, &replace).unwrap();
        assert_eq!(r.mcp.len(), 1);
        assert_eq!(r.mcp[0].name, "b");
        assert_eq!(r.services.len(), 1, "services inherited when not set");
        let clear = shared(|o| o.mcp([]).services([]));
        let r = resolve(&d, &clear).unwrap();
        assert!(r.mcp.is_empty() && r.services.is_empty());
        assert_eq!(resolve(&d, &Shared::default()).unwrap().mcp.len(), 1);
    }

    #[test]
    fn policy_replaces_whole() {
        let d = shared(|o| {
            o.policy(Policy {
                web_search: crate::driver::FeatureLevel::Allow,
                ..Policy::read_only()
            })
        });
        let c = shared(|o| o.policy(Policy::workspace_write()));
        let r = resolve(&d, &c).unwrap();
        assert_eq!(r.policy.sandbox, SandboxLevel::WorkspaceWrite);
        assert_eq!(
            r.policy.web_search,
            crate::driver::FeatureLevel::Inherit,
            "no field merge"
        );
    }

    #[test]
    fn approval_handler_replace_and_clear() {
        let h = ApprovalHandler::new(|_req| async { Ok(()) });
        let d = shared(|o| o.on_approval(h.clone()));
        assert!(
            resolve(&d, &Shared::default())
                .unwrap()
                .approval_handler
                .is_some()
        );
        let cleared = shared(|o| o.approvals_as_events());
        assert!(resolve(&d, &cleared).unwrap().approval_handler.is_none());
    }

    #[test]
    fn execution_option_detection_and_turn_cap() {
        assert!(!CallOptions::new().message_id("m").has_execution_options());
        assert!(CallOptions::new().model("x").has_execution_options());
        let inherited = shared(|o| o.policy(Policy::read_only()));
        let capped = CallOptions::new().cap_message_turns(3);
        let r = resolve(&inherited, &capped.shared).unwrap();
        assert_eq!(r.policy.messages.max_turns, 3);
        assert_eq!(
            r.policy.sandbox,
            SandboxLevel::ReadOnly,
            "the inherited policy is kept"
        );
        let capped = CallOptions::new().cap_message_turns(50);
        assert_eq!(
            resolve(&inherited, &capped.shared)
                .unwrap()
                .policy
                .messages
                .max_turns,
            20,
            "never raises the budget"
        );
    }

    #[test]
    fn message_attributes_ignore_execution_options() {
        let o = CallOptions::new()
            .model("m")
            .message_id("a")
            .message_id("b")
            .when(Timing::AfterTurn);
        let ctx = message_attributes(&o);
        assert_eq!(ctx.id, "b");
        assert_eq!(ctx.timing, Timing::AfterTurn);
        assert_eq!(ctx.from.kind, crate::driver::AuthorKind::Human);
        assert!(
            message_attributes(&CallOptions::new()).id.is_empty(),
            "no generated id"
        );
    }
}
