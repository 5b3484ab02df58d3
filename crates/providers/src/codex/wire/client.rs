//! Frames the driver writes to `codex app-server`: requests (with typed params), the
//! `initialized` notification and answers to server requests. The typed results of our requests
//! are in [`super::results`]; parsing these frames back (for fakes and tests) is
//! [`super::client_parse`].
//!
//! Every frame is one compact JSON object per line, `{"id":…,"method":…,"params":…}`, with no
//! `jsonrpc` marker (Codex accepts frames without it). [`ClientRequest::to_line`] returns the text
//! without the trailing newline.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RequestId;
use super::items::UserInput;
use super::rpc::RpcError;

/// `initialize` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    /// Who we are; `name` becomes the `originator` header and the user-agent prefix.
    pub client_info: ClientInfo,
    /// Capabilities; `experimentalApi:true` is needed for `collaborationMode` (plan mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<InitializeCapabilities>,
}

/// `clientInfo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientInfo {
    /// Name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Version.
    pub version: String,
}

/// `capabilities`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeCapabilities {
    /// Opt into experimental API fields (plan-mode `collaborationMode`, `request_user_input`).
    #[serde(default)]
    pub experimental_api: bool,
    /// Notification methods the server should not send (e.g. `account/rateLimits/updated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_out_notification_methods: Option<Vec<String>>,
}

/// Approval policy (`approvalPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ApprovalPolicy {
    /// Ask for everything not known safe.
    #[serde(rename = "untrusted")]
    Untrusted,
    /// Ask when the model requests escalation.
    #[serde(rename = "on-request")]
    OnRequest,
    /// Never ask; failures go back to the model.
    #[serde(rename = "never")]
    Never,
}

/// Sandbox mode (`sandbox` of `thread/start|resume|fork`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SandboxMode {
    /// Read-only.
    #[serde(rename = "read-only")]
    ReadOnly,
    /// Writes in the workspace (and /tmp by default).
    #[serde(rename = "workspace-write")]
    WorkspaceWrite,
    /// No sandbox.
    #[serde(rename = "danger-full-access")]
    DangerFullAccess,
}

/// `thread/start` params (all optional).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model slug.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Model provider id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// Approval policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<ApprovalPolicy>,
    /// Sandbox mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// Config overrides (dotted keys → values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Map<String, Value>>,
    /// Replaces the base prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_instructions: Option<String>,
    /// Extra developer message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_instructions: Option<String>,
    /// Do not persist the thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<bool>,
}

/// `thread/resume` params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    /// The thread to resume.
    pub thread_id: String,
    /// Working directory override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Approval policy override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<ApprovalPolicy>,
    /// Sandbox override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// Extra developer message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer_instructions: Option<String>,
    /// Do not send the full turn history back in the response (avoids a `deprecationNotice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_turns: Option<bool>,
}

/// `thread/fork` params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkParams {
    /// The thread to fork.
    pub thread_id: String,
    /// Working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Approval policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<ApprovalPolicy>,
    /// Sandbox mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxMode>,
    /// Do not persist the fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ephemeral: Option<bool>,
    /// Do not send the full turn history back in the response (avoids a `deprecationNotice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude_turns: Option<bool>,
}

/// Collaboration mode of a turn (experimental; needs `experimentalApi`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollaborationMode {
    /// `plan` or `default`.
    pub mode: String,
    /// Settings.
    pub settings: CollaborationSettings,
}

/// `collaborationMode.settings` (snake_case on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollaborationSettings {
    /// Model slug (required).
    pub model: String,
    /// Reasoning effort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Developer instructions for the mode (`null` keeps Codex's built-in plan prompt).
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

/// `turn/start` params.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    /// The thread.
    pub thread_id: String,
    /// The user input.
    pub input: Vec<UserInput>,
    /// A client id echoed as `clientId` on the `userMessage` item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_user_message_id: Option<String>,
    /// Working directory override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Model override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Reasoning effort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Approval policy override.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<ApprovalPolicy>,
    /// Sandbox policy (`{"type":"readOnly"|"workspaceWrite"|"dangerFullAccess",…}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_policy: Option<Value>,
    /// JSON Schema for the final message (sent as `text.format` json_schema, strict).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Plan/default collaboration mode (experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collaboration_mode: Option<CollaborationMode>,
}

/// `turn/steer` params: add input to the active turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    /// The thread.
    pub thread_id: String,
    /// Must equal the active turn id, or the request fails.
    pub expected_turn_id: String,
    /// The input.
    pub input: Vec<UserInput>,
    /// Echoed as `clientId` on the `userMessage` item once delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_user_message_id: Option<String>,
}

/// `turn/interrupt` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    /// The thread.
    pub thread_id: String,
    /// The turn to stop.
    pub turn_id: String,
}

/// `model/list` params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Cursor from a previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// `thread/list` params.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    /// Page size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u32>,
    /// Cursor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// A request the driver sends.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientRequest {
    /// `initialize`.
    Initialize(InitializeParams),
    /// `thread/start`.
    ThreadStart(ThreadStartParams),
    /// `thread/resume`.
    ThreadResume(ThreadResumeParams),
    /// `thread/fork`.
    ThreadFork(ThreadForkParams),
    /// `thread/list`.
    ThreadList(ThreadListParams),
    /// `turn/start`.
    TurnStart(TurnStartParams),
    /// `turn/steer`.
    TurnSteer(TurnSteerParams),
    /// `turn/interrupt`.
    TurnInterrupt(TurnInterruptParams),
    /// `model/list`.
    ModelList(ModelListParams),
    /// Any other method.
    Other {
        /// Method.
        method: String,
        /// Params.
        params: Value,
    },
}

#[derive(Serialize)]
struct RequestFrame<'a, P: Serialize> {
    id: &'a RequestId,
    method: &'a str,
    params: &'a P,
}

impl ClientRequest {
    /// The wire method.
    pub fn method(&self) -> &str {
        match self {
            Self::Initialize(_) => "initialize",
            Self::ThreadStart(_) => "thread/start",
            Self::ThreadResume(_) => "thread/resume",
            Self::ThreadFork(_) => "thread/fork",
            Self::ThreadList(_) => "thread/list",
            Self::TurnStart(_) => "turn/start",
            Self::TurnSteer(_) => "turn/steer",
            Self::TurnInterrupt(_) => "turn/interrupt",
            Self::ModelList(_) => "model/list",
            Self::Other { method, .. } => method,
        }
    }

    /// `{"id":…,"method":…,"params":…}` as one line (no newline).
    pub fn to_line(&self, id: &RequestId) -> String {
        fn frame<P: Serialize>(id: &RequestId, method: &str, params: &P) -> String {
            // Serializing plain structs, strings and Values into a String cannot fail.
            serde_json::to_string(&RequestFrame { id, method, params }).unwrap_or_default()
        }
        let m = self.method();
        match self {
            Self::Initialize(p) => frame(id, m, p),
            Self::ThreadStart(p) => frame(id, m, p),
            Self::ThreadResume(p) => frame(id, m, p),
            Self::ThreadFork(p) => frame(id, m, p),
            Self::ThreadList(p) => frame(id, m, p),
            Self::TurnStart(p) => frame(id, m, p),
            Self::TurnSteer(p) => frame(id, m, p),
            Self::TurnInterrupt(p) => frame(id, m, p),
            Self::ModelList(p) => frame(id, m, p),
            Self::Other { params, .. } => frame(id, m, params),
        }
    }
}

/// The `initialized` notification, sent once after the `initialize` response.
pub fn initialized() -> String {
    r#"{"method":"initialized"}"#.to_owned()
}

/// `{"id":…,"result":…}`: the answer to a server request (approval decision, user input).
pub fn response<R: Serialize>(id: &RequestId, result: &R) -> String {
    #[derive(Serialize)]
    struct F<'a, R: Serialize> {
        id: &'a RequestId,
        result: &'a R,
    }
    serde_json::to_string(&F { id, result }).unwrap_or_default()
}

/// `{"id":…,"error":{"code":…,"message":…}}`: refuse a server request (e.g. an unsupported one;
/// `-32601` method not found).
pub fn error_response(id: &RequestId, code: i64, message: &str) -> String {
    #[derive(Serialize)]
    struct F<'a> {
        id: &'a RequestId,
        error: RpcError,
    }
    serde_json::to_string(&F {
        id,
        error: RpcError {
            code,
            message: message.to_owned(),
            data: None,
        },
    })
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_lines_have_id_method_params_and_no_jsonrpc() {
        let req = ClientRequest::TurnInterrupt(TurnInterruptParams {
            thread_id: "t".into(),
            turn_id: "u".into(),
        });
        assert_eq!(
            req.to_line(&RequestId::Int(4)),
            r#"{"id":4,"method":"turn/interrupt","params":{"threadId":"t","turnId":"u"}}"#
        );
        let req = ClientRequest::TurnSteer(TurnSteerParams {
            thread_id: "t".into(),
            expected_turn_id: "u".into(),
            input: vec![UserInput::text("more")],
            client_user_message_id: Some("c1".into()),
        });
        let v: Value = serde_json::from_str(&req.to_line(&"s".into())).unwrap();
        assert_eq!(
            v,
            json!({"id":"s","method":"turn/steer","params":{"threadId":"t","expectedTurnId":"u","input":[{"type":"text","text":"more","text_elements":[]}],"clientUserMessageId":"c1"}})
        );
        let start = ClientRequest::ThreadStart(ThreadStartParams {
            approval_policy: Some(ApprovalPolicy::OnRequest),
            sandbox: Some(SandboxMode::WorkspaceWrite),
            ..Default::default()
        });
        assert_eq!(
            start.to_line(&RequestId::Int(2)),
            r#"{"id":2,"method":"thread/start","params":{"approvalPolicy":"on-request","sandbox":"workspace-write"}}"#
        );
    }

    #[test]
    fn responses_and_errors_to_server_requests() {
        assert_eq!(
            response(&RequestId::Int(0), &json!({"decision":"accept"})),
            r#"{"id":0,"result":{"decision":"accept"}}"#
        );
        assert_eq!(
            error_response(&RequestId::Int(3), -32601, "unsupported"),
            r#"{"id":3,"error":{"code":-32601,"message":"unsupported"}}"#
        );
        assert_eq!(initialized(), r#"{"method":"initialized"}"#);
    }
}
