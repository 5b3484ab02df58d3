//! The mock model's behaviour for the lab: a closure over the request log keyed on trigger words in the
//! latest `<user_query>`, so one script serves every scenario (and concurrent turns stay tellable apart).

use std::time::Duration;

use agent_adaptor::testkit::mock::chat::{
    CutKind, FinishReason, Part, Reply, RequestLog, Script, StreamReply,
};
use serde_json::json;

/// The slow answer's pieces (13, one every [`SLOW_PACE`]).
pub const SLOW_PIECES: [&str; 13] = [
    "This is ",
    "a ",
    "deliberately ",
    "slow ",
    "streamed ",
    "answer ",
    "that ",
    "takes ",
    "several ",
    "seconds ",
    "to ",
    "finish",
    ".",
];

/// Pause between two frames of the slow answer.
pub const SLOW_PACE: Duration = Duration::from_millis(300);

/// The script every lab scenario runs against.
pub fn script() -> Script {
    Script::func(|cur, _log| reply(cur))
}

fn reply(cur: &RequestLog) -> Reply {
    if cur.last_role() == Some("tool") {
        let result = cur.last_text();
        let head: String = result.chars().take(40).collect();
        return Reply::text(&format!("Done n={}: {head}", cur.n));
    }
    let q = cur.last_user_query();
    let has = |w: &str| q.contains(w);
    for code in [400u16, 401, 429, 500] {
        if has(&format!("zzerr{code}")) {
            return match code {
                429 => Reply::rate_limited(),
                500 => Reply::server_error(),
                401 => Reply::unauthorized(),
                _ => Reply::bad_request(),
            };
        }
    }
    if has("zzabort") {
        return StreamReply::text_chunks(["partial ", "answer ", "never ", "finished"])
            .cut_after(2, CutKind::Abort)
            .into();
    }
    if has("zzeof") {
        return StreamReply::text_chunks(["partial ", "answer ", "never ", "finished"])
            .cut_after(2, CutKind::Eof)
            .into();
    }
    if has("zzthink") {
        let parts = vec![
            Part::Reasoning(vec!["Let me ".into(), "think.".into()]),
            Part::Text(vec!["Thought ".into(), "done.".into()]),
        ];
        return StreamReply::parts(parts, FinishReason::Stop).into();
    }
    if has("zzslow") {
        return StreamReply::text_chunks(SLOW_PIECES).paced(SLOW_PACE).into();
    }
    if has("zzbash") {
        return Reply::text_then_tool(
            "Running it.",
            "Bash",
            &json!({"command": "echo hi", "description": "Print hi"}),
        );
    }
    if has("zzsleep") {
        return Reply::tool_call(
            "Bash",
            &json!({"command": "sleep 6 && touch marker-created", "description": "Sleep, then touch"}),
        );
    }
    if has("zzask") {
        return Reply::tool_call(
            "AskUserQuestion",
            &json!({"questions": [{"question": "Which color?", "header": "Color", "multiSelect": false,
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]}),
        );
    }
    if has("zzplan") {
        return Reply::tool_call(
            "ExitPlanMode",
            &json!({"plan": "1. Read the code\n2. Fix the bug"}),
        );
    }
    // MCP tool calls: the SSE probe's echo, the host tools server's `add`. CodeBuddy defers MCP tools:
    // they are not in the request's tool list and are called through `DeferExecuteTool`.
    let deferred = |tool: &str, params: serde_json::Value| {
        Reply::tool_call("DeferExecuteTool", &json!({"toolName": tool, "params": params}))
    };
    if has("zzecho") {
        return deferred("mcp__sseprobe__echo", json!({"text": "hi"}));
    }
    if has("zzadd") {
        return deferred("mcp__agent_adaptor_tools__add", json!({"a": 2, "b": 40}));
    }
    if has("zzschema") {
        return Reply::tool_call("StructuredOutput", &json!({"answer": "forty-two", "n": 42}));
    }
    Reply::text(&format!("Reply n={} to {q}", cur.n))
}
