//! Tool items → tool lifecycles: `commandExecution` is `shell {command, cwd}`, `fileChange` is
//! `apply_patch {changes}`, `mcpToolCall` is `<server>/<tool> {arguments}`, `webSearch` is
//! `web_search {query}`. The completed item's status, output and error become the result.

use serde_json::{Value, json};

use crate::driver::{DriverEvent, JsonMap, Phase, ToolCall, ToolResult};

use super::super::wire::items::{ItemStatus, ThreadItem};

/// `(id, name, args)` of a tool item; `None` for other items.
pub fn tool_of(item: &ThreadItem) -> Option<(String, String, Option<JsonMap>)> {
    let (id, name, args) = match item {
        ThreadItem::CommandExecution(c) => (
            &c.id,
            "shell".to_owned(),
            json!({"command": c.command, "cwd": c.cwd}),
        ),
        ThreadItem::FileChange(f) => (
            &f.id,
            "apply_patch".to_owned(),
            json!({"changes": f.changes.iter().map(|c| json!({"path": c.path, "kind": c.kind})).collect::<Vec<_>>()}),
        ),
        ThreadItem::McpToolCall(m) => (
            &m.id,
            format!("{}/{}", m.server, m.tool),
            json!({"arguments": m.arguments}),
        ),
        ThreadItem::WebSearch(w) => (&w.id, "web_search".to_owned(), json!({"query": w.query})),
        _ => return None,
    };
    let args = match args {
        Value::Object(m) => Some(m),
        _ => None,
    };
    Some((id.clone(), name, args))
}

fn status(s: ItemStatus) -> &'static str {
    match s {
        ItemStatus::InProgress => "inProgress",
        ItemStatus::Completed => "completed",
        ItemStatus::Failed => "failed",
        ItemStatus::Declined => "declined",
        ItemStatus::Other => "other",
    }
}

/// The result map, the transcript text and whether it is an error, of a completed tool item.
pub fn tool_result(item: &ThreadItem) -> (JsonMap, String, bool) {
    let (v, text, ok) = match item {
        ThreadItem::CommandExecution(c) => {
            let out = c.aggregated_output.clone().unwrap_or_default();
            (
                json!({"status": status(c.status), "exit_code": c.exit_code, "output": out}),
                out,
                c.status == ItemStatus::Completed && c.exit_code.is_none_or(|e| e == 0),
            )
        }
        ThreadItem::FileChange(f) => {
            let paths: Vec<&str> = f.changes.iter().map(|c| c.path.as_str()).collect();
            (
                json!({"status": status(f.status), "paths": paths}),
                format!("{} {}", status(f.status), paths.join(", ")),
                f.status == ItemStatus::Completed,
            )
        }
        ThreadItem::McpToolCall(m) => {
            let text = m
                .result
                .as_ref()
                .or(m.error.as_ref())
                .map(|v| v.to_string())
                .unwrap_or_default();
            (
                json!({"status": status(m.status), "result": m.result, "error": m.error}),
                text,
                m.status == ItemStatus::Completed && m.error.as_ref().is_none_or(Value::is_null),
            )
        }
        ThreadItem::WebSearch(w) => (
            json!({"query": w.query, "action": w.action}),
            w.query.clone(),
            true,
        ),
        _ => (json!({}), String::new(), true),
    };
    let map = match v {
        Value::Object(m) => m,
        _ => JsonMap::new(),
    };
    (map, text, !ok)
}

/// A tool start.
pub fn tool_start(id: &str, name: &str, args: Option<JsonMap>) -> DriverEvent {
    DriverEvent::ToolCall(ToolCall {
        id: id.to_owned(),
        name: name.to_owned(),
        args,
        phase: Phase::Start,
        ..Default::default()
    })
}

/// A tool output chunk (command / file-change output delta).
pub fn tool_delta(id: &str, delta: &str) -> DriverEvent {
    DriverEvent::ToolCall(ToolCall {
        id: id.to_owned(),
        args_delta: delta.to_owned(),
        phase: Phase::Content,
        ..Default::default()
    })
}

/// A tool end and its result (the result only when non-empty).
pub fn tool_end(id: &str, result: JsonMap) -> Vec<DriverEvent> {
    let mut out = vec![DriverEvent::ToolCall(ToolCall {
        id: id.to_owned(),
        result: (!result.is_empty()).then(|| result.clone()),
        phase: Phase::End,
        ..Default::default()
    })];
    if !result.is_empty() {
        out.push(DriverEvent::ToolResult(ToolResult {
            id: id.to_owned(),
            result,
        }));
    }
    out
}
