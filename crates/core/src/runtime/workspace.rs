//! Per-execution workspace leases (spec §12): before the driver is entered the execution asks the
//! Agent's [`WorkspaceManager`] (the [`Passthrough`](crate::workspace::Passthrough) backend unless the
//! host injected one) for a lease according to the resolved [`WorkspaceSpec`], runs the driver in the
//! lease's directory, and releases the lease after the result is formed and before `Done`. A lease
//! failure fails the run before driver entry; a release failure (or a release that overruns
//! [`RELEASE_BOUND`]) joins the final outcome.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::workspace::{ReleaseMode, WorkspaceLease, WorkspaceManager, WorkspaceRequest, WorkspaceSpec};

/// The longest a release may take before the execution gives up on it and reports it.
pub(crate) const RELEASE_BOUND: Duration = Duration::from_secs(90);

/// How one execution provisions its workspace: the Agent's manager, the spec and the release mode.
#[derive(Clone)]
pub(crate) struct WorkspacePlan {
    pub manager: Arc<dyn WorkspaceManager>,
    pub spec: WorkspaceSpec,
    pub release: ReleaseMode,
}

impl std::fmt::Debug for WorkspacePlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspacePlan")
            .field("spec", &self.spec)
            .field("release", &self.release)
            .finish_non_exhaustive()
    }
}

impl WorkspacePlan {
    /// Leases the workspace of run `run_id` from the base directory `base_cwd`. The thread key, when
    /// there is one and the caller's metadata does not set `thread_key`, feeds branch templates' `{key}`.
    pub(crate) async fn lease(
        &self,
        base_cwd: PathBuf,
        run_id: &str,
        thread_key: Option<&str>,
        metadata: &BTreeMap<String, String>,
    ) -> Result<WorkspaceLease, String> {
        let mut metadata = metadata.clone();
        if let Some(k) = thread_key {
            metadata
                .entry("thread_key".to_owned())
                .or_insert_with(|| k.to_owned());
        }
        let req = WorkspaceRequest {
            base_cwd,
            spec: self.spec.clone(),
            run_id: run_id.to_owned(),
            metadata,
        };
        self.manager.resolve(req).await.map_err(|e| e.to_string())
    }

    /// Releases `lease` with the plan's mode, bounded by [`RELEASE_BOUND`].
    pub(crate) async fn release(&self, lease: WorkspaceLease) -> Result<(), String> {
        match tokio::time::timeout(RELEASE_BOUND, self.manager.release(lease, self.release)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("did not finish within {RELEASE_BOUND:?}")),
        }
    }
}
