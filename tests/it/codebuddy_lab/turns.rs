//! Turn-boundary scenarios on the control transport: interrupt mid-stream, during a tool, with a permission
//! pending, and a second user frame mid-turn (M3a).

use std::time::Duration;

use serde_json::{Value, json};

use super::control::{start, wait_permission, wait_result};
use super::session::{allow, interrupt, user};
use super::{Lab, Named, obtain};

const T: Duration = Duration::from_secs(30);

#[tokio::test]
async fn interrupt_stream() {
    let Some(rec) = obtain("interrupt_stream", async |lab: &Lab| {
        let args = Lab::control_args(&["--include-partial-messages"]);
        let mut s = start(lab, &args).await;
        s.send(user("zzslow answer please")).await;
        let _ = s.wait_kind("stream_event/content_block_delta", T).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        s.send(interrupt("req_interrupt_1")).await;
        let _ = wait_result(&mut s, T).await;
        s.send(user("zzafter the interrupt")).await;
        let _ = wait_result(&mut s, T).await;
        vec![Named::new("", args, s.finish(Duration::from_secs(20)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    let ack = run
        .frames
        .iter()
        .find(|f| f.pointer("/response/request_id") == Some(&json!("req_interrupt_1")))
        .expect("interrupt acknowledged");
    assert_eq!(ack.pointer("/response/response/interrupted"), Some(&json!(true)));
    assert_eq!(
        ack.pointer("/response/response/reason"),
        Some(&json!("SDK request"))
    );
    let results = run.results();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0]["subtype"], "success",
        "an interrupted turn reports success"
    );
    assert_eq!(results[0]["result"], "", "with an empty result");
    let texts: Vec<&str> = run
        .of("assistant")
        .iter()
        .filter_map(|a| a.pointer("/message/content/0/text").and_then(Value::as_str))
        .collect();
    assert!(texts.contains(&"Interrupted by user"), "{texts:?}");
    assert_eq!(results[0]["session_id"], results[1]["session_id"]);
    // The next request keeps the partial answer, without a marker.
    let last = rec.requests.last().unwrap();
    assert_eq!(
        last["queries"],
        json!(["zzslow answer please", "zzafter the interrupt"])
    );
    assert_eq!(last["roles"], json!(["system", "user", "assistant", "user"]));
}

#[tokio::test]
async fn interrupt_tool() {
    let Some(rec) = obtain("interrupt_tool", async |lab: &Lab| {
        let args = Lab::control_args(&[]);
        let mut s = start(lab, &args).await;
        s.send(user("zzsleep please")).await;
        let req = wait_permission(&mut s).await;
        s.send(allow(&req, json!({}))).await;
        tokio::time::sleep(Duration::from_millis(1000)).await;
        s.send(interrupt("req_interrupt_1")).await;
        let r = wait_result(&mut s, Duration::from_secs(5)).await;
        s.note(&format!("result within 5 s of the interrupt: {}", r.is_some()));
        s.send(user("zzafter the interrupt")).await;
        let _ = wait_result(&mut s, T).await;
        vec![Named::new("", args, s.finish(Duration::from_secs(5)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    let interrupted = run
        .of("user")
        .into_iter()
        .filter(|u| u.pointer("/message/content/0/content/0/text") == Some(&json!("Interrupted by user")))
        .count();
    assert_eq!(interrupted, 2, "the interrupted tool_result is emitted twice");
    let results = run.results();
    assert_eq!(
        results.len(),
        1,
        "no result for the interrupted turn, one for the next"
    );
    let first_sid = run.of("system/init")[0]["session_id"].clone();
    assert_ne!(
        results[0]["session_id"], first_sid,
        "the next turn runs in a new session"
    );
    assert_eq!(rec.requests.len(), 2);
    assert_eq!(
        rec.requests[1]["queries"],
        json!(["zzafter the interrupt"]),
        "history lost"
    );
    assert!(run.killed, "the process did not exit after stdin closed");
}

#[tokio::test]
async fn interrupt_pending_permission() {
    let Some(rec) = obtain("interrupt_pending_permission", async |lab: &Lab| {
        let args = Lab::control_args(&[]);
        let mut s = start(lab, &args).await;
        s.send(user("zzbash please")).await;
        let _req = wait_permission(&mut s).await;
        s.send(interrupt("req_interrupt_1")).await;
        let r = wait_result(&mut s, Duration::from_secs(5)).await;
        s.note(&format!("result within 5 s of the interrupt: {}", r.is_some()));
        s.send(user("zzafter the interrupt")).await;
        let r2 = wait_result(&mut s, Duration::from_secs(15)).await;
        s.note(&format!("result for the next frame: {}", r2.is_some()));
        vec![Named::new("", args, s.finish(Duration::from_secs(5)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    let ack = run
        .frames
        .iter()
        .find(|f| f.pointer("/response/request_id") == Some(&json!("req_interrupt_1")));
    assert!(
        ack.is_some(),
        "interrupt acknowledged while a permission is pending"
    );
    assert!(!run.results().is_empty(), "{:?}", run.kinds());
}

#[tokio::test]
async fn midturn_second_frame() {
    let Some(rec) = obtain("midturn_second_frame", async |lab: &Lab| {
        let args = Lab::control_args(&["--include-partial-messages"]);
        let mut s = start(lab, &args).await;
        s.send(user("zzslow answer please")).await;
        let _ = s.wait_kind("stream_event/content_block_delta", T).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        s.send(user("zzsecond while streaming")).await;
        let _ = wait_result(&mut s, T).await;
        let _ = wait_result(&mut s, T).await;
        s.send(user("zzthird after both")).await;
        let _ = wait_result(&mut s, T).await;
        vec![Named::new("", args, s.finish(Duration::from_secs(20)).await)]
    })
    .await
    else {
        return;
    };
    let run = rec.run();
    let results = run.results();
    assert_eq!(results.len(), 3);
    assert!(
        results[0]["result"].as_str().unwrap().contains("zzsecond"),
        "the second frame's answer arrives first: {}",
        results[0]["result"]
    );
    assert!(
        results[1]["result"]
            .as_str()
            .unwrap()
            .starts_with("This is a deliberately slow")
    );
    assert_ne!(
        results[0]["session_id"], results[1]["session_id"],
        "the concurrent turn has its own session id"
    );
    assert_eq!(results[1]["session_id"], results[2]["session_id"]);
    assert_eq!(
        rec.requests[1]["queries"],
        json!(["zzsecond while streaming"]),
        "no history"
    );
    assert_eq!(
        rec.requests[2]["queries"],
        json!(["zzslow answer please", "zzthird after both"]),
        "the concurrent exchange is lost from history"
    );
}
