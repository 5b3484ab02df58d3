//! `can_use_tool` ↔ decisions, both pure: [`request`] describes the CLI's request for the core, and
//! [`answer`] turns the core's outcome into Claude's answer (`{"behavior":"allow","updatedInput"}` or
//! `{"behavior":"deny","message","interrupt"}`). `AskUserQuestion` is a question, `ExitPlanMode` a plan
//! review (with the plan text), anything else a permission.

use serde_json::{Value, json};

use crate::driver::{DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, JsonMap};

use super::wire::{CanUseTool, PermissionResult};

/// The decision source label.
pub const SOURCE: &str = "claude.can_use_tool";

/// The kind of a `can_use_tool` request.
pub fn kind(req: &CanUseTool) -> DecisionKind {
    match req.tool_name.as_str() {
        "AskUserQuestion" => DecisionKind::Question,
        "ExitPlanMode" => DecisionKind::PlanReview,
        _ => DecisionKind::Permission,
    }
}

fn first_question(input: &Value) -> Option<&Value> {
    input.get("questions")?.as_array()?.first()
}

fn short(s: &str, n: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() > n {
        line.chars().take(n).collect::<String>() + "…"
    } else {
        line.to_owned()
    }
}

/// Describes a `can_use_tool` request for the core.
pub fn request(req: &CanUseTool) -> DecisionRequest {
    let kind = kind(req);
    let input = &req.input;
    let mut details = JsonMap::new();
    details.insert("tool_name".into(), req.tool_name.clone().into());
    details.insert("input".into(), input.clone());
    let mut choices = Vec::new();
    let title = match kind {
        DecisionKind::Question => {
            let q = first_question(input);
            if let Some(opts) = q.and_then(|q| q.get("options")).and_then(Value::as_array) {
                for o in opts {
                    let label = o.get("label").and_then(Value::as_str).unwrap_or_default();
                    if label.is_empty() {
                        continue;
                    }
                    choices.push(DecisionChoice {
                        key: label.to_owned(),
                        label: label.to_owned(),
                        description: o
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                    });
                }
            }
            q.and_then(|q| q.get("question"))
                .and_then(Value::as_str)
                .map_or_else(|| "Claude asks a question".to_owned(), |s| short(s, 200))
        }
        DecisionKind::PlanReview => {
            let plan = input.get("plan").and_then(Value::as_str).unwrap_or_default();
            details.insert("plan".into(), plan.into());
            if let Some(path) = input.get("planFilePath").and_then(Value::as_str) {
                details.insert("plan_file".into(), path.into());
            }
            if plan.trim().is_empty() {
                "Review the plan".to_owned()
            } else {
                format!("Plan: {}", short(plan, 160))
            }
        }
        DecisionKind::Permission => {
            let subject = ["command", "file_path", "path", "url", "pattern", "description"]
                .iter()
                .find_map(|k| input.get(*k).and_then(Value::as_str));
            match subject {
                Some(s) => format!("{}: {}", req.tool_name, short(s, 160)),
                None => req.tool_name.clone(),
            }
        }
    };
    if let Some(path) = &req.blocked_path {
        details.insert("blocked_path".into(), path.clone().into());
    }
    DecisionRequest {
        kind: Some(kind),
        title,
        source: SOURCE.into(),
        tool_call_id: req.tool_use_id.clone().unwrap_or_default(),
        choices,
        details,
    }
}

/// Claude's answer for `outcome`. An answered question allows the tool with
/// `updatedInput = input + {"answers": {"<question>": "<answer>"}}`: when the answer is a JSON object it
/// maps question texts to answers, else every question gets the answer.
pub fn answer(req: &CanUseTool, outcome: &DecisionOutcome) -> PermissionResult {
    match outcome {
        DecisionOutcome::Approved => PermissionResult::Allow {
            updated_input: if req.input.is_null() {
                json!({})
            } else {
                req.input.clone()
            },
            updated_permissions: None,
        },
        DecisionOutcome::Answered { answer, .. } => {
            let mut input = req.input.clone();
            let mut answers = serde_json::Map::new();
            let keyed = serde_json::from_str::<serde_json::Map<String, Value>>(answer).ok();
            for q in input
                .get("questions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(text) = q.get("question").and_then(Value::as_str) else {
                    continue;
                };
                let value = match &keyed {
                    Some(map) => match map.get(text) {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => continue,
                    },
                    None => answer.clone(),
                };
                answers.insert(text.to_owned(), value.into());
            }
            match input.as_object_mut() {
                Some(obj) => {
                    obj.insert("answers".into(), Value::Object(answers));
                }
                None => input = json!({ "answers": answers }),
            }
            PermissionResult::Allow {
                updated_input: input,
                updated_permissions: None,
            }
        }
        DecisionOutcome::Denied { reason, interrupt } => {
            let reason = if reason.trim().is_empty() {
                "Denied by the host."
            } else {
                reason
            };
            PermissionResult::Deny {
                message: reason.to_owned(),
                interrupt: interrupt.then_some(true),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn can_use(tool: &str, input: Value) -> CanUseTool {
        CanUseTool {
            tool_name: tool.into(),
            input,
            tool_use_id: Some("call_1".into()),
            ..Default::default()
        }
    }

    #[test]
    fn bash_is_a_permission_titled_by_its_command() {
        let r = request(&can_use("Bash", json!({"command": "echo hi\nsecond line"})));
        assert_eq!(r.kind, Some(DecisionKind::Permission));
        assert_eq!(r.title, "Bash: echo hi");
        assert_eq!(r.tool_call_id, "call_1");
        assert_eq!(r.details["input"]["command"], "echo hi\nsecond line");
        let a = answer(
            &can_use("Bash", json!({"command": "x"})),
            &DecisionOutcome::Approved,
        );
        assert_eq!(
            serde_json::to_value(&a).unwrap(),
            json!({"behavior": "allow", "updatedInput": {"command": "x"}})
        );
    }

    #[test]
    fn questions_offer_choices_and_answers_go_into_updated_input() {
        let input = json!({"questions": [{"question": "Which color?", "header": "Color", "multiSelect": false,
            "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]});
        let req = can_use("AskUserQuestion", input);
        let r = request(&req);
        assert_eq!(r.kind, Some(DecisionKind::Question));
        assert_eq!(r.title, "Which color?");
        let keys: Vec<&str> = r.choices.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["Red", "Blue"]);
        assert_eq!(r.choices[1].description, "cool");
        let a = answer(
            &req,
            &DecisionOutcome::Answered {
                answer: "Blue".into(),
                choice: Some("Blue".into()),
            },
        );
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["updatedInput"]["answers"]["Which color?"], "Blue");
        assert_eq!(v["updatedInput"]["questions"][0]["header"], "Color");
        let two = can_use(
            "AskUserQuestion",
            json!({"questions": [{"question": "A?"}, {"question": "B?"}]}),
        );
        let keyed = answer(
            &two,
            &DecisionOutcome::Answered {
                answer: r#"{"A?": "yes", "B?": "Auth, Export"}"#.into(),
                choice: None,
            },
        );
        let v = serde_json::to_value(&keyed).unwrap();
        assert_eq!(
            v["updatedInput"]["answers"],
            json!({"A?": "yes", "B?": "Auth, Export"})
        );
    }

    #[test]
    fn plans_are_reviews_and_denials_carry_reason_and_interrupt() {
        let req = can_use(
            "ExitPlanMode",
            json!({"plan": "1. Read the code\n2. Fix the bug"}),
        );
        let r = request(&req);
        assert_eq!(r.kind, Some(DecisionKind::PlanReview));
        assert_eq!(r.title, "Plan: 1. Read the code");
        assert!(r.details["plan"].as_str().unwrap().contains("Fix the bug"));
        let d = answer(
            &req,
            &DecisionOutcome::Denied {
                reason: String::new(),
                interrupt: true,
            },
        );
        assert_eq!(
            serde_json::to_value(&d).unwrap(),
            json!({"behavior": "deny", "message": "Denied by the host.", "interrupt": true})
        );
    }
}
