//! Failure classification of a turn that did not succeed. `is_error` is the authority (API failures come
//! as `subtype:"success"` with `is_error:true`); the HTTP status (`api_error_status`), the subtype and the
//! error texts decide the code.

use crate::driver::{Failure, FailureCode};
use crate::status::statuses_in;

use super::super::wire::ResultFrame;

/// The regex-free resume rejection test: `No conversation found with session ID: <id>` (and the older
/// spellings the Go original recognised).
pub fn is_resume_rejection(text: &str) -> bool {
    let t = text.trim().to_ascii_lowercase();
    let t = t.strip_prefix("error:").map_or(t.as_str(), str::trim);
    t.starts_with("no conversation found with session id")
        || (t.starts_with("conversation with id") && t.contains("not found"))
        || t.starts_with("failed to resume session")
}

/// The failure a non-successful `result` reports (None for a success).
pub fn result_failure(r: &ResultFrame) -> Option<Failure> {
    if !r.is_error && r.subtype == "success" {
        return None;
    }
    let errors = r.errors.clone().unwrap_or_default();
    let message = match (&r.result, errors.is_empty()) {
        (Some(t), _) if !t.is_empty() && r.subtype == "success" => t.clone(),
        (_, false) => errors.join("; "),
        (Some(t), true) if !t.is_empty() => t.clone(),
        _ => format!("Claude ended the turn with {}", r.subtype),
    };
    let code = if errors.iter().any(|e| is_resume_rejection(e)) {
        FailureCode::ResumeRejected
    } else {
        match r.api_error_status {
            Some(s) => by_status(s, &message),
            None => classify(&message, r.terminal_reason.as_deref()),
        }
    };
    let mut f = Failure::new(code, message);
    f.details.insert("subtype".into(), r.subtype.clone().into());
    f.details.insert("num_turns".into(), r.num_turns.into());
    if let Some(t) = &r.terminal_reason {
        f.details.insert("terminal_reason".into(), t.clone().into());
    }
    if let Some(s) = r.api_error_status {
        f.details.insert("api_error_status".into(), s.into());
    }
    Some(f)
}

fn by_status(status: u16, message: &str) -> FailureCode {
    match status {
        429 => FailureCode::RateLimited,
        500..=599 => FailureCode::ProviderServer,
        408 => FailureCode::Network,
        _ => classify(message, None),
    }
}

/// Classifies an error text (and the result's `terminal_reason`).
pub fn classify(message: &str, terminal_reason: Option<&str>) -> FailureCode {
    let lower = message.to_ascii_lowercase();
    if lower.contains("rate limit") || statuses_in(message).contains(&429) {
        return FailureCode::RateLimited;
    }
    if [
        "econnrefused",
        "econnreset",
        "connection refused",
        "connection error",
        "fetch failed",
        "socket hang up",
        "timed out",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return FailureCode::Network;
    }
    if lower.contains("overloaded") || lower.contains("internal server error") {
        return FailureCode::ProviderServer;
    }
    match terminal_reason {
        Some("aborted_tools") if lower.contains("permission") || lower.contains("denied") => {
            FailureCode::DecisionRejected
        }
        _ => FailureCode::AgentError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_429_counts_as_a_status_never_inside_a_port_or_an_id() {
        assert_eq!(
            classify("API Error: 429 {\"type\":\"error\"}", None),
            FailureCode::RateLimited
        );
        assert_eq!(
            classify(
                "API Error: 401 invalid x-api-key (http://127.0.0.1:40429, req_0429)",
                None
            ),
            FailureCode::AgentError
        );
        assert_eq!(classify("Rate limit reached", None), FailureCode::RateLimited);
    }
}
