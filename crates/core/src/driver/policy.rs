//! Run policy: sandbox, web search, browser, approvals and supplemental messages.
//!
//! Every dimension has an *inherit* value (the zero value) that stays portable across drivers;
//! explicit values are checked against the Driver's declared capabilities before launch.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::decisions::DecisionKind;
use super::messages::{Author, Timing};

/// Filesystem/process sandbox level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxLevel {
    /// Whatever the provider does by default.
    #[default]
    Inherit,
    /// Read-only.
    ReadOnly,
    /// Writes inside the workspace only.
    WorkspaceWrite,
    /// No sandbox.
    Unrestricted,
}

/// An optional provider feature (web search, browser).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeatureLevel {
    /// Provider default.
    #[default]
    Inherit,
    /// Enabled.
    Allow,
    /// Disabled.
    Deny,
}

/// How permission and plan-review requests are decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Default (Ask).
    #[default]
    Inherit,
    /// Ask the host.
    Ask,
    /// Approve without asking.
    AutoApprove,
    /// Deny without asking.
    AutoDeny,
}

/// How questions are decided (questions cannot be auto-approved).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuestionMode {
    /// Default (AutoDeny).
    #[default]
    Inherit,
    /// Ask the host.
    Ask,
    /// Deny without asking.
    AutoDeny,
}

/// What happens after a timeout or a rejection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackAction {
    /// Default (Abort).
    #[default]
    Inherit,
    /// Fail the execution.
    Abort,
    /// Tell the provider and keep going.
    Continue,
    /// Ask again with a new request id (up to `max_retries`); degrades to Abort with a notice when
    /// the Driver cannot retry.
    Retry,
}

/// The effective decision mode of one request kind, after defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionMode {
    /// Ask the host.
    Ask,
    /// Approve without asking.
    AutoApprove,
    /// Deny without asking.
    AutoDeny,
}

/// Approval policy (the spec's `ApprovalPolicy`, an alias of the driver's human-decision policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct ApprovalPolicy {
    /// Tool permission requests; default Ask.
    #[serde(default)]
    pub permission: ApprovalMode,
    /// Plan reviews; default Ask.
    #[serde(default)]
    pub plan_review: ApprovalMode,
    /// Questions; default AutoDeny.
    #[serde(default)]
    pub question: QuestionMode,
    /// Per-request deadline. `None` or zero means the default (30 s); a negative value (see
    /// [`ApprovalPolicy::no_timeout`]) removes the practical deadline.
    #[serde(default, with = "opt_signed_duration")]
    pub timeout: Option<SignedDuration>,
    /// After a timeout; default Abort.
    #[serde(default)]
    pub on_timeout: FallbackAction,
    /// After a rejection; default Abort.
    #[serde(default)]
    pub on_reject: FallbackAction,
    /// Retries for [`FallbackAction::Retry`]; `None` means 3. Negative is invalid.
    #[serde(default)]
    pub max_retries: Option<i32>,
}

/// A duration that may be negative (negative approval timeouts mean "no deadline").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SignedDuration {
    /// Milliseconds; negative means "none".
    pub millis: i64,
}

mod opt_signed_duration {
    use super::SignedDuration;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<SignedDuration>, s: S) -> Result<S::Ok, S::Error> {
        v.map(|d| d.millis).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SignedDuration>, D::Error> {
        Ok(Option::<i64>::deserialize(d)?.map(|millis| SignedDuration { millis }))
    }
}

/// Default approval timeout.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(30);
/// Default approval retries.
pub const DEFAULT_MAX_RETRIES: u32 = 3;

impl ApprovalPolicy {
    /// Auto-deny every kind (needs auto-deny support for all three kinds).
    pub fn auto_deny_all() -> Self {
        ApprovalPolicy {
            permission: ApprovalMode::AutoDeny,
            plan_review: ApprovalMode::AutoDeny,
            question: QuestionMode::AutoDeny,
            ..Default::default()
        }
    }

    /// Approve permissions and plans without asking.
    pub fn auto_approve() -> Self {
        ApprovalPolicy {
            permission: ApprovalMode::AutoApprove,
            plan_review: ApprovalMode::AutoApprove,
            ..Default::default()
        }
    }

    /// A timeout of `d`.
    pub fn with_timeout(mut self, d: Duration) -> Self {
        self.timeout = Some(SignedDuration {
            millis: d.as_millis().min(i64::MAX as u128) as i64,
        });
        self
    }

    /// No practical deadline.
    pub fn no_timeout(mut self) -> Self {
        self.timeout = Some(SignedDuration { millis: -1 });
        self
    }

    /// The effective deadline length, `None` when there is none. Zero means "unset" (the default).
    pub fn effective_timeout(&self) -> Option<Duration> {
        match self.timeout {
            None | Some(SignedDuration { millis: 0 }) => Some(DEFAULT_APPROVAL_TIMEOUT),
            Some(d) if d.millis < 0 => None,
            Some(d) => Some(Duration::from_millis(d.millis as u64)),
        }
    }

    /// The effective mode for `kind`.
    pub fn effective_mode(&self, kind: DecisionKind) -> DecisionMode {
        match kind {
            DecisionKind::Permission => approval_mode(self.permission),
            DecisionKind::PlanReview => approval_mode(self.plan_review),
            DecisionKind::Question => match self.question {
                QuestionMode::Ask => DecisionMode::Ask,
                QuestionMode::Inherit | QuestionMode::AutoDeny => DecisionMode::AutoDeny,
            },
        }
    }

    /// The explicit (non-inherit) mode for `kind`, if any.
    pub fn explicit_mode(&self, kind: DecisionKind) -> Option<DecisionMode> {
        match kind {
            DecisionKind::Permission => explicit(self.permission),
            DecisionKind::PlanReview => explicit(self.plan_review),
            DecisionKind::Question => match self.question {
                QuestionMode::Inherit => None,
                QuestionMode::Ask => Some(DecisionMode::Ask),
                QuestionMode::AutoDeny => Some(DecisionMode::AutoDeny),
            },
        }
    }

    /// Effective fallback after a timeout.
    pub fn effective_on_timeout(&self) -> FallbackAction {
        default_abort(self.on_timeout)
    }

    /// Effective fallback after a rejection.
    pub fn effective_on_reject(&self) -> FallbackAction {
        default_abort(self.on_reject)
    }

    /// Effective retry budget.
    pub fn effective_max_retries(&self) -> u32 {
        match self.max_retries {
            None => DEFAULT_MAX_RETRIES,
            Some(n) => n.max(0) as u32,
        }
    }

    /// True when any kind is set explicitly (drivers use this to choose an interactive transport).
    pub fn any_explicit(&self) -> bool {
        [
            DecisionKind::Permission,
            DecisionKind::PlanReview,
            DecisionKind::Question,
        ]
        .iter()
        .any(|k| self.explicit_mode(*k).is_some())
    }
}

fn approval_mode(m: ApprovalMode) -> DecisionMode {
    match m {
        ApprovalMode::Inherit | ApprovalMode::Ask => DecisionMode::Ask,
        ApprovalMode::AutoApprove => DecisionMode::AutoApprove,
        ApprovalMode::AutoDeny => DecisionMode::AutoDeny,
    }
}

fn explicit(m: ApprovalMode) -> Option<DecisionMode> {
    match m {
        ApprovalMode::Inherit => None,
        other => Some(approval_mode(other)),
    }
}

fn default_abort(f: FallbackAction) -> FallbackAction {
    match f {
        FallbackAction::Inherit => FallbackAction::Abort,
        other => other,
    }
}

/// What a custom framing function sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageContext {
    /// Message id.
    pub id: String,
    /// The original text.
    pub text: String,
    /// Author.
    pub from: Author,
    /// Timing.
    pub timing: Timing,
}

/// A custom framing function for supplemental messages.
pub type FormatFn = Arc<dyn Fn(&MessageContext) -> String + Send + Sync>;

/// Default unclaimed-message limit.
pub const DEFAULT_MAX_PENDING: usize = 32;
/// Default provider turns per execution.
pub const DEFAULT_MAX_TURNS: u32 = 20;

/// Supplemental-message policy.
#[derive(Clone, Default)]
pub struct MessagePolicy {
    /// Reject supplemental sends (starting prompts still work).
    pub disabled: bool,
    /// Replaces the built-in framing; `None` uses the author-aware templates.
    pub format: Option<FormatFn>,
    /// Unclaimed-message limit; 0 means 32. A full queue blocks admission.
    pub max_pending: i64,
    /// Provider turns per execution; 0 means 20.
    pub max_turns: i64,
}

impl fmt::Debug for MessagePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessagePolicy")
            .field("disabled", &self.disabled)
            .field("format", &self.format.as_ref().map(|_| "custom"))
            .field("max_pending", &self.max_pending)
            .field("max_turns", &self.max_turns)
            .finish()
    }
}

impl PartialEq for MessagePolicy {
    fn eq(&self, other: &Self) -> bool {
        self.disabled == other.disabled
            && self.max_pending == other.max_pending
            && self.max_turns == other.max_turns
            && match (&self.format, &other.format) {
                (None, None) => true,
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                _ => false,
            }
    }
}

impl MessagePolicy {
    /// Effective unclaimed limit.
    pub fn effective_max_pending(&self) -> usize {
        if self.max_pending <= 0 {
            DEFAULT_MAX_PENDING
        } else {
            self.max_pending as usize
        }
    }

    /// Effective turn limit.
    pub fn effective_max_turns(&self) -> u32 {
        if self.max_turns <= 0 {
            DEFAULT_MAX_TURNS
        } else {
            self.max_turns.min(u32::MAX as i64) as u32
        }
    }
}

/// The whole run policy. `with_policy` replaces it as a whole (no field merge).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    /// Supplemental messages.
    pub messages: MessagePolicy,
    /// Sandbox level.
    pub sandbox: SandboxLevel,
    /// Web search.
    pub web_search: FeatureLevel,
    /// Browser tools.
    pub browser: FeatureLevel,
    /// Approvals.
    pub approvals: ApprovalPolicy,
}

impl Policy {
    /// Only the sandbox set to read-only.
    pub fn read_only() -> Self {
        Policy {
            sandbox: SandboxLevel::ReadOnly,
            ..Default::default()
        }
    }

    /// Only the sandbox set to workspace-write.
    pub fn workspace_write() -> Self {
        Policy {
            sandbox: SandboxLevel::WorkspaceWrite,
            ..Default::default()
        }
    }

    /// Only the sandbox set to unrestricted.
    pub fn unrestricted() -> Self {
        Policy {
            sandbox: SandboxLevel::Unrestricted,
            ..Default::default()
        }
    }

    /// Sets the approval policy.
    pub fn with_approvals(mut self, approvals: ApprovalPolicy) -> Self {
        self.approvals = approvals;
        self
    }

    /// Checks the malformed-field rules (negative retries and limits).
    pub fn validate(&self) -> Result<(), String> {
        if let Some(n) = self.approvals.max_retries
            && n < 0
        {
            return Err(format!("approvals.max_retries must not be negative (got {n})"));
        }
        if self.messages.max_pending < 0 {
            return Err(format!(
                "messages.max_pending must not be negative (got {})",
                self.messages.max_pending
            ));
        }
        if self.messages.max_turns < 0 {
            return Err(format!(
                "messages.max_turns must not be negative (got {})",
                self.messages.max_turns
            ));
        }
        Ok(())
    }
}

/// The caller identity: it scopes host resources and thread ownership, it does not route work.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize)]
pub struct Identity {
    /// Caller id.
    #[serde(default)]
    pub id: String,
    /// Tenant.
    #[serde(default)]
    pub tenant: String,
    /// Profile.
    #[serde(default)]
    pub profile: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_defaults_follow_the_spec() {
        let p = ApprovalPolicy::default();
        assert_eq!(p.effective_mode(DecisionKind::Permission), DecisionMode::Ask);
        assert_eq!(p.effective_mode(DecisionKind::PlanReview), DecisionMode::Ask);
        assert_eq!(p.effective_mode(DecisionKind::Question), DecisionMode::AutoDeny);
        assert_eq!(p.effective_timeout(), Some(Duration::from_secs(30)));
        assert_eq!(p.effective_on_timeout(), FallbackAction::Abort);
        assert_eq!(p.effective_on_reject(), FallbackAction::Abort);
        assert_eq!(p.effective_max_retries(), 3);
        assert!(!p.any_explicit());
    }

    #[test]
    fn negative_timeout_removes_the_deadline_and_negative_retries_are_invalid() {
        assert_eq!(ApprovalPolicy::default().no_timeout().effective_timeout(), None);
        assert_eq!(
            ApprovalPolicy::default()
                .with_timeout(Duration::ZERO)
                .effective_timeout(),
            Some(DEFAULT_APPROVAL_TIMEOUT),
            "zero means unset"
        );
        let bad = Policy {
            approvals: ApprovalPolicy {
                max_retries: Some(-1),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(bad.validate().unwrap_err().contains("max_retries"));
        let bad = Policy {
            messages: MessagePolicy {
                max_turns: -2,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(bad.validate().is_err());
    }

    #[test]
    fn message_limits_default_when_zero() {
        let m = MessagePolicy::default();
        assert_eq!(m.effective_max_pending(), 32);
        assert_eq!(m.effective_max_turns(), 20);
    }
}
