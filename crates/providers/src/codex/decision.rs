//! App-server server requests ↔ decisions (pure).
//!
//! | server request | decision | approve | deny | deny + abort |
//! |---|---|---|---|---|
//! | `item/commandExecution/requestApproval` | permission `shell: <command>` | `accept` | `decline` | `cancel` |
//! | `item/fileChange/requestApproval` | permission `apply_patch` | `accept` | `decline` | `cancel` |
//! | `item/permissions/requestApproval` | permission `permissions` | the requested profile | `{}` | `{}` |
//! | `item/tool/requestUserInput` | question (choices = first question's options) | first option of each question | no answers | turn interrupted, no answers |
//! | `mcpServer/elicitation/request` asking to call a tool | permission `mcp: <server>/<tool>` | `accept` (`content: {}`) | `decline` | turn interrupted, `cancel` |
//! | another `mcpServer/elicitation/request` (a server's own form or URL) | — | `decline` | | |
//! | anything else | — | JSON-RPC error `-32601` | | |
//!
//! `decline` lets the turn continue (the model is told the action was rejected); `cancel` also
//! interrupts the turn. A question has no `cancel`: the run interrupts the turn itself
//! ([`abort_interrupts`]).
//!
//! **Answers.** Codex asks one to three questions at once and hands the model
//! `{"answers":{"<question id>":{"answers":[…]}}}` verbatim. A plain answer (a choice label or free
//! text) answers the first question. A JSON object answers several: keys are question ids (or question
//! texts), values a string or an array of strings (labels and/or free text).

use serde_json::{Value, json};

use crate::driver::{DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, JsonMap};

use super::wire::RequestId;
use super::wire::client;
use super::wire::server_request::{
    McpElicitationAction, McpElicitationResponse, ServerRequest, UserInputQuestion, UserInputResponse,
};

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
                                "is_other": q.is_other, "is_secret": q.is_secret,
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
            let title = match p.questions.len() {
                1 => first.question.clone(),
                n => format!("{} (+{} more)", first.question, n - 1),
            };
            (DecisionKind::Question, title, p.item_id.clone(), choices)
        }
        ServerRequest::McpElicitation(p) => {
            let tool = p.tool_approval()?;
            details.insert("server".into(), json!(p.server_name));
            details.insert("tool".into(), json!(tool));
            details.insert("arguments".into(), p.meta["tool_params"].clone());
            details.insert("message".into(), json!(p.message));
            if let Some(d) = p.meta["tool_description"].as_str() {
                details.insert("tool_description".into(), json!(d));
            }
            (
                DecisionKind::Permission,
                format!("mcp: {}/{tool}", p.server_name),
                String::new(),
                Vec::new(),
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
                DecisionOutcome::Answered { answer, .. } => r = answers(&p.questions, answer),
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
        ServerRequest::McpElicitation(_) => {
            let action = if approved {
                McpElicitationAction::Accept
            } else if abort {
                McpElicitationAction::Cancel
            } else {
                McpElicitationAction::Decline
            };
            let content = approved.then(|| json!({}));
            client::response(id, &McpElicitationResponse { action, content })
        }
        ServerRequest::Unknown { method, .. } => refuse(id, method),
    }
}

/// The answer to a request [`ask`] has no decision for: an elicitation the driver cannot present
/// (a server's own form or URL) is declined; anything else gets [`refuse`].
pub fn refusal(id: &RequestId, request: &ServerRequest) -> String {
    match request {
        ServerRequest::McpElicitation(_) => client::response(
            id,
            &McpElicitationResponse {
                action: McpElicitationAction::Decline,
                content: None,
            },
        ),
        other => refuse(id, other.method()),
    }
}

/// True when an abort-deny of `request` needs the driver to interrupt the turn itself (Codex offers
/// no answer for it that stops the turn).
pub fn abort_interrupts(request: &ServerRequest) -> bool {
    matches!(
        request,
        ServerRequest::ToolRequestUserInput(_) | ServerRequest::McpElicitation(_)
    )
}

/// The answers to `questions` for the host's `answer` (see the module docs).
fn answers(questions: &[UserInputQuestion], answer: &str) -> UserInputResponse {
    let mut r = UserInputResponse::default();
    let keyed = serde_json::from_str::<serde_json::Map<String, Value>>(answer.trim())
        .ok()
        .filter(|m| !m.is_empty());
    let Some(map) = keyed else {
        if let Some(q) = questions.first() {
            r = r.with(q.id.clone(), [answer.to_owned()]);
        }
        return r;
    };
    for q in questions {
        let Some(v) = map.get(&q.id).or_else(|| map.get(&q.question)) else {
            continue;
        };
        let texts: Vec<String> = match v {
            Value::String(s) => vec![s.clone()],
            Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Value::Null => continue,
            other => vec![other.to_string()],
        };
        r = r.with(q.id.clone(), texts);
    }
    r
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
        assert!(abort_interrupts(&q));
        assert!(!abort_interrupts(&p));
        let u = req("item/tool/call", json!({"x":1}));
        assert!(ask(&u).is_none());
        assert!(answer(&id, &u, &DecisionOutcome::Approved).contains("-32601"));
    }
}

#[cfg(test)]
mod elicitation_tests {
    use super::*;

    /// The elicitation Codex 0.171.0 sent before calling `add` of the declared server `probe`.
    fn tool_approval() -> ServerRequest {
        ServerRequest::parse(
            "mcpServer/elicitation/request",
            Some(
                &json!({"_meta":{"codex_approval_kind":"mcp_tool_call","persist":["session","always"],
                    "tool_description":"Adds two integers","tool_name":"add","tool_params":{"a":2,"b":3}},
                    "environmentId":null,"message":"Allow the probe MCP server to run tool \"add\"?","mode":"form",
                    "requestedSchema":{"properties":{},"type":"object"},"serverName":"probe","threadId":"t","turnId":"u"})
                .to_string(),
            ),
        )
        .unwrap()
    }

    #[test]
    fn a_tool_approval_is_a_permission_with_server_tool_and_arguments() {
        let r = tool_approval();
        let d = ask(&r).unwrap();
        assert_eq!(d.kind, Some(DecisionKind::Permission));
        assert_eq!(d.title, "mcp: probe/add");
        assert_eq!(d.source, "codex.mcpServer/elicitation/request");
        assert_eq!(d.details["server"], "probe");
        assert_eq!(d.details["tool"], "add");
        assert_eq!(d.details["arguments"], json!({"a":2,"b":3}));
        assert_eq!(d.details["tool_description"], "Adds two integers");
        let id = RequestId::Int(0);
        let deny = |interrupt| DecisionOutcome::Denied {
            reason: "no".into(),
            interrupt,
        };
        assert_eq!(
            answer(&id, &r, &DecisionOutcome::Approved),
            r#"{"id":0,"result":{"action":"accept","content":{}}}"#
        );
        assert_eq!(
            answer(&id, &r, &deny(false)),
            r#"{"id":0,"result":{"action":"decline"}}"#
        );
        assert_eq!(
            answer(&id, &r, &deny(true)),
            r#"{"id":0,"result":{"action":"cancel"}}"#
        );
        assert!(abort_interrupts(&r));
    }

    #[test]
    fn other_elicitations_are_declined_without_asking() {
        let form = ServerRequest::parse(
            "mcpServer/elicitation/request",
            Some(r#"{"serverName":"s","threadId":"t","mode":"form","message":"Your email?","requestedSchema":{"type":"object","properties":{"email":{"type":"string"}}}}"#),
        )
        .unwrap();
        assert!(ask(&form).is_none());
        assert_eq!(
            refusal(&RequestId::Int(7), &form),
            r#"{"id":7,"result":{"action":"decline"}}"#
        );
        let url = ServerRequest::parse(
            "mcpServer/elicitation/request",
            Some(r#"{"serverName":"s","threadId":"t","mode":"url","message":"Log in","url":"https://example.invalid","elicitationId":"e1"}"#),
        )
        .unwrap();
        assert!(ask(&url).is_none());
        let other = ServerRequest::parse("item/tool/call", Some("{}")).unwrap();
        assert!(refusal(&RequestId::Int(1), &other).contains("-32601"));
    }
}

#[cfg(test)]
mod question_tests {
    use super::*;

    fn two() -> ServerRequest {
        ServerRequest::parse(
            "item/tool/requestUserInput",
            Some(
                &json!({"threadId":"t","turnId":"u","itemId":"call_1","isBlocking":true,"questions":[
                    {"id":"db","header":"Database","question":"Which database?","isOther":true,
                     "options":[{"label":"Postgres","description":"Relational"},{"label":"SQLite","description":"Embedded"}]},
                    {"id":"tests","header":"Tests","question":"Which tests first?","isOther":true,"options":null}]})
                .to_string(),
            ),
        )
        .unwrap()
    }

    fn answered(answer: &str) -> Value {
        let outcome = DecisionOutcome::Answered {
            answer: answer.into(),
            choice: None,
        };
        serde_json::from_str::<Value>(&super::answer(&RequestId::Int(0), &two(), &outcome)).unwrap()["result"]
            .clone()
    }

    #[test]
    fn several_questions_are_described_and_answered_by_id_or_text() {
        let d = ask(&two()).unwrap();
        assert_eq!(d.title, "Which database? (+1 more)");
        assert_eq!(d.tool_call_id, "call_1");
        assert_eq!(d.details["questions"][1]["id"], "tests");
        assert_eq!(d.details["questions"][0]["is_other"], true);
        assert_eq!(
            d.choices.iter().map(|c| c.key.as_str()).collect::<Vec<_>>(),
            ["Postgres", "SQLite"]
        );
        assert_eq!(
            answered(r#"{"db":"SQLite","Which tests first?":["Unit","user_note: smoke too"]}"#),
            json!({"answers":{"db":{"answers":["SQLite"]},"tests":{"answers":["Unit","user_note: smoke too"]}}})
        );
        // Unknown keys are ignored; a plain answer goes to the first question.
        assert_eq!(answered(r#"{"nope":"x"}"#), json!({"answers":{}}));
        assert_eq!(
            answered("Postgres"),
            json!({"answers":{"db":{"answers":["Postgres"]}}})
        );
        assert_eq!(answered("{}"), json!({"answers":{"db":{"answers":["{}"]}}}));
    }

    #[test]
    fn a_denied_question_gets_no_answers() {
        let deny = DecisionOutcome::Denied {
            reason: "no".into(),
            interrupt: false,
        };
        let v: Value = serde_json::from_str(&answer(&RequestId::Int(1), &two(), &deny)).unwrap();
        assert_eq!(v, json!({"id":1,"result":{"answers":{}}}));
    }
}
