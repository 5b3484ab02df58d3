//! Structured output: a JSON Schema derived from a Rust type (schemars) or given explicitly,
//! delivered natively when the driver declares it, otherwise by exact-JSON prompting, and always
//! validated locally (jsonschema).

use std::sync::Arc;

use serde_json::Value;

use super::error::ConfigError;
use crate::driver::{DecisionKind, DecisionMode, Descriptor, Policy};

/// Schema options.
#[derive(Debug, Clone, Default)]
pub struct SchemaOptions {
    /// Schema name (defaults to the type name or `output`).
    pub name: Option<String>,
    /// Description passed to the provider.
    pub description: Option<String>,
    /// Keep a successful result whose output does not validate (its `decode` fails) instead of
    /// failing with `policy_violation`.
    pub return_invalid: bool,
    /// Inline every subschema instead of using `$defs` references (derived schemas only).
    pub inline_references: bool,
    /// Allow properties the type does not declare (derived schemas only; default: closed objects
    /// are left as the derivation produced them).
    pub allow_additional_properties: bool,
}

impl SchemaOptions {
    /// Default options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the name.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Keeps invalid output.
    pub fn return_invalid(mut self) -> Self {
        self.return_invalid = true;
        self
    }

    /// Inlines subschemas.
    pub fn inline_references(mut self) -> Self {
        self.inline_references = true;
        self
    }
}

/// A validated output specification.
#[derive(Clone)]
pub(crate) struct OutputSpec {
    pub schema: Value,
    pub name: String,
    pub return_invalid: bool,
    validator: Arc<jsonschema::Validator>,
}

impl std::fmt::Debug for OutputSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn strip_additional_properties(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.get("additionalProperties") == Some(&Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            map.values_mut().for_each(strip_additional_properties);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_additional_properties),
        _ => {}
    }
}

impl OutputSpec {
    fn build(mut schema: Value, name: String, opts: &SchemaOptions) -> Result<Self, ConfigError> {
        if !schema.is_object() {
            return Err(ConfigError::InvalidOutputSchema(
                "the schema must be a JSON object".into(),
            ));
        }
        // An explicit description replaces whatever the schema (or the type's doc comment) said.
        if let (Some(d), Some(obj)) = (&opts.description, schema.as_object_mut()) {
            obj.insert("description".into(), Value::String(d.clone()));
        }
        let validator = jsonschema::validator_for(&schema)
            .map_err(|e| ConfigError::InvalidOutputSchema(e.to_string()))?;
        Ok(OutputSpec {
            schema,
            name,
            return_invalid: opts.return_invalid,
            validator: Arc::new(validator),
        })
    }

    /// Derives the schema of `T`.
    pub(crate) fn derive<T: schemars::JsonSchema>(opts: SchemaOptions) -> Result<Self, ConfigError> {
        let mut settings = schemars::generate::SchemaSettings::draft2020_12();
        settings.inline_subschemas = opts.inline_references;
        let schema = settings.into_generator().into_root_schema_for::<T>();
        let mut value = schema.to_value();
        if opts.allow_additional_properties {
            strip_additional_properties(&mut value);
        }
        let name = opts
            .name
            .clone()
            .unwrap_or_else(|| sanitize_name(&T::schema_name()));
        Self::build(value, name, &opts)
    }

    /// Parses an explicit schema.
    pub(crate) fn from_json(bytes: &[u8], opts: SchemaOptions) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| ConfigError::InvalidOutputSchema(format!("not JSON: {e}")))?;
        let name = opts.name.clone().unwrap_or_else(|| "output".into());
        Self::build(value, name, &opts)
    }

    /// Validates an instance; returns a readable list of violations on failure.
    pub(crate) fn validate(&self, instance: &Value) -> Result<(), String> {
        let errors: Vec<String> = self
            .validator
            .iter_errors(instance)
            .take(5)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// The prompt suffix for exact-JSON prompting.
    pub(crate) fn prompt_suffix(&self) -> String {
        format!(
            "\n\nRespond with exactly one JSON value that validates against the JSON Schema below, and nothing \
             else: no prose, no code fences.\nJSON Schema ({}):\n{}",
            self.name,
            serde_json::to_string(&self.schema).unwrap_or_default()
        )
    }
}

fn sanitize_name(raw: &str) -> String {
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "output".into() } else { s }
}

/// How the output is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    Native,
    Prompt,
}

/// Picks the mechanism; unavailable combinations fail before launch.
pub(crate) fn choose_mode(desc: &Descriptor, policy: &Policy) -> Result<OutputMode, ConfigError> {
    let caps = &desc.structured;
    let ask = [
        DecisionKind::Permission,
        DecisionKind::PlanReview,
        DecisionKind::Question,
    ]
    .iter()
    .any(|k| policy.approvals.explicit_mode(*k) == Some(DecisionMode::Ask));
    if caps.native && (!ask || caps.native_with_hitl) {
        return Ok(OutputMode::Native);
    }
    if caps.prompt_validate {
        return Ok(OutputMode::Prompt);
    }
    Err(ConfigError::StructuredOutputUnsupported(format!(
        "the {} driver declares no structured-output mechanism for this policy",
        desc.driver_type
    )))
}

/// Extracts the JSON value from prompt-mode text: the trimmed text, tolerating one code fence.
pub(crate) fn extract_json(text: &str) -> Result<Value, String> {
    let t = text.trim();
    let body = if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        rest.strip_suffix("```").unwrap_or(rest).trim()
    } else {
        t
    };
    serde_json::from_str(body).map_err(|e| format!("output is not JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::{ApprovalPolicy, StructuredCaps};

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Verdict {
        ok: bool,
        score: u8,
    }

    #[test]
    fn derived_schema_validates() {
        let spec = OutputSpec::derive::<Verdict>(SchemaOptions::new()).unwrap();
        assert_eq!(spec.name, "Verdict");
        assert!(
            spec.validate(&serde_json::json!({"ok": true, "score": 3}))
                .is_ok()
        );
        let err = spec.validate(&serde_json::json!({"ok": "yes"})).unwrap_err();
        assert!(err.contains("ok") || err.contains("score"), "{err}");
    }

    /// The verdict of a review.
    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Review {
        inner: Inner,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Inner {
        n: u32,
    }

    #[test]
    fn schema_options_name_describe_inline_and_open_derived_schemas() {
        let plain = OutputSpec::derive::<Review>(SchemaOptions::new()).unwrap();
        assert_eq!(plain.name, "Review", "the type name by default");
        let text = plain.schema.to_string();
        assert!(
            text.contains("$ref") && text.contains("$defs"),
            "references by default: {text}"
        );
        assert_eq!(plain.schema["description"], "The verdict of a review.");
        let extra = serde_json::json!({ "inner": { "n": 1, "y": 2 }, "x": 1 });
        assert!(plain.validate(&extra).is_err(), "closed objects stay closed");

        let opts = SchemaOptions {
            description: Some("what the host says it is".into()),
            allow_additional_properties: true,
            ..SchemaOptions::new().name("my_review").inline_references()
        };
        let spec = OutputSpec::derive::<Review>(opts).unwrap();
        assert_eq!(spec.name, "my_review");
        assert_eq!(
            spec.schema["description"], "what the host says it is",
            "the option's description wins over the derived one"
        );
        assert!(
            !spec.schema.to_string().contains("$ref"),
            "inlined: {}",
            spec.schema
        );
        assert!(
            spec.validate(&extra).is_ok(),
            "additional properties allowed at every level"
        );
        assert!(
            spec.validate(&serde_json::json!({ "inner": { "n": "no" } }))
                .is_err(),
            "declared properties still validate"
        );

        let explicit = OutputSpec::from_json(
            br#"{"type":"object"}"#,
            SchemaOptions {
                description: Some("explicit".into()),
                ..SchemaOptions::new()
            },
        )
        .unwrap();
        assert_eq!(explicit.name, "output");
        assert_eq!(explicit.schema["description"], "explicit");
    }

    #[test]
    fn invalid_explicit_schemas_are_refused() {
        assert!(matches!(
            OutputSpec::from_json(b"not json", SchemaOptions::new()),
            Err(ConfigError::InvalidOutputSchema(_))
        ));
        assert!(matches!(
            OutputSpec::from_json(br#"{"type": 12}"#, SchemaOptions::new()),
            Err(ConfigError::InvalidOutputSchema(_))
        ));
        assert!(OutputSpec::from_json(br#"{"type": "object"}"#, SchemaOptions::new()).is_ok());
    }

    #[test]
    fn mode_choice_follows_caps_and_hitl() {
        let mut d = Descriptor {
            driver_type: "x".into(),
            ..Default::default()
        };
        let p = Policy::default();
        assert!(choose_mode(&d, &p).is_err());
        d.structured = StructuredCaps {
            native: true,
            prompt_validate: true,
            native_with_hitl: false,
        };
        assert_eq!(choose_mode(&d, &p).unwrap(), OutputMode::Native);
        let ask = Policy {
            approvals: ApprovalPolicy {
                permission: crate::driver::ApprovalMode::Ask,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(choose_mode(&d, &ask).unwrap(), OutputMode::Prompt);
        d.structured.prompt_validate = false;
        assert!(choose_mode(&d, &ask).is_err());
    }

    #[test]
    fn extract_json_tolerates_one_fence() {
        assert_eq!(extract_json(" {\"a\":1} ").unwrap()["a"], 1);
        assert_eq!(extract_json("```json\n{\"a\":2}\n```").unwrap()["a"], 2);
        assert!(extract_json("the answer is 42").is_err());
    }
}
