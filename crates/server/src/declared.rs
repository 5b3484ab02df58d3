//! Threads declared through the service (`POST …/threads` and `POST …/threads/{key}/fork`) and what their
//! runs inherit: run defaults (model, metadata, approval policy) and, for a fork, the parent whose checkpoint
//! the first run starts from.
//!
//! Declarations are kept in the store ([`crate::store::Declaration`], keyed by tenant, agent and key), so a
//! thread declared but not yet run survives a restart with its defaults; the thread's record appears at its
//! first successful run (that is when a provider session exists to checkpoint). A declaration stays until
//! the thread is archived, so the defaults keep applying to later runs.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::error::ApiError;
use super::views::ThreadDefaults;
use crate::store::{Declaration, StoreError, ThreadStore};

/// One declared thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declared {
    /// The defaults its runs inherit.
    pub defaults: ThreadDefaults,
    /// The parent of a fork.
    pub forked_from: Option<String>,
    /// When it was declared.
    pub created_at: DateTime<Utc>,
}

/// The declared threads, by `(tenant, agent, key)`, in the store.
#[derive(Clone)]
pub struct DeclaredThreads {
    store: Arc<dyn ThreadStore>,
}

impl std::fmt::Debug for DeclaredThreads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeclaredThreads")
            .field("store", &self.store.backend())
            .finish()
    }
}

fn from_store(d: Declaration) -> Result<Declared, ApiError> {
    let defaults = serde_json::from_value(d.defaults).map_err(|e| {
        ApiError::store_failure(format!(
            "the stored defaults of thread {:?} are unreadable: {e}",
            d.key
        ))
    })?;
    Ok(Declared {
        defaults,
        forked_from: d.forked_from,
        created_at: d.created_at,
    })
}

impl DeclaredThreads {
    /// Declarations kept in `store`.
    pub fn new(store: Arc<dyn ThreadStore>) -> Self {
        DeclaredThreads { store }
    }

    /// The declaration of a thread.
    pub async fn get(&self, tenant: &str, agent: &str, key: &str) -> Result<Option<Declared>, ApiError> {
        self.store
            .get_declaration(tenant, agent, key)
            .await
            .map_err(ApiError::store)?
            .map(from_store)
            .transpose()
    }

    /// Declares a thread unless it is declared already; the inner `Err` carries the existing declaration.
    pub async fn insert_new(
        &self,
        tenant: &str,
        agent: &str,
        key: &str,
        decl: Declared,
    ) -> Result<Result<(), Declared>, ApiError> {
        let row = Declaration {
            tenant: tenant.to_owned(),
            agent: agent.to_owned(),
            key: key.to_owned(),
            defaults: serde_json::to_value(&decl.defaults).map_err(ApiError::store_failure)?,
            forked_from: decl.forked_from,
            created_at: decl.created_at,
        };
        match self.store.put_declaration(&row).await {
            Ok(()) => Ok(Ok(())),
            Err(StoreError::AlreadyExists { .. }) => match self.get(tenant, agent, key).await? {
                Some(existing) => Ok(Err(existing)),
                // Deleted in between: the key is free again, so try once more.
                None => match self.store.put_declaration(&row).await {
                    Ok(()) => Ok(Ok(())),
                    Err(e) => Err(ApiError::store(e)),
                },
            },
            Err(e) => Err(ApiError::store(e)),
        }
    }

    /// Forgets a declaration (archive); true when there was one.
    pub async fn remove(&self, tenant: &str, agent: &str, key: &str) -> Result<bool, ApiError> {
        self.store
            .delete_declaration(tenant, agent, key)
            .await
            .map_err(ApiError::store)
    }
}
