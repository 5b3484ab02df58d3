//! Threads declared through the service (`POST …/threads` and `POST …/threads/{key}/fork`) and what their
//! runs inherit: run defaults (model, metadata, approval policy) and, for a fork, the parent whose checkpoint
//! the first run starts from.
//!
//! Declarations live in this process: the store gets a thread's record at its first successful run (that is
//! when a provider session exists to checkpoint). A declared thread that never ran is forgotten by a
//! restart, and so are a thread's run defaults; a fork whose first run succeeded is an ordinary thread.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use super::views::ThreadDefaults;

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

/// The declared threads of this process, by `(tenant, agent, key)`.
#[derive(Debug, Default)]
pub struct DeclaredThreads {
    map: Mutex<HashMap<(String, String, String), Declared>>,
}

fn id(tenant: &str, agent: &str, key: &str) -> (String, String, String) {
    (tenant.to_owned(), agent.to_owned(), key.to_owned())
}

impl DeclaredThreads {
    /// The declaration of a thread.
    pub fn get(&self, tenant: &str, agent: &str, key: &str) -> Option<Declared> {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id(tenant, agent, key))
            .cloned()
    }

    /// Declares a thread unless it is declared already; `Err` carries the existing declaration.
    pub fn insert_new(&self, tenant: &str, agent: &str, key: &str, decl: Declared) -> Result<(), Declared> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(&id(tenant, agent, key)) {
            Some(existing) => Err(existing.clone()),
            None => {
                map.insert(id(tenant, agent, key), decl);
                Ok(())
            }
        }
    }

    /// Forgets a declaration (archive); true when there was one.
    pub fn remove(&self, tenant: &str, agent: &str, key: &str) -> bool {
        self.map
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id(tenant, agent, key))
            .is_some()
    }
}
