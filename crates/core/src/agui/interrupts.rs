//! Approvals over AG-UI: how a run surfaces them ([`ApprovalMode`]), the AG-UI 1.0 [`Interrupt`] an
//! approval request becomes, and how a client's answer — a `resume[]` entry's payload or the content of
//! a `tool` message for the decision tool call — maps onto an [`Answer`].
//!
//! Every approval request is shown as a decision tool call `dec-<request id>` named `dec.<kind>`
//! whatever the mode; the modes differ in how the AG-UI run ends while the execution waits:
//! - [`ApprovalMode::Stream`]: it does not end; the client answers over
//!   `POST /v1/runs/{run_id}/approvals/{id}` and the same stream continues (the path for clients that
//!   cannot resume, e.g. CopilotKit's 0.0.59 inside the web demo);
//! - [`ApprovalMode::Interrupt`]: `RUN_FINISHED` with `outcome: interrupt`, one interrupt per pending
//!   request (id = request id, `toolCallId` = the decision tool call); the next run on the thread carries
//!   `resume[]` and continues the same execution;
//! - [`ApprovalMode::Tool`]: a plain `RUN_FINISHED` leaving the decision tool call without a result (a
//!   frontend tool for the client); the next run's `tool` message for that call continues the execution.

use serde_json::{Value, json};
use thiserror::Error;

use super::events::Interrupt;
use crate::driver::DecisionKind;
use crate::runtime::ApprovalRequest;

/// How an AG-UI run surfaces the approvals of its execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// Keep streaming; answers come over the approval POST.
    Stream,
    /// End the run with an interrupt outcome; answers come as `resume[]`.
    Interrupt,
    /// End the run leaving the decision tool call to the client; answers come as `tool` messages.
    Tool,
}

impl ApprovalMode {
    /// `forwardedProps.approvals` wins (`stream`, `interrupt`, `tool`); otherwise clients speaking
    /// protocol 1.0 or later (they send `protocolVersion`) get interrupts and older ones the stream.
    pub fn choose(forwarded: Option<&str>, protocol_version: Option<&str>) -> Result<Self, String> {
        match forwarded {
            Some("stream") => Ok(ApprovalMode::Stream),
            Some("interrupt") => Ok(ApprovalMode::Interrupt),
            Some("tool") => Ok(ApprovalMode::Tool),
            Some(other) => Err(format!(
                "unknown approvals mode {other:?}: expected \"stream\", \"interrupt\" or \"tool\""
            )),
            None => {
                let major = protocol_version
                    .and_then(|v| v.split('.').next())
                    .and_then(|m| m.trim().parse::<u64>().ok());
                Ok(if major.is_some_and(|m| m >= 1) {
                    ApprovalMode::Interrupt
                } else {
                    ApprovalMode::Stream
                })
            }
        }
    }
}

/// The decision tool call id of an approval request.
pub fn decision_call_id(request_id: &str) -> String {
    format!("dec-{request_id}")
}

/// The approval request id a decision tool call id names, if it is one.
pub fn request_of_call(call_id: &str) -> Option<&str> {
    call_id.strip_prefix("dec-").filter(|s| !s.is_empty())
}

/// The AG-UI interrupt for a pending approval request.
pub fn interrupt_for(req: &ApprovalRequest) -> Interrupt {
    let (reason, schema) = match req.kind {
        DecisionKind::Question => (
            "input_required",
            json!({"type": "object", "properties": {"answer": {"type": "string",
                "description": "a choice key or free text"}}, "required": ["answer"]}),
        ),
        DecisionKind::Permission => ("tool_call", approve_schema()),
        DecisionKind::PlanReview => ("confirmation", approve_schema()),
    };
    Interrupt {
        id: req.id.clone(),
        reason: reason.into(),
        message: Some(req.title.clone()),
        tool_call_id: Some(decision_call_id(&req.id)),
        response_schema: Some(schema),
        expires_at: req
            .deadline
            .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        metadata: Some(json!({
            "kind": req.kind.as_str(), "run_id": req.run_id, "source": req.source,
            "choices": req.choices,
            "tool_call_id": (!req.tool_call_id.is_empty())
                .then(|| super::translate::tool_call_id(&req.run_id, &req.tool_call_id)),
        })),
    }
}

fn approve_schema() -> Value {
    json!({"type": "object", "properties": {"approved": {"type": "boolean"},
        "reason": {"type": "string"}}, "required": ["approved"]})
}

/// A client's answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Approve a permission or plan review.
    Approve,
    /// Deny (any kind), with a reason.
    Deny(String),
    /// Answer a question with a choice key or free text.
    Answer(String),
}

impl Answer {
    /// The decision as recorded with the approval (the shape of the approval POST's body).
    pub fn to_json(&self) -> Value {
        match self {
            Answer::Approve => json!({"decision": "approve", "via": "agui"}),
            Answer::Deny(r) => json!({"decision": "deny", "reason": r, "via": "agui"}),
            Answer::Answer(a) => json!({"decision": "answer", "answer": a, "via": "agui"}),
        }
    }
}

/// Why a client's answer cannot be applied.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum AnswerError {
    /// A question needs an answer (a choice key or text).
    #[error("interrupt {0}: a question needs a non-empty `answer`")]
    NoAnswer(String),
    /// A permission or plan review needs `approved`.
    #[error("interrupt {0}: a {1} needs `approved` (true or false)")]
    NoApproval(String, &'static str),
}

/// Maps a client's answer for `req` onto an [`Answer`]. `cancelled` (a `resume[]` entry with status
/// `cancelled`) denies. Accepted payloads: `{"approved": bool, "reason"?}`, `{"answer": "..."}`, the
/// approval POST's body (`{"decision": "approve"|"deny"|"answer", ...}`), a bare boolean, or a string
/// (a question's answer; `approve`/`yes`/`allow` or `deny`/`no` otherwise).
pub fn answer_from(
    req: &ApprovalRequest,
    cancelled: bool,
    payload: Option<&Value>,
) -> Result<Answer, AnswerError> {
    if cancelled {
        return Ok(Answer::Deny("cancelled by the client".into()));
    }
    let question = req.kind == DecisionKind::Question;
    let reason = payload
        .and_then(|p| p.get("reason"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let deny = || Answer::Deny(reason.clone().unwrap_or_else(|| "denied by the client".into()));
    let text = |s: &str| {
        let s = s.trim();
        (!s.is_empty()).then(|| s.to_owned())
    };
    let answer = match payload {
        Some(Value::Object(o)) => match o.get("decision").and_then(Value::as_str) {
            Some("deny") => Some(deny()),
            Some("approve") if !question => Some(Answer::Approve),
            _ => match (o.get("approved"), o.get("answer")) {
                (_, Some(Value::String(a))) if question => text(a).map(Answer::Answer),
                (Some(Value::Bool(false)), _) => Some(deny()),
                (Some(Value::Bool(true)), _) if !question => Some(Answer::Approve),
                _ => None,
            },
        },
        Some(Value::Bool(false)) => Some(deny()),
        Some(Value::Bool(true)) if !question => Some(Answer::Approve),
        Some(Value::String(s)) if question => text(s).map(Answer::Answer),
        Some(Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "approve" | "approved" | "yes" | "allow" | "true" => Some(Answer::Approve),
            "deny" | "denied" | "no" | "reject" | "false" => Some(deny()),
            _ => None,
        },
        _ => None,
    };
    answer.ok_or_else(|| {
        if question {
            AnswerError::NoAnswer(req.id.clone())
        } else {
            AnswerError::NoApproval(req.id.clone(), req.kind.as_str())
        }
    })
}

/// The content of a `tool` message as a payload: JSON when it parses, else the string itself.
pub fn tool_payload(content: &str) -> Value {
    serde_json::from_str(content).unwrap_or_else(|_| Value::String(content.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(kind: DecisionKind) -> ApprovalRequest {
        serde_json::from_value(json!({
            "id": "a1", "run_id": "run-1", "kind": kind.as_str(), "title": "May I?",
            "source": "test", "created_at": "2026-01-01T00:00:00Z",
            "deadline": "2026-01-01T00:05:00Z",
            "choices": [{"key": "red", "label": "Red"}],
        }))
        .expect("an approval request")
    }

    #[test]
    fn the_mode_follows_forwarded_props_then_the_protocol_version() {
        assert_eq!(ApprovalMode::choose(None, None), Ok(ApprovalMode::Stream));
        assert_eq!(ApprovalMode::choose(None, Some("0.9")), Ok(ApprovalMode::Stream));
        assert_eq!(
            ApprovalMode::choose(None, Some("1.0")),
            Ok(ApprovalMode::Interrupt)
        );
        assert_eq!(
            ApprovalMode::choose(Some("stream"), Some("1.0")),
            Ok(ApprovalMode::Stream)
        );
        assert_eq!(ApprovalMode::choose(Some("tool"), None), Ok(ApprovalMode::Tool));
        assert!(ApprovalMode::choose(Some("later"), None).is_err());
    }

    #[test]
    fn interrupts_name_the_decision_call_and_the_expected_answer() {
        let q = interrupt_for(&req(DecisionKind::Question));
        assert_eq!((q.id.as_str(), q.reason.as_str()), ("a1", "input_required"));
        assert_eq!(q.tool_call_id.as_deref(), Some("dec-a1"));
        assert_eq!(q.expires_at.as_deref(), Some("2026-01-01T00:05:00.000Z"));
        assert_eq!(q.response_schema.unwrap()["required"], json!(["answer"]));
        assert_eq!(q.metadata.unwrap()["choices"][0]["key"], "red");
        let p = interrupt_for(&req(DecisionKind::Permission));
        assert_eq!(p.reason, "tool_call");
        assert_eq!(request_of_call("dec-a1"), Some("a1"));
        assert_eq!(request_of_call("call-1"), None);
    }

    #[test]
    fn answers_map_from_every_accepted_shape_and_refuse_the_rest() {
        let p = req(DecisionKind::Permission);
        let q = req(DecisionKind::Question);
        assert_eq!(
            answer_from(&p, false, Some(&json!({"approved": true}))),
            Ok(Answer::Approve)
        );
        assert_eq!(
            answer_from(&p, false, Some(&json!({"approved": false, "reason": "no"}))),
            Ok(Answer::Deny("no".into()))
        );
        assert_eq!(
            answer_from(&p, false, Some(&json!({"decision": "approve"}))),
            Ok(Answer::Approve)
        );
        assert_eq!(answer_from(&p, false, Some(&json!("yes"))), Ok(Answer::Approve));
        assert!(matches!(answer_from(&p, true, None), Ok(Answer::Deny(_))));
        assert_eq!(
            answer_from(&p, false, Some(&json!({"answer": "x"}))),
            Err(AnswerError::NoApproval("a1".into(), "permission"))
        );
        assert_eq!(
            answer_from(&q, false, Some(&json!({"answer": "green"}))),
            Ok(Answer::Answer("green".into()))
        );
        assert_eq!(
            answer_from(&q, false, Some(&tool_payload("blue"))),
            Ok(Answer::Answer("blue".into()))
        );
        assert!(matches!(
            answer_from(&q, false, Some(&json!({"approved": false}))),
            Ok(Answer::Deny(_))
        ));
        assert_eq!(
            answer_from(&q, false, Some(&json!({"approved": true}))),
            Err(AnswerError::NoAnswer("a1".into()))
        );
        assert_eq!(
            answer_from(&q, false, Some(&json!({"answer": "  "}))),
            Err(AnswerError::NoAnswer("a1".into()))
        );
        assert_eq!(
            answer_from(&q, false, None),
            Err(AnswerError::NoAnswer("a1".into()))
        );
    }
}
