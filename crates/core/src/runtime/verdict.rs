//! The single terminal attribution of an execution: the first confirmed cause wins; later causes
//! are only appended. When several candidates surface at once the precedence is approval abort >
//! context cause (cancel, deadline, lease loss, close) > driver failure > infrastructure >
//! nonzero exit.

use std::sync::{Arc, Mutex};

use super::error::{Cause, FailureReason, ThreadErrorKind};
use crate::driver::JsonMap;

/// A plain-text cause.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct TextCause(pub String);

/// A confirmed failure.
#[derive(Debug, Clone)]
pub(crate) struct Confirmed {
    pub reason: FailureReason,
    pub message: String,
    pub details: JsonMap,
    /// The thread sentinel the failure also is.
    pub thread: Option<ThreadErrorKind>,
}

#[derive(Default)]
struct Inner {
    first: Option<Confirmed>,
    causes: Vec<Cause>,
}

/// The latch.
#[derive(Default, Clone)]
pub(crate) struct Verdict {
    inner: Arc<Mutex<Inner>>,
}

impl Verdict {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Confirms a cause; returns true when it became the verdict.
    pub(crate) fn confirm(
        &self,
        reason: FailureReason,
        message: impl Into<String>,
        details: JsonMap,
    ) -> bool {
        self.confirm_as(reason, None, message.into(), details)
    }

    /// Confirms a cause that is also a thread sentinel (its code joins the details as
    /// `thread_error`); returns true when it became the verdict.
    pub(crate) fn confirm_thread(
        &self,
        reason: FailureReason,
        kind: ThreadErrorKind,
        message: impl Into<String>,
        mut details: JsonMap,
    ) -> bool {
        details.insert("thread_error".into(), kind.code().into());
        self.confirm_as(reason, Some(kind), message.into(), details)
    }

    fn confirm_as(
        &self,
        reason: FailureReason,
        thread: Option<ThreadErrorKind>,
        message: String,
        details: JsonMap,
    ) -> bool {
        let mut g = self.lock();
        g.causes.push(Arc::new(TextCause(if message.is_empty() {
            reason.to_string()
        } else {
            message.clone()
        })));
        if g.first.is_none() {
            g.first = Some(Confirmed {
                reason,
                message,
                details,
                thread,
            });
            true
        } else {
            false
        }
    }

    /// Confirms the best of several simultaneous candidates (already ordered by precedence).
    pub(crate) fn confirm_best(&self, candidates: Vec<Confirmed>) {
        for (i, c) in candidates.into_iter().enumerate() {
            if i == 0 {
                self.confirm_as(c.reason, c.thread, c.message, c.details);
            } else {
                self.add_cause(c.message);
            }
        }
    }

    /// Appends a secondary cause.
    pub(crate) fn add_cause(&self, message: impl Into<String>) {
        self.lock().causes.push(Arc::new(TextCause(message.into())));
    }

    /// The verdict, if any.
    pub(crate) fn get(&self) -> Option<Confirmed> {
        self.lock().first.clone()
    }

    /// All causes.
    pub(crate) fn causes(&self) -> Vec<Cause> {
        self.lock().causes.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_confirmed_wins_and_later_ones_become_causes() {
        let v = Verdict::default();
        assert!(v.confirm(FailureReason::ApprovalDenied, "denied", JsonMap::new()));
        assert!(!v.confirm(FailureReason::Cancelled, "cancelled", JsonMap::new()));
        assert_eq!(v.get().unwrap().reason, FailureReason::ApprovalDenied);
        assert_eq!(v.causes().len(), 2);
    }
}
