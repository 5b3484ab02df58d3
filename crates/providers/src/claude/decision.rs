//! `can_use_tool` ↔ decisions, both pure: [`request`] describes the CLI's request for the core, and
//! [`answer`] turns the core's outcome into Claude's answer (`{"behavior":"allow","updatedInput"}` or
//! `{"behavior":"deny","message","interrupt"}`). `AskUserQuestion` is a question, `ExitPlanMode` a plan
//! review (with the plan text), anything else a permission.

use serde_json::{Value, json};

use crate::driver::{DecisionKind, DecisionOutcome, DecisionRequest};
use crate::stream_json::decision as shared;

use super::wire::{CanUseTool, PermissionResult};

/// The decision source label.
pub const SOURCE: &str = "claude.can_use_tool";

/// The kind of a `can_use_tool` request.
pub fn kind(req: &CanUseTool) -> DecisionKind {
    shared::kind(&req.tool_name)
}

fn tool_request(req: &CanUseTool) -> shared::ToolRequest<'_> {
    shared::ToolRequest {
        tool_name: &req.tool_name,
        input: &req.input,
        tool_use_id: req.tool_use_id.as_deref(),
    }
}

/// Describes a `can_use_tool` request for the core (plus the plan file and the blocked path Claude
/// reports).
pub fn request(req: &CanUseTool) -> DecisionRequest {
    let mut r = shared::request(tool_request(req), SOURCE, "Claude");
    if r.kind == Some(DecisionKind::PlanReview)
        && let Some(path) = req.input.get("planFilePath").and_then(Value::as_str)
    {
        r.details.insert("plan_file".into(), path.into());
    }
    if let Some(path) = &req.blocked_path {
        r.details.insert("blocked_path".into(), path.clone().into());
    }
    r
}

/// Claude's answer for `outcome`. An answered question allows the tool with
/// `updatedInput = input + {"answers": {"<question>": "<answer>"}}`: when the answer is a JSON object it
/// maps question texts to answers, else every question gets the answer.
pub fn answer(req: &CanUseTool, outcome: &DecisionOutcome) -> PermissionResult {
    match shared::answer(&req.input, outcome, shared::AnswerRule::Keyed) {
        shared::Answer::Allow(input) => PermissionResult::Allow {
            updated_input: if input.is_null() { json!({}) } else { input },
            updated_permissions: None,
        },
        shared::Answer::Deny { reason, interrupt } => PermissionResult::Deny {
            message: reason,
            interrupt: interrupt.then_some(true),
        },
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
