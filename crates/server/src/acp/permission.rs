//! Contract approvals ↔ `session/request_permission`. Each live [`ApprovalRequest`] of a prompt is
//! asked once; the client's answer resolves it through the request's own responder, so it is
//! applied exactly once whatever arrives (a late answer after the policy's deadline is refused by
//! the runtime as expired and only logged). The policy's timeout and fallbacks stay the runtime's:
//! this module stops waiting at the request's deadline, the runtime applies `on_timeout`.
//!
//! Permission and plan-review requests offer `allow` (allow_once) and `reject` (reject_once); a
//! question offers one allow_once option per choice (`choice:<key>`) and `reject`. `cancelled`, a
//! client error and an unknown option deny.

use std::sync::Arc;

use serde_json::Value;

use super::rpc::{Peer, RequestError};
use super::translate::{tool_call_id, tool_kind};
use super::wire::{
    PermissionOption, PermissionOptionKind, PermissionOutcome, PermissionToolCall, RequestPermissionParams,
    RequestPermissionResponse, ToolCallStatus, ToolKind,
};
use crate::driver::DecisionKind;
use crate::runtime::ApprovalRequest;

/// The option id that approves.
pub const ALLOW: &str = "allow";
/// The option id that rejects.
pub const REJECT: &str = "reject";
const CHOICE: &str = "choice:";

/// The `session/request_permission` parameters asking `req` in `session_id`.
pub fn params(session_id: &str, req: &ApprovalRequest) -> RequestPermissionParams {
    let (call_id, kind) = if req.tool_call_id.is_empty() {
        (
            tool_call_id(&req.run_id, &format!("approval-{}", req.id)),
            ToolKind::Other,
        )
    } else {
        (
            tool_call_id(&req.run_id, &req.tool_call_id),
            tool_kind(&req.title),
        )
    };
    let mut options = Vec::new();
    if req.kind == DecisionKind::Question {
        options.extend(req.choices.iter().map(|c| PermissionOption {
            option_id: format!("{CHOICE}{}", c.key),
            name: if c.label.is_empty() {
                c.key.clone()
            } else {
                c.label.clone()
            },
            kind: PermissionOptionKind::AllowOnce,
        }));
    } else {
        options.push(PermissionOption {
            option_id: ALLOW.into(),
            name: "Allow".into(),
            kind: PermissionOptionKind::AllowOnce,
        });
    }
    options.push(PermissionOption {
        option_id: REJECT.into(),
        name: "Reject".into(),
        kind: PermissionOptionKind::RejectOnce,
    });
    RequestPermissionParams {
        session_id: session_id.to_owned(),
        tool_call: PermissionToolCall {
            tool_call_id: call_id,
            title: req.title.clone(),
            kind,
            status: ToolCallStatus::Pending,
            raw_input: (!req.details.is_empty()).then(|| Value::Object(req.details.clone())),
        },
        options,
    }
}

/// What the client's answer means for the request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Approve.
    Approve,
    /// Answer a question with a choice key.
    Choose(String),
    /// Deny with a reason.
    Deny(String),
}

/// Interprets the client's answer to the request for `req`.
pub fn interpret(req: &ApprovalRequest, answer: Result<Value, RequestError>) -> Answer {
    let outcome = match answer {
        Ok(v) => match serde_json::from_value::<RequestPermissionResponse>(v) {
            Ok(r) => r.outcome,
            Err(e) => return Answer::Deny(format!("unreadable permission answer: {e}")),
        },
        Err(e) => return Answer::Deny(e.to_string()),
    };
    match outcome {
        PermissionOutcome::Cancelled => Answer::Deny("cancelled by the client".into()),
        PermissionOutcome::Selected { option_id } => {
            if option_id == ALLOW && req.kind != DecisionKind::Question {
                Answer::Approve
            } else if option_id == REJECT {
                Answer::Deny("rejected by the user".into())
            } else if let Some(key) = option_id.strip_prefix(CHOICE)
                && req.kind == DecisionKind::Question
                && req.choices.iter().any(|c| c.key == key)
            {
                Answer::Choose(key.to_owned())
            } else {
                Answer::Deny(format!("unknown option {option_id:?}"))
            }
        }
    }
}

/// Asks the client about `req` and applies its answer once; gives up at the request's deadline
/// (the runtime then applies the policy's `on_timeout`).
pub async fn ask(peer: Arc<Peer>, session_id: String, req: ApprovalRequest) {
    let question = peer.request("session/request_permission", params(&session_id, &req));
    let answer = match req.deadline {
        Some(deadline) => {
            let left = (deadline - chrono::Utc::now()).to_std().unwrap_or_default();
            match tokio::time::timeout(left, question).await {
                Ok(a) => a,
                Err(_) => {
                    tracing::info!(request = %req.id, "acp: permission request timed out; the policy decides");
                    return;
                }
            }
        }
        None => question.await,
    };
    if matches!(answer, Err(RequestError::Closed)) {
        return;
    }
    let applied = match interpret(&req, answer) {
        Answer::Approve => req.approve(),
        Answer::Choose(key) => req.answer(key),
        Answer::Deny(reason) => req.deny(reason),
    };
    if let Err(e) = applied {
        tracing::info!(request = %req.id, error = %e, "acp: permission answer not applied");
    }
}
