//! Workspaces through the Agent: `AgentBuilder::workspace_manager` with the built-in git worktree
//! manager and a real repository in a temp dir. The reference driver (wrapped to record the `cwd` it
//! receives and what it sees there) runs in a worktree created for the run, which `ReleaseMode::Stop`
//! removes with its branch before the result is available; `Keep` leaves it; a lease failure fails the
//! run before the driver starts; a release failure reaches the result; without a manager the
//! passthrough backend leases the base unchanged.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_adaptor::driver::{Descriptor, Driver, InvalidConfig, Request, Response, RunIo};
use agent_adaptor::runtime::{Agent, CallOptions, FailureReason, RunOutcome};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver};
use agent_adaptor::workspace::{
    GitWorktreeManager, Passthrough, ReleaseMode, WorkspaceError, WorkspaceLease, WorkspaceManager,
    WorkspaceRequest, WorkspaceSpec,
};

use super::{git, repo};

/// What the driver saw: its `cwd`, the README there and the checked-out branch.
#[derive(Debug, Clone)]
struct Seen {
    cwd: PathBuf,
    readme: Option<String>,
    branch: String,
}

/// The reference driver, recording what each invocation sees in its working directory.
#[derive(Clone)]
struct Probe {
    inner: ReferenceDriver,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Probe {
    fn new() -> Probe {
        Probe {
            inner: ReferenceDriver::new(ReferenceConfig::default()),
            seen: Arc::default(),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Driver for Probe {
    fn descriptor(&self) -> Descriptor {
        self.inner.descriptor()
    }
    fn validate_config(&self) -> Result<(), InvalidConfig> {
        self.inner.validate_config()
    }
    async fn run(&self, req: Request, io: RunIo) -> Response {
        let branch = std::process::Command::new("git")
            .arg("-C")
            .arg(&req.cwd)
            .args(["rev-parse", "--abbrev-ref", "HEAD"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        self.seen.lock().unwrap().push(Seen {
            cwd: req.cwd.clone(),
            readme: std::fs::read_to_string(req.cwd.join("README")).ok(),
            branch,
        });
        self.inner.run(req, io).await
    }
}

fn worktree_spec(parent: &Path) -> WorkspaceSpec {
    WorkspaceSpec::GitWorktree {
        base_ref: "feature".into(),
        branch_template: "agent/{run_id}".into(),
        worktree_parent_dir: Some(parent.to_owned()),
    }
}

fn failure(outcome: &RunOutcome) -> (FailureReason, String, String) {
    let e = outcome
        .as_ref()
        .err()
        .and_then(|e| e.as_run())
        .unwrap_or_else(|| panic!("expected a run failure, got {outcome:?}"));
    (e.reason.clone(), e.message.clone(), e.result.text.clone())
}

#[tokio::test]
async fn a_run_works_in_a_worktree_of_its_own_that_stop_removes_afterwards() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let parent = tmp.path().join("trees");
    let probe = Probe::new();
    let agent = Agent::builder(probe.clone())
        .workspace(&repo)
        .workspace_manager(Arc::new(GitWorktreeManager::default()))
        .build();
    let stream = agent.send(
        "hello from a worktree",
        CallOptions::new().workspace_spec(worktree_spec(&parent)),
    );
    let run_id = stream.run_id().to_owned();
    let result = stream.result().await.expect("the run succeeds");
    assert!(result.text.contains("hello from a worktree"), "{}", result.text);

    let seen = probe.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    let s = &seen[0];
    assert!(
        s.cwd.starts_with(&parent),
        "the driver ran in the worktree: {}",
        s.cwd.display()
    );
    assert_ne!(s.cwd, repo);
    assert_eq!(
        s.readme.as_deref(),
        Some("feature"),
        "checked out from the base ref"
    );
    assert_eq!(
        s.branch,
        format!("agent/{run_id}"),
        "on the branch made for the run"
    );

    // Released with Stop before the result was available: worktree and branch are gone.
    assert!(!s.cwd.exists(), "the worktree is removed");
    assert!(
        !git(&repo, &["branch", "--list"]).contains("agent/"),
        "the branch is deleted"
    );
    assert!(!git(&repo, &["worktree", "list"]).contains(&*s.cwd.to_string_lossy()));
    assert_eq!(
        std::fs::read_to_string(repo.join("README")).unwrap(),
        "main",
        "the base is untouched"
    );
    agent.close(std::time::Duration::from_secs(5)).await.unwrap();
}

#[tokio::test]
async fn keep_leaves_the_worktree_and_the_agent_default_spec_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let parent = tmp.path().join("trees");
    let probe = Probe::new();
    let agent = Agent::builder(probe.clone())
        .workspace(&repo)
        .workspace_spec(worktree_spec(&parent))
        .workspace_manager(Arc::new(GitWorktreeManager::default()))
        .workspace_release(ReleaseMode::Keep)
        .build();
    agent.send("first", CallOptions::new()).result().await.unwrap();
    // A per-call spec replaces the Agent's: Shared works in the base itself.
    agent
        .send("second", CallOptions::new().workspace_spec(WorkspaceSpec::Shared))
        .result()
        .await
        .unwrap();
    let seen = probe.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen[0].cwd.starts_with(&parent));
    assert!(
        seen[0].cwd.join("README").is_file(),
        "Keep leaves the worktree for review"
    );
    assert!(git(&repo, &["branch", "--list"]).contains("agent/"));
    assert_eq!(seen[1].cwd, repo);
    assert_eq!(seen[1].readme.as_deref(), Some("main"));
}

#[tokio::test]
async fn a_lease_failure_fails_the_run_before_the_driver_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("not-a-repo");
    std::fs::create_dir_all(&plain).unwrap();
    let probe = Probe::new();
    let agent = Agent::builder(probe.clone())
        .workspace(&plain)
        .workspace_manager(Arc::new(GitWorktreeManager::default()))
        .build();
    let outcome = agent
        .send(
            "x",
            CallOptions::new().workspace_spec(worktree_spec(&tmp.path().join("trees"))),
        )
        .result()
        .await;
    let (reason, message, text) = failure(&outcome);
    assert_eq!(reason, FailureReason::InfrastructureError);
    assert!(
        message.contains("workspace lease failed") && message.contains("not inside a git repository"),
        "{message}"
    );
    assert!(text.is_empty());
    assert!(probe.seen().is_empty(), "the driver was never entered");
}

/// Leases the base (like passthrough) and fails every release.
struct FailingRelease;

#[async_trait::async_trait]
impl WorkspaceManager for FailingRelease {
    async fn resolve(&self, req: WorkspaceRequest) -> Result<WorkspaceLease, WorkspaceError> {
        Passthrough.resolve(req).await
    }
    async fn release(&self, _lease: WorkspaceLease, _mode: ReleaseMode) -> Result<(), WorkspaceError> {
        Err(WorkspaceError::Git {
            command: "worktree remove".into(),
            stderr: "boom: the disk is read-only".into(),
        })
    }
}

#[tokio::test]
async fn a_release_failure_reaches_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let probe = Probe::new();
    let agent = Agent::builder(probe.clone())
        .workspace(tmp.path())
        .workspace_manager(Arc::new(FailingRelease))
        .build();
    let outcome = agent.send("release me", CallOptions::new()).result().await;
    let (reason, message, text) = failure(&outcome);
    assert_eq!(reason, FailureReason::InfrastructureError);
    assert!(
        message.contains("workspace release failed") && message.contains("boom"),
        "{message}"
    );
    assert!(text.contains("release me"), "the run's result is kept: {text}");
    assert_eq!(probe.seen().len(), 1);
}

#[tokio::test]
async fn without_a_manager_a_worktree_spec_gets_the_base_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let probe = Probe::new();
    let agent = Agent::builder(probe.clone()).workspace(&repo).build();
    agent
        .send(
            "x",
            CallOptions::new().workspace_spec(worktree_spec(&tmp.path().join("trees"))),
        )
        .result()
        .await
        .unwrap();
    assert_eq!(probe.seen()[0].cwd, repo);
    assert!(!tmp.path().join("trees").exists(), "passthrough creates nothing");
    assert!(!git(&repo, &["branch", "--list"]).contains("agent/"));
}
