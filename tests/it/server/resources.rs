//! Resources on the service's routes: an agent's configured instructions, MCP servers, skills, skill
//! library and workspace spec reach its driver; a run request adds skills from the library, its own
//! instructions and — only where the operator granted it — remote MCP servers and a workspace spec;
//! anything else is refused with a typed error before a run starts. The reference agent with
//! `report_resources` reports what its driver received; the real Claude CLI proves an MCP server from the
//! agent's configuration and a host tool from the embedding host both reach the model.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agent_adaptor::server::{AgentSpec, HostResources, Server, ServerConfig};
use agent_adaptor::testkit::mock::anthropic::{Reply, Script};
use agent_adaptor::testkit::mock::sse_mcp::{ECHO_PREFIX, SseMcpServer};
use agent_adaptor::vocab::{McpServer, SkillRef};
use agent_adaptor::workspace::WorkspaceSpec;
use serde_json::{Value, json};

use super::{all_frames, error_code, finished_state, get, post_json, run_id, start_run, start_with};

/// A reference agent that reports its resources, with metadata kept in its records.
fn reporting(tweak: impl FnOnce(&mut AgentSpec)) -> ServerConfig {
    let mut config = super::with_metadata();
    let spec = &mut config.agents[0];
    spec.config = json!({"report_resources": true});
    tweak(spec);
    config
}

/// The finished run's result metadata.
async fn metadata(base: &str, body: Value) -> serde_json::Map<String, Value> {
    let run = run_id(&start_run(base, "/v1/agents/reference/runs", body).await);
    let done = finished_state(base, &run).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let frames = all_frames(get(base, &format!("/v1/runs/{run}/events")).await).await;
    let done = frames.last().expect("the done frame").json();
    done["result"]["metadata"]
        .as_object()
        .cloned()
        .unwrap_or_else(|| panic!("result metadata in {done}"))
}

#[tokio::test]
async fn configured_and_requested_resources_reach_the_driver() {
    let server = start_with(reporting(|a| {
        a.instructions = Some("Answer briefly.".into());
        a.mcp = vec![McpServer::http("base", "http://127.0.0.1:9/mcp")];
        a.skills = vec![SkillRef::inline("always", "---\nname: always\n---\n# always")];
        a.skill_library = vec![SkillRef::inline("lib", "---\nname: lib\n---\n# lib")];
        a.allow_request.mcp = true;
    }))
    .await;
    let base = server.url();
    // What a client may see of them: names and keys, no URL.
    let view = super::get_json(&base, "/v1/agents/reference").await;
    assert_eq!(
        view["resources"],
        json!({
            "instructions": true, "mcp": ["base:http"], "skills": ["always"], "skill_library": ["lib"],
            "workspace": "shared", "request_mcp": true, "request_workspace": false, "host_tools": false,
            "services": [], "service_catalog": [], "request_services": false,
        })
    );

    // Only the agent's resources.
    let m = metadata(&base, json!({"prompt": "hi"})).await;
    assert_eq!(m["mcp"], "base:http");
    assert_eq!(m["skills"], "always");
    assert_eq!(m["instructions"], "Answer briefly.");

    // Plus the request's: a library skill, its instructions after the agent's, a remote MCP server.
    let m = metadata(
        &base,
        json!({
            "prompt": "hi",
            "instructions": "Use French.",
            "skills": ["lib"],
            "mcp": [{"name": "extra", "transport": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}],
        }),
    )
    .await;
    assert_eq!(m["mcp"], "base:http,extra:sse");
    let mut skills: Vec<&str> = m["skills"].as_str().unwrap().split(',').collect();
    skills.sort_unstable();
    assert_eq!(skills, ["always", "lib"]);
    assert_eq!(m["instructions"], "Answer briefly.\n\nUse French.");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn requests_are_refused_what_the_operator_did_not_grant() {
    let server = start_with(reporting(|a| {
        a.mcp = vec![McpServer::http("base", "http://127.0.0.1:9/mcp")];
        a.skill_library = vec![SkillRef::inline("lib", "# lib")];
    }))
    .await;
    let base = server.url();
    let path = "/v1/agents/reference/runs";
    let sse = json!([{"name": "extra", "transport": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}]);
    let cases = [
        (
            json!({"prompt": "x", "skills": ["nope"]}),
            422,
            "unknown_skill",
            "skills[0]",
        ),
        (
            json!({"prompt": "x", "mcp": sse}),
            403,
            "resource_not_allowed",
            "mcp",
        ),
        (
            json!({"prompt": "x", "workspace": {"type": "git_worktree"}}),
            403,
            "resource_not_allowed",
            "workspace",
        ),
    ];
    for (body, status, code, field) in cases {
        let (s, c, err) = error_code(post_json(&base, path, body.clone()).await).await;
        assert_eq!((s, c.as_str()), (status, code), "{body} -> {err}");
        assert_eq!(err["error"]["field"], field, "{err}");
    }
    server.shutdown().await.unwrap();

    // Granted, a request still cannot run a command or pick a server path.
    let server = start_with(reporting(|a| {
        a.mcp = vec![McpServer::http("base", "http://127.0.0.1:9/mcp")];
        a.allow_request.mcp = true;
        a.allow_request.workspace = true;
    }))
    .await;
    let base = server.url();
    let cases = [
        (
            json!({"prompt": "x", "mcp": [{"name": "sh", "transport": {"type": "stdio", "command": "sh"}}]}),
            "mcp[0].transport",
        ),
        (
            json!({"prompt": "x", "mcp": [{"name": "base", "transport": {"type": "http", "url": "http://127.0.0.1:9/x"}}]}),
            "mcp[0].name",
        ),
        (
            json!({"prompt": "x", "workspace": {"type": "git_worktree", "worktree_parent_dir": "/etc"}}),
            "workspace.worktree_parent_dir",
        ),
    ];
    for (body, field) in cases {
        let (s, c, err) = error_code(post_json(&base, path, body.clone()).await).await;
        assert_eq!((s, c.as_str()), (422, "invalid_request"), "{body} -> {err}");
        assert_eq!(err["error"]["field"], field, "{err}");
    }
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn an_agent_whose_driver_cannot_take_its_resources_does_not_start() {
    // The plain reference driver takes neither skills nor MCP servers.
    let mut config = ServerConfig::for_tests();
    config.agents[0].skills = vec![SkillRef::inline("k", "# k")];
    let e = Server::start(config).await.unwrap_err().to_string();
    assert!(
        e.contains("reference") && e.contains("cannot materialize skills"),
        "{e}"
    );
    let mut config = ServerConfig::for_tests();
    config.agents[0].mcp = vec![McpServer::http("m", "http://127.0.0.1:9/mcp")];
    let e = Server::start(config).await.unwrap_err().to_string();
    assert!(e.contains("takes no http MCP servers"), "{e}");
    // A profile the driver has no family for.
    let mut config = ServerConfig::for_tests();
    config.agents[0].profile = agent_adaptor::profile::Selection::native();
    let e = Server::start(config).await.unwrap_err().to_string();
    assert!(e.contains("no profile family"), "{e}");
    // Host tools for an agent that does not exist.
    let host = HostResources::default().tools("ghost", [crate::tools::add(Default::default())]);
    let e = Server::start_with(ServerConfig::for_tests(), host)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown agent \"ghost\""), "{e}");
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A git repository with one commit.
fn repo() -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q", "-b", "main"]);
    std::fs::write(repo.path().join("README"), "hi\n").unwrap();
    git(repo.path(), &["add", "README"]);
    git(
        repo.path(),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
    repo
}

/// A reporting agent working in `repo`, worktrees under `parent`, requests may choose the workspace.
fn worktree_agent(repo: &Path, parent: &Path, keep: bool) -> ServerConfig {
    reporting(|a| {
        a.config = json!({"report_resources": true, "directory": repo});
        a.workspace = Some(WorkspaceSpec::GitWorktree {
            base_ref: String::new(),
            branch_template: String::new(),
            worktree_parent_dir: Some(parent.to_owned()),
        });
        a.keep_workspaces = keep;
        a.allow_request.workspace = true;
    })
}

#[tokio::test]
async fn a_granted_request_runs_in_its_own_git_worktree() {
    let repo = repo();
    let parent = tempfile::tempdir().unwrap();
    let server = start_with(worktree_agent(repo.path(), parent.path(), false)).await;
    let base = server.url();
    // The agent's spec: a worktree under the operator's parent directory, removed with its branch after.
    let m = metadata(&base, json!({"prompt": "hi"})).await;
    let cwd = m["cwd"].as_str().unwrap().to_owned();
    assert!(Path::new(&cwd).starts_with(parent.path()), "{cwd}");
    assert!(!Path::new(&cwd).exists(), "removed after the run: {cwd}");
    // The request's branch template, still under the operator's parent directory.
    let m = metadata(
        &base,
        json!({"prompt": "hi", "workspace": {"type": "git_worktree", "branch_template": "req/{short}"}}),
    )
    .await;
    let cwd = m["cwd"].as_str().unwrap().to_owned();
    let name = Path::new(&cwd)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        Path::new(&cwd).starts_with(parent.path()) && name.starts_with("req-"),
        "{cwd}"
    );
    let listed = git(repo.path(), &["worktree", "list"]);
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert_eq!(git(repo.path(), &["branch", "--list", "req/*"]), "");
    // The shared spec works in the directory itself.
    let m = metadata(&base, json!({"prompt": "hi", "workspace": {"type": "shared"}})).await;
    assert_eq!(
        Path::new(m["cwd"].as_str().unwrap()).canonicalize().unwrap(),
        repo.path().canonicalize().unwrap()
    );
    server.shutdown().await.unwrap();

    // `keep_workspaces`: the worktree and its branch stay for review.
    let server = start_with(worktree_agent(repo.path(), parent.path(), true)).await;
    let m = metadata(
        &server.url(),
        json!({"prompt": "hi", "workspace": {"type": "git_worktree", "branch_template": "keep/{short}"}}),
    )
    .await;
    assert!(Path::new(m["cwd"].as_str().unwrap()).join("README").is_file());
    let branches = git(repo.path(), &["branch", "--list", "keep/*"]);
    assert_eq!(branches.lines().count(), 1, "{branches}");
    server.shutdown().await.unwrap();
}

const SSE_TOOL: &str = "mcp__sseprobe__echo";
const HOST_TOOL: &str = "mcp__agent_adaptor_tools__add";

/// The model: first the configured SSE server's echo, then the host's `add`, then text quoting the sum.
fn script() -> Script {
    Script::from_fn(|req| match req.tool_results().first() {
        None => Reply::tool_use(SSE_TOOL, json!({"text": "hi"})),
        Some(r) if r.content.starts_with(ECHO_PREFIX) => Reply::tool_use(HOST_TOOL, json!({"a": 2, "b": 40})),
        Some(r) => Reply::text(format!("Sum: {}", r.content)),
    })
}

#[tokio::test]
async fn the_real_claude_cli_reaches_a_configured_mcp_server_and_a_host_tool() {
    let Some(cl) = crate::claude_driver::Cl::scripted(script(), |_| {}).await else {
        return;
    };
    let probe = SseMcpServer::start().await.unwrap();
    let mut config = ServerConfig::for_tests();
    let mut spec = claude_spec(&cl, json!({}));
    spec.mcp = vec![McpServer::sse("sseprobe", probe.url())];
    config.agents = vec![spec];
    let calls = crate::tools::Calls::default();
    let host = HostResources::default().tools("claude", [crate::tools::add(calls.clone())]);
    let server = Server::start_with(config, host).await.unwrap();
    let base = server.url();
    // Auto-approve: the one-shot transport; the SSE tool needs no answer, the host tool is pre-approved.
    let done = claude_run(&base, "echo then add").await;
    assert_eq!(done["state"], "succeeded", "{done}");
    assert_eq!(done["result"]["text"], "Sum: 42", "{done}");
    assert_eq!(probe.calls(), vec![json!({"text": "hi"})]);
    assert_eq!(*calls.lock().unwrap(), vec![(2, 40)]);
    server.shutdown().await.unwrap();
}

/// The `claude` agent of a real-CLI setup (its binary, project, config dir and environment), with the
/// spec fields in `extra` (as the configuration file would give them).
pub(super) fn claude_spec(cl: &crate::claude_driver::Cl, extra: Value) -> AgentSpec {
    let mut spec = json!({
        "name": "claude",
        "provider": "claude",
        "config": {
            "command": agent_adaptor::testkit::cli::find(agent_adaptor::testkit::cli::Cli::Claude),
            "directory": cl.env.cwd,
            "config_dir": cl.env.config_dir,
            "env": cl.env.vars(),
        },
    });
    for (k, v) in extra.as_object().cloned().unwrap_or_default() {
        spec[k] = v;
    }
    serde_json::from_value(spec).expect("a valid agent spec")
}

/// Runs `prompt` on the `claude` agent with auto-approval (the one-shot transport); the finished view.
pub(super) async fn claude_run(base: &str, prompt: &str) -> Value {
    let body = json!({"prompt": prompt, "approvals": {"permission": "auto_approve"}});
    let run = start_run(base, "/v1/agents/claude/runs", body).await;
    tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let v = super::state(base, &run_id(&run)).await;
            if v["state"] != "running" && v["state"] != "parked" {
                return v;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the run finished")
}

#[tokio::test]
async fn the_real_claude_cli_runs_on_the_dedicated_profile_its_configuration_selects() {
    let Some(cl) = crate::claude_driver::Cl::new().await else {
        return;
    };
    let dedicated = cl.env.root.join("served-profile");
    let mut config = ServerConfig::for_tests();
    config.agents = vec![claude_spec(
        &cl,
        json!({
            "profile": {"kind": "dedicated", "dir": dedicated},
            "profile_resources": {"instructions": "SERVED-PROFILE-MARKER: answer briefly."},
        }),
    )];
    let server = Server::start(config).await.unwrap();
    let done = claude_run(&server.url(), "hello served profile").await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let body = cl.requests().last().unwrap().body.clone().unwrap().to_string();
    assert!(
        body.contains("SERVED-PROFILE-MARKER"),
        "the profile's instructions reach the model"
    );
    cl.assert_session_in(&dedicated);
    server.shutdown().await.unwrap();
    cl.assert_reaped();
}
