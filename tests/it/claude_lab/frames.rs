//! The stdin frames the lab writes, built with the wire types (so the fixtures prove the CLI accepts
//! exactly what `InputFrame` serializes), and a helper that answers `can_use_tool` while waiting.

use agent_adaptor::providers::claude::wire::{InputFrame, Priority, SdkRequest};
use serde_json::Value;

use super::runner::Run;

/// Bidirectional args plus extras.
pub fn bidi(extra: &[&str]) -> Vec<String> {
    let mut a = agent_adaptor::testkit::claude_env::ClaudeEnv::bidi_args();
    a.extend(extra.iter().map(|s| (*s).to_owned()));
    a
}

/// `control_request initialize`.
pub fn initialize(request_id: &str) -> InputFrame {
    InputFrame::initialize(request_id)
}

/// `control_request interrupt`.
pub fn interrupt(request_id: &str) -> InputFrame {
    InputFrame::interrupt(request_id)
}

/// `control_request cancel_async_message`.
pub fn cancel_async(request_id: &str, uuid: &str) -> InputFrame {
    InputFrame::request(
        request_id,
        SdkRequest::CancelAsyncMessage {
            message_uuid: uuid.to_owned(),
        },
    )
}

/// A plain user frame.
pub fn user(text: &str) -> InputFrame {
    InputFrame::user(text)
}

/// A user frame with a client `uuid` and optional `priority` (`now` / `next` / `later`).
pub fn user_with(text: &str, uuid: &str, priority: Option<&str>) -> InputFrame {
    let p = priority.map(|p| match p {
        "now" => Priority::Now,
        "later" => Priority::Later,
        _ => Priority::Next,
    });
    InputFrame::user_with(text, uuid, p)
}

fn request_id(req: &Value) -> String {
    req["request_id"].as_str().unwrap_or_default().to_owned()
}

/// Allow a `can_use_tool` request, passing `updated_input` back.
pub fn allow(req: &Value, updated_input: Value) -> InputFrame {
    InputFrame::allow(request_id(req), updated_input)
}

/// Deny a `can_use_tool` request; `interrupt: true` also stops the turn.
pub fn deny(req: &Value, message: &str, interrupt: bool) -> InputFrame {
    InputFrame::deny(request_id(req), message, interrupt)
}

/// True for a `can_use_tool` control request (optionally for one tool).
pub fn is_permission(v: &Value, tool: Option<&str>) -> bool {
    v["type"] == "control_request"
        && v["request"]["subtype"] == "can_use_tool"
        && tool.is_none_or(|t| v["request"]["tool_name"] == t)
}

/// Reads until `pred`, allowing (unchanged input) every `can_use_tool` that is not the frame wanted.
pub async fn until_allowing(run: &mut Run, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    loop {
        let v = run.until(what, |v| pred(v) || is_permission(v, None)).await;
        if pred(&v) {
            return v;
        }
        let input = v["request"]["input"].clone();
        run.send(allow(&v, input)).await;
    }
}
