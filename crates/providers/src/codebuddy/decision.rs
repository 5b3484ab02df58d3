//! `can_use_tool` ↔ decisions, both pure: [`request`] describes the CLI's request for the core, and
//! [`answer`] turns the core's outcome into CodeBuddy's own answer shape (`allowed`, not Claude's
//! `behavior`). `AskUserQuestion` is a question, `ExitPlanMode` a plan review, anything else a permission.

use crate::driver::{DecisionKind, DecisionOutcome, DecisionRequest};
use crate::stream_json::decision as shared;

use super::wire::{CanUseTool, PermissionResponse};

/// The decision source label.
pub const SOURCE: &str = "codebuddy.can_use_tool";

/// The kind of a `can_use_tool` request.
pub fn kind(req: &CanUseTool) -> DecisionKind {
    shared::kind(&req.tool_name)
}

/// Describes a `can_use_tool` request for the core.
pub fn request(req: &CanUseTool) -> DecisionRequest {
    let tool = shared::ToolRequest {
        tool_name: &req.tool_name,
        input: &req.input,
        tool_use_id: req.tool_use_id.as_deref(),
    };
    shared::request(tool, SOURCE, "CodeBuddy")
}

/// CodeBuddy's answer for `outcome`. An answered question allows the tool with
/// `updatedInput = input + {"answers": {"<question>": "<answer>"}}` (every question gets the answer).
pub fn answer(req: &CanUseTool, outcome: &DecisionOutcome) -> PermissionResponse {
    let id = req.tool_use_id.clone();
    match shared::answer(&req.input, outcome, shared::AnswerRule::Broadcast) {
        shared::Answer::Allow(input) => PermissionResponse::allow(id, input),
        shared::Answer::Deny { reason, interrupt } => PermissionResponse::deny(id, &reason, interrupt),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn can_use(tool: &str, input: Value) -> CanUseTool {
        CanUseTool {
            tool_name: tool.into(),
            input,
            tool_use_id: Some("call_1".into()),
            permission_suggestions: None,
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
            json!({"allowed": true, "tool_use_id": "call_1", "updatedInput": {"command": "x"}})
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
            json!({"allowed": false, "tool_use_id": "call_1", "reason": "Denied by the host.", "interrupt": true})
        );
    }
}
