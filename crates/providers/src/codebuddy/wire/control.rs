//! The control protocol: requests and responses in both directions, and the frames the host writes on stdin
//! in the control transport (`--input-format=stream-json`).
//!
//! The handshake: the host sends `initialize` and waits for its `control_response` before the first user
//! frame. The CLI asks `can_use_tool`; the host answers with CodeBuddy's own [`PermissionResponse`]
//! (`allowed`, not Claude's `behavior`).

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::ParseError;
use super::content::UserContent;

/// `{"type":"control_request","request_id","request":{"subtype",…}}`, either direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlRequest {
    /// Chosen by the sender (the CLI uses `perm_<ms>_<n>` for `can_use_tool`).
    pub request_id: String,
    /// The body.
    pub request: RequestKind,
}

/// A known request body, or any other kept whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestKind {
    /// A subtype this crate knows.
    Known(ControlRequestBody),
    /// Any other subtype (e.g. `elicitation_create`, `mcp_message`).
    Other(Value),
}

/// The request bodies, by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequestBody {
    /// Host → CLI, first: announces the host's capabilities.
    Initialize(InitializeRequest),
    /// CLI → host: may this tool run? (also `AskUserQuestion` and `ExitPlanMode`).
    CanUseTool(CanUseTool),
    /// Host → CLI: stop the current turn.
    Interrupt(InterruptRequest),
    /// Host → CLI: change the permission mode.
    SetPermissionMode(SetPermissionMode),
    /// Host → CLI: change the model.
    SetModel(SetModel),
    /// CLI → host: a hook registered in `initialize` fired.
    HookCallback(HookCallback),
}

/// `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeRequest {
    /// Whether a prompt follows on stdin.
    #[serde(rename = "hasPrompt", default, skip_serializing_if = "Option::is_none")]
    pub has_prompt: Option<bool>,
    /// e.g. `{"askUserQuestion": true}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    /// Hook registrations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Value>,
}

/// `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CanUseTool {
    /// `Bash`, `AskUserQuestion`, `ExitPlanMode`, …
    pub tool_name: String,
    /// The tool's input (`questions[…]` for AskUserQuestion, `plan` for ExitPlanMode).
    #[serde(default)]
    pub input: Value,
    /// The call id; echo it in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// Suggested permission updates, when the CLI offers any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_suggestions: Option<Value>,
}

/// `interrupt`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InterruptRequest {
    /// Optional target session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Optional reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `set_permission_mode`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetPermissionMode {
    /// The new mode.
    pub mode: String,
}

/// `set_model`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SetModel {
    /// The new model (`None` = default).
    #[serde(default)]
    pub model: Option<String>,
}

/// `hook_callback`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCallback {
    /// The hook's id from `initialize`.
    pub callback_id: String,
    /// The hook input.
    #[serde(default)]
    pub input: Value,
    /// The tool call, for tool hooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
}

/// `{"type":"control_response","response":{…}}`, either direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlResponse {
    /// The body.
    pub response: ControlResponseBody,
}

/// `control_response.response`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlResponseBody {
    /// `success` or `error`.
    pub subtype: String,
    /// The request it answers.
    pub request_id: String,
    /// The payload, kept as raw JSON text (the `initialize` answer is ~6 KB and rarely needed whole); see
    /// the typed accessors on [`ControlResponse`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<RawJson>,
    /// The message, on `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A JSON value kept as its text until someone asks for it. Only deserializable straight from JSON text
/// (serde_json's raw values do not go through `Value` or internally tagged enums).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RawJson(pub Box<RawValue>);

impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.0.get() == other.0.get()
    }
}

impl RawJson {
    /// Wraps a value.
    pub fn from_value(v: &Value) -> Option<RawJson> {
        serde_json::value::to_raw_value(v).ok().map(RawJson)
    }

    /// The raw text.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// Parses it into `T`.
    pub fn parse<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_str(self.0.get()).ok()
    }
}

/// The payload answering `initialize`. Note: `account.token` echoes the API key, so do not log it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitializeResponse {
    /// Slash commands `{name, description}`.
    #[serde(default)]
    pub commands: Vec<Value>,
    /// The models the account can use.
    #[serde(default)]
    pub models: Vec<ModelInfo>,
    /// The active model.
    #[serde(rename = "currentModelId", default)]
    pub current_model_id: Option<String>,
    /// The active output style.
    #[serde(default)]
    pub output_style: Option<String>,
    /// Output styles offered.
    #[serde(default)]
    pub available_output_styles: Vec<String>,
    /// Account details (contains the token).
    #[serde(default)]
    pub account: Option<Value>,
}

/// One entry of [`InitializeResponse::models`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// The id to pass as `--model`.
    pub id: String,
    /// The display name.
    #[serde(default)]
    pub name: Option<String>,
}

/// The payload answering `interrupt`: `{"session_id","interrupted":true,"reason":"SDK request"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InterruptResponse {
    /// Whether a turn was interrupted.
    pub interrupted: bool,
    /// `SDK request`.
    #[serde(default)]
    pub reason: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// CodeBuddy's answer to `can_use_tool`:
/// allow `{"allowed":true,"tool_use_id","updatedInput":{…}}`, deny `{"allowed":false,"tool_use_id","reason","interrupt"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionResponse {
    /// Allow or deny.
    pub allowed: bool,
    /// The call, echoed from the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// On allow: the input to run with (add `answers` for AskUserQuestion).
    #[serde(rename = "updatedInput", default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// On deny: shown to the model (for ExitPlanMode: the feedback).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// On deny: `true` ends the turn (`result` `error_during_execution`, no further model call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt: Option<bool>,
}

impl PermissionResponse {
    /// Allow with this input.
    pub fn allow(tool_use_id: Option<String>, updated_input: Value) -> PermissionResponse {
        PermissionResponse {
            allowed: true,
            tool_use_id,
            updated_input: Some(updated_input),
            reason: None,
            interrupt: None,
        }
    }

    /// Deny with a reason; `interrupt` ends the turn.
    pub fn deny(tool_use_id: Option<String>, reason: &str, interrupt: bool) -> PermissionResponse {
        PermissionResponse {
            allowed: false,
            tool_use_id,
            updated_input: None,
            reason: Some(reason.to_owned()),
            interrupt: Some(interrupt),
        }
    }
}

impl ControlResponse {
    /// A `success` response carrying `payload`.
    pub fn success(request_id: &str, payload: Value) -> ControlResponse {
        ControlResponse {
            response: ControlResponseBody {
                subtype: "success".to_owned(),
                request_id: request_id.to_owned(),
                response: RawJson::from_value(&payload),
                error: None,
            },
        }
    }

    /// The answer to a `can_use_tool` request.
    pub fn permission(request_id: &str, answer: &PermissionResponse) -> ControlResponse {
        ControlResponse::success(request_id, serde_json::to_value(answer).unwrap_or(Value::Null))
    }

    /// The `initialize` payload, if this is one.
    pub fn as_initialize(&self) -> Option<InitializeResponse> {
        self.response.response.as_ref()?.parse()
    }

    /// The `interrupt` payload, if this is one.
    pub fn as_interrupt(&self) -> Option<InterruptResponse> {
        self.response.response.as_ref()?.parse()
    }

    /// The permission answer, if this is one (host → CLI).
    pub fn as_permission(&self) -> Option<PermissionResponse> {
        self.response.response.as_ref()?.parse()
    }
}

/// `user.message` as the host writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserInputMessage {
    /// `user`.
    pub role: String,
    /// The prompt (a string, or content blocks).
    pub content: UserContent,
}

/// A user frame written by the host: `{"type":"user","session_id":"","message":{…},"parent_tool_use_id":null}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserInput {
    /// `""`: the CLI ignores it (the session is the process's).
    #[serde(default)]
    pub session_id: String,
    /// The message.
    pub message: UserInputMessage,
    /// Always `null` from the host (sent explicitly).
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
}

/// What the host writes on stdin in the control transport (read back with [`InputFrame::parse_line`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputFrame {
    /// A prompt. Write one only when no turn is running: a frame written mid-turn starts a concurrent turn
    /// in a fresh session without history.
    User(UserInput),
    /// `initialize`, `interrupt`, …
    ControlRequest(ControlRequest),
    /// An answer to the CLI's `can_use_tool`.
    ControlResponse(ControlResponse),
}

/// The request id the Go original (and this crate) uses for the handshake.
pub const INITIALIZE_REQUEST_ID: &str = "agent-adaptor-initialize";

impl InputFrame {
    /// A text prompt.
    pub fn user(text: &str) -> InputFrame {
        InputFrame::User(UserInput {
            session_id: String::new(),
            message: UserInputMessage {
                role: "user".to_owned(),
                content: UserContent::Text(text.to_owned()),
            },
            parent_tool_use_id: None,
        })
    }

    /// The handshake request (`hasPrompt: true`, `capabilities.askUserQuestion: true`).
    pub fn initialize() -> InputFrame {
        InputFrame::ControlRequest(ControlRequest {
            request_id: INITIALIZE_REQUEST_ID.to_owned(),
            request: RequestKind::Known(ControlRequestBody::Initialize(InitializeRequest {
                has_prompt: Some(true),
                capabilities: Some(json!({"askUserQuestion": true})),
                hooks: None,
            })),
        })
    }

    /// An interrupt request.
    pub fn interrupt(request_id: &str) -> InputFrame {
        InputFrame::ControlRequest(ControlRequest {
            request_id: request_id.to_owned(),
            request: RequestKind::Known(ControlRequestBody::Interrupt(InterruptRequest::default())),
        })
    }

    /// The answer to `can_use_tool` request `request_id`.
    pub fn permission(request_id: &str, answer: &PermissionResponse) -> InputFrame {
        InputFrame::ControlResponse(ControlResponse::permission(request_id, answer))
    }

    /// Parses a line the host wrote (e.g. from a recorded transcript).
    pub fn parse_line(line: &str) -> Result<InputFrame, ParseError> {
        #[derive(Deserialize)]
        struct Kind<'a> {
            #[serde(borrow, rename = "type")]
            kind: Option<std::borrow::Cow<'a, str>>,
        }
        let k: Kind<'_> = serde_json::from_str(line).map_err(ParseError::NotJson)?;
        let kind = k.kind.ok_or(ParseError::NoType)?;
        let malformed = |source| ParseError::Malformed {
            kind: kind.to_string(),
            source,
        };
        match kind.as_ref() {
            "user" => serde_json::from_str(line)
                .map(InputFrame::User)
                .map_err(malformed),
            "control_request" => serde_json::from_str(line)
                .map(InputFrame::ControlRequest)
                .map_err(malformed),
            "control_response" => serde_json::from_str(line)
                .map(InputFrame::ControlResponse)
                .map_err(malformed),
            _ => Err(ParseError::NoType),
        }
    }

    /// The frame as one line, newline included.
    pub fn to_line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
