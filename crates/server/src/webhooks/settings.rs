//! `[webhooks]`: the delivery worker's schedule and the target policy.

use std::time::Duration;

use serde::Deserialize;

use crate::file::HumanDuration;

/// How webhooks are delivered.
#[derive(Debug, Clone, PartialEq)]
pub struct WebhookSettings {
    /// Deliver at all (subscriptions are kept and events enqueued either way).
    pub enabled: bool,
    /// Attempts before a delivery is given up (default 8: about a day with the default backoff).
    pub max_attempts: u32,
    /// The wait after the first failed attempt (default 10 s).
    pub backoff_initial: Duration,
    /// The longest wait between attempts (default 10 h).
    pub backoff_max: Duration,
    /// How much each wait grows over the previous one (default 6).
    pub backoff_factor: u32,
    /// How long one attempt may take, connect to last byte (default 10 s).
    pub timeout: Duration,
    /// How often the worker looks for due deliveries besides being woken by a new one (default 1 s).
    pub poll_interval: Duration,
    /// Attempts in flight at once (default 8).
    pub concurrency: usize,
    /// Deliver to loopback, private, link-local and other non-public addresses. Unset: allowed in dev
    /// mode (no API key configured), refused once tenants have keys (a tenant could otherwise make the
    /// service probe its own network).
    pub allow_private_targets: Option<bool>,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        WebhookSettings {
            enabled: true,
            max_attempts: 8,
            backoff_initial: Duration::from_secs(10),
            backoff_max: Duration::from_secs(10 * 3600),
            backoff_factor: 6,
            timeout: Duration::from_secs(10),
            poll_interval: Duration::from_secs(1),
            concurrency: 8,
            allow_private_targets: None,
        }
    }
}

impl WebhookSettings {
    /// The wait after failed attempt `attempt` (1-based), before jitter: `backoff_initial ×
    /// backoff_factor^(attempt-1)`, at most `backoff_max`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = u64::from(self.backoff_factor.max(1));
        let mut wait = self.backoff_initial;
        for _ in 1..attempt {
            wait = Duration::from_nanos(
                u64::try_from(wait.as_nanos())
                    .unwrap_or(u64::MAX)
                    .saturating_mul(factor),
            );
            if wait >= self.backoff_max {
                return self.backoff_max;
            }
        }
        wait.min(self.backoff_max)
    }

    /// Checks the ranges; the field at fault and why.
    pub fn validate(&self) -> Result<(), (&'static str, &'static str)> {
        if self.max_attempts == 0 || self.max_attempts > 50 {
            return Err(("webhooks.max_attempts", "must be 1 to 50"));
        }
        if self.backoff_initial.is_zero() || self.backoff_max < self.backoff_initial {
            return Err((
                "webhooks.backoff_max",
                "backoff_initial must be positive and at most backoff_max",
            ));
        }
        if self.timeout.is_zero() || self.poll_interval.is_zero() {
            return Err(("webhooks.timeout", "timeout and poll_interval must be positive"));
        }
        if self.concurrency == 0 || self.concurrency > 256 {
            return Err(("webhooks.concurrency", "must be 1 to 256"));
        }
        Ok(())
    }
}

/// The `[webhooks]` table of the configuration file (every key optional).
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhooksFile {
    /// Deliver at all.
    #[serde(default)]
    pub enabled: Option<bool>,
    /// Attempts before giving up.
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// The first wait.
    #[serde(default)]
    pub backoff_initial: Option<HumanDuration>,
    /// The longest wait.
    #[serde(default)]
    pub backoff_max: Option<HumanDuration>,
    /// The growth of each wait.
    #[serde(default)]
    pub backoff_factor: Option<u32>,
    /// One attempt's timeout.
    #[serde(default)]
    pub timeout: Option<HumanDuration>,
    /// The worker's polling interval.
    #[serde(default)]
    pub poll_interval: Option<HumanDuration>,
    /// Attempts in flight at once.
    #[serde(default)]
    pub concurrency: Option<usize>,
    /// Deliver to non-public addresses.
    #[serde(default)]
    pub allow_private_targets: Option<bool>,
}

impl WebhooksFile {
    /// `base` with this table's keys applied, validated.
    pub fn apply(self, mut base: WebhookSettings) -> Result<WebhookSettings, (&'static str, &'static str)> {
        if let Some(v) = self.enabled {
            base.enabled = v;
        }
        if let Some(v) = self.max_attempts {
            base.max_attempts = v;
        }
        if let Some(v) = self.backoff_initial {
            base.backoff_initial = v.0;
        }
        if let Some(v) = self.backoff_max {
            base.backoff_max = v.0;
        }
        if let Some(v) = self.backoff_factor {
            base.backoff_factor = v;
        }
        if let Some(v) = self.timeout {
            base.timeout = v.0;
        }
        if let Some(v) = self.poll_interval {
            base.poll_interval = v.0;
        }
        if let Some(v) = self.concurrency {
            base.concurrency = v;
        }
        if let Some(v) = self.allow_private_targets {
            base.allow_private_targets = Some(v);
        }
        base.validate()?;
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_schedule_spans_about_a_day() {
        let s = WebhookSettings::default();
        let waits: Vec<u64> = (1..s.max_attempts).map(|a| s.backoff(a).as_secs()).collect();
        assert_eq!(waits, [10, 60, 360, 2160, 12_960, 36_000, 36_000]);
        let total: u64 = waits.iter().sum();
        assert!((20 * 3600..30 * 3600).contains(&total), "{total} s");
        assert_eq!(s.backoff(200), s.backoff_max);
    }

    #[test]
    fn the_file_table_overrides_and_validates() {
        let f: WebhooksFile =
            toml::from_str("max_attempts = 3\nbackoff_initial = \"5ms\"\nbackoff_max = \"20ms\"")
                .unwrap_or_default();
        let s = f.apply(WebhookSettings::default()).unwrap_or_default();
        assert_eq!(
            (s.max_attempts, s.backoff(1), s.backoff(3)),
            (3, Duration::from_millis(5), Duration::from_millis(20))
        );
        let bad = WebhooksFile {
            max_attempts: Some(0),
            ..Default::default()
        };
        assert_eq!(
            bad.apply(WebhookSettings::default()).err().map(|e| e.0),
            Some("webhooks.max_attempts")
        );
    }
}
