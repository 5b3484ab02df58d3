//! What we write on the CLI's stdin in `--input-format stream-json` mode: user frames (with the
//! optional client `uuid` and `priority`), our control requests, and our answers to the CLI's
//! control requests. Serialize with [`InputFrame::to_line`]; every shape here was accepted by 2.1.332.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::content::MessageContent;
use super::output::UserMessage;

/// One line we write to stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputFrame {
    /// A user message.
    User(UserInput),
    /// A request to the CLI.
    ControlRequest(OutgoingControlRequest),
    /// An answer to one of the CLI's requests.
    ControlResponse(OutgoingControlResponse),
}

/// When a user frame written during a running turn is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Stop the running turn (without the interrupt marker) and run this message next; a running
    /// Bash is let finish first.
    Now,
    /// Fold into the running turn at its next model request (the default when omitted).
    Next,
    /// Wait for the running turn to end, then run as its own turn.
    Later,
}

/// `{"type":"user","message":{"role":"user","content":…},"parent_tool_use_id":null,"session_id":"",…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserInput {
    /// The message; role `user`.
    pub message: UserMessage,
    /// Always null from a client (the key must be present).
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// Empty from a client; the CLI fills in its own.
    #[serde(default)]
    pub session_id: String,
    /// Client uuid: enables `command_lifecycle` frames and `user_message_uuids` for this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Delivery priority while a turn runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<Priority>,
}

/// `{"type":"control_request","request_id","request":{"subtype",…}}` sent by us.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutgoingControlRequest {
    /// Our id; the CLI's `control_response` echoes it.
    pub request_id: String,
    /// The request.
    pub request: SdkRequest,
}

/// Our control requests, by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SdkRequest {
    /// Handshake; the answer lists commands, models, agents, the pid and the permission mode.
    Initialize {},
    /// Stop the running turn. Answer: `{still_queued, cancelled?, send_now?}`.
    Interrupt {
        /// Also withdraw every queued user frame.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cancel_queued: Option<bool>,
        /// Run the queued message `message_uuid` right after stopping.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        send_now: Option<bool>,
        /// With `send_now`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_uuid: Option<String>,
    },
    /// Withdraw a queued user frame by its uuid. Answer: `{cancelled, message_uuid}`.
    CancelAsyncMessage {
        /// The client uuid.
        message_uuid: String,
    },
    /// Change the permission mode (not exercised in the lab).
    SetPermissionMode {
        /// `default`, `plan`, `acceptEdits`, `bypassPermissions`, …
        mode: String,
    },
    /// Change the model (not exercised in the lab).
    SetModel {
        /// Model name; None for the default.
        #[serde(default)]
        model: Option<String>,
    },
}

/// `{"type":"control_response","response":{…}}` sent by us.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutgoingControlResponse {
    /// The envelope.
    pub response: ResponseEnvelope,
}

/// Our answer envelope, by `subtype`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ResponseEnvelope {
    /// `{"subtype":"success","request_id","response":{…}}`.
    Success {
        /// The CLI's request id.
        request_id: String,
        /// The payload, e.g. a [`PermissionResult`].
        response: Value,
    },
    /// `{"subtype":"error","request_id","error"}`: for requests we cannot handle.
    Error {
        /// The CLI's request id.
        request_id: String,
        /// Why.
        error: String,
    },
}

/// The payload answering `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum PermissionResult {
    /// Run the tool with `updatedInput` (echo the input; for AskUserQuestion add `answers`
    /// `{question text: label, multiSelect: "A, B"}` and optional `annotations`).
    Allow {
        /// The input to run with.
        #[serde(rename = "updatedInput")]
        updated_input: Value,
        /// Permission updates to apply (e.g. a `setMode` suggestion).
        #[serde(
            rename = "updatedPermissions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<Value>>,
    },
    /// Refuse; the model gets `message` as an error tool_result. `interrupt:true` also ends the turn
    /// (`error_during_execution`, `terminal_reason:"aborted_tools"`).
    Deny {
        /// Shown to the model.
        message: String,
        /// Stop the turn too.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

impl InputFrame {
    /// A plain user frame.
    pub fn user(text: impl Into<String>) -> InputFrame {
        InputFrame::User(UserInput {
            message: UserMessage {
                role: "user".to_owned(),
                content: MessageContent::Text(text.into()),
            },
            parent_tool_use_id: None,
            session_id: String::new(),
            uuid: None,
            priority: None,
        })
    }

    /// A user frame with a client uuid and an optional priority.
    pub fn user_with(
        text: impl Into<String>,
        uuid: impl Into<String>,
        priority: Option<Priority>,
    ) -> InputFrame {
        let mut f = InputFrame::user(text);
        if let InputFrame::User(u) = &mut f {
            u.uuid = Some(uuid.into());
            u.priority = priority;
        }
        f
    }

    /// One of our control requests.
    pub fn request(request_id: impl Into<String>, request: SdkRequest) -> InputFrame {
        InputFrame::ControlRequest(OutgoingControlRequest {
            request_id: request_id.into(),
            request,
        })
    }

    /// `initialize`.
    pub fn initialize(request_id: impl Into<String>) -> InputFrame {
        InputFrame::request(request_id, SdkRequest::Initialize {})
    }

    /// A plain `interrupt`.
    pub fn interrupt(request_id: impl Into<String>) -> InputFrame {
        InputFrame::request(
            request_id,
            SdkRequest::Interrupt {
                cancel_queued: None,
                send_now: None,
                message_uuid: None,
            },
        )
    }

    /// Answer a `can_use_tool`.
    pub fn permission(request_id: impl Into<String>, result: PermissionResult) -> InputFrame {
        let response = serde_json::to_value(&result).unwrap_or(Value::Null);
        InputFrame::ControlResponse(OutgoingControlResponse {
            response: ResponseEnvelope::Success {
                request_id: request_id.into(),
                response,
            },
        })
    }

    /// Allow a `can_use_tool` with this input.
    pub fn allow(request_id: impl Into<String>, updated_input: Value) -> InputFrame {
        InputFrame::permission(
            request_id,
            PermissionResult::Allow {
                updated_input,
                updated_permissions: None,
            },
        )
    }

    /// Deny a `can_use_tool`.
    pub fn deny(request_id: impl Into<String>, message: impl Into<String>, interrupt: bool) -> InputFrame {
        InputFrame::permission(
            request_id,
            PermissionResult::Deny {
                message: message.into(),
                interrupt: interrupt.then_some(true),
            },
        )
    }

    /// Refuse a CLI request we do not handle.
    pub fn error_response(request_id: impl Into<String>, error: impl Into<String>) -> InputFrame {
        InputFrame::ControlResponse(OutgoingControlResponse {
            response: ResponseEnvelope::Error {
                request_id: request_id.into(),
                error: error.into(),
            },
        })
    }

    /// The JSON line, newline-terminated, ready for stdin.
    pub fn to_line(&self) -> String {
        // Serializing these plain data types cannot fail (no maps with non-string keys).
        let mut s = serde_json::to_string(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
