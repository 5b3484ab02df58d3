//! [`GitWorktreeManager`]: `git worktree add -b <branch> <dir> <base>` per lease, `git worktree remove`
//! plus `git branch -D` on a stopping release. Git runs through `driver::process` (own process group,
//! reaped), with a clean environment (no user git config can redirect it) and a deadline.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::RngExt;

use super::{ReleaseMode, WorkspaceError, WorkspaceLease, WorkspaceManager, WorkspaceRequest, WorkspaceSpec};
use crate::driver::process::{ProcessRegistry, ProcessSpec, read_text, spawn};

/// Deadline for one git command.
const GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// The built-in git worktree manager. Specs other than [`WorkspaceSpec::GitWorktree`] pass through.
#[derive(Debug, Clone)]
pub struct GitWorktreeManager {
    git: PathBuf,
    registry: ProcessRegistry,
}

impl Default for GitWorktreeManager {
    fn default() -> Self {
        GitWorktreeManager::new("git")
    }
}

impl GitWorktreeManager {
    /// A manager running this git program.
    pub fn new(git: impl Into<PathBuf>) -> Self {
        GitWorktreeManager {
            git: git.into(),
            registry: ProcessRegistry::new(),
        }
    }

    /// Runs `git -C <dir> <args>` and returns its stdout.
    async fn git(&self, dir: &Path, args: &[&str]) -> Result<String, WorkspaceError> {
        let command = args.join(" ");
        let fail = |stderr: String| WorkspaceError::Git {
            command: command.clone(),
            stderr,
        };
        let spec = ProcessSpec::new(&self.git)
            .arg("-C")
            .arg(dir)
            .args(args)
            .inherit_base_env()
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "agent-adaptor")
            .env("GIT_AUTHOR_EMAIL", "agent-adaptor@localhost")
            .env("GIT_COMMITTER_NAME", "agent-adaptor")
            .env("GIT_COMMITTER_EMAIL", "agent-adaptor@localhost")
            .label(format!("git {command}"));
        let mut child = spawn(&self.registry, spec)
            .await
            .map_err(|e| fail(e.to_string()))?;
        let mut out = child.take_stdout().ok_or_else(|| fail("no stdout".into()))?;
        let run = async {
            let text = read_text(&mut out).await;
            (text, child.wait().await)
        };
        let (text, exit) = tokio::time::timeout(GIT_TIMEOUT, run)
            .await
            .map_err(|_| fail("timed out".into()))?;
        if exit.success() {
            Ok(text)
        } else {
            Err(fail(child.stderr().tail_lossy().trim().to_owned()))
        }
    }
}

fn random_short() -> String {
    let mut b = [0u8; 4];
    rand::rng().fill(&mut b[..]);
    hex::encode(b)
}

/// Expands a branch template.
pub(crate) fn branch_name(template: &str, req: &WorkspaceRequest) -> String {
    let template = if template.trim().is_empty() {
        "agent-adaptor/{short}"
    } else {
        template
    };
    let key = req.metadata.get("thread_key").map_or("run", String::as_str);
    template
        .replace("{run_id}", &req.run_id)
        .replace("{key}", key)
        .replace("{short}", &random_short())
}

/// A conservative branch-name check (a subset of `git check-ref-format --branch`).
fn valid_branch(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['-', '/', '.'])
        && !name.ends_with(['/', '.'])
        && !name.ends_with(".lock")
        && !name.contains("..")
        && !name.contains("//")
        && !name.contains("@{")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'))
}

#[async_trait::async_trait]
impl WorkspaceManager for GitWorktreeManager {
    async fn resolve(&self, req: WorkspaceRequest) -> Result<WorkspaceLease, WorkspaceError> {
        let WorkspaceSpec::GitWorktree {
            base_ref,
            branch_template,
            worktree_parent_dir,
        } = &req.spec
        else {
            return super::Passthrough.resolve(req).await;
        };
        if !req.base_cwd.is_dir() {
            return Err(WorkspaceError::BaseMissing(req.base_cwd.clone()));
        }
        let repo = self
            .git(&req.base_cwd, &["rev-parse", "--show-toplevel"])
            .await
            .map_err(|_| WorkspaceError::NotARepository(req.base_cwd.clone()))?;
        let repo = PathBuf::from(repo.trim());
        let branch = branch_name(branch_template, &req);
        if !valid_branch(&branch) {
            return Err(WorkspaceError::InvalidBranch(branch));
        }
        let parent = worktree_parent_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("agent-adaptor-worktrees"));
        std::fs::create_dir_all(&parent).map_err(|e| WorkspaceError::Git {
            command: "worktree add".into(),
            stderr: format!("creating {}: {e}", parent.display()),
        })?;
        let dir = parent.join(branch.replace('/', "-"));
        let base = if base_ref.trim().is_empty() {
            "HEAD"
        } else {
            base_ref.as_str()
        };
        let dir_text = dir.to_string_lossy().into_owned();
        self.git(&repo, &["worktree", "add", "-b", &branch, &dir_text, base])
            .await?;
        Ok(WorkspaceLease {
            id: format!("worktree-{}", req.run_id),
            cwd: dir,
            base_cwd: req.base_cwd,
            branch: Some(branch),
            repo: Some(repo),
        })
    }

    async fn release(&self, lease: WorkspaceLease, mode: ReleaseMode) -> Result<(), WorkspaceError> {
        let (Some(repo), Some(branch), ReleaseMode::Stop) = (&lease.repo, &lease.branch, mode) else {
            return Ok(());
        };
        let dir = lease.cwd.to_string_lossy().into_owned();
        self.git(repo, &["worktree", "remove", "--force", &dir]).await?;
        self.git(repo, &["branch", "-D", branch]).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_and_bad_branches_are_caught() {
        let mut req = WorkspaceRequest {
            run_id: "run-1".into(),
            ..Default::default()
        };
        req.metadata.insert("thread_key".into(), "t7".into());
        assert_eq!(branch_name("agent/{key}/{run_id}", &req), "agent/t7/run-1");
        let d = branch_name("", &req);
        assert!(
            d.starts_with("agent-adaptor/") && d.len() == "agent-adaptor/".len() + 8,
            "{d}"
        );
        assert!(valid_branch("agent/t7/run-1"));
        for bad in ["", "-x", "a..b", "a b", "a/", "x.lock", "a@{1}", "/a"] {
            assert!(!valid_branch(bad), "{bad}");
        }
    }
}
