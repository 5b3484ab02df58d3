//! The core side of the decision SPI: applies the approval policy, talks to the host (handler
//! or event form), enforces deadlines and fallbacks, and hands one outcome back to the driver.
//! Whatever a request sets, a decision is asked at most `1 + MAX_RETRIES` times, at most one ask per
//! `REASK_INTERVAL`, and no deadline is further than `MAX_WAIT`.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use tokio_util::sync::CancellationToken;

use super::approval::{ApprovalHandler, ApprovalRequest, HostAnswer, Responder};
use super::broker::Broker;
use super::error::FailureReason;
use super::event::Payload;
use super::verdict::Verdict;
use crate::driver::{
    ApprovalPolicy, DecisionBackend, DecisionKind, DecisionMode, DecisionOutcome, DecisionRequest,
    FallbackAction, JsonMap, Notice, notice_kind,
};

/// The longest the runtime waits for anything a request sets (an approval's deadline, an execution's
/// timeout): 100 years. A longer value, however large, means this; it keeps every deadline
/// representable (as a `DateTime`, an `Instant`, a store timestamp) instead of overflowing.
pub(crate) const MAX_WAIT: std::time::Duration = std::time::Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// The most re-asks of one decision, whatever `approvals.max_retries` says (a larger value is capped,
/// with a `approval_retries_capped` notice): `on_timeout: retry` with a huge budget would otherwise
/// ask forever.
pub(crate) const MAX_RETRIES: u32 = 10;

/// The least time between two asks of one decision: a re-ask after a 1 ms timeout (or an instant
/// denial) waits out the rest of this, so retries cost at most two requests a second.
pub(crate) const REASK_INTERVAL: std::time::Duration = std::time::Duration::from_millis(500);

/// `now + wait`, saturating at the latest representable instant (never a panic).
fn deadline_after(now: DateTime<Utc>, wait: std::time::Duration) -> DateTime<Utc> {
    TimeDelta::from_std(wait.min(MAX_WAIT))
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Decides for one execution.
pub(crate) struct Decider {
    pub policy: ApprovalPolicy,
    pub retry_supported: bool,
    pub handler: Option<ApprovalHandler>,
    pub broker: Arc<Broker>,
    pub verdict: Verdict,
    pub run_id: String,
    pub cancel: CancellationToken,
}

enum Ending {
    Answer(HostAnswer),
    TimedOut,
    Cancelled,
    HandlerFailed(String),
}

/// Expires the request if the driver drops the decision future (the provider withdrew it).
struct WithdrawGuard {
    responder: Arc<Responder>,
    broker: Arc<Broker>,
    id: String,
    kind: DecisionKind,
    armed: bool,
}

impl Drop for WithdrawGuard {
    fn drop(&mut self) {
        if self.armed && self.responder.expire() {
            self.broker.publish_critical(
                Payload::Notice(resolved_notice(&self.id, self.kind, 0, "withdrawn")),
                None,
            );
        }
    }
}

fn resolved_notice(id: &str, kind: DecisionKind, attempt: u32, outcome: &str) -> Notice {
    Notice::new(
        notice_kind::APPROVAL_RESOLVED,
        format!("{} request {id}: {outcome}", kind.as_str()),
    )
    .with_data("request_id", id)
    .with_data("kind", kind.as_str())
    .with_data("attempt", attempt)
    .with_data("outcome", outcome)
}

fn requested_notice(id: &str, kind: DecisionKind, attempt: u32, title: &str) -> Notice {
    Notice::new(notice_kind::APPROVAL_REQUESTED, title.to_owned())
        .with_data("request_id", id)
        .with_data("kind", kind.as_str())
        .with_data("attempt", attempt)
}

impl Decider {
    fn notice(&self, n: Notice) {
        self.broker.publish_critical(Payload::Notice(n), None);
    }

    fn auto(&self, req: &DecisionRequest, kind: DecisionKind, approve: bool) -> DecisionOutcome {
        let id = format!("auto-{}", uuid::Uuid::now_v7());
        self.notice(requested_notice(&id, kind, 0, &req.title));
        let outcome = if approve { "auto_approved" } else { "auto_denied" };
        self.notice(resolved_notice(&id, kind, 0, outcome));
        if approve {
            DecisionOutcome::Approved
        } else {
            DecisionOutcome::Denied {
                reason: format!("{} denied by policy", kind.as_str()),
                interrupt: false,
            }
        }
    }

    async fn wait(
        &self,
        req: &ApprovalRequest,
        rx: tokio::sync::oneshot::Receiver<HostAnswer>,
        deadline: Option<std::time::Duration>,
    ) -> Ending {
        let mut rx = rx;
        let handler_task = self.handler.as_ref().map(|h| {
            let fut = (h.0)(req.clone());
            tokio::spawn(fut)
        });
        if handler_task.is_none() {
            // Event form: wait until someone subscribes, or result() comes first.
            let mut att = self.broker.attention();
            loop {
                let a = *att.borrow_and_update();
                if a.subscribed {
                    break;
                }
                if a.result_only {
                    self.notice(
                        Notice::new(
                            notice_kind::LIFECYCLE,
                            "approval request has no observer (result() was called before events()); \
                             applying the timeout fallback immediately",
                        )
                        .with_data("request_id", req.id.as_str()),
                    );
                    return Ending::TimedOut;
                }
                tokio::select! {
                    r = att.changed() => if r.is_err() { return Ending::Cancelled },
                    _ = self.cancel.cancelled() => return Ending::Cancelled,
                }
            }
        }
        let sleep = async {
            match deadline {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::pin!(sleep);
        let mut handler_task = handler_task;
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Ending::Cancelled,
            answer = &mut rx => match answer {
                Ok(a) => Ending::Answer(a),
                Err(_) => Ending::TimedOut,
            },
            joined = async { handler_task.as_mut().expect("guarded by the branch condition").await },
                if handler_task.is_some() =>
            {
                match joined {
                    // Answered (the receiver is ready) or returned without answering.
                    Ok(Ok(())) => match rx.try_recv() {
                        Ok(a) => Ending::Answer(a),
                        Err(_) => Ending::HandlerFailed("approval handler returned without answering".into()),
                    },
                    Ok(Err(e)) => Ending::HandlerFailed(format!("approval handler failed: {e}")),
                    Err(e) => Ending::HandlerFailed(format!("approval handler panicked: {e}")),
                }
            }
            _ = &mut sleep => Ending::TimedOut,
        }
    }

    fn abort(&self, reason: FailureReason, message: String) -> DecisionOutcome {
        self.verdict.confirm(reason, message.clone(), JsonMap::new());
        DecisionOutcome::Denied {
            reason: message,
            interrupt: true,
        }
    }

    fn fallback(
        &self,
        action: FallbackAction,
        attempt: u32,
        kind: DecisionKind,
        reason: FailureReason,
        message: String,
    ) -> Result<DecisionOutcome, ()> {
        match action {
            FallbackAction::Continue => Ok(DecisionOutcome::Denied {
                reason: message,
                interrupt: false,
            }),
            FallbackAction::Retry if self.retry_supported => {
                if attempt < self.policy.effective_max_retries().min(MAX_RETRIES) {
                    Err(())
                } else {
                    Ok(self.abort(reason, format!("{message} (after {} retries)", attempt)))
                }
            }
            FallbackAction::Retry => {
                self.notice(
                    Notice::new(
                        notice_kind::LIFECYCLE,
                        format!(
                            "the driver cannot re-ask a {} request; retry degrades to abort",
                            kind.as_str()
                        ),
                    )
                    .with_data("warning", "human_decision_retry_unsupported"),
                );
                Ok(self.abort(reason, message))
            }
            FallbackAction::Abort | FallbackAction::Inherit => Ok(self.abort(reason, message)),
        }
    }
}

#[async_trait::async_trait]
impl DecisionBackend for Decider {
    async fn request(&self, req: DecisionRequest) -> DecisionOutcome {
        let kind = req.kind.unwrap_or(DecisionKind::Permission);
        match self.policy.effective_mode(kind) {
            DecisionMode::AutoApprove => return self.auto(&req, kind, true),
            DecisionMode::AutoDeny => return self.auto(&req, kind, false),
            DecisionMode::Ask => {}
        }
        let mut attempt = 0u32;
        let asked_for = self.policy.effective_max_retries();
        let retries_matter = matches!(self.policy.effective_on_timeout(), FallbackAction::Retry)
            || matches!(self.policy.effective_on_reject(), FallbackAction::Retry);
        if retries_matter && asked_for > MAX_RETRIES {
            self.notice(
                Notice::new(
                    notice_kind::LIFECYCLE,
                    format!("approvals.max_retries {asked_for} is capped at {MAX_RETRIES}"),
                )
                .with_data("warning", "approval_retries_capped")
                .with_data("max_retries", MAX_RETRIES),
            );
        }
        loop {
            let asked_at = tokio::time::Instant::now();
            let (responder, rx) = Responder::new();
            let timeout = self.policy.effective_timeout().map(|t| t.min(MAX_WAIT));
            let now = Utc::now();
            let ar = ApprovalRequest {
                id: format!("apr-{}", uuid::Uuid::now_v7()),
                run_id: self.run_id.clone(),
                kind,
                title: req.title.clone(),
                source: req.source.clone(),
                tool_call_id: req.tool_call_id.clone(),
                choices: req.choices.clone(),
                details: req.details.clone(),
                created_at: now,
                deadline: timeout.map(|t| deadline_after(now, t)),
                attempt,
                origin: Default::default(),
                responder: Some(responder.clone()),
            };
            let mut guard = WithdrawGuard {
                responder: responder.clone(),
                broker: self.broker.clone(),
                id: ar.id.clone(),
                kind,
                armed: true,
            };
            self.notice(requested_notice(&ar.id, kind, attempt, &ar.title));
            self.broker
                .publish_critical(Payload::ApprovalRequest(ar.clone()), None);
            let ending = self.wait(&ar, rx, timeout).await;
            guard.armed = false;
            let (outcome_label, result) = match ending {
                Ending::Answer(HostAnswer::Approve) => ("approved", Ok(DecisionOutcome::Approved)),
                Ending::Answer(HostAnswer::Answer(text)) => {
                    let choice = ar.choices.iter().find(|c| c.key == text || c.label == text);
                    let outcome = DecisionOutcome::Answered {
                        answer: choice.map(|c| c.label.clone()).unwrap_or_else(|| text.clone()),
                        choice: choice.map(|c| c.key.clone()),
                    };
                    ("answered", Ok(outcome))
                }
                Ending::Answer(HostAnswer::Deny(reason)) => {
                    let msg = if reason.is_empty() {
                        format!("{} denied", kind.as_str())
                    } else {
                        reason
                    };
                    let r = self.fallback(
                        self.policy.effective_on_reject(),
                        attempt,
                        kind,
                        FailureReason::ApprovalDenied,
                        msg,
                    );
                    ("denied", r)
                }
                Ending::TimedOut => {
                    responder.expire();
                    let r = self.fallback(
                        self.policy.effective_on_timeout(),
                        attempt,
                        kind,
                        FailureReason::ApprovalTimeout,
                        format!("{} request timed out", kind.as_str()),
                    );
                    ("timed_out", r)
                }
                Ending::Cancelled => {
                    responder.expire();
                    (
                        "cancelled",
                        Ok(DecisionOutcome::Denied {
                            reason: "run cancelled".into(),
                            interrupt: true,
                        }),
                    )
                }
                Ending::HandlerFailed(msg) => {
                    responder.expire();
                    self.verdict
                        .confirm(FailureReason::AgentError, msg.clone(), JsonMap::new());
                    (
                        "handler_failed",
                        Ok(DecisionOutcome::Denied {
                            reason: msg,
                            interrupt: true,
                        }),
                    )
                }
            };
            self.notice(resolved_notice(&ar.id, kind, attempt, outcome_label));
            match result {
                Ok(outcome) => return outcome,
                Err(()) => {
                    attempt += 1;
                    // Rate floor: the next ask comes no sooner than REASK_INTERVAL after this one.
                    tokio::select! {
                        _ = self.cancel.cancelled() => {
                            return DecisionOutcome::Denied {
                                reason: "run cancelled".into(),
                                interrupt: true,
                            };
                        }
                        _ = tokio::time::sleep_until(asked_at + REASK_INTERVAL) => {}
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_saturate_instead_of_overflowing() {
        let now = Utc::now();
        let far = deadline_after(now, std::time::Duration::from_millis(i64::MAX as u64));
        assert_eq!(far, deadline_after(now, MAX_WAIT), "clamped to the longest wait");
        assert!(far > now + TimeDelta::days(36_000), "{far}");
        assert_eq!(
            deadline_after(DateTime::<Utc>::MAX_UTC, std::time::Duration::from_secs(1)),
            DateTime::<Utc>::MAX_UTC
        );
        assert_eq!(
            deadline_after(now, std::time::Duration::from_secs(30)),
            now + TimeDelta::seconds(30)
        );
    }
}
