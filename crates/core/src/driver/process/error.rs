//! [`ProcessError`]: why a child could not be started.

use std::ffi::OsString;
use std::io;

/// Why [`spawn`](super::spawn) failed. Stdin write failures are [`StdinError`](super::StdinError).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcessError {
    /// The program does not exist (or is not on the child's `PATH`): the CLI is not installed.
    #[error("program not found: {}", program.to_string_lossy())]
    NotFound {
        /// The program as given in the spec.
        program: OsString,
    },
    /// The operating system refused to start it.
    #[error("could not start {}: {source}", program.to_string_lossy())]
    Spawn {
        /// The program as given in the spec.
        program: OsString,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// `spawn` was called outside a tokio runtime.
    #[error("spawn must be called from within a tokio runtime")]
    NoRuntime,
    /// The dedicated spawner thread could not be started or is gone.
    #[error("the process spawner thread is unavailable: {0}")]
    SpawnerUnavailable(String),
    /// The registry is shutting down and accepts no new children.
    #[error("the process registry is shutting down")]
    ShuttingDown,
}
