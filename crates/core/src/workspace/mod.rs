//! Workspaces (spec §12): a [`WorkspaceSpec`] says how an execution's working directory is provisioned,
//! a [`WorkspaceManager`] leases and releases it.
//!
//! * [`Passthrough`] — the backend when none is injected: leases the base directory unchanged and never
//!   creates anything (a git-worktree spec still gets the base directory, as the spec says).
//! * [`GitWorktreeManager`] — creates a `git worktree` on a new branch from a base ref (system `git`,
//!   spawned only through `driver::process`) and removes worktree and branch on release with
//!   [`ReleaseMode::Stop`].

mod git;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use git::GitWorktreeManager;

/// How a workspace is provisioned.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "type", deny_unknown_fields)]
pub enum WorkspaceSpec {
    /// Work in the base directory itself.
    #[default]
    Shared,
    /// A fresh git worktree on a new branch.
    GitWorktree {
        /// The commit-ish the branch starts from (`HEAD` when empty).
        #[serde(default)]
        base_ref: String,
        /// The branch name template: `{run_id}`, `{short}` (8 random hex digits) and `{key}` (the
        /// `thread_key` metadata, or `run`) are replaced; `agent-adaptor/{short}` when empty.
        #[serde(default)]
        branch_template: String,
        /// Where worktrees are created; `<system temp>/agent-adaptor-worktrees` when `None`.
        #[serde(default)]
        worktree_parent_dir: Option<PathBuf>,
    },
    /// The driver provisions the workspace itself (the manager passes the base directory through).
    DriverManaged,
}

/// What a manager is asked to lease.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkspaceRequest {
    /// The base working directory.
    pub base_cwd: PathBuf,
    /// The provisioning strategy.
    pub spec: WorkspaceSpec,
    /// The execution id (used by branch templates).
    pub run_id: String,
    /// Caller metadata (`thread_key` feeds `{key}`).
    pub metadata: BTreeMap<String, String>,
}

/// A leased workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceLease {
    /// Lease id.
    pub id: String,
    /// The directory the execution works in.
    pub cwd: PathBuf,
    /// The base directory it came from.
    pub base_cwd: PathBuf,
    /// The branch created for it, for git worktrees.
    pub branch: Option<String>,
    /// The repository root, for git worktrees.
    pub repo: Option<PathBuf>,
}

/// What happens to a workspace on release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReleaseMode {
    /// Leave it in place (e.g. for review).
    Keep,
    /// Remove what the lease created.
    Stop,
}

/// Why a workspace could not be leased or released.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkspaceError {
    /// The base directory does not exist or is not a directory.
    #[error("workspace base {0:?} is not a directory")]
    BaseMissing(PathBuf),
    /// The base is not inside a git repository.
    #[error("{0:?} is not inside a git repository")]
    NotARepository(PathBuf),
    /// The branch template produced an invalid branch name.
    #[error("invalid branch name {0:?}")]
    InvalidBranch(String),
    /// A git command failed.
    #[error("git {command} failed: {stderr}")]
    Git {
        /// The command (without the program).
        command: String,
        /// Its stderr tail.
        stderr: String,
    },
}

/// Leases and releases workspaces.
#[async_trait::async_trait]
pub trait WorkspaceManager: Send + Sync {
    /// Provisions the workspace for one execution.
    async fn resolve(&self, req: WorkspaceRequest) -> Result<WorkspaceLease, WorkspaceError>;
    /// Releases a lease.
    async fn release(&self, lease: WorkspaceLease, mode: ReleaseMode) -> Result<(), WorkspaceError>;
}

/// Leases the base directory unchanged; creates and removes nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Passthrough;

#[async_trait::async_trait]
impl WorkspaceManager for Passthrough {
    async fn resolve(&self, req: WorkspaceRequest) -> Result<WorkspaceLease, WorkspaceError> {
        Ok(WorkspaceLease {
            id: format!("passthrough-{}", req.run_id),
            cwd: req.base_cwd.clone(),
            base_cwd: req.base_cwd,
            branch: None,
            repo: None,
        })
    }

    async fn release(&self, _lease: WorkspaceLease, _mode: ReleaseMode) -> Result<(), WorkspaceError> {
        Ok(())
    }
}
