//! `StoreError`: every way a store operation can fail, typed so callers match instead of parsing text.
//!
//! Backends map their driver errors here (see `sql_error` for the SQL backends); no sqlx type crosses
//! this boundary. Only [`StoreError::Unavailable`] is worth retrying as-is.

/// A failed store operation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another owner holds an unexpired lease on the target.
    #[error("lease on {target:?} is held by another owner")]
    Busy {
        /// The leased target.
        target: String,
    },
    /// The lease is no longer current: it expired, was released, or another owner (or a newer token of
    /// the same owner) took it over. Whatever the caller was about to persist must be dropped.
    #[error("lease on {target:?} is no longer held (expired, released or taken over)")]
    LeaseLost {
        /// The leased target.
        target: String,
    },
    /// The thing being created exists already: an active thread for the key (the fork compare-and-set),
    /// or a run / approval with the same id.
    #[error("{key:?} already exists")]
    AlreadyExists {
        /// The thread key, run id or request id.
        key: String,
    },
    /// Nothing matches.
    #[error("not found")]
    NotFound,
    /// The write contradicts what is stored (for example a second active record for a key without
    /// `rebind_active`, or a change to a finished run).
    #[error("conflict: {detail}")]
    Conflict {
        /// What conflicted.
        detail: String,
    },
    /// The approval was resolved before; its first decision stands.
    #[error("approval {request_id:?} was already resolved")]
    AlreadyResolved {
        /// The approval request id.
        request_id: String,
    },
    /// The approval's deadline passed before a decision arrived.
    #[error("approval {request_id:?} has expired")]
    Expired {
        /// The approval request id.
        request_id: String,
    },
    /// The database could not be reached or gave up (connection, I/O, pool timeout, lock timeout,
    /// serialization failure). Retryable; a write that failed this way either happened entirely or not at
    /// all, and the caller cannot tell which unless it reads back.
    #[error("store unavailable: {detail}")]
    Unavailable {
        /// What went wrong, without credentials.
        detail: String,
    },
    /// Stored data cannot be decoded (names the table and row).
    #[error("corrupt stored data: {detail}")]
    Corrupt {
        /// The table, the row id and what is wrong with it.
        detail: String,
    },
    /// The database was migrated by a newer agent-adaptor than this one; refusing to touch it.
    #[error(
        "database schema version {found} is newer than the newest this build knows ({supported}); \
         upgrade agent-adaptor or point it at another database"
    )]
    SchemaVersion {
        /// The newest migration applied to the database.
        found: i64,
        /// The newest migration this build ships.
        supported: i64,
    },
    /// The request itself is malformed (empty id, zero TTL, unsupported store URL, value out of range).
    #[error("invalid store request: {detail}")]
    Invalid {
        /// What is wrong with it.
        detail: String,
    },
    /// The store does not implement an optional capability of [`super::ThreadStore`] (the trait's
    /// default method answered): idempotency keys, run listing, metering or crash recovery. Not the
    /// caller's fault and not retryable.
    #[error("the {backend} store does not {what}")]
    Unsupported {
        /// The store's [`super::ThreadStore::backend`] name.
        backend: &'static str,
        /// What it does not do ("keep idempotency keys", "list runs", …).
        what: &'static str,
    },
    /// The database rejected the operation for a reason not covered above (a bug, or a schema edited by
    /// hand).
    #[error("database error: {detail}")]
    Backend {
        /// The database's message.
        detail: String,
    },
}

impl StoreError {
    /// Whether retrying the same call may succeed (only [`StoreError::Unavailable`]).
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// A stable, machine-readable name for the variant (for logs, metrics and HTTP error codes).
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Busy { .. } => "busy",
            StoreError::LeaseLost { .. } => "lease_lost",
            StoreError::AlreadyExists { .. } => "already_exists",
            StoreError::NotFound => "not_found",
            StoreError::Conflict { .. } => "conflict",
            StoreError::AlreadyResolved { .. } => "already_resolved",
            StoreError::Expired { .. } => "expired",
            StoreError::Unavailable { .. } => "unavailable",
            StoreError::Corrupt { .. } => "corrupt",
            StoreError::SchemaVersion { .. } => "schema_version",
            StoreError::Invalid { .. } => "invalid",
            StoreError::Unsupported { .. } => "unsupported",
            StoreError::Backend { .. } => "backend",
        }
    }

    /// Shorthand for [`StoreError::Invalid`].
    pub(crate) fn invalid(detail: impl Into<String>) -> Self {
        StoreError::Invalid {
            detail: detail.into(),
        }
    }

    /// Shorthand for [`StoreError::Unsupported`].
    pub(crate) fn unsupported(backend: &'static str, what: &'static str) -> Self {
        StoreError::Unsupported { backend, what }
    }

    /// Shorthand for [`StoreError::Corrupt`] naming the table and row.
    #[cfg_attr(not(feature = "sql"), allow(dead_code))]
    pub(crate) fn corrupt(table: &str, row: impl std::fmt::Display, what: impl std::fmt::Display) -> Self {
        StoreError::Corrupt {
            detail: format!("{table} row {row}: {what}"),
        }
    }

    /// Shorthand for [`StoreError::Conflict`].
    pub(crate) fn conflict(detail: impl Into<String>) -> Self {
        StoreError::Conflict {
            detail: detail.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unavailable_is_retryable() {
        assert!(
            StoreError::Unavailable {
                detail: "reset".into()
            }
            .is_retryable()
        );
        assert!(!StoreError::Busy { target: "t".into() }.is_retryable());
        assert!(!StoreError::NotFound.is_retryable());
    }

    #[test]
    fn messages_name_the_subject() {
        let err = StoreError::corrupt("threads", "id=7", "unknown status \"x\"");
        assert_eq!(
            err.to_string(),
            "corrupt stored data: threads row id=7: unknown status \"x\""
        );
        assert_eq!(err.code(), "corrupt");
        let err = StoreError::SchemaVersion {
            found: 9,
            supported: 1,
        };
        assert!(err.to_string().contains("version 9"), "{err}");
    }
}
