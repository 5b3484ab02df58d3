//! The load generator's one error type: what went wrong talking to, starting or measuring the service.

/// Why a scenario could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// A socket, file or process operation failed.
    #[error("io: {0}")]
    Io(#[from] std::io::Error),
    /// The service answered something that is not the HTTP/SSE it should speak.
    #[error("http: {0}")]
    Http(String),
    /// The service answered an unexpected status.
    #[error("{path}: status {status}: {body}")]
    Status {
        /// The request path.
        path: String,
        /// The status.
        status: u16,
        /// The body.
        body: String,
    },
    /// The service process could not be started or did not come up.
    #[error("server: {0}")]
    Server(String),
    /// Something did not happen in time.
    #[error("timeout: {0}")]
    Timeout(String),
    /// The run or the stream did something the scenario does not allow.
    #[error("protocol: {0}")]
    Protocol(String),
}
