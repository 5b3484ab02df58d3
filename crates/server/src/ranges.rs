//! The range of every duration and count the service takes from a request or from its configuration,
//! checked at the edge: a request value out of range is `422 invalid_request` naming the field, a
//! configuration value out of range names its key. Also the request side of the approval policy
//! ([`ApprovalsBody`]: unknown fields refused, ranges checked before it becomes a
//! [`ApprovalPolicy`]) and strict decimal cursors ([`decimal`]).
//!
//! The OpenAPI document states the same ranges (`minimum`/`maximum`); a test compares them with these
//! constants. A value of the wrong JSON type (a string, a float, an integer beyond the field's type) is
//! `400 invalid_json` before any range applies.

use std::fmt::Display;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::config::ServerConfig;
use super::error::ApiError;
use crate::driver::policy::SignedDuration;
use crate::driver::{ApprovalMode, ApprovalPolicy, FallbackAction, QuestionMode};

/// One day in milliseconds.
pub const DAY_MS: u64 = 86_400_000;
/// The longest execution timeout a run request may ask for (`timeout_ms`): 7 days.
pub const MAX_RUN_TIMEOUT_MS: u64 = 7 * DAY_MS;
/// The longest approval deadline a request may ask for (`approvals.timeout`): 7 days (`-1`: none).
pub const MAX_APPROVAL_TIMEOUT_MS: i64 = 7 * DAY_MS as i64;
/// The most retries after an approval timeout or rejection (`approvals.max_retries`).
pub const MAX_APPROVAL_RETRIES: i32 = 10;
/// The longest per-probe timeout of `GET …/inspect` (`timeout_ms`).
pub const MAX_INSPECT_TIMEOUT_MS: u64 = 60_000;
/// The largest page of `GET …/threads` (`limit`).
pub const MAX_THREAD_PAGE: u32 = 500;
/// The largest page of `GET …/threads/{key}/events` (`limit`).
pub const MAX_HISTORY_PAGE: u32 = 1000;

/// `value` when `min <= value <= max`, else `422 invalid_request` naming `field`.
pub fn in_range<T: PartialOrd + Display + Copy>(
    field: &str,
    value: T,
    min: T,
    max: T,
) -> Result<T, ApiError> {
    if value < min || value > max {
        return Err(ApiError::invalid(
            field,
            format!("{field} must be {min} to {max}, got {value}"),
        ));
    }
    Ok(value)
}

/// A replay cursor or sequence number: ASCII digits only (no sign, no space, no `0x`), fitting a `u64`;
/// anything else is `422 invalid_request` naming `field`.
pub fn decimal(field: &str, text: &str) -> Result<u64, ApiError> {
    let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| text.parse::<u64>().ok()).flatten().ok_or_else(|| {
        ApiError::invalid(
            field,
            format!("{field} must be a decimal sequence number (digits only, at most 18446744073709551615)"),
        )
    })
}

fn mode_schema(values: &[&str], description: &str) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
        .description(Some(description))
        .build()
}

fn approval_mode_schema() -> utoipa::openapi::schema::Object {
    mode_schema(
        &["inherit", "ask", "auto_approve", "auto_deny"],
        "How the requests of this kind are decided (`inherit`: ask)",
    )
}

fn question_mode_schema() -> utoipa::openapi::schema::Object {
    mode_schema(
        &["inherit", "ask", "auto_deny"],
        "How questions are decided (`inherit`: auto_deny; questions cannot be auto-approved)",
    )
}

fn fallback_schema() -> utoipa::openapi::schema::Object {
    mode_schema(
        &["inherit", "abort", "continue", "retry"],
        "What follows (`inherit`: abort; `retry` asks again, up to `max_retries`)",
    )
}

/// The approval policy as a request gives it (`approvals` of a run or a thread declaration): the fields of
/// [`ApprovalPolicy`], unknown ones refused, the numbers range-checked by [`ApprovalsBody::policy`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsBody {
    /// Tool permission requests.
    #[serde(default)]
    #[schema(schema_with = approval_mode_schema)]
    pub permission: ApprovalMode,
    /// Plan reviews.
    #[serde(default)]
    #[schema(schema_with = approval_mode_schema)]
    pub plan_review: ApprovalMode,
    /// Questions.
    #[serde(default)]
    #[schema(schema_with = question_mode_schema)]
    pub question: QuestionMode,
    /// The deadline of each request in milliseconds, 0 to 604800000 (7 days); `-1`: no deadline; absent or
    /// 0: the service's `approval_timeout` (5 minutes unless configured).
    #[serde(default)]
    #[schema(minimum = -1, maximum = 604_800_000)]
    pub timeout: Option<i64>,
    /// After a timeout.
    #[serde(default)]
    #[schema(schema_with = fallback_schema)]
    pub on_timeout: FallbackAction,
    /// After a rejection.
    #[serde(default)]
    #[schema(schema_with = fallback_schema)]
    pub on_reject: FallbackAction,
    /// Retries of `retry`, 0 to 10; absent: 3.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 10)]
    pub max_retries: Option<i32>,
}

impl ApprovalsBody {
    /// The policy, once every number is in range; a violation names `{field}.timeout` or
    /// `{field}.max_retries`.
    pub fn policy(&self, field: &str) -> Result<ApprovalPolicy, ApiError> {
        if let Some(t) = self.timeout {
            in_range(&format!("{field}.timeout"), t, -1, MAX_APPROVAL_TIMEOUT_MS)?;
        }
        if let Some(n) = self.max_retries {
            in_range(&format!("{field}.max_retries"), n, 0, MAX_APPROVAL_RETRIES)?;
        }
        Ok(ApprovalPolicy {
            permission: self.permission,
            plan_review: self.plan_review,
            question: self.question,
            timeout: self.timeout.map(|millis| SignedDuration { millis }),
            on_timeout: self.on_timeout,
            on_reject: self.on_reject,
            max_retries: self.max_retries,
        })
    }
}

impl From<ApprovalPolicy> for ApprovalsBody {
    fn from(p: ApprovalPolicy) -> Self {
        ApprovalsBody {
            permission: p.permission,
            plan_review: p.plan_review,
            question: p.question,
            timeout: p.timeout.map(|d| d.millis),
            on_timeout: p.on_timeout,
            on_reject: p.on_reject,
            max_retries: p.max_retries,
        }
    }
}

/// A duration of the configuration out of `min..=max` (or a count out of range), named by its key in the
/// configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigRangeError {
    /// The key (`keep_alive`, `retention.interval`, `connections.max`, ...).
    pub field: String,
    /// What the range is.
    pub message: String,
}

fn duration(field: &str, v: Duration, min: Duration, max: Duration) -> Result<(), ConfigRangeError> {
    if v < min || v > max {
        return Err(ConfigRangeError {
            field: field.to_owned(),
            message: format!("must be {} to {}, got {}", human(min), human(max), human(v)),
        });
    }
    Ok(())
}

fn count(field: &str, v: u64, min: u64, max: u64) -> Result<(), ConfigRangeError> {
    if v < min || v > max {
        return Err(ConfigRangeError {
            field: field.to_owned(),
            message: format!("must be {min} to {max}, got {v}"),
        });
    }
    Ok(())
}

/// A duration as the configuration file writes it (`500ms`, `30s`, `7d`).
fn human(d: Duration) -> String {
    let ms = d.as_millis();
    for (unit, k) in [
        ("d", 86_400_000u128),
        ("h", 3_600_000),
        ("m", 60_000),
        ("s", 1000),
    ] {
        if ms >= k && ms.is_multiple_of(k) {
            return format!("{}{unit}", ms / k);
        }
    }
    format!("{ms}ms")
}

const MS: Duration = Duration::from_millis(1);
const HOUR: Duration = Duration::from_secs(3600);

/// The longest SSE keep-alive interval.
pub const MAX_KEEP_ALIVE: Duration = HOUR;
/// The longest shutdown grace period.
pub const MAX_SHUTDOWN_GRACE: Duration = HOUR;
/// The longest approval timeout of the configuration (`approval_timeout`).
pub const MAX_CONFIG_APPROVAL_TIMEOUT: Duration = Duration::from_millis(MAX_APPROVAL_TIMEOUT_MS as u64);
/// The longest event age the retention may keep (`retention.max_age`): 100 years.
pub const MAX_RETENTION_AGE: Duration = Duration::from_secs(36_500 * 86_400);
/// The longest retention interval.
pub const MAX_RETENTION_INTERVAL: Duration = Duration::from_secs(30 * 86_400);
/// The largest request body limit: 1 GiB.
pub const MAX_BODY_LIMIT: u64 = 1 << 30;
/// The largest record backlog.
pub const MAX_RECORD_BACKLOG: u64 = 1_000_000;
/// The longest header, body or idle timeout of a connection.
pub const MAX_CONNECTION_TIMEOUT: Duration = HOUR;
/// The largest `connections.max_connections`.
pub const MAX_CONNECTIONS: u64 = 1_000_000;
/// The longest delay between the `reference` agent's chunks.
pub const MAX_REFERENCE_DELAY: Duration = Duration::from_secs(60);

/// Checks every duration and count of `config` against its range.
pub fn check_config(config: &ServerConfig) -> Result<(), ConfigRangeError> {
    duration("keep_alive", config.keep_alive, MS, MAX_KEEP_ALIVE)?;
    duration(
        "shutdown_grace",
        config.shutdown_grace,
        Duration::ZERO,
        MAX_SHUTDOWN_GRACE,
    )?;
    duration(
        "drain_grace",
        config.drain_grace,
        Duration::ZERO,
        MAX_SHUTDOWN_GRACE,
    )?;
    duration(
        "approval_timeout",
        config.approval_timeout,
        MS,
        MAX_CONFIG_APPROVAL_TIMEOUT,
    )?;
    duration(
        "reference_chunk_delay",
        config.reference_chunk_delay,
        Duration::ZERO,
        MAX_REFERENCE_DELAY,
    )?;
    count("body_limit", config.body_limit as u64, 1, MAX_BODY_LIMIT)?;
    count(
        "record_backlog",
        config.record_backlog as u64,
        1,
        MAX_RECORD_BACKLOG,
    )?;
    count("live_window", config.live_window as u64, 1, MAX_RECORD_BACKLOG)?;
    let c = &config.connections;
    duration(
        "connections.header_read_timeout",
        c.header_read_timeout,
        MS,
        MAX_CONNECTION_TIMEOUT,
    )?;
    duration(
        "connections.body_read_timeout",
        c.body_read_timeout,
        MS,
        MAX_CONNECTION_TIMEOUT,
    )?;
    duration(
        "connections.idle_timeout",
        c.idle_timeout,
        MS,
        MAX_CONNECTION_TIMEOUT,
    )?;
    count(
        "connections.max_connections",
        c.max_connections as u64,
        1,
        MAX_CONNECTIONS,
    )?;
    count(
        "connections.max_connections_per_ip",
        c.max_connections_per_ip as u64,
        1,
        c.max_connections as u64,
    )?;
    if let Some(age) = config.retention.max_age {
        duration("retention.max_age", age, MS, MAX_RETENTION_AGE)?;
    }
    if let Some(n) = config.retention.max_events_per_tenant {
        count("retention.max_events_per_tenant", n, 1, i64::MAX as u64)?;
    }
    duration(
        "retention.interval",
        config.retention.interval,
        MS,
        MAX_RETENTION_INTERVAL,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_digits_only() {
        assert_eq!(decimal("after", "0").ok(), Some(0));
        assert_eq!(decimal("after", "0042").ok(), Some(42));
        assert_eq!(decimal("after", "18446744073709551615").ok(), Some(u64::MAX));
        for bad in [
            "",
            "+5",
            "-1",
            " 5",
            "5 ",
            "0x5",
            "5e2",
            "18446744073709551616",
            "٣",
        ] {
            let err = decimal("Last-Event-ID", bad).expect_err(bad);
            assert_eq!(err.field.as_deref(), Some("Last-Event-ID"));
            assert_eq!(err.status().as_u16(), 422);
        }
    }

    #[test]
    fn approval_numbers_are_range_checked_and_the_edges_pass() {
        let body = |timeout, max_retries| ApprovalsBody {
            timeout,
            max_retries,
            ..Default::default()
        };
        assert!(body(Some(-1), Some(0)).policy("approvals").is_ok());
        assert!(
            body(Some(MAX_APPROVAL_TIMEOUT_MS), Some(10))
                .policy("approvals")
                .is_ok()
        );
        let err = body(Some(i64::MAX), None).policy("approvals").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("approvals.timeout"));
        let err = body(Some(-2), None).policy("approvals").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("approvals.timeout"));
        let err = body(None, Some(i32::MAX)).policy("approvals").unwrap_err();
        assert_eq!(err.field.as_deref(), Some("approvals.max_retries"));
        let p = body(Some(5), Some(2)).policy("approvals").unwrap();
        assert_eq!(ApprovalsBody::from(p), body(Some(5), Some(2)));
    }

    #[test]
    fn config_durations_name_their_key() {
        let mut c = ServerConfig::default();
        assert_eq!(check_config(&c), Ok(()));
        c.keep_alive = Duration::from_secs(99_999_999_999);
        let err = check_config(&c).unwrap_err();
        assert_eq!(err.field, "keep_alive");
        assert!(err.message.contains("1ms to 1h"), "{err}");
        c.keep_alive = Duration::from_secs(15);
        c.retention.max_age = Some(Duration::from_secs(u64::MAX / 2));
        assert_eq!(check_config(&c).unwrap_err().field, "retention.max_age");
    }
}
