//! The delivery worker: wakes on a new delivery or every `poll_interval`, takes the due deliveries
//! earliest first, claims each (a compare-and-set in the store, so of several replicas one sends it),
//! and posts it with at most `concurrency` attempts in flight. An attempt's claim lasts its timeout plus
//! a margin: a worker that dies mid-attempt leaves the delivery due again when the claim ends.
//!
//! 2xx is delivered; any other answer, a timeout or a connection failure is retried after the settings'
//! backoff with ±20 % jitter, until `max_attempts`; a target the policy refuses is given up at once.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Utc};
use rand::RngExt;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::Webhooks;
use super::sign;
use super::target::{self, TargetError};
use crate::store::WebhookStore;
use crate::store::webhooks::{Attempt, AttemptEnd, Delivery, Webhook};

/// Due deliveries read at once.
const BATCH: u32 = 32;
/// How long a claim outlives an attempt's timeout.
const CLAIM_MARGIN: Duration = Duration::from_secs(30);
/// The longest error text kept in the log.
const MAX_ERROR: usize = 300;

/// The worker loop.
pub(super) async fn run(hooks: Arc<Webhooks>, shutdown: CancellationToken) {
    let Some(store) = hooks.store.clone() else {
        return;
    };
    let permits = Arc::new(Semaphore::new(hooks.settings.concurrency));
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = hooks.wake.notified() => {}
            _ = tokio::time::sleep(hooks.settings.poll_interval) => {}
        }
        loop {
            let now = crate::store::now();
            let due = match store.due(now, BATCH).await {
                Ok(d) => d,
                Err(e) => {
                    tracing::warn!(error = %e, "could not read due webhook deliveries");
                    break;
                }
            };
            let full = due.len() as u32 == BATCH;
            let mut claimed = 0;
            for d in due {
                let seen = d.next_attempt_at.unwrap_or(d.created_at);
                let until = now + delta(hooks.settings.timeout + CLAIM_MARGIN);
                match store.claim(&d.id, seen, until).await {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(e) => {
                        tracing::warn!(error = %e, "could not claim a webhook delivery");
                        continue;
                    }
                }
                claimed += 1;
                let Ok(permit) = permits.clone().acquire_owned().await else {
                    return;
                };
                let (hooks, store) = (hooks.clone(), store.clone());
                tokio::spawn(async move {
                    attempt(&hooks, &store, d).await;
                    drop(permit);
                });
            }
            if !full || claimed == 0 {
                break;
            }
        }
    }
}

/// A duration as a chrono delta (saturating).
fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// One attempt of a claimed delivery, recorded with where it leaves the delivery.
async fn attempt(hooks: &Webhooks, store: &Arc<dyn WebhookStore>, d: Delivery) {
    let hook = match store.get_webhook(None, &d.webhook_id).await {
        Ok(Some(h)) => h,
        // Deleted meanwhile: its deliveries went with it.
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(error = %e, delivery = %d.id, "could not read a webhook; the delivery waits for its claim to end");
            return;
        }
    };
    let number = d.attempts + 1;
    let at = crate::store::now();
    let started = Instant::now();
    let outcome = post(hooks, &hook, &d).await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (status, error, permanent) = match outcome {
        Ok(status) => (Some(status), None, false),
        Err(Failure::Refused(e)) => (None, Some(e.to_string()), true),
        Err(Failure::Transport(e)) => (None, Some(e), false),
    };
    let ok = status.is_some_and(|s| (200..300).contains(&s));
    let s = &hooks.settings;
    let end = if ok {
        AttemptEnd::Delivered
    } else if permanent || number >= s.max_attempts {
        AttemptEnd::GiveUp
    } else {
        AttemptEnd::RetryAt(Utc::now() + delta(jitter(s.backoff(number))))
    };
    let counter = match end {
        AttemptEnd::Delivered => &hooks.metrics.delivered,
        AttemptEnd::RetryAt(_) => &hooks.metrics.retried,
        AttemptEnd::GiveUp => &hooks.metrics.failed,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    let record = Attempt {
        attempt: number,
        at,
        status,
        error: error.map(|e| e.chars().take(MAX_ERROR).collect()),
        duration_ms,
    };
    tracing::debug!(delivery = %d.id, attempt = number, ?status, ?end, "webhook attempt");
    match store.record_attempt(&d.id, &record, end).await {
        Ok(true) => {}
        Ok(false) => tracing::debug!(delivery = %d.id, "the delivery changed under its attempt"),
        Err(e) => tracing::warn!(error = %e, delivery = %d.id, "could not record a webhook attempt"),
    }
}

/// `wait` ± 20 %.
fn jitter(wait: Duration) -> Duration {
    let factor: f64 = rand::rng().random_range(0.8..1.2);
    wait.mul_f64(factor)
}

/// Why an attempt got no answer.
enum Failure {
    /// The target is refused by the policy (or does not resolve): given up at once only when refused.
    Refused(TargetError),
    /// Connecting, sending or waiting failed.
    Transport(String),
}

/// Posts the delivery's body, signed, to the webhook's URL at its checked, pinned address; the
/// receiver's status.
async fn post(hooks: &Webhooks, hook: &Webhook, d: &Delivery) -> Result<u16, Failure> {
    let url = target::check_url(&hook.url, hooks.allow_private).map_err(Failure::Refused)?;
    let addr = match target::resolve(&url, hooks.allow_private).await {
        Ok(a) => a,
        Err(e @ TargetError::Private(_)) => return Err(Failure::Refused(e)),
        Err(e) => return Err(Failure::Transport(e.to_string())),
    };
    let mut client = reqwest::Client::builder()
        .timeout(hooks.settings.timeout)
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("agent-adaptor-webhooks/", env!("CARGO_PKG_VERSION")));
    if let Some(host) = url.domain() {
        client = client.resolve(host, addr);
    }
    let client = client
        .build()
        .map_err(|e| Failure::Transport(format!("client: {e}")))?;
    let timestamp = Utc::now().timestamp();
    let signature = sign::signature(&hook.secret, &d.event_id, timestamp, &d.payload)
        .ok_or_else(|| Failure::Transport("the webhook's secret does not decode".into()))?;
    let response = client
        .post(url)
        .header("content-type", "application/json")
        .header("webhook-id", &d.event_id)
        .header("webhook-timestamp", timestamp.to_string())
        .header("webhook-signature", signature)
        .body(d.payload.clone())
        .send()
        .await
        .map_err(|e| Failure::Transport(describe(&e)))?;
    Ok(response.status().as_u16())
}

/// A transport error with its causes (reqwest's own text is only "error sending request").
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "timed out".to_owned()
    } else if e.is_connect() {
        "could not connect".to_owned()
    } else {
        e.to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
