//! [`define`]: a typed async handler plus its name, description, schemas, hints and revision.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::{ToolDefinitionError, ToolError, reject};

/// The boxed future a type-erased handler returns.
pub type HandlerFuture = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send>>;
type Handler = Arc<dyn Fn(Value) -> HandlerFuture + Send + Sync>;

/// Behaviour hints the model's client may use (they are hints, never enforcement).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ToolHints {
    /// The tool does not modify its environment.
    pub read_only: bool,
    /// Calling it again with the same arguments has no further effect.
    pub idempotent: bool,
}

/// A host tool. Cheap to clone; build one with [`define`].
#[derive(Clone)]
pub struct Tool {
    name: String,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    hints: ToolHints,
    revision: Option<String>,
    handler: Handler,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("revision", &self.revision)
            .field("hints", &self.hints)
            .finish_non_exhaustive()
    }
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.remove("$schema");
    }
    v
}

/// Defines a tool from a typed async handler. The input schema is derived from `I`; the output schema
/// from `O` when that is an object schema (MCP requires object output schemas), else the result is sent
/// as JSON text only. Arguments that do not deserialize into `I` are a model-visible
/// `invalid_arguments` rejection.
pub fn define<I, O, F, Fut>(name: impl Into<String>, description: impl Into<String>, handler: F) -> Tool
where
    I: DeserializeOwned + JsonSchema + Send + 'static,
    O: Serialize + JsonSchema + 'static,
    F: Fn(I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
{
    let handler = Arc::new(handler);
    let erased: Handler = Arc::new(move |args: Value| {
        let handler = handler.clone();
        Box::pin(async move {
            let input: I = serde_json::from_value(args)
                .map_err(|e| reject("invalid_arguments", format!("the arguments do not match: {e}")))?;
            let out = handler(input).await?;
            serde_json::to_value(out).map_err(ToolError::internal)
        }) as HandlerFuture
    });
    let output = schema_of::<O>();
    let output_schema = (output.get("type") == Some(&Value::String("object".into()))).then_some(output);
    Tool {
        name: name.into(),
        description: description.into(),
        input_schema: schema_of::<I>(),
        output_schema,
        hints: ToolHints::default(),
        revision: None,
        handler: erased,
    }
}

impl Tool {
    /// Replaces the derived input schema (validated when the tool is offered).
    pub fn input_schema_json(mut self, schema: Value) -> Tool {
        self.input_schema = schema;
        self
    }

    /// Replaces the derived output schema (validated when the tool is offered).
    pub fn output_schema_json(mut self, schema: Value) -> Tool {
        self.output_schema = Some(schema);
        self
    }

    /// Marks the tool read-only.
    pub fn read_only(mut self) -> Tool {
        self.hints.read_only = true;
        self
    }

    /// Marks the tool idempotent.
    pub fn idempotent(mut self) -> Tool {
        self.hints.idempotent = true;
        self
    }

    /// The semantic revision: change it whenever the tool's meaning changes. Mandatory for tools an
    /// Agent uses on a Thread; it is part of the thread's compatibility fingerprint.
    pub fn revision(mut self, revision: impl Into<String>) -> Tool {
        self.revision = Some(revision.into());
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The input JSON Schema.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The output JSON Schema, when there is one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    /// The hints.
    pub fn hints(&self) -> ToolHints {
        self.hints
    }

    /// The semantic revision, when set.
    pub fn revision_id(&self) -> Option<&str> {
        self.revision.as_deref()
    }

    /// Checks the name and both schemas.
    pub fn validate(&self) -> Result<(), ToolDefinitionError> {
        let ok_name = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok_name {
            return Err(ToolDefinitionError::InvalidName(self.name.clone()));
        }
        let check = |which: &'static str, schema: &Value| {
            let bad = |reason: String| ToolDefinitionError::InvalidSchema {
                tool: self.name.clone(),
                which,
                reason,
            };
            if schema.get("type") != Some(&Value::String("object".into())) {
                return Err(bad("missing \"type\": \"object\"".into()));
            }
            jsonschema::validator_for(schema).map_err(|e| bad(e.to_string()))?;
            Ok(())
        };
        check("input", &self.input_schema)?;
        if let Some(o) = &self.output_schema {
            check("output", o)?;
        }
        Ok(())
    }

    /// The input schema as a JSON object (for the MCP listing).
    #[cfg(feature = "tools")]
    pub(crate) fn input_object(&self) -> serde_json::Map<String, Value> {
        self.input_schema.as_object().cloned().unwrap_or_default()
    }

    /// Runs the handler on `args`. A panic becomes [`ToolError::Internal`]; the handler runs on its
    /// own task so a panic never unwinds into the server.
    pub async fn call(&self, args: Value) -> Result<Value, ToolError> {
        let fut = (self.handler)(args);
        match tokio::spawn(fut).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => Err(ToolError::Internal(format!("the handler panicked: {e}"))),
            Err(e) => Err(ToolError::Internal(format!("the handler was cancelled: {e}"))),
        }
    }
}

/// The semantic fingerprint of a tool set: names, descriptions, schemas, hints and revisions, sorted by
/// name. Empty for no tools (so an Agent without tools keeps its old thread fingerprints).
pub fn fingerprint(tools: &[Tool]) -> String {
    if tools.is_empty() {
        return String::new();
    }
    let mut parts: Vec<Value> = tools
        .iter()
        .map(|t| {
            serde_json::json!([
                t.name,
                t.description,
                t.input_schema,
                t.output_schema,
                t.hints,
                t.revision
            ])
        })
        .collect();
    parts.sort_by(|a, b| a[0].as_str().cmp(&b[0].as_str()));
    crate::driver::session::fingerprint(&[&Value::Array(parts).to_string()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, JsonSchema)]
    struct In {
        city: String,
    }

    #[derive(Serialize, JsonSchema)]
    struct Out {
        celsius: i32,
    }

    fn weather() -> Tool {
        define("weather", "Weather by city", |i: In| async move {
            if i.city == "Atlantis" {
                return Err(reject("not_found", "no such city"));
            }
            Ok(Out { celsius: 21 })
        })
    }

    #[tokio::test]
    async fn schemas_are_derived_and_calls_are_typed() {
        let t = weather().read_only().revision("1");
        t.validate().unwrap();
        assert_eq!(t.input_schema()["properties"]["city"]["type"], "string");
        assert_eq!(
            t.output_schema().unwrap()["properties"]["celsius"]["type"],
            "integer"
        );
        assert!(t.hints().read_only && !t.hints().idempotent);
        let v = t.call(serde_json::json!({"city": "Paris"})).await.unwrap();
        assert_eq!(v, serde_json::json!({"celsius": 21}));
        let e = t.call(serde_json::json!({"city": "Atlantis"})).await.unwrap_err();
        assert_eq!(e.as_rejection().unwrap().code, "not_found");
        let bad = t.call(serde_json::json!({"town": 1})).await.unwrap_err();
        assert_eq!(bad.as_rejection().unwrap().code, "invalid_arguments");
    }

    #[tokio::test]
    async fn a_panicking_handler_is_an_internal_error() {
        let t = define("boom", "panics", |_: In| async move {
            if true {
                panic!("secret detail");
            }
            Ok(Out { celsius: 0 })
        });
        let e = t.call(serde_json::json!({"city": "x"})).await.unwrap_err();
        assert!(matches!(e, ToolError::Internal(_)));
        assert!(!e.model_text("boom").contains("secret"));
    }

    #[test]
    fn bad_names_and_schemas_are_refused_and_overrides_apply() {
        assert!(matches!(
            weather()
                .input_schema_json(serde_json::json!({"type": "string"}))
                .validate(),
            Err(ToolDefinitionError::InvalidSchema { which: "input", .. })
        ));
        let t = define("bad name!", "x", |i: In| async move { Ok(i.city) });
        assert!(matches!(t.validate(), Err(ToolDefinitionError::InvalidName(_))));
        assert!(
            t.output_schema().is_none(),
            "a string output has no object schema"
        );
        let custom = serde_json::json!({"type": "object", "properties": {"city": {"type": "string", "enum": ["Paris"]}}});
        let t = weather().input_schema_json(custom.clone());
        t.validate().unwrap();
        assert_eq!(t.input_schema(), &custom);
    }

    #[test]
    fn the_fingerprint_follows_the_revision_and_ignores_order() {
        let a = weather().revision("1");
        let b = define("other", "x", |i: In| async move { Ok(i.city) }).revision("1");
        assert_eq!(
            fingerprint(&[a.clone(), b.clone()]),
            fingerprint(&[b.clone(), a.clone()])
        );
        assert_ne!(
            fingerprint(std::slice::from_ref(&a)),
            fingerprint(&[weather().revision("2")])
        );
        assert_eq!(fingerprint(&[]), "");
    }
}
