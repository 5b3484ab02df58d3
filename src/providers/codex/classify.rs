//! Failure classification (pure): a failed turn's `TurnError` (`codexErrorInfo` first, then the
//! message) and JSON-RPC errors of `thread/resume|fork` ("no rollout found …" is a resume rejection).

use serde_json::Value;

use crate::driver::{Failure, FailureCode};

use super::wire::items::TurnError;

/// Patterns of a provider refusing to resume a thread.
const REJECTION: &[&str] = &[
    "no rollout found",
    "missing rollout path",
    "unknown thread",
    "thread not found",
    "session not found",
];

/// True when an error message means the thread cannot be resumed.
pub fn is_resume_rejection(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    REJECTION.iter().any(|p| m.contains(p))
}

fn info_names(info: &Value) -> Vec<String> {
    match info {
        Value::String(s) => vec![s.clone()],
        Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

fn http_status(info: &Value) -> Option<u64> {
    info.as_object()?
        .values()
        .find_map(|v| v.get("httpStatusCode").and_then(Value::as_u64))
}

/// The failure of a failed turn.
pub fn turn_failure(error: &TurnError) -> Failure {
    let info = error.codex_error_info.clone().unwrap_or(Value::Null);
    let names = info_names(&info);
    let status = http_status(&info);
    let msg = error.message.to_ascii_lowercase();
    let has = |n: &str| names.iter().any(|x| x.eq_ignore_ascii_case(n));
    let code = if has("usageLimitExceeded") || status == Some(429) || msg.contains("429") {
        FailureCode::RateLimited
    } else if has("internalServerError")
        || has("serverOverloaded")
        || status.is_some_and(|s| s >= 500)
        || msg.contains(" 500 ")
        || msg.contains("503")
    {
        FailureCode::ProviderServer
    } else if has("httpConnectionFailed")
        || has("responseStreamConnectionFailed")
        || has("responseStreamDisconnected")
        || msg.contains("stream disconnected")
        || msg.contains("connection failed")
    {
        FailureCode::Network
    } else {
        FailureCode::AgentError
    };
    let mut f = Failure::new(code, error.message.clone());
    if !info.is_null() {
        f.details.insert("codex_error_info".into(), info);
    }
    if let Some(d) = &error.additional_details {
        f.details
            .insert("additional_details".into(), Value::String(d.clone()));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(message: &str, info: Value) -> TurnError {
        TurnError {
            message: message.into(),
            codex_error_info: Some(info),
            additional_details: None,
        }
    }

    #[test]
    fn classifies_by_info_then_message() {
        assert_eq!(
            turn_failure(&err("Bad request (mock)", json!("badRequest"))).code,
            FailureCode::AgentError
        );
        assert_eq!(
            turn_failure(&err("x", json!("usageLimitExceeded"))).code,
            FailureCode::RateLimited
        );
        assert_eq!(
            turn_failure(&err(
                "exceeded retry limit, last status: 429 Too Many Requests",
                json!(null)
            ))
            .code,
            FailureCode::RateLimited
        );
        assert_eq!(
            turn_failure(&err(
                "x",
                json!({"responseTooManyFailedAttempts":{"httpStatusCode":502}})
            ))
            .code,
            FailureCode::ProviderServer
        );
        let f = turn_failure(&err(
            "stream disconnected before completion",
            json!({"responseStreamDisconnected":{"httpStatusCode":null}}),
        ));
        assert_eq!(f.code, FailureCode::Network);
        assert!(f.details.contains_key("codex_error_info"));
    }

    #[test]
    fn resume_rejections() {
        assert!(is_resume_rejection("no rollout found for thread id 0000"));
        assert!(!is_resume_rejection("turn failed"));
    }
}
