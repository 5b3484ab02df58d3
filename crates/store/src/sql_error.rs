//! Maps sqlx errors to [`StoreError`] for both SQL backends: the one place that decides what is
//! retryable ([`StoreError::Unavailable`]), what is a constraint conflict, and what is corrupt data.

use sqlx::error::{DatabaseError, ErrorKind};
use sqlx::migrate::{MigrateError, Migrator};

use super::error::StoreError;

/// The default mapping; call sites that expect a specific constraint check [`is_unique_violation`] first.
pub(crate) fn map(err: sqlx::Error) -> StoreError {
    match err {
        sqlx::Error::Io(e) => unavailable(format!("I/O: {e}")),
        sqlx::Error::Tls(e) => unavailable(format!("TLS: {e}")),
        sqlx::Error::PoolTimedOut => unavailable("timed out waiting for a database connection".into()),
        sqlx::Error::PoolClosed => unavailable("the connection pool is closed".into()),
        sqlx::Error::WorkerCrashed => unavailable("the database worker crashed".into()),
        sqlx::Error::Protocol(e) => unavailable(format!("protocol: {e}")),
        sqlx::Error::BeginFailed => unavailable("could not begin a transaction".into()),
        sqlx::Error::RowNotFound => StoreError::NotFound,
        sqlx::Error::Database(db) => map_database(db.as_ref()),
        sqlx::Error::ColumnDecode { index, source } => StoreError::Corrupt {
            detail: format!("column {index} does not decode: {source}"),
        },
        sqlx::Error::Decode(e) => StoreError::Corrupt {
            detail: format!("value does not decode: {e}"),
        },
        sqlx::Error::Migrate(e) => StoreError::Backend {
            detail: format!("migration: {e}"),
        },
        other => StoreError::Backend {
            detail: other.to_string(),
        },
    }
}

/// Maps a failed migration run. `found` is the newest version recorded in the database, if readable.
pub(crate) fn map_migrate(err: MigrateError, found: Option<i64>, migrator: &Migrator) -> StoreError {
    let supported = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    match err {
        MigrateError::VersionMissing(version) => StoreError::SchemaVersion {
            found: found.unwrap_or(version).max(version),
            supported,
        },
        MigrateError::VersionMismatch(version) => StoreError::Corrupt {
            detail: format!("migration {version} in the database differs from the one this build ships"),
        },
        MigrateError::Dirty(version) => StoreError::Corrupt {
            detail: format!("migration {version} was only partially applied"),
        },
        MigrateError::Execute(e) | MigrateError::ExecuteMigration(e, _) => map(e),
        other => StoreError::Backend {
            detail: format!("migration: {other}"),
        },
    }
}

/// Whether the error is a unique-constraint violation.
pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
    matches!(err, sqlx::Error::Database(db) if db.kind() == ErrorKind::UniqueViolation)
}

fn unavailable(detail: String) -> StoreError {
    StoreError::Unavailable { detail }
}

fn map_database(db: &dyn DatabaseError) -> StoreError {
    let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
    let message = db.message();
    if retryable_code(&code) {
        return unavailable(format!("database ({code}): {message}"));
    }
    if code.len() < 5
        && code
            .parse::<i32>()
            .is_ok_and(|sqlite| matches!(sqlite & 0xff, 11 | 26))
    {
        // SQLITE_CORRUPT, SQLITE_NOTADB
        return StoreError::Corrupt {
            detail: format!("database file ({code}): {message}"),
        };
    }
    match code.as_str() {
        // character_not_in_repertoire, untranslatable_character: NUL in text or JSON.
        "22021" | "22P05" => {
            return StoreError::invalid("a value contains NUL (U+0000), which Postgres cannot store");
        }
        // program_limit_exceeded: e.g. a key too long for its index.
        "54000" => {
            return StoreError::invalid("a value is too large for the database (e.g. an overlong key)");
        }
        _ => {}
    }
    match db.kind() {
        ErrorKind::UniqueViolation | ErrorKind::ForeignKeyViolation | ErrorKind::CheckViolation => {
            StoreError::conflict(format!("constraint ({code}): {message}"))
        }
        _ => StoreError::Backend {
            detail: format!("({code}) {message}"),
        },
    }
}

/// Error codes that mean "try again": Postgres connection exceptions (class 08), operator intervention
/// (57P01-57P05), insufficient resources (53), serialization failure and deadlock (40001, 40P01), lock
/// timeout (55P03); SQLite BUSY / LOCKED in all their extended forms, I/O and disk-full errors.
fn retryable_code(code: &str) -> bool {
    if code.len() == 5 {
        // A Postgres SQLSTATE.
        return code.starts_with("08")
            || code.starts_with("53")
            || code.starts_with("57P")
            || matches!(code, "40001" | "40P01" | "55P03");
    }
    // A SQLite extended result code: the primary code is its low byte.
    code.parse::<i32>()
        .is_ok_and(|sqlite| matches!(sqlite & 0xff, 5 | 6 | 10 | 13 | 14))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_are_retryable() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        assert!(map(sqlx::Error::Io(io)).is_retryable());
        assert!(map(sqlx::Error::PoolTimedOut).is_retryable());
        assert_eq!(map(sqlx::Error::RowNotFound), StoreError::NotFound);
    }

    #[test]
    fn codes_classify() {
        assert!(retryable_code("08006"));
        assert!(retryable_code("57P01"));
        assert!(retryable_code("40P01"));
        assert!(retryable_code("5")); // SQLITE_BUSY
        assert!(retryable_code("517")); // SQLITE_BUSY_SNAPSHOT
        assert!(!retryable_code("2067")); // SQLITE_CONSTRAINT_UNIQUE
        assert!(!retryable_code("23505"));
        assert!(!retryable_code("42P01"));
    }
}
