//! Resources of a served agent and of one run request.
//!
//! An agent's configuration ([`AgentSpec`]) names its instructions, MCP servers, skills, a skill library
//! and a workspace spec; they are checked against the driver's descriptor when the service starts (a
//! driver that cannot take them refuses to start, it does not fail every run) and installed as the
//! agent's defaults. A run request may then add, on top: skills from the library by key, its own
//! instructions (after the agent's), and — only where the operator granted it in `allow_request` — remote
//! (HTTP or SSE) MCP servers and a workspace spec. A request can never name a command (a stdio MCP
//! server) or a path on the server (a skill directory or archive, a worktree parent directory): those
//! stay the operator's.
//!
//! Runtime services follow the same split: the agent's declared `services` reach every run through
//! the service manager the embedding host gave it in code; a request may only name services from the
//! operator's `service_catalog`, by name, and only with `allow_request.services`.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::config::AgentSpec;
use super::error::{ApiError, ErrorCode};
use super::views::ResourcesView;
use crate::driver::Descriptor;
use crate::profile::{Family, Selection};
use crate::runtime::{AgentBuilder, CallOptions};
use crate::skills::SkillSet;
use crate::vocab::{McpServer, McpTransport, ServiceSpec, SkillRef, SkillSource};
use crate::workspace::{GitWorktreeManager, ReleaseMode, WorkspaceSpec};

/// What a run request may add beyond skills from the agent's library.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestGrants {
    /// A request may add HTTP and SSE MCP servers (never stdio: that would run a command on the server).
    #[serde(default)]
    pub mcp: bool,
    /// A request may choose its workspace spec (`shared`, `driver_managed`, or `git_worktree` with a base
    /// ref and branch template; the worktree parent directory stays the operator's).
    #[serde(default)]
    pub workspace: bool,
    /// A request may name runtime services from the agent's `service_catalog` (by name only: the
    /// settings stay the operator's).
    #[serde(default)]
    pub services: bool,
}

/// What a run request asks for (the resource fields of its body).
#[derive(Debug, Clone, Copy, Default)]
pub struct RunResources<'a> {
    /// Instructions after the agent's.
    pub instructions: Option<&'a str>,
    /// Skill keys from the agent's library.
    pub skills: &'a [String],
    /// Remote MCP servers added to the agent's.
    pub mcp: &'a [McpServer],
    /// The workspace spec.
    pub workspace: Option<&'a WorkspaceSpec>,
    /// Service names from the agent's catalog.
    pub services: &'a [String],
}

/// The resource part of a served agent, kept to check and complete run requests.
#[derive(Debug, Clone, Default)]
pub struct AgentResources {
    instructions: Option<String>,
    mcp: Vec<McpServer>,
    skills: Vec<String>,
    library: BTreeSet<String>,
    workspace: Option<WorkspaceSpec>,
    grants: RequestGrants,
    host_tools: bool,
    services: Vec<ServiceSpec>,
    catalog: Vec<ServiceSpec>,
}

impl AgentResources {
    /// Checks `spec`'s resources against the driver's `desc`: the reason an agent cannot take them.
    pub fn check(spec: &AgentSpec, desc: &Descriptor) -> Result<(), String> {
        let mut names = BTreeSet::new();
        for server in &spec.mcp {
            server.validate()?;
            check_transport(server, desc)?;
            if !names.insert(server.name.as_str()) {
                return Err(format!("duplicate MCP server name {:?}", server.name));
            }
        }
        if spec.allow_request.mcp && !(desc.mcp.http || desc.mcp.sse) {
            return Err(format!(
                "allow_request.mcp: the {} driver takes no HTTP or SSE MCP servers",
                desc.driver_type
            ));
        }
        if (!spec.skills.is_empty() || !spec.skill_library.is_empty()) && !desc.skills.supported {
            return Err(format!(
                "the {} driver cannot materialize skills",
                desc.driver_type
            ));
        }
        check_services(spec)?;
        let has_profile = spec.profile != Selection::Default || !spec.profile_resources.is_empty();
        if has_profile && Family::for_driver(&desc.driver_type).is_none() {
            return Err(format!(
                "profile: the {} driver has no profile family (only claude and codex)",
                desc.driver_type
            ));
        }
        let mut keys = BTreeSet::new();
        for s in &spec.skill_library {
            if s.source == SkillSource::Key {
                return Err(format!(
                    "skill_library: {:?} has no source (a library holds concrete skills)",
                    s.key
                ));
            }
            if !keys.insert(s.key.as_str()) {
                return Err(format!("skill_library: duplicate key {:?}", s.key));
            }
        }
        Ok(())
    }

    /// Installs `spec`'s resources as the agent's defaults and remembers what requests may add.
    pub fn install(spec: &AgentSpec, mut builder: AgentBuilder) -> (AgentBuilder, AgentResources) {
        if let Some(text) = &spec.instructions {
            builder = builder.instructions(text);
        }
        if !spec.mcp.is_empty() {
            builder = builder.mcp(spec.mcp.clone());
        }
        if !spec.skills.is_empty() {
            builder = builder.skills(spec.skills.clone());
        }
        if !spec.skill_library.is_empty() {
            builder = builder.skill_provider(Arc::new(SkillSet::new(spec.skill_library.clone())));
        }
        let worktrees = matches!(spec.workspace, Some(WorkspaceSpec::GitWorktree { .. }));
        if worktrees || spec.allow_request.workspace {
            builder = builder.workspace_manager(Arc::new(GitWorktreeManager::default()));
        }
        if spec.keep_workspaces {
            builder = builder.workspace_release(ReleaseMode::Keep);
        }
        if let Some(ws) = &spec.workspace {
            builder = builder.workspace_spec(ws.clone());
        }
        if !spec.services.is_empty() {
            builder = builder.services(spec.services.clone());
        }
        if spec.profile != Selection::Default {
            builder = builder.profile(spec.profile.clone());
        }
        if !spec.profile_resources.is_empty() {
            builder = builder.profile_resources(spec.profile_resources.clone());
        }
        let kept = AgentResources {
            instructions: spec.instructions.clone(),
            mcp: spec.mcp.clone(),
            skills: spec.skills.iter().map(|s| s.key.clone()).collect(),
            library: spec.skill_library.iter().map(|s| s.key.clone()).collect(),
            workspace: spec.workspace.clone(),
            grants: spec.allow_request,
            host_tools: false,
            services: spec.services.clone(),
            catalog: spec.service_catalog.clone(),
        };
        (builder, kept)
    }

    /// Records that the agent has host tools.
    pub fn with_host_tools(mut self) -> Self {
        self.host_tools = true;
        self
    }

    /// What a client may see: names and keys, never URLs, headers or paths.
    pub fn view(&self) -> ResourcesView {
        ResourcesView {
            instructions: self.instructions.is_some(),
            mcp: self
                .mcp
                .iter()
                .map(|s| format!("{}:{}", s.name, s.transport.name()))
                .collect(),
            skills: self.skills.clone(),
            skill_library: self.library.iter().cloned().collect(),
            workspace: match &self.workspace {
                None | Some(WorkspaceSpec::Shared) => "shared",
                Some(WorkspaceSpec::GitWorktree { .. }) => "git_worktree",
                Some(WorkspaceSpec::DriverManaged) => "driver_managed",
            }
            .into(),
            request_mcp: self.grants.mcp,
            request_workspace: self.grants.workspace,
            host_tools: self.host_tools,
            services: self.services.iter().map(|s| s.name.clone()).collect(),
            service_catalog: self.catalog.iter().map(|s| s.name.clone()).collect(),
            request_services: self.grants.services,
        }
    }

    /// Adds what the request asks for to `o`, or refuses it (422 for a malformed ask, 403
    /// `resource_not_allowed` for one the operator did not grant).
    pub fn apply(&self, req: RunResources<'_>, mut o: CallOptions) -> Result<CallOptions, ApiError> {
        if let Some(text) = req.instructions.filter(|t| !t.trim().is_empty()) {
            o = o.instructions(match &self.instructions {
                Some(base) => format!("{base}\n\n{text}"),
                None => text.to_owned(),
            });
        }
        let mut skills = BTreeSet::new();
        for (i, key) in req.skills.iter().enumerate() {
            if !self.library.contains(key) {
                return Err(ApiError::new(
                    ErrorCode::UnknownSkill,
                    format!("no skill {key:?} in the agent's skill library"),
                )
                .field(format!("skills[{i}]")));
            }
            skills.insert(key.as_str());
        }
        if !skills.is_empty() {
            o = o.skills(skills.into_iter().map(SkillRef::key));
        }
        if !req.mcp.is_empty() {
            o = o.mcp(self.mcp_with(req.mcp)?);
        }
        if let Some(ws) = req.workspace {
            o = o.workspace_spec(self.workspace_for(ws)?);
        }
        if !req.services.is_empty() {
            o = o.services(self.services_with(req.services)?);
        }
        Ok(o)
    }

    /// The agent's declared services plus the catalog services the request names (each once).
    fn services_with(&self, names: &[String]) -> Result<Vec<ServiceSpec>, ApiError> {
        if !self.grants.services {
            return Err(not_allowed(
                "services",
                "this agent takes no services from requests (allow_request.services)",
            ));
        }
        let mut all = self.services.clone();
        for (i, name) in names.iter().enumerate() {
            let spec = self.catalog.iter().find(|s| &s.name == name).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::UnknownService,
                    format!("no service {name:?} in the agent's service catalog"),
                )
                .field(format!("services[{i}]"))
            })?;
            if !all.iter().any(|s| s.name == spec.name) {
                all.push(spec.clone());
            }
        }
        Ok(all)
    }

    /// The agent's MCP servers plus the request's remote ones.
    fn mcp_with(&self, extra: &[McpServer]) -> Result<Vec<McpServer>, ApiError> {
        if !self.grants.mcp {
            return Err(not_allowed(
                "mcp",
                "this agent takes no MCP servers from requests (allow_request.mcp)",
            ));
        }
        let mut all = self.mcp.clone();
        for (i, server) in extra.iter().enumerate() {
            let field = format!("mcp[{i}]");
            if matches!(server.transport, McpTransport::Stdio { .. }) {
                return Err(ApiError::invalid(
                    &format!("{field}.transport"),
                    "a request may add HTTP or SSE MCP servers only (stdio runs a command on the server)",
                ));
            }
            server.validate().map_err(|e| ApiError::invalid(&field, e))?;
            if all.iter().any(|s| s.name == server.name) {
                return Err(ApiError::invalid(
                    &format!("{field}.name"),
                    format!("an MCP server named {:?} is already declared", server.name),
                ));
            }
            all.push(server.clone());
        }
        Ok(all)
    }

    /// The request's workspace spec, with the operator's worktree parent directory.
    fn workspace_for(&self, ws: &WorkspaceSpec) -> Result<WorkspaceSpec, ApiError> {
        if !self.grants.workspace {
            return Err(not_allowed(
                "workspace",
                "this agent takes no workspace spec from requests (allow_request.workspace)",
            ));
        }
        Ok(match ws {
            WorkspaceSpec::GitWorktree {
                worktree_parent_dir: Some(_),
                ..
            } => {
                return Err(ApiError::invalid(
                    "workspace.worktree_parent_dir",
                    "the worktree parent directory is the operator's (set it in the agent's workspace)",
                ));
            }
            WorkspaceSpec::GitWorktree {
                base_ref,
                branch_template,
                worktree_parent_dir: None,
            } => WorkspaceSpec::GitWorktree {
                base_ref: base_ref.clone(),
                branch_template: branch_template.clone(),
                worktree_parent_dir: match &self.workspace {
                    Some(WorkspaceSpec::GitWorktree {
                        worktree_parent_dir, ..
                    }) => worktree_parent_dir.clone(),
                    _ => None,
                },
            },
            other => other.clone(),
        })
    }
}

fn check_transport(server: &McpServer, desc: &Descriptor) -> Result<(), String> {
    let ok = match server.transport {
        McpTransport::Stdio { .. } => desc.mcp.stdio,
        McpTransport::Http { .. } => desc.mcp.http,
        McpTransport::Sse { .. } => desc.mcp.sse,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "MCP server {:?}: the {} driver takes no {} MCP servers",
            server.name,
            desc.driver_type,
            server.transport.name()
        ))
    }
}

/// The agent's declared services and catalog: named, each name once per list, and a grant only over a
/// non-empty catalog. (Whether a service manager serves them is checked where the host's resources
/// are known.)
fn check_services(spec: &AgentSpec) -> Result<(), String> {
    for (field, list) in [
        ("services", &spec.services),
        ("service_catalog", &spec.service_catalog),
    ] {
        let mut names = BTreeSet::new();
        for s in list {
            if s.name.trim().is_empty() {
                return Err(format!("{field}: a service has no name"));
            }
            if !names.insert(s.name.as_str()) {
                return Err(format!("{field}: duplicate service name {:?}", s.name));
            }
        }
    }
    if spec.allow_request.services && spec.service_catalog.is_empty() {
        return Err("allow_request.services: the agent's service_catalog is empty".into());
    }
    Ok(())
}

fn not_allowed(field: &str, message: &str) -> ApiError {
    ApiError::new(ErrorCode::ResourceNotAllowed, message).field(field)
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;

    use super::*;
    use crate::driver::{McpCaps, SkillCaps};

    fn desc(mcp: &McpCaps, skills: bool) -> Descriptor {
        Descriptor {
            driver_type: "t".into(),
            mcp: mcp.clone(),
            skills: SkillCaps { supported: skills },
            ..Default::default()
        }
    }

    fn spec() -> AgentSpec {
        AgentSpec::new("a", "reference")
    }

    #[test]
    fn an_agent_whose_driver_cannot_take_its_resources_is_refused() {
        let http_only = McpCaps {
            http: true,
            ..Default::default()
        };
        let mut s = spec();
        s.mcp = vec![McpServer::stdio("x", "cmd", vec![])];
        let e = AgentResources::check(&s, &desc(&http_only, false)).unwrap_err();
        assert!(e.contains("takes no stdio MCP servers"), "{e}");
        s.mcp = vec![McpServer::http("x", "http://127.0.0.1:1/mcp")];
        AgentResources::check(&s, &desc(&http_only, false)).unwrap();
        s.mcp.push(McpServer::http("x", "http://127.0.0.1:2/mcp"));
        let e = AgentResources::check(&s, &desc(&http_only, false)).unwrap_err();
        assert!(e.contains("duplicate MCP server name"), "{e}");

        let mut s = spec();
        s.skills = vec![SkillRef::inline("k", "# k")];
        let e = AgentResources::check(&s, &desc(&http_only, false)).unwrap_err();
        assert!(e.contains("cannot materialize skills"), "{e}");
        AgentResources::check(&s, &desc(&http_only, true)).unwrap();
        s.skill_library = vec![SkillRef::key("bare")];
        let e = AgentResources::check(&s, &desc(&http_only, true)).unwrap_err();
        assert!(e.contains("has no source"), "{e}");

        let mut s = spec();
        s.allow_request.mcp = true;
        let e = AgentResources::check(&s, &desc(&McpCaps::default(), false)).unwrap_err();
        assert!(e.contains("allow_request.mcp"), "{e}");
    }

    #[test]
    fn a_request_adds_only_what_was_granted() {
        let mut s = spec();
        s.mcp = vec![McpServer::http("base", "http://127.0.0.1:1/mcp")];
        s.skill_library = vec![SkillRef::inline("lib", "# lib")];
        let (_, kept) = AgentResources::install(&s, crate::runtime::Agent::builder(NoDriver));
        let remote = [McpServer::sse("extra", "http://127.0.0.1:2/sse")];
        let ask = RunResources {
            mcp: &remote,
            ..Default::default()
        };
        let e = kept.apply(ask, CallOptions::new()).unwrap_err();
        assert_eq!(
            (e.status(), e.code),
            (StatusCode::FORBIDDEN, ErrorCode::ResourceNotAllowed)
        );
        let unknown = ["nope".to_owned()];
        let e = kept
            .apply(
                RunResources {
                    skills: &unknown,
                    ..Default::default()
                },
                CallOptions::new(),
            )
            .unwrap_err();
        assert_eq!(
            (e.code, e.field.as_deref()),
            (ErrorCode::UnknownSkill, Some("skills[0]"))
        );

        s.allow_request = RequestGrants {
            mcp: true,
            workspace: true,
            services: false,
        };
        let (_, kept) = AgentResources::install(&s, crate::runtime::Agent::builder(NoDriver));
        kept.apply(ask, CallOptions::new()).unwrap();
        let stdio = [McpServer::stdio("cmd", "rm", vec![])];
        let e = kept
            .apply(
                RunResources {
                    mcp: &stdio,
                    ..Default::default()
                },
                CallOptions::new(),
            )
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("mcp[0].transport"));
        let clash = [McpServer::http("base", "http://127.0.0.1:3/mcp")];
        let e = kept
            .apply(
                RunResources {
                    mcp: &clash,
                    ..Default::default()
                },
                CallOptions::new(),
            )
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("mcp[0].name"));
        let ws = WorkspaceSpec::GitWorktree {
            base_ref: String::new(),
            branch_template: String::new(),
            worktree_parent_dir: Some("/etc".into()),
        };
        let e = kept
            .apply(
                RunResources {
                    workspace: Some(&ws),
                    ..Default::default()
                },
                CallOptions::new(),
            )
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("workspace.worktree_parent_dir"));
    }

    /// A driver that is never run (the builder needs one).
    #[derive(Debug)]
    struct NoDriver;

    #[async_trait::async_trait]
    impl crate::driver::Driver for NoDriver {
        fn descriptor(&self) -> Descriptor {
            Descriptor::default()
        }
        fn validate_config(&self) -> Result<(), crate::driver::InvalidConfig> {
            Ok(())
        }
        async fn run(&self, _: crate::driver::Request, _: crate::driver::RunIo) -> crate::driver::Response {
            crate::driver::Response::default()
        }
    }
}
