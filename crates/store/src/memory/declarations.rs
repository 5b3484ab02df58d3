//! Thread declarations for the in-memory store.

use std::collections::BTreeMap;

use crate::rules::{self, micros};
use crate::{Declaration, StoreError, StoreResult};

/// Declarations by `(tenant, agent, key)`.
#[derive(Debug, Default)]
pub(super) struct Declarations {
    map: BTreeMap<(String, String, String), Declaration>,
}

fn id(tenant: &str, agent: &str, key: &str) -> (String, String, String) {
    (tenant.to_owned(), agent.to_owned(), key.to_owned())
}

impl Declarations {
    pub(super) fn put(&mut self, d: &Declaration) -> StoreResult<()> {
        rules::require("tenant", &d.tenant)?;
        rules::require("agent", &d.agent)?;
        rules::require("key", &d.key)?;
        let slot = id(&d.tenant, &d.agent, &d.key);
        if self.map.contains_key(&slot) {
            return Err(StoreError::AlreadyExists { key: d.key.clone() });
        }
        let stored = Declaration {
            created_at: micros(d.created_at),
            ..d.clone()
        };
        self.map.insert(slot, stored);
        Ok(())
    }

    pub(super) fn get(&self, tenant: &str, agent: &str, key: &str) -> Option<Declaration> {
        self.map.get(&id(tenant, agent, key)).cloned()
    }

    pub(super) fn delete(&mut self, tenant: &str, agent: &str, key: &str) -> bool {
        self.map.remove(&id(tenant, agent, key)).is_some()
    }
}
