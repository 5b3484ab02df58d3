//! Server → client requests (frames with both `method` and `id`) that the driver must answer, and
//! the typed answers: approval decisions for commands, file changes and permissions, and the
//! answers to `request_user_input` questions.
//!
//! An unanswered server request blocks the turn. Answer unknown ones with a JSON-RPC error
//! ([`super::client::error_response`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::from_str_tolerant;

/// A server request, by method.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerRequest {
    /// `item/commandExecution/requestApproval`: answer [`CommandExecutionApprovalResponse`].
    CommandExecutionApproval(CommandExecutionApprovalParams),
    /// `item/fileChange/requestApproval`: answer [`FileChangeApprovalResponse`].
    FileChangeApproval(FileChangeApprovalParams),
    /// `item/permissions/requestApproval`: answer [`PermissionsApprovalResponse`].
    PermissionsApproval(PermissionsApprovalParams),
    /// `item/tool/requestUserInput` (plan mode): answer [`UserInputResponse`].
    ToolRequestUserInput(UserInputParams),
    /// `mcpServer/elicitation/request`: an MCP server's elicitation relayed by Codex, also how Codex
    /// asks to call a tool of a server that is not pre-approved. Answer [`McpElicitationResponse`].
    McpElicitation(McpElicitationParams),
    /// Any other method (`item/tool/call`, the legacy
    /// `execCommandApproval` / `applyPatchApproval`, …), with its params.
    Unknown {
        /// The method.
        method: String,
        /// The params.
        params: Value,
    },
}

/// `item/commandExecution/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionApprovalParams {
    /// Thread id.
    pub thread_id: String,
    /// Turn id.
    pub turn_id: String,
    /// The `commandExecution` item waiting for the decision.
    pub item_id: String,
    /// Unix ms when the request started.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// `command` (or a network kind).
    #[serde(default)]
    pub kind: Option<String>,
    /// The model's justification.
    #[serde(default)]
    pub reason: Option<String>,
    /// The command line.
    #[serde(default)]
    pub command: Option<String>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Parsed command actions.
    #[serde(default)]
    pub command_actions: Vec<Value>,
    /// Prefix rule Codex proposes to remember.
    #[serde(default)]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// The decisions Codex offers (strings or single-key objects).
    #[serde(default)]
    pub available_decisions: Vec<Value>,
    /// Execution environment (`local`).
    #[serde(default)]
    pub environment_id: Option<String>,
}

/// `item/fileChange/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeApprovalParams {
    /// Thread id.
    pub thread_id: String,
    /// Turn id.
    pub turn_id: String,
    /// The `fileChange` item waiting for the decision.
    pub item_id: String,
    /// Unix ms when the request started.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
    /// Reason, if any.
    #[serde(default)]
    pub reason: Option<String>,
    /// A root the agent wants write access to for the session.
    #[serde(default)]
    pub grant_root: Option<String>,
}

/// `item/permissions/requestApproval` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsApprovalParams {
    /// Thread id.
    pub thread_id: String,
    /// Turn id.
    pub turn_id: String,
    /// Item id.
    pub item_id: String,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Requested profile `{fileSystem?, network?}`.
    #[serde(default)]
    pub permissions: Value,
    /// Reason.
    #[serde(default)]
    pub reason: Option<String>,
    /// Unix ms when the request started.
    #[serde(default)]
    pub started_at_ms: Option<i64>,
}

/// `item/tool/requestUserInput` params.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputParams {
    /// Thread id.
    pub thread_id: String,
    /// Turn id.
    pub turn_id: String,
    /// The tool call id.
    pub item_id: String,
    /// Questions.
    #[serde(default)]
    pub questions: Vec<UserInputQuestion>,
    /// Whether the turn waits for the answer.
    #[serde(default)]
    pub is_blocking: bool,
}

/// One question of `request_user_input`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInputQuestion {
    /// Answer key.
    pub id: String,
    /// Short header.
    #[serde(default)]
    pub header: String,
    /// The question.
    pub question: String,
    /// Free text allowed (Codex sets it).
    #[serde(default)]
    pub is_other: bool,
    /// Secret input.
    #[serde(default)]
    pub is_secret: bool,
    /// Options.
    #[serde(default)]
    pub options: Option<Vec<UserInputOption>>,
}

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct UserInputOption {
    /// Label (what the answer carries).
    pub label: String,
    /// Description.
    #[serde(default)]
    pub description: String,
}

/// `mcpServer/elicitation/request` params (form mode, or url mode with `url`/`elicitationId`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpElicitationParams {
    /// Thread id.
    pub thread_id: String,
    /// The turn Codex correlated the elicitation with, if any.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The MCP server (its name in the configuration).
    pub server_name: String,
    /// `form`, `openai/form`, `openaiForm` or `url`.
    #[serde(default)]
    pub mode: String,
    /// What the user is asked.
    #[serde(default)]
    pub message: String,
    /// The form's JSON Schema (form modes).
    #[serde(default)]
    pub requested_schema: Value,
    /// The URL to open (url mode).
    #[serde(default)]
    pub url: Option<String>,
    /// Elicitation id (url mode).
    #[serde(default)]
    pub elicitation_id: Option<String>,
    /// Codex's metadata. A tool-call approval carries `codex_approval_kind: "mcp_tool_call"`,
    /// `tool_name`, `tool_params`, `tool_description` and `persist` (the scopes it could remember).
    #[serde(default, rename = "_meta")]
    pub meta: Value,
}

impl McpElicitationParams {
    /// The tool name when this elicitation asks to call a tool (`codex_approval_kind: "mcp_tool_call"`).
    pub fn tool_approval(&self) -> Option<&str> {
        (self.meta["codex_approval_kind"] == "mcp_tool_call")
            .then(|| self.meta["tool_name"].as_str())
            .flatten()
    }
}

/// Action answering an MCP elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum McpElicitationAction {
    /// Accepted (for a tool approval: the tool is called).
    Accept,
    /// Declined (the tool is not called; the model sees "user rejected MCP tool call").
    Decline,
    /// Dismissed.
    Cancel,
}

/// Answer to `mcpServer/elicitation/request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpElicitationResponse {
    /// The action.
    pub action: McpElicitationAction,
    /// The form content when accepted (`{}` for a tool approval); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

/// Decision for a command approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionDecision {
    /// Run it.
    Accept,
    /// Run it and similar commands this session without asking.
    AcceptForSession,
    /// Run it and remember this prefix rule.
    AcceptWithExecpolicyAmendment {
        /// The rule (usually `proposedExecpolicyAmendment`).
        execpolicy_amendment: Vec<String>,
    },
    /// Do not run it; the turn continues (the model is told it was rejected).
    Decline,
    /// Do not run it and interrupt the turn.
    Cancel,
}

/// Answer to `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandExecutionApprovalResponse {
    /// The decision.
    pub decision: CommandExecutionDecision,
}

/// Decision for a file-change approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeDecision {
    /// Apply it.
    Accept,
    /// Apply it and allow further changes to the same files this session.
    AcceptForSession,
    /// Do not apply; the turn continues.
    Decline,
    /// Do not apply and interrupt the turn.
    Cancel,
}

/// Answer to `item/fileChange/requestApproval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChangeApprovalResponse {
    /// The decision.
    pub decision: FileChangeDecision,
}

/// Scope of granted permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionGrantScope {
    /// This turn only (the default).
    Turn,
    /// The rest of the session.
    Session,
}

/// Answer to `item/permissions/requestApproval`: the granted subset (`{}` grants nothing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionsApprovalResponse {
    /// `{fileSystem?: {read?, write?, entries?}, network?: {enabled?}}`.
    pub permissions: Value,
    /// Scope; omitted means `turn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<PermissionGrantScope>,
}

/// Answer to `item/tool/requestUserInput`: answers by question id. The model receives this JSON
/// verbatim as the tool output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UserInputResponse {
    /// Question id → chosen labels and/or free text.
    pub answers: BTreeMap<String, UserInputAnswer>,
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct UserInputAnswer {
    /// Labels and/or free text.
    pub answers: Vec<String>,
}

impl UserInputResponse {
    /// Adds the answer to question `id`.
    pub fn with(
        mut self,
        id: impl Into<String>,
        answers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.answers.insert(
            id.into(),
            UserInputAnswer {
                answers: answers.into_iter().map(Into::into).collect(),
            },
        );
        self
    }
}

impl ServerRequest {
    /// Parses the params (raw JSON text, or `None` when absent) of `method`.
    pub fn parse(method: &str, params: Option<&str>) -> Result<Self, serde_json::Error> {
        fn p<T: serde::de::DeserializeOwned>(params: Option<&str>) -> Result<T, serde_json::Error> {
            from_str_tolerant(params.unwrap_or("null"))
        }
        Ok(match method {
            "item/commandExecution/requestApproval" => Self::CommandExecutionApproval(p(params)?),
            "item/fileChange/requestApproval" => Self::FileChangeApproval(p(params)?),
            "item/permissions/requestApproval" => Self::PermissionsApproval(p(params)?),
            "item/tool/requestUserInput" => Self::ToolRequestUserInput(p(params)?),
            "mcpServer/elicitation/request" => Self::McpElicitation(p(params)?),
            other => Self::Unknown {
                method: other.to_owned(),
                params: match params {
                    Some(raw) => serde_json::from_str(raw)?,
                    None => Value::Null,
                },
            },
        })
    }

    /// The wire method of this request.
    pub fn method(&self) -> &str {
        match self {
            Self::CommandExecutionApproval(_) => "item/commandExecution/requestApproval",
            Self::FileChangeApproval(_) => "item/fileChange/requestApproval",
            Self::PermissionsApproval(_) => "item/permissions/requestApproval",
            Self::ToolRequestUserInput(_) => "item/tool/requestUserInput",
            Self::McpElicitation(_) => "mcpServer/elicitation/request",
            Self::Unknown { method, .. } => method,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decisions_serialize_to_the_wire_shapes() {
        let accept = CommandExecutionApprovalResponse {
            decision: CommandExecutionDecision::Accept,
        };
        assert_eq!(
            serde_json::to_value(&accept).unwrap(),
            json!({"decision":"accept"})
        );
        let amend = CommandExecutionApprovalResponse {
            decision: CommandExecutionDecision::AcceptWithExecpolicyAmendment {
                execpolicy_amendment: vec!["touch".into()],
            },
        };
        assert_eq!(
            serde_json::to_value(&amend).unwrap(),
            json!({"decision":{"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["touch"]}}})
        );
        let fc = FileChangeApprovalResponse {
            decision: FileChangeDecision::AcceptForSession,
        };
        assert_eq!(
            serde_json::to_value(fc).unwrap(),
            json!({"decision":"acceptForSession"})
        );
        let perms = PermissionsApprovalResponse {
            permissions: json!({}),
            scope: Some(PermissionGrantScope::Session),
        };
        assert_eq!(
            serde_json::to_value(&perms).unwrap(),
            json!({"permissions":{},"scope":"session"})
        );
        let ui = UserInputResponse::default().with("db", ["Postgres"]);
        assert_eq!(
            serde_json::to_value(&ui).unwrap(),
            json!({"answers":{"db":{"answers":["Postgres"]}}})
        );
    }

    #[test]
    fn parses_requests_and_keeps_unknown_ones() {
        let r = ServerRequest::parse(
            "item/fileChange/requestApproval",
            Some(r#"{"threadId":"t","turnId":"u","itemId":"i","startedAtMs":1,"reason":null,"grantRoot":null}"#),
        )
        .unwrap();
        assert!(matches!(&r, ServerRequest::FileChangeApproval(p) if p.item_id == "i"));
        assert_eq!(r.method(), "item/fileChange/requestApproval");
        let r = ServerRequest::parse("item/tool/call", Some(r#"{"tool":"x"}"#)).unwrap();
        assert_eq!(r.method(), "item/tool/call");
        assert!(matches!(r, ServerRequest::Unknown { params, .. } if params["tool"] == "x"));
    }
}
