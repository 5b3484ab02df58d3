//! Approval requests: one payload for the handler form and the event form, answered exactly
//! once — also through copies and under concurrent responders.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::error::ApprovalError;
use crate::driver::{DecisionChoice, DecisionKind, JsonMap};

/// The kinds of approvals (alias of the driver's decision kinds).
pub type ApprovalKind = DecisionKind;

/// Attribution of a forwarded request (zero for a single Agent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Origin {
    /// Team member.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub member: String,
    /// Task.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub task: String,
}

/// What the host answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostAnswer {
    Approve,
    Deny(String),
    Answer(String),
}

enum ResponderState {
    Pending(oneshot::Sender<HostAnswer>),
    Resolved,
    Expired,
}

/// The live responder shared by every copy of one request.
pub(crate) struct Responder {
    state: Mutex<ResponderState>,
}

impl Responder {
    pub(crate) fn new() -> (Arc<Responder>, oneshot::Receiver<HostAnswer>) {
        let (tx, rx) = oneshot::channel();
        (
            Arc::new(Responder {
                state: Mutex::new(ResponderState::Pending(tx)),
            }),
            rx,
        )
    }

    fn respond(&self, answer: HostAnswer) -> Result<(), ApprovalError> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *state, ResponderState::Resolved) {
            ResponderState::Pending(tx) => {
                if tx.send(answer).is_err() {
                    // The waiter is gone: the request was withdrawn or timed out concurrently.
                    *state = ResponderState::Expired;
                    return Err(ApprovalError::Expired);
                }
                Ok(())
            }
            ResponderState::Resolved => Err(ApprovalError::Resolved),
            ResponderState::Expired => {
                *state = ResponderState::Expired;
                Err(ApprovalError::Expired)
            }
        }
    }

    /// Marks the request expired (timeout, withdrawal, end of run). Returns false if it was
    /// already answered.
    pub(crate) fn expire(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        match *state {
            ResponderState::Pending(_) => {
                *state = ResponderState::Expired;
                true
            }
            ResponderState::Expired => true,
            ResponderState::Resolved => false,
        }
    }

    pub(crate) fn is_pending(&self) -> bool {
        matches!(
            *self.state.lock().unwrap_or_else(|p| p.into_inner()),
            ResponderState::Pending(_)
        )
    }
}

/// A request for a human decision. Clones share one responder: answering through any copy
/// resolves all of them.
#[derive(Clone, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Request id (a retry gets a new one).
    pub id: String,
    /// Execution id.
    pub run_id: String,
    /// What is being decided.
    pub kind: ApprovalKind,
    /// Short title.
    pub title: String,
    /// Provider source label.
    pub source: String,
    /// The gated tool call, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tool_call_id: String,
    /// Choices (questions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub choices: Vec<DecisionChoice>,
    /// Provider details.
    #[serde(default, skip_serializing_if = "JsonMap::is_empty")]
    pub details: JsonMap,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Deadline, when one applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<DateTime<Utc>>,
    /// Zero-based attempt.
    #[serde(default)]
    pub attempt: u32,
    /// Attribution.
    #[serde(default, skip_serializing_if = "is_zero_origin")]
    pub origin: Origin,
    #[serde(skip)]
    pub(crate) responder: Option<Arc<Responder>>,
}

fn is_zero_origin(o: &Origin) -> bool {
    o.member.is_empty() && o.task.is_empty()
}

impl fmt::Debug for ApprovalRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApprovalRequest")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("title", &self.title)
            .field("attempt", &self.attempt)
            .field("live", &self.responder.is_some())
            .finish_non_exhaustive()
    }
}

impl ApprovalRequest {
    fn responder(&self) -> Result<&Arc<Responder>, ApprovalError> {
        self.responder.as_ref().ok_or(ApprovalError::Unavailable)
    }

    /// Approves a permission or plan-review request.
    pub fn approve(&self) -> Result<(), ApprovalError> {
        let r = self.responder()?;
        if self.kind == DecisionKind::Question {
            return Err(ApprovalError::KindMismatch {
                kind: self.kind,
                response: "approve",
            });
        }
        r.respond(HostAnswer::Approve)
    }

    /// Denies any request, with a model-facing reason.
    pub fn deny(&self, reason: impl Into<String>) -> Result<(), ApprovalError> {
        self.responder()?.respond(HostAnswer::Deny(reason.into()))
    }

    /// Answers a question with a choice key or free text.
    pub fn answer(&self, option: impl Into<String>) -> Result<(), ApprovalError> {
        let r = self.responder()?;
        if self.kind != DecisionKind::Question {
            return Err(ApprovalError::KindMismatch {
                kind: self.kind,
                response: "answer",
            });
        }
        r.respond(HostAnswer::Answer(option.into()))
    }

    /// True while the request can still be answered.
    pub fn is_pending(&self) -> bool {
        self.responder.as_ref().is_some_and(|r| r.is_pending())
    }

    /// True when this copy carries a live responder.
    pub fn is_live(&self) -> bool {
        self.responder.is_some()
    }

    /// The attribution.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// An attributed copy sharing the same responder.
    pub fn forward(&self, origin: Origin) -> ApprovalRequest {
        let mut copy = self.clone();
        copy.origin = origin;
        copy
    }
}

/// Approves binary requests and denies questions.
pub fn approve_all(req: &ApprovalRequest) -> Result<(), ApprovalError> {
    match req.kind {
        DecisionKind::Question => req.deny("questions are not answered automatically"),
        _ => req.approve(),
    }
}

/// Denies every request.
pub fn deny_all(req: &ApprovalRequest, reason: &str) -> Result<(), ApprovalError> {
    req.deny(reason)
}

/// The boxed future an [`ApprovalHandler`] returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// The handler form: called once per request; it must answer exactly once and then return
/// `Ok`. An `Err` fails the run with that cause; returning without answering is an agent error.
#[derive(Clone)]
pub struct ApprovalHandler(pub(crate) Arc<dyn Fn(ApprovalRequest) -> HandlerFuture + Send + Sync>);

impl ApprovalHandler {
    /// Wraps an async closure.
    pub fn new<F, Fut>(f: F) -> Self
    where
        F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), String>> + Send + 'static,
    {
        ApprovalHandler(Arc::new(move |req| Box::pin(f(req))))
    }
}

impl fmt::Debug for ApprovalHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalHandler")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(kind: DecisionKind) -> (ApprovalRequest, oneshot::Receiver<HostAnswer>) {
        let (responder, rx) = Responder::new();
        let req = ApprovalRequest {
            id: "a1".into(),
            run_id: "r".into(),
            kind,
            title: "t".into(),
            source: "s".into(),
            tool_call_id: String::new(),
            choices: vec![],
            details: JsonMap::new(),
            created_at: Utc::now(),
            deadline: None,
            attempt: 0,
            origin: Origin::default(),
            responder: Some(responder),
        };
        (req, rx)
    }

    #[test]
    fn exactly_once_across_copies() {
        let (req, mut rx) = request(DecisionKind::Permission);
        let copy = req.forward(Origin {
            member: "m".into(),
            task: "t".into(),
        });
        assert!(copy.approve().is_ok());
        assert_eq!(req.deny("no"), Err(ApprovalError::Resolved));
        assert_eq!(rx.try_recv().unwrap(), HostAnswer::Approve);
        assert_eq!(copy.origin().member, "m");
    }

    #[test]
    fn kind_mismatch_and_unavailable() {
        let (q, _rx) = request(DecisionKind::Question);
        assert!(matches!(q.approve(), Err(ApprovalError::KindMismatch { .. })));
        let (p, _rx2) = request(DecisionKind::Permission);
        assert!(matches!(p.answer("x"), Err(ApprovalError::KindMismatch { .. })));
        let mut replayed = p.clone();
        replayed.responder = None;
        assert_eq!(replayed.approve(), Err(ApprovalError::Unavailable));
        assert!(q.answer("yes").is_ok(), "a mismatch does not consume the request");
    }

    #[test]
    fn expired_requests_refuse_and_count_as_resolved() {
        let (req, _rx) = request(DecisionKind::Permission);
        assert!(req.responder.as_ref().unwrap().expire());
        let err = req.approve().unwrap_err();
        assert_eq!(err, ApprovalError::Expired);
        assert!(err.is_resolved());
    }

    #[test]
    fn approve_all_approves_binary_kinds_and_denies_questions_and_deny_all_denies_every_kind() {
        for kind in [DecisionKind::Permission, DecisionKind::PlanReview] {
            let (req, mut rx) = request(kind);
            approve_all(&req).unwrap();
            assert_eq!(rx.try_recv().unwrap(), HostAnswer::Approve, "{kind:?}");
        }
        let (q, mut rx) = request(DecisionKind::Question);
        approve_all(&q).unwrap();
        assert!(
            matches!(rx.try_recv().unwrap(), HostAnswer::Deny(_)),
            "a question is denied, never answered"
        );
        for kind in [
            DecisionKind::Permission,
            DecisionKind::PlanReview,
            DecisionKind::Question,
        ] {
            let (req, mut rx) = request(kind);
            deny_all(&req, "not today").unwrap();
            assert_eq!(
                rx.try_recv().unwrap(),
                HostAnswer::Deny("not today".into()),
                "{kind:?}"
            );
            assert_eq!(approve_all(&req), Err(ApprovalError::Resolved), "exactly once");
        }
    }

    #[test]
    fn forward_is_an_attributed_copy_sharing_the_responder() {
        let (mut req, mut rx) = request(DecisionKind::Question);
        req.choices = vec![DecisionChoice {
            key: "red".into(),
            label: "Red".into(),
            description: String::new(),
        }];
        req.details.insert("path".into(), "a.txt".into());
        assert_eq!(req.origin(), &Origin::default(), "zero for a single Agent");
        let origin = Origin {
            member: "reviewer".into(),
            task: "task-7".into(),
        };
        let mut copy = req.forward(origin.clone());
        assert_eq!(copy.origin(), &origin);
        assert_eq!(req.origin(), &Origin::default(), "the original is not attributed");
        assert_eq!((copy.id.as_str(), copy.kind), (req.id.as_str(), req.kind));
        // Choices and details are copies: changing the copy's leaves the original's.
        copy.choices.clear();
        copy.details.clear();
        assert_eq!(req.choices.len(), 1);
        assert_eq!(req.details.get("path").and_then(|v| v.as_str()), Some("a.txt"));
        // One responder: answering the original resolves the copy too.
        assert!(copy.is_pending());
        req.answer("red").unwrap();
        assert!(
            !copy.is_pending(),
            "the copy is resolved by the original's answer"
        );
        assert_eq!(copy.answer("blue"), Err(ApprovalError::Resolved));
        assert_eq!(rx.try_recv().unwrap(), HostAnswer::Answer("red".into()));
    }

    #[test]
    fn concurrent_responders_exactly_one_wins() {
        for _ in 0..50 {
            let (req, _rx) = request(DecisionKind::Permission);
            let wins: usize = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8)
                    .map(|i| {
                        let r = req.clone();
                        s.spawn(move || {
                            if i % 2 == 0 {
                                r.approve().is_ok()
                            } else {
                                r.deny("x").is_ok()
                            }
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| usize::from(h.join().unwrap())).sum()
            });
            assert_eq!(wins, 1);
        }
    }
}
