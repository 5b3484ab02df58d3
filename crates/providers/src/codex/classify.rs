//! Failure classification (pure): a failed turn's `TurnError` (`codexErrorInfo` first, then the
//! message), an exec `turn.failed` / `error` message ([`exec_failure`]), and JSON-RPC errors of
//! `thread/resume|fork` ("no rollout found …" is a resume rejection, on exec in stderr).

use serde_json::Value;

use crate::driver::{Failure, FailureCode};

use super::wire::items::TurnError;
use crate::status::statuses_in;

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
    let named = statuses_in(&msg);
    let code = if has("usageLimitExceeded") || status == Some(429) || named.contains(&429) {
        FailureCode::RateLimited
    } else if has("internalServerError")
        || has("serverOverloaded")
        || status.is_some_and(|s| s >= 500)
        || named.iter().any(|s| *s >= 500)
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

/// The failure of an exec `turn.failed` (or final `error`) message. exec carries no
/// `codexErrorInfo`, so the message decides; a provider error body (`{"error":{"message":…}}`, what a
/// 4xx answer becomes) is unwrapped to its message and kept in `details.provider_error`.
pub fn exec_failure(message: &str) -> Failure {
    let body = serde_json::from_str::<Value>(message)
        .ok()
        .filter(|v| v["error"]["message"].is_string());
    let text = body
        .as_ref()
        .and_then(|v| v["error"]["message"].as_str())
        .unwrap_or(message);
    let mut f = turn_failure(&TurnError {
        message: text.to_owned(),
        codex_error_info: None,
        additional_details: None,
    });
    if let Some(b) = body {
        f.details.insert("provider_error".into(), b);
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
    fn exec_messages_are_classified_and_error_bodies_unwrapped() {
        let f = exec_failure(
            r#"{"error":{"code":null,"message":"Bad request (mock)","type":"invalid_request_error"}}"#,
        );
        assert_eq!(f.code, FailureCode::AgentError);
        assert_eq!(f.message, "Bad request (mock)");
        assert_eq!(
            f.details["provider_error"]["error"]["type"],
            "invalid_request_error"
        );
        assert_eq!(
            exec_failure("exceeded retry limit, last status: 429 Too Many Requests, request id: x").code,
            FailureCode::RateLimited
        );
        let f = exec_failure("stream disconnected before completion: Transport error");
        assert_eq!(f.code, FailureCode::Network);
        assert!(f.details.is_empty());
    }

    #[test]
    fn resume_rejections() {
        assert!(is_resume_rejection("no rollout found for thread id 0000"));
        assert!(!is_resume_rejection("turn failed"));
    }

    #[test]
    fn a_port_or_an_id_that_ends_in_429_is_no_rate_limit() {
        let unauthorized = "unexpected status 401 Unauthorized: Incorrect API key provided (mock), url: \
                            http://127.0.0.1:40429/v1/responses, request id: req_mock_0429";
        assert_eq!(exec_failure(unauthorized).code, FailureCode::AgentError);
        assert_eq!(
            exec_failure("unexpected status 502 Bad Gateway, url: http://127.0.0.1:5000/v1").code,
            FailureCode::ProviderServer
        );
    }
}
