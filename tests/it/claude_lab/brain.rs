//! The scripted "model" for the lab scenarios: a closure over the request that answers by keyword in the
//! latest user text, and answers tool results by quoting them, so one script serves many turns.

use std::time::Duration;

use agent_adaptor::testkit::mock::anthropic::{Block, Reply, RequestLog, Script};
use serde_json::json;

/// A long text streamed slowly (one event every `SLOW_EVENT`), so frames can be written mid-stream.
pub const SLOW_TEXT: &str = "This is a deliberately slow streamed answer that takes a while.";
/// Delay between SSE events of slow replies.
pub const SLOW_EVENT: Duration = Duration::from_millis(150);

/// The keyword brain as a [`Script`].
pub fn script() -> Script {
    Script::from_fn(brain)
}

/// Finds the plan-file path the plan-mode prompt names (`…/plans/<slug>.md`).
fn plan_path(req: &RequestLog) -> Option<String> {
    let mut hay = req.all_texts();
    hay.push(req.system_text());
    hay.iter().find_map(|t| {
        let at = t.find("/plans/")?;
        let start = t[..at].rfind(char::is_whitespace).map_or(0, |i| i + 1);
        let end = at + t[at..].find(".md")? + 3;
        Some(t[start..end].to_owned())
    })
}

/// Answers one request.
pub fn brain(req: &RequestLog) -> Reply {
    let results = req.tool_results();
    let texts = req.last_user_texts();
    let convo = req.messages().iter().map(|m| m.to_string()).collect::<String>();
    if let Some(_) = results.first()
        && convo.contains("make a plan")
        && !convo.contains("\"ExitPlanMode\"")
    {
        let plan = "# Plan\n1. Create hello.txt\n2. Print it\n";
        return Reply::tool_use("ExitPlanMode", json!({"plan": plan}));
    }
    if let Some(r) = results.first() {
        // Quote the tool result; mention any user text that rode along (a mid-run message).
        let mut s = format!("Tool said: {}", r.content.lines().next().unwrap_or_default());
        if r.is_error {
            s = format!("Tool failed: {}", r.content.lines().next().unwrap_or_default());
        }
        if !texts.is_empty() {
            s.push_str(&format!(" | also got {} user text(s)", texts.len()));
        }
        if r.content.contains("approved your plan") || r.content.contains("approved exiting") {
            s = "Plan approved; starting.".to_owned();
        }
        let mut reply = Reply::text(s);
        if texts.iter().any(|t| t.contains("slow")) {
            reply = reply.slow(SLOW_EVENT);
        }
        return reply;
    }
    let prompt = texts.join("\n");
    if prompt.contains("run touch") {
        return Reply::blocks(vec![
            Block::text("I will run it."),
            Block::tool_use(
                "Bash",
                json!({"command": "touch created-by-tool.txt && ls", "description": "Create a file"}),
            ),
        ]);
    }
    if prompt.contains("run sleep") {
        return Reply::tool_use(
            "Bash",
            json!({"command": "sleep 2 && echo done", "description": "Wait a little"}),
        );
    }
    if prompt.contains("ask me") {
        return Reply::tool_use(
            "AskUserQuestion",
            json!({"questions": [
                {"question": "Which database should we use?", "header": "Database", "multiSelect": false,
                 "options": [{"label": "Postgres", "description": "Relational"},
                             {"label": "SQLite", "description": "Embedded"}]},
                {"question": "Which features do you want?", "header": "Features", "multiSelect": true,
                 "options": [{"label": "Auth", "description": "Login"},
                             {"label": "Export", "description": "CSV export"},
                             {"label": "Search", "description": "Full text"}]}
            ]}),
        );
    }
    if prompt.contains("make a plan") {
        let plan = "# Plan\n1. Create hello.txt\n2. Print it\n";
        // First write the plan file named in the plan-mode prompt, then ask to exit plan mode.
        if let Some(path) = plan_path(req) {
            return Reply::tool_use("Write", json!({"file_path": path, "content": plan}));
        }
        return Reply::tool_use("ExitPlanMode", json!({"plan": plan}));
    }
    if prompt.contains("think first") {
        return Reply::blocks(vec![
            Block::thinking(
                "The user wants me to think. Let me consider it.",
                "c2lnbmF0dXJlLW1vY2s=",
            ),
            Block::text("Thought about it: 42."),
        ]);
    }
    if prompt.contains("slow") {
        return Reply::text(SLOW_TEXT).slow(SLOW_EVENT);
    }
    Reply::text(format!(
        "ECHO n={}: {}",
        req.n,
        texts.last().cloned().unwrap_or_default()
    ))
}
