//! Workspaces with the real system git: the built-in worktree manager creates a worktree on a new
//! branch from a base ref in the parent dir, keeps it or removes worktree and branch on release; the
//! passthrough manager leases the base unchanged and creates nothing. `agent.rs`: the same through
//! `AgentBuilder::workspace_manager` and executions.

mod agent;

use std::path::Path;
use std::process::Command;

use agent_adaptor::workspace::{
    GitWorktreeManager, Passthrough, ReleaseMode, WorkspaceError, WorkspaceManager, WorkspaceRequest,
    WorkspaceSpec,
};

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@localhost")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@localhost")
        .output()
        .expect("git is installed");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repo with `main` (README = "main") and `feature` (README = "feature").
pub(crate) fn repo(root: &Path) -> std::path::PathBuf {
    let r = root.join("repo");
    std::fs::create_dir_all(&r).unwrap();
    git(&r, &["init", "-q", "-b", "main"]);
    std::fs::write(r.join("README"), "main").unwrap();
    git(&r, &["add", "README"]);
    git(&r, &["commit", "-q", "-m", "main"]);
    git(&r, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(r.join("README"), "feature").unwrap();
    git(&r, &["commit", "-q", "-am", "feature"]);
    git(&r, &["checkout", "-q", "main"]);
    r
}

fn request(base: &Path, spec: WorkspaceSpec, run: &str) -> WorkspaceRequest {
    let mut r = WorkspaceRequest {
        base_cwd: base.to_owned(),
        spec,
        run_id: run.into(),
        ..Default::default()
    };
    r.metadata.insert("thread_key".into(), "t1".into());
    r
}

#[tokio::test]
async fn a_git_worktree_is_created_from_the_base_ref_and_removed_on_stop() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let parent = tmp.path().join("trees");
    let spec = WorkspaceSpec::GitWorktree {
        base_ref: "feature".into(),
        branch_template: "agent/{key}/{run_id}".into(),
        worktree_parent_dir: Some(parent.clone()),
    };
    let m = GitWorktreeManager::default();
    let lease = m.resolve(request(&repo, spec.clone(), "run-1")).await.unwrap();
    assert_eq!(lease.branch.as_deref(), Some("agent/t1/run-1"));
    assert!(lease.cwd.starts_with(&parent), "{}", lease.cwd.display());
    assert_eq!(
        std::fs::read_to_string(lease.cwd.join("README")).unwrap(),
        "feature"
    );
    assert_eq!(
        git(&lease.cwd, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "agent/t1/run-1"
    );
    assert!(git(&repo, &["worktree", "list"]).contains(&*lease.cwd.to_string_lossy()));
    assert_eq!(
        git(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main",
        "the base is untouched"
    );

    // A second lease gets its own worktree and branch.
    let other = m.resolve(request(&repo, spec, "run-2")).await.unwrap();
    assert_ne!(other.cwd, lease.cwd);

    m.release(lease.clone(), ReleaseMode::Stop).await.unwrap();
    assert!(!lease.cwd.exists(), "the worktree is removed");
    assert!(
        !git(&repo, &["branch", "--list"]).contains("agent/t1/run-1"),
        "the branch is deleted"
    );
    assert!(!git(&repo, &["worktree", "list"]).contains(&*lease.cwd.to_string_lossy()));

    m.release(other.clone(), ReleaseMode::Keep).await.unwrap();
    assert!(other.cwd.join("README").is_file(), "Keep leaves the worktree");
    assert!(git(&repo, &["branch", "--list"]).contains("agent/t1/run-2"));
    m.release(other.clone(), ReleaseMode::Stop).await.unwrap();
    assert!(!other.cwd.exists());
}

#[tokio::test]
async fn the_default_template_and_head_and_typed_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let m = GitWorktreeManager::default();
    let spec = WorkspaceSpec::GitWorktree {
        base_ref: String::new(),
        branch_template: String::new(),
        worktree_parent_dir: Some(tmp.path().join("trees")),
    };
    let lease = m.resolve(request(&repo, spec.clone(), "r")).await.unwrap();
    assert!(lease.branch.as_deref().unwrap().starts_with("agent-adaptor/"));
    assert_eq!(std::fs::read_to_string(lease.cwd.join("README")).unwrap(), "main");
    m.release(lease, ReleaseMode::Stop).await.unwrap();

    let plain = tmp.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let e = m.resolve(request(&plain, spec.clone(), "r")).await.unwrap_err();
    assert!(matches!(e, WorkspaceError::NotARepository(_)), "{e}");
    let e = m
        .resolve(request(&tmp.path().join("missing"), spec.clone(), "r"))
        .await
        .unwrap_err();
    assert!(matches!(e, WorkspaceError::BaseMissing(_)), "{e}");
    let bad = WorkspaceSpec::GitWorktree {
        base_ref: "no-such-ref".into(),
        branch_template: "x/{short}".into(),
        worktree_parent_dir: Some(tmp.path().join("trees")),
    };
    let e = m.resolve(request(&repo, bad, "r")).await.unwrap_err();
    assert!(matches!(e, WorkspaceError::Git { .. }), "{e}");
    let e = m
        .resolve(request(
            &repo,
            WorkspaceSpec::GitWorktree {
                base_ref: String::new(),
                branch_template: "bad..name".into(),
                worktree_parent_dir: None,
            },
            "r",
        ))
        .await
        .unwrap_err();
    assert!(matches!(e, WorkspaceError::InvalidBranch(_)), "{e}");
}

#[tokio::test]
async fn passthrough_and_non_git_specs_lease_the_base_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = repo(tmp.path());
    let before = std::fs::read_dir(tmp.path()).unwrap().count();
    let spec = WorkspaceSpec::GitWorktree {
        base_ref: String::new(),
        branch_template: String::new(),
        worktree_parent_dir: Some(tmp.path().join("trees")),
    };
    let lease = Passthrough.resolve(request(&repo, spec, "r")).await.unwrap();
    assert_eq!(lease.cwd, repo, "passthrough never creates a worktree");
    assert!(lease.branch.is_none());
    Passthrough.release(lease, ReleaseMode::Stop).await.unwrap();
    let git_m = GitWorktreeManager::default();
    for spec in [WorkspaceSpec::Shared, WorkspaceSpec::DriverManaged] {
        let lease = git_m.resolve(request(&repo, spec, "r")).await.unwrap();
        assert_eq!(lease.cwd, repo);
        git_m.release(lease, ReleaseMode::Stop).await.unwrap();
    }
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        before,
        "nothing was created"
    );
    assert!(repo.join("README").is_file(), "the base survives a Stop release");
}
