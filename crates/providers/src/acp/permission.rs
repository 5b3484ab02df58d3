//! `session/request_permission` ↔ the decision SPI (pure): the agent's options become the request's
//! choices, and the run's final outcome becomes the one answer the agent gets.
//!
//! | outcome | answer |
//! |---|---|
//! | approved | the first `allow_once` option, else `allow_always` (only when the agent offers nothing narrower) |
//! | answered with a choice key that is an option id | that option |
//! | denied | the first `reject_once` option, else `reject_always` |
//! | no fitting option, or the turn was cancelled | `{"outcome": "cancelled"}` |
//!
//! `allow_always` is never picked while `allow_once` exists: "always" would let the agent skip the
//! host's policy for later calls.

use serde_json::Value;

use crate::driver::{DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, JsonMap};
use agent_adaptor_core::acp::wire::{
    PermissionOption, PermissionOptionKind, PermissionOutcome, RequestPermissionParams,
    RequestPermissionResponse,
};

/// The decision request for `p`; `driver_type` labels the source.
pub fn decision_request(driver_type: &str, p: &RequestPermissionParams, raw: &Value) -> DecisionRequest {
    let title = if p.tool_call.title.is_empty() {
        "a tool call".to_owned()
    } else {
        p.tool_call.title.clone()
    };
    let mut details = JsonMap::new();
    if let Some(tc) = raw.get("toolCall") {
        details.insert("tool_call".into(), tc.clone());
    }
    if let Some(input) = &p.tool_call.raw_input {
        details.insert("input".into(), input.clone());
    }
    DecisionRequest {
        kind: Some(DecisionKind::Permission),
        title,
        source: format!("{driver_type}.session/request_permission"),
        tool_call_id: p.tool_call.tool_call_id.clone(),
        choices: p
            .options
            .iter()
            .map(|o| DecisionChoice {
                key: o.option_id.clone(),
                label: o.name.clone(),
                description: kind_name(o.kind).to_owned(),
            })
            .collect(),
        details,
    }
}

fn kind_name(k: PermissionOptionKind) -> &'static str {
    match k {
        PermissionOptionKind::AllowOnce => "allow_once",
        PermissionOptionKind::AllowAlways => "allow_always",
        PermissionOptionKind::RejectOnce => "reject_once",
        PermissionOptionKind::RejectAlways => "reject_always",
    }
}

fn first(options: &[PermissionOption], kinds: &[PermissionOptionKind]) -> Option<String> {
    kinds
        .iter()
        .find_map(|k| options.iter().find(|o| o.kind == *k))
        .map(|o| o.option_id.clone())
}

/// The answer to a permission request with `options` for `outcome`.
pub fn answer(options: &[PermissionOption], outcome: &DecisionOutcome) -> RequestPermissionResponse {
    use PermissionOptionKind::*;
    let picked = match outcome {
        DecisionOutcome::Approved => first(options, &[AllowOnce, AllowAlways]),
        DecisionOutcome::Answered { choice, .. } => choice
            .as_ref()
            .filter(|c| options.iter().any(|o| &o.option_id == *c))
            .cloned(),
        DecisionOutcome::Denied { .. } => first(options, &[RejectOnce, RejectAlways]),
    };
    RequestPermissionResponse {
        outcome: match picked {
            Some(option_id) => PermissionOutcome::Selected { option_id },
            None => PermissionOutcome::Cancelled,
        },
    }
}

/// The answer to every permission request still open when the turn is cancelled.
pub fn cancelled() -> RequestPermissionResponse {
    RequestPermissionResponse {
        outcome: PermissionOutcome::Cancelled,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(options: Value) -> (RequestPermissionParams, Value) {
        let raw = json!({"sessionId": "s", "toolCall": {"toolCallId": "t1", "title": "Run `ls`",
            "rawInput": {"command": "ls"}}, "options": options});
        (serde_json::from_value(raw.clone()).unwrap(), raw)
    }

    #[test]
    fn options_become_choices_and_outcomes_pick_the_narrowest_option() {
        let (p, raw) = params(json!([
            {"optionId": "always", "name": "Always", "kind": "allow_always"},
            {"optionId": "once", "name": "Once", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"}
        ]));
        let r = decision_request("acp", &p, &raw);
        assert_eq!(r.kind, Some(DecisionKind::Permission));
        assert_eq!((r.title.as_str(), r.tool_call_id.as_str()), ("Run `ls`", "t1"));
        assert_eq!(r.choices.len(), 3);
        assert_eq!(r.details["input"]["command"], "ls");
        let pick = |o: &DecisionOutcome| match answer(&p.options, o).outcome {
            PermissionOutcome::Selected { option_id } => option_id,
            PermissionOutcome::Cancelled => "<cancelled>".into(),
        };
        assert_eq!(pick(&DecisionOutcome::Approved), "once");
        let deny = DecisionOutcome::Denied {
            reason: "no".into(),
            interrupt: false,
        };
        assert_eq!(pick(&deny), "no");
        let chose = |c: &str| DecisionOutcome::Answered {
            answer: c.into(),
            choice: Some(c.into()),
        };
        assert_eq!(pick(&chose("always")), "always");
        assert_eq!(pick(&chose("bogus")), "<cancelled>");
        let (only_always, _) = params(json!([{"optionId": "a", "name": "A", "kind": "allow_always"}]));
        assert_eq!(
            answer(&only_always.options, &deny).outcome,
            PermissionOutcome::Cancelled,
            "no reject option: cancelled"
        );
        assert!(matches!(
            answer(&only_always.options, &DecisionOutcome::Approved).outcome,
            PermissionOutcome::Selected { ref option_id } if option_id == "a"
        ));
        assert_eq!(
            serde_json::to_value(cancelled()).unwrap(),
            json!({"outcome": {"outcome": "cancelled"}})
        );
    }
}
