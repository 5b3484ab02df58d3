//! The control protocol as the CLI writes it (stdout side): its own `control_request`s (tool permission
//! prompts), its `control_response`s to our requests, and `control_cancel_request`.
//!
//! Our side of the protocol (what we write on stdin) is in `input.rs`.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// `control_request` from the CLI. The driver must answer every one with a `control_response`
/// carrying the same `request_id` (an error response for subtypes it does not handle), or the CLI waits.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlRequest {
    /// Correlates the answer (a uuid chosen by the CLI).
    pub request_id: String,
    /// What is asked.
    pub request: CliRequest,
}

/// The body of a CLI control request, by `subtype`.
#[derive(Debug, Clone, PartialEq)]
pub enum CliRequest {
    /// `can_use_tool`: permission for a tool, including `AskUserQuestion` (answers go in
    /// `updatedInput.answers`) and `ExitPlanMode` (plan review).
    CanUseTool(CanUseTool),
    /// Any other subtype (`hook_callback`, `mcp_message`, `elicitation`, …), kept whole.
    Other {
        /// The subtype.
        subtype: String,
        /// The full `request` object.
        raw: Value,
    },
}

/// `can_use_tool` request body.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CanUseTool {
    /// `Bash`, `AskUserQuestion`, `ExitPlanMode`, `mcp__server__tool`, …
    pub tool_name: String,
    /// Human name of the tool.
    #[serde(default)]
    pub display_name: Option<String>,
    /// The tool input. For ExitPlanMode: `{plan, planFilePath}`, or `{}` when no plan file was written.
    #[serde(default)]
    pub input: Value,
    /// The tool_use this asks about.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The tool's own description of the call.
    #[serde(default)]
    pub description: Option<String>,
    /// Suggested permission updates (`addRules`, `addDirectories`, `setMode`), to echo back in
    /// `updatedPermissions` if the user picks one.
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
    /// The path that triggered the prompt, for file-touching tools.
    #[serde(default)]
    pub blocked_path: Option<String>,
    /// True for AskUserQuestion and ExitPlanMode: a human must answer, not a policy.
    #[serde(default)]
    pub requires_user_interaction: Option<bool>,
    /// Why the CLI is asking, when it says.
    #[serde(default)]
    pub decision_reason: Option<Value>,
}

/// `control_response` from the CLI, answering one of our `control_request`s.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ControlResponse {
    /// The response envelope.
    pub response: ControlResponseBody,
}

/// The envelope: `{"subtype":"success","request_id","response":{…}}` or
/// `{"subtype":"error","request_id","error":"…"}`.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlResponseBody {
    /// `success` or `error`.
    pub subtype: String,
    /// Our request id.
    pub request_id: String,
    /// The payload on success, kept as raw JSON (the `initialize` answer is large); decode it with
    /// [`ControlResponse::payload`].
    #[serde(default)]
    pub response: Option<Box<RawValue>>,
    /// The message on error.
    #[serde(default)]
    pub error: Option<String>,
}

impl PartialEq for ControlResponseBody {
    fn eq(&self, other: &Self) -> bool {
        self.subtype == other.subtype
            && self.request_id == other.request_id
            && self.error == other.error
            && self.response.as_ref().map(|r| r.get()) == other.response.as_ref().map(|r| r.get())
    }
}

impl ControlResponse {
    /// True for `subtype:"success"`.
    pub fn is_success(&self) -> bool {
        self.response.subtype == "success"
    }

    /// The payload decoded as `T` (None on error responses or shape mismatch).
    pub fn payload<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        let raw = self.response.response.as_ref()?;
        serde_json::from_str(raw.get()).ok()
    }
}

/// Payload of the answer to `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct InterruptAck {
    /// Client uuids still queued (they will run after the stopped turn).
    #[serde(default)]
    pub still_queued: Vec<String>,
    /// Client uuids withdrawn (with `cancel_queued:true`).
    #[serde(default)]
    pub cancelled: Vec<String>,
    /// With `send_now:true`: what happened (`stopped`).
    #[serde(default)]
    pub send_now: Option<String>,
}

/// Payload of the answer to `cancel_async_message`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct CancelAsyncAck {
    /// False when the message was already consumed.
    #[serde(default)]
    pub cancelled: bool,
    /// The uuid.
    #[serde(default)]
    pub message_uuid: Option<String>,
}

/// Payload of the answer to `initialize` (the parts a driver uses; much more is sent).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct InitializeInfo {
    /// CLI pid.
    #[serde(default)]
    pub pid: Option<u32>,
    /// e.g. `2.1.332`.
    #[serde(default)]
    pub claude_code_version: Option<String>,
    /// Current permission mode.
    #[serde(default)]
    pub current_permission_mode: Option<String>,
    /// Models the CLI offers (`{value, resolvedModel, displayName, …}`).
    #[serde(default)]
    pub models: Vec<Value>,
    /// Slash commands (`{name, description, argumentHint}`).
    #[serde(default)]
    pub commands: Vec<Value>,
    /// Agents (`{name, description}`).
    #[serde(default)]
    pub agents: Vec<Value>,
    /// `{tokenSource, apiKeySource, apiProvider}`.
    #[serde(default)]
    pub account: Option<Value>,
    /// Capabilities of the control protocol.
    #[serde(default)]
    pub capabilities: Vec<String>,
}

/// `control_cancel_request`: the CLI withdraws its pending request (e.g. a `can_use_tool` after an
/// interrupt). A late answer to it is ignored by the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ControlCancelRequest {
    /// The CLI's request id being withdrawn.
    pub request_id: String,
}

/// Decoding target for a control request before dispatch on `request.subtype`.
#[derive(Deserialize)]
pub(super) struct RawControlRequest {
    pub(super) request_id: String,
    pub(super) request: Value,
}

impl TryFrom<RawControlRequest> for ControlRequest {
    type Error = serde_json::Error;

    fn try_from(raw: RawControlRequest) -> Result<ControlRequest, serde_json::Error> {
        let subtype = raw
            .request
            .get("subtype")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let request = if subtype == "can_use_tool" {
            CliRequest::CanUseTool(CanUseTool::deserialize(&raw.request)?)
        } else {
            CliRequest::Other {
                subtype,
                raw: raw.request,
            }
        };
        Ok(ControlRequest {
            request_id: raw.request_id,
            request,
        })
    }
}
