//! Bidirectional stream-json with `--permission-prompt-tool stdio`: tool permission allow / deny /
//! deny+interrupt, AskUserQuestion answers, ExitPlanMode review, and `control_cancel_request`.

use std::time::Duration;

use serde_json::json;

use super::brain;
use super::frames::{allow, bidi, deny, initialize, interrupt, is_permission, until_allowing, user};
use super::runner::Lab;

const DONE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn permission_allow() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(initialize("req_1")).await;
    let init = run
        .until("initialize response", |v| v["type"] == "control_response")
        .await;
    assert_eq!(init["response"]["request_id"], "req_1");
    run.send(user("please run touch")).await;
    let req = run
        .until("can_use_tool", |v| is_permission(v, Some("Bash")))
        .await;
    assert_eq!(
        req["request"]["input"]["command"],
        "touch created-by-tool.txt && ls"
    );
    assert!(req["request"]["tool_use_id"].is_string());
    run.send(allow(&req, req["request"]["input"].clone())).await;
    let result = run.until_result().await;
    assert_eq!(result["result"], "Tool said: created-by-tool.txt");
    let t = run.finish(DONE).await;
    lab.record("bidi_permission_allow", &t);
    assert_eq!(t.code, Some(0));
    assert!(lab.env.cwd.join("created-by-tool.txt").exists());
}

#[tokio::test]
async fn permission_deny() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(user("please run touch")).await;
    let req = run
        .until("can_use_tool", |v| is_permission(v, Some("Bash")))
        .await;
    run.send(deny(&req, "denied by test driver", false)).await;
    let result = run.until_result().await;
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["result"], "Tool failed: denied by test driver");
    assert_eq!(result["permission_denials"][0]["tool_name"], "Bash");
    let t = run.finish(DONE).await;
    lab.record("bidi_permission_deny", &t);
    assert!(!lab.env.cwd.join("created-by-tool.txt").exists());
    let tr = lab.mock.message_requests()[1].tool_results();
    assert!(
        tr[0].is_error && tr[0].content == "denied by test driver",
        "{tr:?}"
    );
}

#[tokio::test]
async fn permission_deny_interrupt() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(user("please run touch")).await;
    let req = run
        .until("can_use_tool", |v| is_permission(v, Some("Bash")))
        .await;
    run.send(deny(&req, "stop right there", true)).await;
    let result = run.until_result().await;
    // The turn stops: no further model request.
    run.send(user("are you still there?")).await;
    let second = run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("bidi_permission_deny_interrupt", &t);
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(second["subtype"], "success");
    let reqs = lab.mock.message_requests();
    assert_eq!(reqs.len(), 2, "the denied turn made no second request");
    assert!(
        reqs[1]
            .all_texts()
            .iter()
            .any(|t| t.contains("[Request interrupted by user"))
    );
}

#[tokio::test]
async fn ask_user_question() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(user("please ask me something")).await;
    let req = run
        .until("question", |v| is_permission(v, Some("AskUserQuestion")))
        .await;
    assert_eq!(req["request"]["requires_user_interaction"], true);
    let mut input = req["request"]["input"].clone();
    input["answers"] = json!({"Which database should we use?": "SQLite",
                              "Which features do you want?": "Auth, Export"});
    run.send(allow(&req, input)).await;
    let result = run.until_result().await;
    let t = run.finish(DONE).await;
    lab.record("bidi_ask_user_question", &t);
    assert_eq!(result["subtype"], "success");
    let tr = lab.mock.message_requests()[1].tool_results();
    assert!(
        tr[0]
            .content
            .contains("\"Which database should we use?\"=\"SQLite\""),
        "{tr:?}"
    );
}

async fn plan_review(approve: bool) {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&["--permission-mode", "plan"]));
    run.send(user("please make a plan")).await;
    let req = until_allowing(&mut run, "ExitPlanMode", |v| {
        is_permission(v, Some("ExitPlanMode"))
    })
    .await;
    if approve {
        run.send(allow(&req, req["request"]["input"].clone())).await;
    } else {
        run.send(deny(&req, "Please also add tests to the plan.", false))
            .await;
    }
    let result = until_allowing(&mut run, "result", |v| v["type"] == "result").await;
    let t = run.finish(DONE).await;
    let name = if approve {
        "bidi_plan_allow"
    } else {
        "bidi_plan_deny"
    };
    lab.record(name, &t);
    assert_eq!(t.of("system", Some("init"))[0]["permissionMode"], "plan");
    assert!(
        req["request"]["input"]["plan"]
            .as_str()
            .unwrap_or_default()
            .contains("# Plan"),
        "{req}"
    );
    let modes: Vec<_> = t
        .of("system", Some("status"))
        .iter()
        .filter_map(|s| s["permissionMode"].as_str())
        .map(str::to_owned)
        .collect();
    if approve {
        assert_eq!(result["result"], "Plan approved; starting.");
        assert!(modes.iter().any(|m| m != "plan"), "{modes:?}");
    } else {
        assert_eq!(
            result["result"],
            "Tool failed: Please also add tests to the plan."
        );
        assert_eq!(result["permission_denials"][0]["tool_name"], "ExitPlanMode");
    }
}

#[tokio::test]
async fn plan_allow() {
    plan_review(true).await;
}

#[tokio::test]
async fn plan_deny() {
    plan_review(false).await;
}

#[tokio::test]
async fn cancel_request_on_interrupt() {
    let Some(lab) = Lab::new(brain::script()).await else {
        return;
    };
    let mut run = lab.spawn(&bidi(&[]));
    run.send(user("please run touch")).await;
    let req = run
        .until("can_use_tool", |v| is_permission(v, Some("Bash")))
        .await;
    run.send(interrupt("req_int")).await;
    let cancel = run
        .until("cancel", |v| v["type"] == "control_cancel_request")
        .await;
    assert_eq!(cancel["request_id"], req["request_id"]);
    let result = run.until_result().await;
    // A late answer to the withdrawn request is ignored.
    run.send(allow(&req, req["request"]["input"].clone())).await;
    let t = run.finish(DONE).await;
    lab.record("bidi_cancel_request", &t);
    assert_eq!(result["subtype"], "error_during_execution");
    assert!(!lab.env.cwd.join("created-by-tool.txt").exists());
    assert_eq!(lab.mock.message_requests().len(), 1);
}
