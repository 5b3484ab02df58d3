//! Control-transport scenarios: `codebuddy --input-format=stream-json --output-format=stream-json --verbose`
//! with `CODEBUDDY_CODE_ENTRYPOINT=sdk-py`; the `initialize` handshake, then user frames; `can_use_tool`
//! answered in CodeBuddy's own shape.

use std::time::Duration;

use serde_json::{Value, json};

use super::session::{allow, deny, initialize, user};
use super::{Lab, Named, RecordedRun, Session, assert_one_session, kind, obtain};

const T: Duration = Duration::from_secs(30);

/// Starts a control session and completes the handshake; returns the session.
pub async fn start(lab: &Lab, args: &[String]) -> Session {
    let mut s = Session::spawn(lab.control(args));
    s.send(initialize()).await;
    let resp = s
        .wait_for("initialize response", T, |v| {
            v["type"] == "control_response"
                && v.pointer("/response/request_id") == Some(&json!("agent-adaptor-initialize"))
        })
        .await;
    assert!(resp.is_some(), "initialize answered");
    s
}

/// Waits for the next `result` frame.
pub async fn wait_result(s: &mut Session, timeout: Duration) -> Option<Value> {
    s.wait_for("result", timeout, |v| v["type"] == "result").await
}

/// Waits for a `can_use_tool` request (`Null` and a timeline note when none comes).
pub async fn wait_permission(s: &mut Session) -> Value {
    s.wait_kind("control_request/can_use_tool", T)
        .await
        .unwrap_or(Value::Null)
}

/// One permission scenario: prompt, then answer the first `can_use_tool` with `answer(req)`.
async fn one_tool_turn(
    lab: &Lab,
    extra: &[&str],
    prompt: &str,
    answer: impl Fn(&Value) -> Value,
) -> Vec<Named> {
    let args = Lab::control_args(extra);
    let mut s = start(lab, &args).await;
    s.send(user(prompt)).await;
    let req = wait_permission(&mut s).await;
    s.send(answer(&req)).await;
    let _ = wait_result(&mut s, T).await;
    vec![Named::new("", args, s.finish(Duration::from_secs(20)).await)]
}

fn handshake_checks(run: &RecordedRun) {
    let first = &run.frames[0];
    assert_eq!(kind(first), "control_response/success");
    assert_eq!(
        first.pointer("/response/request_id"),
        Some(&json!("agent-adaptor-initialize"))
    );
    let r = first.pointer("/response/response").unwrap();
    for k in ["commands", "models", "currentModelId", "account"] {
        assert!(r.get(k).is_some(), "initialize response has {k}");
    }
    // system/init comes only after the first user frame is written.
    let user_in = run
        .t(|e| e["dir"] == "in" && e["frame"]["type"] == "user")
        .unwrap();
    let init_out = run.t_out("system/init").unwrap();
    assert!(init_out >= user_in, "init {init_out} before user {user_in}");
    assert_eq!(run.exit_code, Some(0), "exits 0 once stdin closes after a result");
    assert!(!run.killed);
}

fn tool_result_text(run: &RecordedRun) -> (String, bool) {
    let tr = run
        .of("user")
        .into_iter()
        .find(|u| u.pointer("/message/content/0/type") == Some(&json!("tool_result")))
        .expect("a tool_result");
    let text = tr
        .pointer("/message/content/0/content/0/text")
        .and_then(Value::as_str)
        .unwrap_or("");
    let is_error = tr
        .pointer("/message/content/0/is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    (text.to_owned(), is_error)
}

#[tokio::test]
async fn control_allow() {
    let Some(rec) = obtain("control_allow", async |lab: &Lab| {
        one_tool_turn(lab, &["--include-partial-messages"], "zzbash please", |r| {
            allow(r, json!({}))
        })
        .await
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    assert_one_session(run);
    let req = run.of("control_request/can_use_tool")[0];
    assert_eq!(req.pointer("/request/tool_name"), Some(&json!("Bash")));
    assert_eq!(
        req.pointer("/request/tool_use_id"),
        Some(&json!("call_mock_0001_0"))
    );
    assert_eq!(req.pointer("/request/input/command"), Some(&json!("echo hi")));
    assert!(req["request_id"].as_str().unwrap().starts_with("perm_"));
    // Partial tool input arrives as input_json_delta stream events.
    let partial: String = run
        .of("stream_event/content_block_delta")
        .iter()
        .filter_map(|f| f.pointer("/event/delta/partial_json").and_then(Value::as_str))
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap()["command"],
        "echo hi"
    );
    let (text, is_error) = tool_result_text(run);
    assert!(text.contains("Stdout: hi") && !is_error, "{text}");
    assert_eq!(run.results()[0]["subtype"], "success");
    assert_eq!(rec.requests.len(), 2);
}

#[tokio::test]
async fn control_deny() {
    let Some(rec) = obtain("control_deny", async |lab: &Lab| {
        one_tool_turn(lab, &[], "zzbash please", |r| deny(r, "denied by test", false)).await
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    let (text, _) = tool_result_text(run);
    assert!(text.contains("doesn't want to proceed"), "{text}");
    assert_eq!(run.results().len(), 1);
    assert_eq!(run.results()[0]["subtype"], "success");
    assert_eq!(rec.requests.len(), 2, "the model sees the denial and answers");
    assert_eq!(rec.requests[1]["last_role"], "tool");
}

#[tokio::test]
async fn control_deny_interrupt() {
    let Some(rec) = obtain("control_deny_interrupt", async |lab: &Lab| {
        one_tool_turn(lab, &[], "zzbash please", |r| deny(r, "stop right there", true)).await
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    let results = run.results();
    assert_eq!(results.len(), 1);
    let r = results[0];
    assert_eq!(
        r["subtype"], "error_during_execution",
        "deny + interrupt fails the turn"
    );
    assert_eq!(r["errors"][0], "Permission denied for tool(s): Bash");
    assert_eq!(r.pointer("/permission_denials/0/tool_name"), Some(&json!("Bash")));
    assert!(
        !run.frames
            .iter()
            .any(|f| f.pointer("/message/content/0/type") == Some(&json!("tool_result"))),
        "no tool_result is emitted"
    );
    assert_eq!(rec.requests.len(), 1, "the model is not called again");
}

#[tokio::test]
async fn control_question() {
    let Some(rec) = obtain("control_question", async |lab: &Lab| {
        one_tool_turn(lab, &[], "zzask please", |r| {
            allow(r, json!({"answers": {"Which color?": "Blue"}}))
        })
        .await
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    let req = run.of("control_request/can_use_tool")[0];
    assert_eq!(req.pointer("/request/tool_name"), Some(&json!("AskUserQuestion")));
    assert_eq!(
        req.pointer("/request/input/questions/0/options/1/label"),
        Some(&json!("Blue"))
    );
    let (text, is_error) = tool_result_text(run);
    assert!(text.contains("Which color? → Blue") && !is_error, "{text}");
    assert_eq!(rec.requests[1]["tool_results"][0], text);
    assert!(
        rec.requests[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "AskUserQuestion")
    );
}

#[tokio::test]
async fn control_plan() {
    let Some(rec) = obtain("control_plan", async |lab: &Lab| {
        one_tool_turn(lab, &["--permission-mode", "plan"], "zzplan please", |r| {
            allow(r, json!({}))
        })
        .await
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    assert_eq!(run.of("system/init")[0]["permissionMode"], "plan");
    let req = run.of("control_request/can_use_tool")[0];
    assert_eq!(req.pointer("/request/tool_name"), Some(&json!("ExitPlanMode")));
    assert_eq!(
        req.pointer("/request/input/plan"),
        Some(&json!("1. Read the code\n2. Fix the bug"))
    );
    let (text, is_error) = tool_result_text(run);
    assert!(text.contains("Exited plan mode") && !is_error, "{text}");
}

#[tokio::test]
async fn control_plan_deny() {
    let Some(rec) = obtain("control_plan_deny", async |lab: &Lab| {
        let args = Lab::control_args(&["--permission-mode", "plan"]);
        let mut s = start(lab, &args).await;
        s.send(user("zzplan please")).await;
        let req = wait_permission(&mut s).await;
        s.send(deny(&req, "keep planning", false)).await;
        let r = wait_result(&mut s, Duration::from_secs(8)).await;
        s.note(&format!("result within 8 s of the denial: {}", r.is_some()));
        s.send(user("what next?")).await;
        let r = wait_result(&mut s, Duration::from_secs(20)).await;
        s.note(&format!("result for the next frame: {}", r.is_some()));
        vec![Named::new("", args, s.finish(Duration::from_secs(10)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    let (text, is_error) = tool_result_text(run);
    assert!(text.contains("keep planning") && is_error, "{text}");
    // The denied turn never ends: no result, no further model request ...
    let results = run.results();
    assert_eq!(results.len(), 1, "only the next frame's turn has a result");
    let inits = run.of("system/init");
    assert_eq!(
        inits.len(),
        2,
        "the next frame starts over with a new system/init"
    );
    // ... and the next frame runs in a new session, without history.
    assert_ne!(inits[0]["session_id"], inits[1]["session_id"]);
    assert_eq!(results[0]["session_id"], inits[1]["session_id"]);
    assert_eq!(rec.requests.len(), 2);
    assert_eq!(rec.requests[1]["queries"], json!(["what next?"]));
    assert!(run.killed, "and the process does not exit when stdin closes");
}

#[tokio::test]
async fn control_error_then_ok() {
    let Some(rec) = obtain("control_error_then_ok", async |lab: &Lab| {
        let args = Lab::control_args(&[]);
        let mut s = start(lab, &args).await;
        s.send(user("zzerr500 please")).await;
        let _ = wait_result(&mut s, T).await;
        s.send(user("and now?")).await;
        let _ = wait_result(&mut s, T).await;
        vec![Named::new("", args, s.finish(Duration::from_secs(20)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    handshake_checks(run);
    let results = run.results();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["subtype"], "error_during_execution");
    assert_eq!(results[1]["subtype"], "success");
    assert_eq!(
        results[0]["session_id"], results[1]["session_id"],
        "the process and session survive a model error"
    );
    assert_eq!(rec.requests.len(), 2);
}
