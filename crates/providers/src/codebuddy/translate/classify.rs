//! Failure classification of a turn that did not succeed: from the `result`'s error texts, which carry the
//! model API's status first (`"429 mock: rate limited (<request id>/<session id>)"`).

use crate::driver::{Failure, FailureCode};

use super::super::wire::ResultFrame;

/// The failure a non-successful `result` reports, classified from its error text (`"<status> <message>
/// (<ids>)"` for model errors, `"Permission denied for tool(s): …"` after a denial that interrupted).
pub fn result_failure(r: &ResultFrame) -> Option<Failure> {
    if r.is_success() {
        return None;
    }
    let message = if r.errors.is_empty() {
        format!("CodeBuddy ended the turn with {}", r.subtype)
    } else {
        r.errors.join("; ")
    };
    let mut f = Failure::new(classify(&message), message);
    f.details.insert("subtype".into(), r.subtype.clone().into());
    if let Some(n) = r.num_turns {
        f.details.insert("num_turns".into(), n.into());
    }
    Some(f)
}

/// Classifies an error text.
pub fn classify(message: &str) -> FailureCode {
    let lower = message.to_ascii_lowercase();
    let status: Option<u16> = message.get(..3).and_then(|s| s.parse().ok());
    match status {
        Some(429) => FailureCode::RateLimited,
        Some(500..=599) => FailureCode::ProviderServer,
        Some(408) => FailureCode::Network,
        _ if lower.starts_with("permission denied for tool") => FailureCode::DecisionRejected,
        _ if lower.contains("rate limit") => FailureCode::RateLimited,
        _ if [
            "aborted",
            "econnrefused",
            "econnreset",
            "fetch failed",
            "network",
            "socket hang up",
        ]
        .iter()
        .any(|w| lower.contains(w)) =>
        {
            FailureCode::Network
        }
        _ => FailureCode::AgentError,
    }
}
