//! `can_use_tool` ↔ decisions for the stream-json family, both pure and wire-neutral: [`request`]
//! describes a tool request for the core, [`answer`] turns the core's outcome into an [`Answer`] each
//! provider renders in its own wire shape. `AskUserQuestion` is a question, `ExitPlanMode` a plan review
//! (with the plan text), anything else a permission.

use serde_json::{Value, json};

use crate::driver::{DecisionChoice, DecisionKind, DecisionOutcome, DecisionRequest, JsonMap};

/// The kind of a `can_use_tool` request for `tool_name`.
pub fn kind(tool_name: &str) -> DecisionKind {
    match tool_name {
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

/// One `can_use_tool` request, as far as the family shares it.
#[derive(Debug, Clone, Copy)]
pub struct ToolRequest<'a> {
    /// `Bash`, `AskUserQuestion`, `ExitPlanMode`, `mcp__server__tool`, …
    pub tool_name: &'a str,
    /// The tool input.
    pub input: &'a Value,
    /// The tool_use this asks about.
    pub tool_use_id: Option<&'a str>,
}

/// Describes `req` for the core. `source` labels the decision; `asker` names the CLI in the title of a
/// question without text. Plan reviews put the plan into `details["plan"]` last, so a provider may add
/// its own details after it.
pub fn request(req: ToolRequest<'_>, source: &str, asker: &str) -> DecisionRequest {
    let kind = kind(req.tool_name);
    let input = req.input;
    let mut details = JsonMap::new();
    details.insert("tool_name".into(), req.tool_name.into());
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
                .map_or_else(|| format!("{asker} asks a question"), |s| short(s, 200))
        }
        DecisionKind::PlanReview => {
            let plan = input.get("plan").and_then(Value::as_str).unwrap_or_default();
            details.insert("plan".into(), plan.into());
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
                None => req.tool_name.to_owned(),
            }
        }
    };
    DecisionRequest {
        kind: Some(kind),
        title,
        source: source.into(),
        tool_call_id: req.tool_use_id.unwrap_or_default().to_owned(),
        choices,
        details,
    }
}

/// How an answered question maps onto `updatedInput.answers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerRule {
    /// When the answer is a JSON object it maps question texts to answers (questions it does not name
    /// get none); otherwise every question gets the answer.
    Keyed,
    /// Every question gets the answer as given.
    Broadcast,
}

/// The host's answer to a `can_use_tool` request, before a provider renders it.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Run the tool with this input.
    Allow(Value),
    /// Refuse it.
    Deny {
        /// Why (never blank).
        reason: String,
        /// Whether the turn stops too.
        interrupt: bool,
    },
}

/// The answer for `outcome` to a request with `input`. Approval keeps the input as it is; an answered
/// question allows the tool with `updatedInput = input + {"answers": {"<question>": "<answer>"}}`
/// following `rule`; a denial without a reason says "Denied by the host.".
pub fn answer(input: &Value, outcome: &DecisionOutcome, rule: AnswerRule) -> Answer {
    match outcome {
        DecisionOutcome::Approved => Answer::Allow(input.clone()),
        DecisionOutcome::Answered { answer, .. } => {
            let mut input = input.clone();
            let mut answers = serde_json::Map::new();
            let keyed = match rule {
                AnswerRule::Keyed => serde_json::from_str::<serde_json::Map<String, Value>>(answer).ok(),
                AnswerRule::Broadcast => None,
            };
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
            Answer::Allow(input)
        }
        DecisionOutcome::Denied { reason, interrupt } => Answer::Deny {
            reason: if reason.trim().is_empty() {
                "Denied by the host.".to_owned()
            } else {
                reason.clone()
            },
            interrupt: *interrupt,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_gives_every_question_the_raw_answer_even_when_it_is_json() {
        let input = json!({"questions": [{"question": "A?"}, {"question": "B?"}]});
        let out = DecisionOutcome::Answered {
            answer: r#"{"A?": "yes"}"#.into(),
            choice: None,
        };
        let Answer::Allow(b) = answer(&input, &out, AnswerRule::Broadcast) else {
            panic!("an answer allows the tool");
        };
        assert_eq!(b["answers"]["B?"], r#"{"A?": "yes"}"#);
        let Answer::Allow(k) = answer(&input, &out, AnswerRule::Keyed) else {
            panic!("an answer allows the tool");
        };
        assert_eq!(k["answers"], json!({"A?": "yes"}));
    }

    #[test]
    fn a_question_without_text_is_titled_by_the_asker() {
        let input = json!({});
        let r = request(
            ToolRequest {
                tool_name: "AskUserQuestion",
                input: &input,
                tool_use_id: None,
            },
            "x.can_use_tool",
            "X",
        );
        assert_eq!(r.title, "X asks a question");
        assert_eq!(r.source, "x.can_use_tool");
        assert_eq!(r.tool_call_id, "");
    }
}
