//! Driver events both stream-json translators build the same way: text and thinking lifecycle events,
//! notices for unparseable lines and unknown frames, and a subagent's message.

use serde_json::Value;

use crate::driver::{
    DriverEvent, Notice, Phase, SubagentKind, SubagentUpdate, TextDelta, Thinking, notice_kind,
};

/// A text lifecycle event of message `id`.
pub fn text_event(id: &str, text: String, phase: Phase) -> DriverEvent {
    DriverEvent::TextDelta(TextDelta {
        message_id: id.to_owned(),
        text,
        phase,
        ..Default::default()
    })
}

/// A thinking lifecycle event of message `id`.
pub fn thinking_event(id: &str, text: String, phase: Phase) -> DriverEvent {
    DriverEvent::Thinking(Thinking {
        message_id: id.to_owned(),
        text,
        phase,
    })
}

/// A line `cli` wrote that is not JSON (or not a frame): a notice carrying its first 2048 characters.
pub fn invalid_line(cli: &str, raw: &str, error: &str) -> DriverEvent {
    let raw: String = raw.chars().take(2048).collect();
    DriverEvent::Notice(
        Notice::new(
            notice_kind::PROVIDER_INVALID,
            format!("unparseable {cli} line: {error}"),
        )
        .with_data("raw", raw),
    )
}

/// A frame `cli` wrote that the driver does not know: a notice naming its `type`/`subtype`, with the
/// frame.
pub fn unknown_frame(cli: &str, v: &Value) -> DriverEvent {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
    let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
    DriverEvent::Notice(
        Notice::new(
            notice_kind::PROVIDER_UNKNOWN,
            format!(
                "unrecognized {cli} frame {kind}{}{sub}",
                if sub.is_empty() { "" } else { "/" }
            ),
        )
        .with_data("raw", v.clone()),
    )
}

/// What a subagent (the task of tool call `task`) said: its text blocks joined.
pub fn subagent_message<'a>(task: &str, texts: impl IntoIterator<Item = &'a str>) -> DriverEvent {
    DriverEvent::SubagentUpdate(SubagentUpdate {
        task: task.to_owned(),
        summary: texts.into_iter().collect(),
        kind: SubagentKind::Message,
        ..Default::default()
    })
}
