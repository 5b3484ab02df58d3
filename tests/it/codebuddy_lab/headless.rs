//! Headless scenarios: `codebuddy --print --output-format stream-json --verbose … "<prompt>"`.

use serde_json::{Value, json};

use super::{Lab, Named, assert_one_session, obtain};

#[tokio::test]
async fn headless_text() {
    let Some(rec) = obtain("headless_text", async |lab: &Lab| {
        let args = Lab::headless_args(&["--include-partial-messages"], "say hi");
        vec![lab.run_headless("", args).await]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    assert_eq!(run.exit_code, Some(0));
    let kinds = run.kinds();
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("system/init"),
        "{kinds:?}"
    );
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("result/success"),
        "{kinds:?}"
    );
    for k in [
        "system/status",
        "file-history-snapshot",
        "stream_event/message_start",
        "stream_event/content_block_start",
        "stream_event/content_block_delta",
        "stream_event/content_block_stop",
        "stream_event/message_delta",
        "stream_event/message_stop",
        "assistant",
    ] {
        assert!(kinds.iter().any(|x| x == k), "missing {k}: {kinds:?}");
    }
    let assistant = run.of("assistant")[0];
    let text = assistant
        .pointer("/message/content/0/text")
        .and_then(Value::as_str)
        .unwrap();
    assert_eq!(text, "Reply n=1 to say hi");
    assert_eq!(run.delta_text(), text);
    assert_eq!(run.results()[0]["result"], text);
    assert_eq!(run.results()[0]["is_error"], false);
    // The assistant frame's message.id is the completion id the mock sent.
    assert_eq!(
        assistant.pointer("/message/id"),
        Some(&json!("chatcmpl-mock-0001"))
    );
    let sid = assert_one_session(run);
    assert_eq!(run.frames[0]["uuid"], sid, "init.uuid equals session_id");
    assert_eq!(rec.requests.len(), 1);
    assert_eq!(rec.requests[0]["queries"], json!(["say hi"]));
    assert_eq!(
        rec.requests[0]["conversation_id"], sid,
        "X-Conversation-ID is the session id"
    );
    assert_eq!(rec.requests[0]["model"], "default-model");
}

#[tokio::test]
async fn headless_reasoning() {
    let Some(rec) = obtain("headless_reasoning", async |lab: &Lab| {
        let args = Lab::headless_args(&["--include-partial-messages"], "zzthink please");
        vec![lab.run_headless("", args).await]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    assert_eq!(run.exit_code, Some(0));
    // reasoning_content becomes a thinking block (empty signature), streamed as thinking_delta.
    let start = run.of("stream_event/content_block_start")[0];
    assert_eq!(
        start.pointer("/event/content_block/type"),
        Some(&json!("thinking"))
    );
    let thinking: String = run
        .of("stream_event/content_block_delta")
        .iter()
        .filter_map(|f| f.pointer("/event/delta/thinking").and_then(Value::as_str))
        .collect();
    assert_eq!(thinking, "Let me think.");
    assert_eq!(run.delta_text(), "Thought done.");
    // Two assistant frames: the thinking one (its own uuid as id, null cache counts), then the text.
    let a = run.of("assistant");
    assert_eq!(a.len(), 2);
    assert_eq!(
        a[0].pointer("/message/content/0"),
        Some(&json!({"type": "thinking", "thinking": "Let me think.", "signature": ""}))
    );
    assert_eq!(
        a[0].pointer("/message/usage/cache_read_input_tokens"),
        Some(&Value::Null)
    );
    assert_ne!(a[0].pointer("/message/id"), Some(&json!("chatcmpl-mock-0001")));
    assert_eq!(a[1].pointer("/message/id"), Some(&json!("chatcmpl-mock-0001")));
    assert_eq!(run.results()[0]["result"], "Thought done.");
}

#[tokio::test]
async fn headless_tool_bypass() {
    let Some(rec) = obtain("headless_tool_bypass", async |lab: &Lab| {
        let args = Lab::headless_args(&["--permission-mode", "bypassPermissions"], "zzbash please");
        vec![lab.run_headless("", args).await]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.frames[0]["permissionMode"], "bypassPermissions");
    let uses: Vec<&Value> = run
        .of("assistant")
        .into_iter()
        .filter(|a| a.pointer("/message/content/0/type") == Some(&json!("tool_use")))
        .collect();
    assert_eq!(uses.len(), 1);
    assert_eq!(uses[0].pointer("/message/content/0/name"), Some(&json!("Bash")));
    assert_eq!(uses[0].pointer("/message/stop_reason"), Some(&json!("tool_use")));
    let tr = run.of("user")[0];
    assert_eq!(tr.pointer("/message/content/0/type"), Some(&json!("tool_result")));
    assert_eq!(tr.pointer("/message/content/0/is_error"), Some(&json!(false)));
    let text = tr
        .pointer("/message/content/0/content/0/text")
        .and_then(Value::as_str)
        .unwrap();
    assert!(text.contains("Stdout: hi"), "{text}");
    let result = run.results()[0];
    assert_eq!(result["subtype"], "success");
    assert!(result["result"].as_str().unwrap().starts_with("Done n=2"));
    assert_eq!(rec.requests.len(), 2);
    assert_eq!(rec.requests[1]["last_role"], "tool");
}

#[tokio::test]
async fn headless_tool_denied() {
    let Some(rec) = obtain("headless_tool_denied", async |lab: &Lab| {
        let args = Lab::headless_args(&[], "zzbash please");
        vec![lab.run_headless("", args).await]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    assert_eq!(run.exit_code, Some(0));
    assert_eq!(run.frames[0]["permissionMode"], "default");
    let tr = run.of("user")[0];
    let text = tr
        .pointer("/message/content/0/content/0/text")
        .and_then(Value::as_str)
        .unwrap();
    assert!(
        text.contains("permission prompts are not available in non-interactive mode"),
        "{text}"
    );
    let result = run.results()[0];
    assert_eq!(
        result["subtype"], "success",
        "a denied tool does not fail the turn"
    );
    assert_eq!(rec.requests.len(), 2);
}

#[tokio::test]
async fn headless_resume() {
    let Some(rec) = obtain("headless_resume", async |lab: &Lab| {
        let first = lab
            .run_headless("first", Lab::headless_args(&[], "first turn"))
            .await;
        let sid = first.run.lines.iter().find_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            Some(v.get("session_id")?.as_str()?.to_owned())
        });
        let sid = sid.expect("a session id");
        let transcript = lab.env.session_file(&sid);
        assert!(transcript.is_some(), "no session transcript for {sid}");
        let second = lab
            .run_headless("second", Lab::headless_args(&["--resume", &sid], "second turn"))
            .await;
        vec![first, second]
    })
    .await
    else {
        return;
    };
    let a = assert_one_session(rec.named("first"));
    let b = assert_one_session(rec.named("second"));
    assert_eq!(a, b, "--resume keeps the session id");
    assert_eq!(rec.named("second").exit_code, Some(0));
    assert_eq!(rec.requests.len(), 2);
    assert_eq!(rec.requests[1]["queries"], json!(["first turn", "second turn"]));
    assert_eq!(
        rec.requests[1]["roles"],
        json!(["system", "user", "assistant", "user"])
    );
}

/// The id the unknown-resume scenario asks for.
const UNKNOWN_ID: &str = "00000000-0000-4000-8000-000000000000";

#[tokio::test]
async fn headless_resume_unknown() {
    let Some(rec) = obtain("headless_resume_unknown", async |lab: &Lab| {
        vec![
            lab.run_headless("", Lab::headless_args(&["--resume", UNKNOWN_ID], "hello"))
                .await,
        ]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    assert_eq!(run.exit_code, Some(0), "an unknown id still exits 0");
    assert_eq!(
        run.lines,
        [format!(
            r#"{{"type":"error","error":"No conversation found with session ID: {UNKNOWN_ID}"}}"#
        )]
    );
    assert!(rec.requests.is_empty());
}

#[tokio::test]
async fn headless_errors() {
    let Some(rec) = obtain("headless_errors", async |lab: &Lab| {
        let mut out = Vec::new();
        for w in ["429", "500", "400", "401", "eof", "abort"] {
            let prompt = if w.starts_with(|c: char| c.is_ascii_digit()) {
                format!("zzerr{w} please")
            } else {
                format!("zz{w} please")
            };
            let cap = std::time::Duration::from_secs(if w == "abort" { 25 } else { 60 });
            out.push(
                lab.run_headless_capped(w, Lab::headless_args(&[], &prompt), cap)
                    .await,
            );
        }
        out
    })
    .await
    else {
        return;
    };
    for code in ["429", "500", "400", "401"] {
        let run = rec.named(code);
        assert_eq!(run.exit_code, Some(0), "{code}: exit code stays 0");
        let r = run.results()[0];
        assert_eq!(r["subtype"], "error_during_execution", "{code}");
        assert_eq!(r["is_error"], true);
        assert!(
            r.get("result").is_none(),
            "{code}: an error result has no `result`"
        );
        let err = r["errors"][0].as_str().unwrap();
        assert!(err.starts_with(code), "{code}: {err}");
        // The error text also arrives as an assistant message.
        let a = run.of("assistant")[0]
            .pointer("/message/content/0/text")
            .and_then(Value::as_str)
            .unwrap();
        assert!(a.starts_with(code), "{a}");
        let n = rec
            .requests
            .iter()
            .filter(|q| {
                q["queries"][0]
                    .as_str()
                    .is_some_and(|s| s.contains(&format!("zzerr{code}")))
            })
            .count();
        assert_eq!(n, 1, "{code}: no retry");
    }
    // A clean EOF without [DONE] or finish_reason is taken as a complete answer.
    let eof = rec.named("eof").results()[0];
    assert_eq!(eof["subtype"], "success");
    assert_eq!(eof["result"], "partial answer ");
    // An aborted stream: "aborted" as assistant text, one retry, aborted again, then no result and no
    // exit (the harness kills it after 25 s).
    let abort = rec.named("abort");
    let texts: Vec<&str> = abort
        .of("assistant")
        .iter()
        .filter_map(|a| a.pointer("/message/content/0/text").and_then(Value::as_str))
        .collect();
    assert_eq!(texts, ["aborted", "aborted"]);
    assert!(abort.results().is_empty(), "no result after an aborted stream");
    assert!(abort.killed && abort.exit_code.is_none(), "the CLI hangs");
    let tries = rec
        .requests
        .iter()
        .filter(|q| q["queries"][0].as_str().is_some_and(|s| s.contains("zzabort")))
        .count();
    assert_eq!(tries, 2, "one retry after an aborted stream");
}

#[tokio::test]
async fn headless_json_schema() {
    let schema = r#"{"type":"object","properties":{"answer":{"type":"string"},"n":{"type":"integer"}},"required":["answer","n"]}"#;
    let Some(rec) = obtain("headless_json_schema", async |lab: &Lab| {
        let stream = lab
            .run_headless(
                "stream",
                Lab::headless_args(&["--json-schema", schema], "zzschema please"),
            )
            .await;
        let args = vec![
            "--print".to_owned(),
            "--output-format".to_owned(),
            "json".to_owned(),
            "--json-schema".to_owned(),
            schema.to_owned(),
            "zzschema please".to_owned(),
        ];
        let s = super::Session::spawn(lab.headless(&args));
        let run = s.finish(std::time::Duration::from_secs(60)).await;
        let mut batch = Named::new("batch", args, run);
        batch.ext = "json";
        vec![stream, batch]
    })
    .await
    else {
        return;
    };
    let want = json!({"answer": "forty-two", "n": 42});
    let stream = rec.named("stream");
    let r = stream.results()[0];
    assert_eq!(r["structured_output"], want);
    assert_eq!(r["subtype"], "success");
    // --output-format json prints one pretty JSON array: the history items, then the result.
    let batch = &rec.named("batch").frames[0];
    let items = batch.as_array().expect("a JSON array");
    let last = items.last().unwrap();
    assert_eq!(last["type"], "result");
    assert_eq!(last["structured_output"], want);
    assert!(
        items
            .iter()
            .any(|i| i["type"] == "function_call" && i["name"] == "StructuredOutput")
    );
    for q in &rec.requests {
        let tools = q["tools"].as_array().unwrap();
        assert!(
            tools.iter().any(|t| t == "StructuredOutput"),
            "StructuredOutput offered"
        );
    }
}
