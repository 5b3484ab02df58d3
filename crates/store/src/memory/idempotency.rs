//! Idempotency keys for the in-memory store.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use crate::StoreResult;
use crate::idempotency::{ClaimOutcome, IdempotencyClaim, StoredAnswer, check_answer, check_claim, is_dead};
use crate::rules::micros;

/// One key's row.
#[derive(Debug, Clone)]
struct Entry {
    request_hash: String,
    token: String,
    created_at: DateTime<Utc>,
    answer: Option<StoredAnswer>,
}

/// Keys by `(tenant, key)`.
#[derive(Debug, Default)]
pub(super) struct Keys {
    keys: BTreeMap<(String, String), Entry>,
}

impl Keys {
    pub(super) fn claim(&mut self, c: &IdempotencyClaim) -> StoreResult<ClaimOutcome> {
        check_claim(c)?;
        let id = (c.tenant.clone(), c.key.clone());
        if let Some(e) = self.keys.get(&id)
            && !is_dead(c, e.answer.is_some(), e.created_at)
        {
            return Ok(if e.request_hash != c.request_hash {
                ClaimOutcome::Mismatch
            } else {
                match &e.answer {
                    Some(answer) => ClaimOutcome::Completed(answer.clone()),
                    None => ClaimOutcome::InProgress,
                }
            });
        }
        self.keys.insert(
            id,
            Entry {
                request_hash: c.request_hash.clone(),
                token: c.token.clone(),
                created_at: micros(c.at),
                answer: None,
            },
        );
        Ok(ClaimOutcome::Claimed)
    }

    pub(super) fn complete(
        &mut self,
        tenant: &str,
        key: &str,
        token: &str,
        answer: &StoredAnswer,
    ) -> StoreResult<bool> {
        check_answer(answer)?;
        match self.keys.get_mut(&(tenant.to_owned(), key.to_owned())) {
            Some(e) if e.token == token && e.answer.is_none() => {
                e.answer = Some(answer.clone());
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub(super) fn release(&mut self, tenant: &str, key: &str, token: &str) -> bool {
        let id = (tenant.to_owned(), key.to_owned());
        match self.keys.get(&id) {
            Some(e) if e.token == token && e.answer.is_none() => {
                self.keys.remove(&id);
                true
            }
            _ => false,
        }
    }

    pub(super) fn purge(&mut self, cutoff: DateTime<Utc>) -> u64 {
        let before = self.keys.len();
        self.keys.retain(|_, e| e.created_at > cutoff);
        (before - self.keys.len()) as u64
    }
}
