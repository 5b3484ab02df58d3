//! The `tool_call` payload: `{"<variantName>": {"args": {…}, "result": {"success"|"failure"|"error": …}}}`.
//!
//! The object is kept as a map so that a frame with zero or several variant keys still parses and the
//! validator can report it; [`ToolCall::variant`] gives the typed view when there is exactly one.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The raw `tool_call` object.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolCall(pub Map<String, Value>);

/// The known variant names (anything else is [`ToolKind::Other`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolKind {
    /// `shellToolCall`: a shell command (needs permission unless `--force`).
    Shell,
    /// `readToolCall`.
    Read,
    /// `editToolCall`.
    Edit,
    /// `writeToolCall`.
    Write,
    /// `deleteToolCall`.
    Delete,
    /// `grepToolCall`.
    Grep,
    /// `globToolCall`.
    Glob,
    /// `lsToolCall`.
    Ls,
    /// `todoToolCall` / `updateTodosToolCall`.
    Todo,
    /// `mcpToolCall`: a tool of an MCP server.
    Mcp,
    /// `taskToolCall`: a subagent.
    Task,
    /// `function`: a generic `{name, arguments}` call.
    Function,
    /// Any other key, verbatim.
    Other(String),
}

impl ToolKind {
    /// From the variant key.
    pub fn from_key(key: &str) -> ToolKind {
        match key {
            "shellToolCall" => ToolKind::Shell,
            "readToolCall" => ToolKind::Read,
            "editToolCall" => ToolKind::Edit,
            "writeToolCall" => ToolKind::Write,
            "deleteToolCall" => ToolKind::Delete,
            "grepToolCall" => ToolKind::Grep,
            "globToolCall" => ToolKind::Glob,
            "lsToolCall" => ToolKind::Ls,
            "todoToolCall" | "updateTodosToolCall" => ToolKind::Todo,
            "mcpToolCall" => ToolKind::Mcp,
            "taskToolCall" => ToolKind::Task,
            "function" => ToolKind::Function,
            other => ToolKind::Other(other.to_owned()),
        }
    }

    /// The variant key.
    pub fn key(&self) -> &str {
        match self {
            ToolKind::Shell => "shellToolCall",
            ToolKind::Read => "readToolCall",
            ToolKind::Edit => "editToolCall",
            ToolKind::Write => "writeToolCall",
            ToolKind::Delete => "deleteToolCall",
            ToolKind::Grep => "grepToolCall",
            ToolKind::Glob => "globToolCall",
            ToolKind::Ls => "lsToolCall",
            ToolKind::Todo => "todoToolCall",
            ToolKind::Mcp => "mcpToolCall",
            ToolKind::Task => "taskToolCall",
            ToolKind::Function => "function",
            ToolKind::Other(k) => k,
        }
    }
}

/// The result envelope of a completed call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// `{"success": …}`.
    Success(Value),
    /// `{"failure": …}` (the tool ran and failed, e.g. a non-zero exit).
    Failure(Value),
    /// `{"error": …}` (the tool could not run, e.g. refused).
    Error(Value),
}

impl ToolOutcome {
    /// Reads an envelope; `None` unless it is an object with exactly one of the three keys.
    pub fn from_value(v: &Value) -> Option<ToolOutcome> {
        let m = v.as_object()?;
        if m.len() != 1 {
            return None;
        }
        let (k, inner) = m.iter().next()?;
        let inner = inner.clone();
        match k.as_str() {
            "success" => Some(ToolOutcome::Success(inner)),
            "failure" => Some(ToolOutcome::Failure(inner)),
            "error" => Some(ToolOutcome::Error(inner)),
            _ => None,
        }
    }

    /// The envelope as JSON.
    pub fn to_value(&self) -> Value {
        let (k, v) = match self {
            ToolOutcome::Success(v) => ("success", v),
            ToolOutcome::Failure(v) => ("failure", v),
            ToolOutcome::Error(v) => ("error", v),
        };
        let mut m = Map::new();
        m.insert(k.to_owned(), v.clone());
        Value::Object(m)
    }

    /// Whether it is `success`.
    pub fn is_success(&self) -> bool {
        matches!(self, ToolOutcome::Success(_))
    }
}

/// The typed view of a single-variant `tool_call`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolVariant {
    /// Which tool.
    pub kind: ToolKind,
    /// `args` (`Null` when absent).
    pub args: Value,
    /// `result`, when present (raw, see [`ToolVariant::outcome`]).
    pub result: Option<Value>,
}

impl ToolVariant {
    /// The result envelope, when present and well formed.
    pub fn outcome(&self) -> Option<ToolOutcome> {
        self.result.as_ref().and_then(ToolOutcome::from_value)
    }

    /// `args` as a typed struct (e.g. [`ShellArgs`]).
    pub fn args_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_value(self.args.clone()).ok()
    }
}

impl ToolCall {
    /// Builds a one-variant object.
    pub fn new(kind: &ToolKind, args: Value, outcome: Option<&ToolOutcome>) -> ToolCall {
        let mut body = Map::new();
        body.insert("args".into(), args);
        if let Some(o) = outcome {
            body.insert("result".into(), o.to_value());
        }
        let mut m = Map::new();
        m.insert(kind.key().to_owned(), Value::Object(body));
        ToolCall(m)
    }

    /// The variant keys present.
    pub fn keys(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }

    /// The typed view, when there is exactly one variant key.
    pub fn variant(&self) -> Option<ToolVariant> {
        if self.0.len() != 1 {
            return None;
        }
        let (k, body) = self.0.iter().next()?;
        Some(ToolVariant {
            kind: ToolKind::from_key(k),
            args: body.get("args").cloned().unwrap_or(Value::Null),
            result: body.get("result").cloned(),
        })
    }
}

/// `shellToolCall.args`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShellArgs {
    /// The command line.
    pub command: String,
    /// Where it runs.
    #[serde(default, rename = "workingDirectory", skip_serializing_if = "Option::is_none")]
    pub working_directory: Option<String>,
}

/// `readToolCall.args`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadArgs {
    /// The file.
    pub path: String,
}

/// `writeToolCall.args`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteArgs {
    /// The file.
    pub path: String,
    /// The new content.
    #[serde(default, rename = "fileText")]
    pub file_text: Option<String>,
}

/// `mcpToolCall.args` (as in the Go original's live capability fixture).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpArgs {
    /// `<server>-<tool>`.
    pub name: String,
    /// The tool's arguments.
    #[serde(default)]
    pub args: Value,
    /// The tool name.
    #[serde(default, rename = "toolName")]
    pub tool_name: Option<String>,
    /// The server name.
    #[serde(default, rename = "providerIdentifier")]
    pub provider_identifier: Option<String>,
}

/// `taskToolCall.args` (a subagent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskArgs {
    /// Short description.
    #[serde(default)]
    pub description: Option<String>,
    /// The subagent's prompt.
    #[serde(default)]
    pub prompt: Option<String>,
    /// e.g. `{"custom":{"name":"alignment-planner"}}`.
    #[serde(default, rename = "subagentType")]
    pub subagent_type: Option<Value>,
    /// The subagent's model.
    #[serde(default)]
    pub model: Option<String>,
}
