//! App-server server requests ↔ decisions (pure).
//!
//! | server request | decision | approve | deny | deny + abort |
//! |---|---|---|---|---|
//! | `item/commandExecution/requestApproval` | permission `shell: <command>` | `accept` | `decline` | `cancel` |
//! | `item/fileChange/requestApproval` | permission `apply_patch` | `accept` | `decline` | `cancel` |
//! | `item/permissions/requestApproval` | permission `permissions` | the requested profile | `{}` | `{}` |
//! | `item/tool/requestUserInput` | question (choices = first question's options) | first option of each question | no answers | no answers |
//! | anything else | — | JSON-RPC error `-32601` | | |
//!
//! `decline` lets the turn continue (the model is told the action was rejected); `cancel` also
//! interrupts the turn.

use serde_json::{Value, json};

use crate::driver::{DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, JsonMap};

use super::wire::RequestId;
use super::wire::client;
use super::wire::server_request::{ServerRequest, UserInputResponse};

/// The decision to ask for `request`; `None` for requests the driver refuses.
pub fn ask(request: &ServerRequest) -> Option<DecisionRequest> {
    let source = format!("codex.{}", request.method());
    let mut details = JsonMap::new();
    let (kind, title, tool_call_id, choices) = match request {
        ServerRequest::CommandExecutionApproval(p) => {
            let cmd = p.command.clone().unwrap_or_default();
            details.insert("command".into(), json!(cmd));
            details.insert("cwd".into(), json!(p.cwd));
            details.insert("reason".into(), json!(p.reason));
            details.insert("available_decisions".into(), json!(p.available_decisions));
            (
                DecisionKind::Permission,
                format!("shell: {cmd}"),
                p.item_id.clone(),
                Vec::new(),
            )
        }
        ServerRequest::FileChangeApproval(p) => {
            details.insert("reason".into(), json!(p.reason));
            details.insert("grant_root".into(), json!(p.grant_root));
            let title = match &p.grant_root {
                Some(root) => format!("apply_patch (write access to {root})"),
                None => "apply_patch".to_owned(),
            };
            (DecisionKind::Permission, title, p.item_id.clone(), Vec::new())
        }
        ServerRequest::PermissionsApproval(p) => {
            details.insert("permissions".into(), p.permissions.clone());
            details.insert("reason".into(), json!(p.reason));
            let title = match &p.reason {
                Some(r) if !r.is_empty() => format!("permissions: {r}"),
                _ => "permissions".to_owned(),
            };
            (DecisionKind::Permission, title, p.item_id.clone(), Vec::new())
        }
        ServerRequest::ToolRequestUserInput(p) => {
            let first = p.questions.first()?;
            details.insert(
                "questions".into(),
                Value::Array(
                    p.questions
                        .iter()
                        .map(|q| {
                            json!({"id": q.id, "header": q.header, "question": q.question,
                                "options": q.options.as_ref().map(|o| o.iter().map(|x| x.label.clone()).collect::<Vec<_>>())})
                        })
                        .collect(),
                ),
            );
            let choices = first
                .options
                .iter()
                .flatten()
                .map(|o| DecisionChoice {
                    key: o.label.clone(),
                    label: o.label.clone(),
                    description: o.description.clone(),
                })
                .collect();
            (
                DecisionKind::Question,
                first.question.clone(),
                p.item_id.clone(),
                choices,
            )
        }
        ServerRequest::Unknown { .. } => return None,
    };
    Some(DecisionRequest {
        kind: Some(kind),
        title,
        source,
        tool_call_id,
        choices,
        details,
    })
}

/// The answer line to `request` (id `id`) for `outcome`.
pub fn answer(id: &RequestId, request: &ServerRequest, outcome: &DecisionOutcome) -> String {
    let approved = matches!(
        outcome,
        DecisionOutcome::Approved | DecisionOutcome::Answered { .. }
    );
    let abort = matches!(outcome, DecisionOutcome::Denied { interrupt: true, .. });
    let verdict = if approved {
        "accept"
    } else if abort {
        "cancel"
    } else {
        "decline"
    };
    match request {
        ServerRequest::CommandExecutionApproval(_) | ServerRequest::FileChangeApproval(_) => {
            client::response(id, &json!({ "decision": verdict }))
        }
        ServerRequest::PermissionsApproval(p) => {
            let granted = if approved {
                p.permissions.clone()
            } else {
                json!({})
            };
            client::response(id, &json!({ "permissions": granted }))
        }
        ServerRequest::ToolRequestUserInput(p) => {
            let mut r = UserInputResponse::default();
            match outcome {
                DecisionOutcome::Answered { answer, .. } => {
                    if let Some(q) = p.questions.first() {
                        r = r.with(q.id.clone(), [answer.clone()]);
                    }
                }
                DecisionOutcome::Approved => {
                    for q in &p.questions {
                        if let Some(o) = q.options.iter().flatten().next() {
                            r = r.with(q.id.clone(), [o.label.clone()]);
                        }
                    }
                }
                DecisionOutcome::Denied { .. } => {}
            }
            client::response(id, &r)
        }
        ServerRequest::Unknown { method, .. } => refuse(id, method),
    }
}

/// The JSON-RPC error for a server request the driver does not handle.
pub fn refuse(id: &RequestId, method: &str) -> String {
    client::error_response(
        id,
        -32601,
        &format!("agent-adaptor does not handle the server request {method}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, params: Value) -> ServerRequest {
        ServerRequest::parse(method, Some(&params.to_string())).unwrap()
    }

    #[test]
    fn command_approvals_map_to_accept_decline_cancel() {
        let r = req(
            "item/commandExecution/requestApproval",
            json!({"threadId":"t","turnId":"u","itemId":"call_1","command":"touch x","cwd":"/w"}),
        );
        let d = ask(&r).unwrap();
        assert_eq!(d.kind, Some(DecisionKind::Permission));
        assert_eq!(d.title, "shell: touch x");
        assert_eq!(d.source, "codex.item/commandExecution/requestApproval");
        assert_eq!(d.tool_call_id, "call_1");
        let id = RequestId::Int(0);
        assert_eq!(
            answer(&id, &r, &DecisionOutcome::Approved),
            r#"{"id":0,"result":{"decision":"accept"}}"#
        );
        let deny = |interrupt| DecisionOutcome::Denied {
            reason: "no".into(),
            interrupt,
        };
        assert!(answer(&id, &r, &deny(false)).contains("\"decline\""));
        assert!(answer(&id, &r, &deny(true)).contains("\"cancel\""));
    }

    #[test]
    fn file_changes_permissions_and_questions() {
        let id = RequestId::Int(3);
        let f = req(
            "item/fileChange/requestApproval",
            json!({"threadId":"t","turnId":"u","itemId":"p1","grantRoot":"/x"}),
        );
        assert_eq!(ask(&f).unwrap().title, "apply_patch (write access to /x)");
        let p = req(
            "item/permissions/requestApproval",
            json!({"threadId":"t","turnId":"u","itemId":"i","permissions":{"network":{"enabled":true}},"reason":"net"}),
        );
        assert_eq!(ask(&p).unwrap().title, "permissions: net");
        let granted: Value = serde_json::from_str(&answer(&id, &p, &DecisionOutcome::Approved)).unwrap();
        assert_eq!(granted["result"]["permissions"]["network"]["enabled"], true);
        let denied: Value = serde_json::from_str(&answer(
            &id,
            &p,
            &DecisionOutcome::Denied {
                reason: String::new(),
                interrupt: false,
            },
        ))
        .unwrap();
        assert_eq!(denied["result"]["permissions"], json!({}));
        let q = req(
            "item/tool/requestUserInput",
            json!({"threadId":"t","turnId":"u","itemId":"c","questions":[{"id":"db","question":"Which?","options":[{"label":"PG","description":"d"}]}]}),
        );
        let d = ask(&q).unwrap();
        assert_eq!(d.kind, Some(DecisionKind::Question));
        assert_eq!(d.choices[0].key, "PG");
        let a: Value = serde_json::from_str(&answer(
            &id,
            &q,
            &DecisionOutcome::Answered {
                answer: "SQLite".into(),
                choice: None,
            },
        ))
        .unwrap();
        assert_eq!(a["result"]["answers"]["db"]["answers"], json!(["SQLite"]));
        let u = req("item/tool/call", json!({"x":1}));
        assert!(ask(&u).is_none());
        assert!(answer(&id, &u, &DecisionOutcome::Approved).contains("-32601"));
    }
}
