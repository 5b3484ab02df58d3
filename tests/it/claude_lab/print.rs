//! Print-mode scenarios (`-p <prompt> --output-format stream-json --verbose`): streaming, thinking,
//! a Bash round trip, structured output, resume and fork.

use agent_adaptor::testkit::mock::anthropic::{Reply, Script};

use super::brain;
use super::runner::Lab;

#[tokio::test]
async fn text_partial() {
    let text = "Hi! I am the mock model, streaming in pieces.";
    let Some(lab) = Lab::new(Script::queue([Reply::text(text)])).await else {
        return;
    };
    let t = lab.print(&["--include-partial-messages"], "say hi").await;
    lab.record("text_partial", &t);
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    assert_eq!(t.result()["result"], text);
    let deltas: String = t
        .of("stream_event", None)
        .iter()
        .filter_map(|f| f["event"]["delta"]["text"].as_str())
        .collect();
    assert_eq!(deltas, text);
    // Only the conversation request: no side requests, no preflight with the offline env.
    let reqs = lab.mock.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].last_user_text().as_deref(), Some("say hi"));
    assert_eq!(reqs[0].query.as_deref(), Some("beta=true"));
    assert_eq!(reqs[0].header("x-api-key"), Some("dummy-key"));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert!(
        reqs[0]
            .header("user-agent")
            .unwrap()
            .starts_with("claude-cli/2.1.332")
    );
    assert!(reqs[0].is_streaming() && reqs[0].model() == Some("claude-opus-5-5"));
}

#[tokio::test]
async fn thinking() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let t = lab.print(&["--include-partial-messages"], "think first").await;
    lab.record("thinking", &t);
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    let thinking: String = t
        .of("stream_event", None)
        .iter()
        .filter_map(|f| f["event"]["delta"]["thinking"].as_str())
        .collect();
    assert_eq!(thinking, "The user wants me to think. Let me consider it.");
    let has_thinking_block = t.of("assistant", None).iter().any(|a| {
        a["message"]["content"][0]["type"] == "thinking"
            && a["message"]["content"][0]["signature"] == "c2lnbmF0dXJlLW1vY2s="
    });
    assert!(has_thinking_block);
    assert_eq!(t.result()["result"], "Thought about it: 42.");
}

#[tokio::test]
async fn bash_bypass() {
    let Some(mut lab) = Lab::new(brain::script()).await else {
        return;
    };
    lab.env = lab.env.clone().allow_bypass_as_root();
    let t = lab
        .print(&["--permission-mode", "bypassPermissions"], "please run touch")
        .await;
    lab.record("bash_bypass", &t);
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    assert!(lab.env.cwd.join("created-by-tool.txt").exists());
    assert_eq!(
        t.of("system", Some("init"))[0]["permissionMode"],
        "bypassPermissions"
    );
    let results = lab.mock.message_requests()[1].tool_results();
    assert_eq!(results[0].content, "created-by-tool.txt");
    assert_eq!(t.result()["result"], "Tool said: created-by-tool.txt");
    assert_eq!(t.result()["num_turns"], 2);
}

#[tokio::test]
async fn json_schema() {
    let schema = r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;
    let Some(lab) = Lab::new(Script::from_fn(|req| {
        if req.tool_names().iter().any(|n| n == "StructuredOutput") && req.tool_results().is_empty() {
            Reply::tool_use("StructuredOutput", serde_json::json!({"name": "Ada Lovelace"}))
        } else {
            Reply::text("done")
        }
    }))
    .await
    else {
        return;
    };
    let t = lab
        .print(&["--json-schema", schema], "who wrote the first program?")
        .await;
    lab.record("json_schema", &t);
    assert_eq!(t.code, Some(0), "stderr: {}", t.stderr);
    assert_eq!(t.result()["structured_output"]["name"], "Ada Lovelace");
}

#[tokio::test]
async fn resume_and_fork() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let first = lab.print(&[], "remember the word PINEAPPLE").await;
    lab.record("resume_first", &first);
    let sid = first.result()["session_id"].as_str().unwrap().to_owned();

    let second = lab.print(&["--resume", &sid], "what word?").await;
    lab.record("resume_second", &second);
    assert_eq!(second.code, Some(0), "stderr: {}", second.stderr);
    assert_eq!(second.result()["session_id"], sid.as_str());
    let req = lab.mock.message_requests()[1].clone();
    assert!(
        req.all_texts().iter().any(|t| t.contains("PINEAPPLE")),
        "history not carried"
    );

    let fork = lab.print(&["--resume", &sid, "--fork-session"], "fork it").await;
    lab.record("fork", &fork);
    assert_eq!(fork.code, Some(0), "stderr: {}", fork.stderr);
    let fork_sid = fork.result()["session_id"].as_str().unwrap();
    assert_ne!(fork_sid, sid);
    let req = lab.mock.message_requests()[2].clone();
    assert!(req.all_texts().iter().any(|t| t.contains("what word?")));

    let bogus = lab
        .print(&["--resume", "00000000-0000-4000-8000-000000000000"], "hello?")
        .await;
    lab.record("resume_unknown", &bogus);
    assert_eq!(bogus.code, Some(1));
    assert_eq!(bogus.result()["subtype"], "error_during_execution");
    assert!(bogus.stderr.contains("No conversation found"), "{}", bogus.stderr);
}
