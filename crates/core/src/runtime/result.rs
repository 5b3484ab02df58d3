//! The Result of an execution ([`RunResult`]) and its audit records.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::Value;

use crate::driver::{Author, MessageFailure, RawStreams, Timing, TranscriptItem, Usage};
pub use crate::vocab::ServiceReport;

/// Supplemental message states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum MessageState {
    /// Admitted, or claimed and being attempted.
    Accepted = 1,
    /// The provider accepted it at the reported boundary.
    Delivered = 2,
    /// It will not be delivered.
    Failed = 3,
}

/// The final outcome of one supplemental message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageOutcome {
    /// Message id.
    pub id: String,
    /// Original text.
    pub text: String,
    /// Author.
    pub from: Author,
    /// Requested timing.
    pub timing: Timing,
    /// Final state.
    pub state: MessageState,
    /// One-based turn it was delivered into; 0 when unassigned.
    pub turn: u32,
    /// Boundary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub boundary: String,
    /// Mechanism.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub mechanism: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<MessageFailure>,
}

/// A subagent summary.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubagentResult {
    /// Member name.
    pub member: String,
    /// Task id.
    pub task: String,
    /// Final state.
    pub state: String,
    /// Summary.
    pub summary: String,
    /// Usage, when observed.
    pub usage: Option<Usage>,
    /// Unread messages.
    pub unread: Vec<String>,
}

/// Why [`RunResult::decode`] failed.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// Neither structured output nor text is JSON.
    #[error("result is not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// The output did not validate against the requested schema (kept by `return_invalid`).
    #[error("structured output is invalid: {0}")]
    Invalid(String),
    /// The JSON does not fit the target type.
    #[error("result does not match the target type: {0}")]
    Shape(#[source] serde_json::Error),
}

/// The result of one execution.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// Provider turns in this execution; zero for a deduplicated starting prompt.
    pub turns: u32,
    /// SDK execution id.
    pub run_id: String,
    /// Effective model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Effective provider.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub provider: String,
    /// The final provider turn's assistant-facing answer.
    pub text: String,
    /// Optional short host-facing label (never appended to `text`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub summary: String,
    /// Sum of observed usage; `None` means unobserved, a zero value means observed zero.
    pub usage: Option<Usage>,
    /// Driver metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    #[serde(default)]
    pub(crate) raw: RawStreams,
    #[serde(default)]
    pub(crate) transcript: Vec<TranscriptItem>,
    #[serde(default)]
    pub(crate) services: Vec<ServiceReport>,
    #[serde(default)]
    pub(crate) structured: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) structured_error: Option<String>,
    #[serde(default)]
    pub(crate) messages: Vec<MessageOutcome>,
    #[serde(default)]
    pub(crate) subagents: Vec<SubagentResult>,
}

impl RunResult {
    /// Complete raw provider streams and the last terminal payload.
    pub fn raw(&self) -> RawStreams {
        self.raw.clone()
    }

    /// The normalized transcript, with core-appended supplemental deliveries.
    pub fn transcript(&self) -> Vec<TranscriptItem> {
        self.transcript.clone()
    }

    /// Ensured/observed runtime services.
    pub fn services(&self) -> Vec<ServiceReport> {
        self.services.clone()
    }

    /// Validated structured output, when a schema was requested.
    pub fn structured(&self) -> Option<&Value> {
        self.structured.as_ref()
    }

    /// Decodes the validated structured output, or `text` as JSON when no schema was used.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, DecodeError> {
        if let Some(e) = &self.structured_error {
            return Err(DecodeError::Invalid(e.clone()));
        }
        let value = match &self.structured {
            Some(v) => v.clone(),
            None => serde_json::from_str(self.text.trim()).map_err(DecodeError::NotJson)?,
        };
        serde_json::from_value(value).map_err(DecodeError::Shape)
    }

    /// Final outcomes of every supplemental message, in admission order.
    pub fn messages(&self) -> Vec<MessageOutcome> {
        self.messages.clone()
    }

    /// The failed outcomes, with their original text.
    pub fn undelivered(&self) -> Vec<MessageOutcome> {
        self.messages
            .iter()
            .filter(|m| m.state == MessageState::Failed)
            .cloned()
            .collect()
    }

    /// Subagent summaries.
    pub fn subagents(&self) -> Vec<SubagentResult> {
        self.subagents.clone()
    }

    /// A detached copy whose subagent snapshot is replaced; usage is unchanged.
    pub fn with_subagents(&self, subagents: Vec<SubagentResult>) -> RunResult {
        let mut r = self.clone();
        r.subagents = subagents;
        r
    }
}

impl RunResult {
    /// Folds one part into this aggregate — the one rule core continuation (each driver invocation
    /// of an execution) and [`compose_results`] share: the last text (of a part that ran a turn or
    /// answered), summary, model and provider (last non-empty), metadata merged by key, the last
    /// structured output together with its validation error, usage and turns summed, transcript
    /// appended, raw streams concatenated with the last terminal payload.
    pub(crate) fn fold(&mut self, part: &RunResult) {
        self.turns += part.turns;
        if part.turns > 0 || !part.text.is_empty() {
            self.text.clone_from(&part.text);
        }
        if !part.summary.is_empty() {
            self.summary.clone_from(&part.summary);
        }
        if !part.model.is_empty() {
            self.model.clone_from(&part.model);
        }
        if !part.provider.is_empty() {
            self.provider.clone_from(&part.provider);
        }
        self.usage = Usage::sum(self.usage, part.usage);
        self.metadata
            .extend(part.metadata.iter().map(|(k, v)| (k.clone(), v.clone())));
        if part.structured.is_some() || part.structured_error.is_some() {
            self.structured.clone_from(&part.structured);
            self.structured_error.clone_from(&part.structured_error);
        }
        self.raw.append(&part.raw);
        self.transcript.extend(part.transcript.iter().cloned());
    }
}

/// Aggregates child results exactly the way core continuation does ([`RunResult`]'s fold rule: last
/// text/summary/model/provider, metadata merged by key, the last structured output with its
/// validation error, summed usage and turns, concatenated raw streams with the last terminal
/// payload), plus ordered message/service/subagent slices. Message turns are rebased onto the
/// composite sequence. The result is detached from the parts.
pub fn compose_results(run_id: &str, parts: &[&RunResult]) -> RunResult {
    let mut out = RunResult {
        run_id: run_id.to_owned(),
        ..Default::default()
    };
    for part in parts {
        let base = out.turns;
        out.fold(part);
        out.services.extend(part.services.iter().cloned());
        out.subagents.extend(part.subagents.iter().cloned());
        out.messages.extend(part.messages.iter().map(|m| {
            let mut m = m.clone();
            if m.turn > 0 {
                m.turn += base;
            }
            m
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(text: &str, turns: u32, usage: Option<Usage>) -> RunResult {
        RunResult {
            text: text.into(),
            turns,
            usage,
            ..Default::default()
        }
    }

    #[test]
    fn compose_sums_usage_and_turns_and_keeps_last_text() {
        let a = part(
            "a",
            1,
            Some(Usage {
                input_tokens: 1,
                output_tokens: 2,
                ..Default::default()
            }),
        );
        let mut b = part("b", 2, None);
        b.messages.push(MessageOutcome {
            id: "m".into(),
            text: "t".into(),
            from: Author::default(),
            timing: Timing::Soon,
            state: MessageState::Delivered,
            turn: 1,
            boundary: String::new(),
            mechanism: String::new(),
            reason: None,
        });
        let c = compose_results("run", &[&a, &b]);
        assert_eq!(c.text, "b");
        assert_eq!(c.turns, 3);
        assert_eq!(c.usage.unwrap().output_tokens, 2);
        assert_eq!(c.messages[0].turn, 2, "turn rebased onto the composite sequence");
        assert_eq!(
            compose_results("r", &[&part("x", 1, None)]).usage,
            None,
            "nil usage stays nil"
        );
    }

    #[test]
    fn compose_merges_metadata_by_key_and_keeps_the_structured_error() {
        let mut a = part("a", 1, None);
        a.metadata.insert("x".into(), "1".into());
        a.metadata.insert("y".into(), "2".into());
        let mut b = part("{\"ok\":\"no\"}", 1, None);
        b.metadata.insert("y".into(), "3".into());
        b.structured_error = Some("ok: not a boolean".into());
        let c = compose_results("run", &[&a, &b]);
        assert_eq!(c.metadata.get("x").map(String::as_str), Some("1"));
        assert_eq!(c.metadata.get("y").map(String::as_str), Some("3"));
        assert!(matches!(c.decode::<Value>(), Err(DecodeError::Invalid(_))));
        let dedup = part("", 0, None);
        assert_eq!(
            compose_results("run", &[&a, &dedup]).text,
            "a",
            "a part that ran no turn does not blank the text"
        );
    }

    #[test]
    fn decode_prefers_structured_output_then_text() {
        let mut r = part("{\"a\":1}", 1, None);
        let v: serde_json::Value = r.decode().unwrap();
        assert_eq!(v["a"], 1);
        r.structured = Some(serde_json::json!({"a": 2}));
        let v: serde_json::Value = r.decode().unwrap();
        assert_eq!(v["a"], 2);
        let bad = part("not json", 1, None);
        assert!(matches!(
            bad.decode::<serde_json::Value>(),
            Err(DecodeError::NotJson(_))
        ));
    }
}
