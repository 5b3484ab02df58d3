//! The exposure policy: what a record keeps of an event.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What records keep beyond the defaults. All flags default to off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExposurePolicy {
    /// Result metadata (driver-reported key/values) and model/provider identities.
    pub include_metadata: bool,
    /// Token usage.
    pub include_usage: bool,
    /// Raw stdout/stderr (on results, and `process_info` stdout/stderr chunks).
    pub include_raw_streams: bool,
    /// The provider's terminal payload.
    pub include_provider_result: bool,
    /// The normalized transcript (on results, and `transcript.item` notices).
    pub include_transcript: bool,
    /// Runtime service reports.
    pub include_services: bool,
}

impl ExposurePolicy {
    /// Everything.
    pub fn all() -> Self {
        ExposurePolicy {
            include_metadata: true,
            include_usage: true,
            include_raw_streams: true,
            include_provider_result: true,
            include_transcript: true,
            include_services: true,
        }
    }

    /// The intersection: a view can only narrow what was stored.
    pub fn narrow(&self, other: &ExposurePolicy) -> ExposurePolicy {
        ExposurePolicy {
            include_metadata: self.include_metadata && other.include_metadata,
            include_usage: self.include_usage && other.include_usage,
            include_raw_streams: self.include_raw_streams && other.include_raw_streams,
            include_provider_result: self.include_provider_result && other.include_provider_result,
            include_transcript: self.include_transcript && other.include_transcript,
            include_services: self.include_services && other.include_services,
        }
    }

    /// Filters a result object (`Done.result`, `TurnEnd.result`, `RunError.result`) in place.
    fn filter_result(&self, result: &mut Map<String, Value>) {
        let keep_always = ["run_id", "turns", "text", "summary"];
        let mut keep: Vec<&str> = keep_always.to_vec();
        if self.include_metadata {
            keep.extend(["metadata", "model", "provider"]);
        }
        if self.include_usage {
            keep.push("usage");
        }
        if self.include_transcript {
            keep.push("transcript");
        }
        if self.include_services {
            keep.push("services");
        }
        if self.include_raw_streams || self.include_provider_result {
            keep.push("raw");
        }
        result.retain(|k, _| keep.contains(&k.as_str()));
        if let Some(Value::Object(raw)) = result.get_mut("raw") {
            if !self.include_raw_streams {
                raw.remove("stdout");
                raw.remove("stderr");
            }
            if !self.include_provider_result {
                raw.remove("terminal");
            }
        }
    }

    /// Applies the policy to an event's JSON in place.
    pub fn apply(&self, event: &mut Value) {
        let Some(obj) = event.as_object_mut() else { return };
        let kind = obj
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        match kind.as_str() {
            "done" | "turn_end" => {
                if let Some(Value::Object(r)) = obj.get_mut("result") {
                    self.filter_result(r);
                }
                if let Some(Value::Object(e)) = obj.get_mut("error") {
                    e.retain(|k, _| ["code", "reason", "message"].contains(&k.as_str()));
                }
            }
            "run_finished" if !self.include_usage => {
                obj.remove("usage");
            }
            "process_info" if !self.include_raw_streams => {
                let chunk = matches!(obj.get("kind").and_then(Value::as_str), Some("stdout" | "stderr"));
                if chunk {
                    obj.remove("text");
                    obj.remove("bytes");
                    obj.insert("withheld".into(), Value::Bool(true));
                }
            }
            "notice" => {
                if !self.include_transcript {
                    obj.remove("item");
                }
                // A turn's usage so far is usage: its counts go only where usage may.
                let usage =
                    obj.get("kind").and_then(Value::as_str) == Some(crate::driver::notice_kind::USAGE);
                if usage && !self.include_usage {
                    obj.remove("data");
                }
            }
            _ => {}
        }
    }
}
