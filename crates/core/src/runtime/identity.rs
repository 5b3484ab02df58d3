//! The effective identity, as host components see it (spec §4 `IdentityFromContext`).
//!
//! Every host hook the runtime calls for an execution — the skill provider and materializer, the
//! workspace manager, the service manager, run service providers and their event sources — runs with
//! the execution's resolved identity in scope; [`identity_from_context`] reads it. The resolved
//! identity is the call's, else the Agent's default, else the empty identity (no identity configured:
//! `Some(Identity::default())`). Agent-level operations outside an execution (skill inspection,
//! `sync_profile`) run with the Agent's default identity. Outside a host hook it returns `None`.
//!
//! The scope is task-local: a hook that spawns a task of its own reads the identity first and moves it
//! into that task.

use std::future::Future;

use crate::driver::Identity;

tokio::task_local! {
    static IDENTITY: Identity;
}

/// The effective identity of the execution (or Agent operation) whose host hook is running, or `None`
/// outside one.
pub fn identity_from_context() -> Option<Identity> {
    IDENTITY.try_with(Identity::clone).ok()
}

/// Runs `f` (an execution) with `identity` in scope.
pub(crate) fn scope<F: Future>(identity: Identity, f: F) -> impl Future<Output = F::Output> {
    IDENTITY.scope(identity, f)
}

/// Runs the synchronous `f` with `identity` in scope.
pub(crate) fn sync_scope<R>(identity: Identity, f: impl FnOnce() -> R) -> R {
    IDENTITY.sync_scope(identity, f)
}

/// Runs `f` with the identity already in scope, else with `fallback` (an Agent's default).
pub(crate) fn sync_scope_or<R>(fallback: Option<&Identity>, f: impl FnOnce() -> R) -> R {
    let identity = identity_from_context()
        .or_else(|| fallback.cloned())
        .unwrap_or_default();
    sync_scope(identity, f)
}

/// Carries the identity in scope (if any) into `f`, a future that will run on another task.
pub(crate) fn carry<F: Future>(f: F) -> impl Future<Output = F::Output> {
    let identity = identity_from_context();
    async move {
        match identity {
            Some(i) => IDENTITY.scope(i, f).await,
            None => f.await,
        }
    }
}
