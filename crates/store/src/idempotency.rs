//! Idempotency keys: the durable memory behind the service's `Idempotency-Key` header. A request
//! **claims** `(tenant, key)` with the hash of what it asks; exactly one concurrent claimer wins. The
//! winner either **completes** the key with the answer to replay, or **releases** it (an answer that is
//! not replayed). A claim that is neither completed nor released within its lapse time is dead and can
//! be claimed afresh; a completed key lives for its keep time, then is dead too and purged.
//!
//! Times are the caller's ([`IdempotencyClaim::at`]), so every backend decides liveness alike.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::error::StoreError;
use super::rules;

/// A request to claim an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyClaim {
    /// The tenant (keys are per tenant).
    pub tenant: String,
    /// The client's key.
    pub key: String,
    /// The hash of the request (method, route, canonical body); another hash under the key is a mismatch.
    pub request_hash: String,
    /// A token unique to this claim: only its holder completes or releases the key.
    pub token: String,
    /// Now, by the caller's clock.
    pub at: DateTime<Utc>,
    /// How long an uncompleted claim holds the key.
    pub lapse: Duration,
    /// How long a completed key is kept.
    pub keep: Duration,
}

/// The answer stored under a completed key, replayed to a repeated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAnswer {
    /// The HTTP status (2xx).
    pub status: u16,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The `Location` header.
    pub location: Option<String>,
    /// The body, as sent (JSON text).
    pub body: String,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// The key is this claim's: run the request, then complete or release the key.
    Claimed,
    /// Another claim of the same request is still live.
    InProgress,
    /// The key holds (or is claimed for) a different request.
    Mismatch,
    /// The same request completed: replay this.
    Completed(StoredAnswer),
}

/// Checks a claim's fields as every backend requires them.
pub(crate) fn check_claim(c: &IdempotencyClaim) -> Result<(), StoreError> {
    rules::require("tenant", &c.tenant)?;
    rules::require("idempotency key", &c.key)?;
    rules::require("request hash", &c.request_hash)?;
    rules::require("claim token", &c.token)?;
    Ok(())
}

/// Checks an answer before it is stored.
pub(crate) fn check_answer(a: &StoredAnswer) -> Result<(), StoreError> {
    if a.body.contains('\0') || a.content_type.as_deref().is_some_and(|v| v.contains('\0')) {
        return Err(StoreError::invalid(
            "an idempotent answer must not contain NUL (U+0000)",
        ));
    }
    if a.location.as_deref().is_some_and(|v| v.contains('\0')) {
        return Err(StoreError::invalid(
            "an idempotent answer must not contain NUL (U+0000)",
        ));
    }
    Ok(())
}

/// `at` minus `age`, saturating at the earliest representable instant.
fn before(at: DateTime<Utc>, age: Duration) -> DateTime<Utc> {
    rules::micros(
        at.checked_sub_signed(rules::age(age))
            .unwrap_or(DateTime::<Utc>::MIN_UTC),
    )
}

/// The instant at or before which an uncompleted claim is dead.
pub(crate) fn lapse_cutoff(c: &IdempotencyClaim) -> DateTime<Utc> {
    before(c.at, c.lapse)
}

/// The instant at or before which a completed key is dead.
pub(crate) fn keep_cutoff(c: &IdempotencyClaim) -> DateTime<Utc> {
    before(c.at, c.keep)
}

/// True when a key row (completed or not) created at `created_at` no longer holds its key.
pub(crate) fn is_dead(c: &IdempotencyClaim, completed: bool, created_at: DateTime<Utc>) -> bool {
    if completed {
        created_at <= keep_cutoff(c)
    } else {
        created_at <= lapse_cutoff(c)
    }
}

/// A stored key as both SQL backends read it back.
#[cfg(feature = "sql")]
#[derive(Debug, sqlx::FromRow)]
pub(crate) struct KeyRow {
    pub(crate) request_hash: String,
    pub(crate) state: String,
    pub(crate) status: Option<i32>,
    pub(crate) content_type: Option<String>,
    pub(crate) location: Option<String>,
    pub(crate) body: Option<String>,
}

#[cfg(feature = "sql")]
impl KeyRow {
    /// What a claim of `c` finds in this live row.
    pub(crate) fn outcome(self, c: &IdempotencyClaim) -> Result<ClaimOutcome, StoreError> {
        if self.request_hash != c.request_hash {
            return Ok(ClaimOutcome::Mismatch);
        }
        let id = format!("{}/{}", c.tenant, c.key);
        let row = super::decode::at("idempotency_keys", &id);
        match self.state.as_str() {
            "claimed" => Ok(ClaimOutcome::InProgress),
            "completed" => {
                let status = self
                    .status
                    .and_then(|s| u16::try_from(s).ok())
                    .ok_or_else(|| StoreError::corrupt("idempotency_keys", &id, "column status: missing"))?;
                Ok(ClaimOutcome::Completed(StoredAnswer {
                    status,
                    content_type: self.content_type,
                    location: self.location,
                    body: self.body.unwrap_or_default(),
                }))
            }
            other => Err(row
                .text_enum("state", other, |_| None::<()>)
                .err()
                .unwrap_or_else(|| StoreError::corrupt("idempotency_keys", &id, "column state"))),
        }
    }
}
