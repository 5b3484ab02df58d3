//! The recorder: exposure defaults and opt-in flags on record and on replay, redaction of every
//! secret-carrying event type, loss-free and duplicate-free replay from any cursor, and replayed
//! approvals without a live responder.

use std::sync::Arc;

use agent_adaptor::driver::{
    DecisionKind, Identity, Notice, ProcessInfo, ProcessKind, SubagentKind, SubagentUpdate,
};
use agent_adaptor::recorder::{ExposurePolicy, Recorder, expose};
use agent_adaptor::runtime::{Agent, ApprovalError, CallOptions, Event, Payload};
use agent_adaptor::store::{ThreadStore, memory::MemoryStore};
use agent_adaptor::testkit::reference::{ReferenceConfig, ReferenceDriver, Script, Step};
use futures::StreamExt;
use serde_json::json;

async fn events_of(agent: &Agent, key: &str, prompt: &str) -> Vec<Event> {
    let opts = CallOptions::new().identity(Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let stream = agent.thread(key).send(prompt, opts);
    stream.events().collect().await
}

fn done_json(events: &[Event], policy: &ExposurePolicy) -> serde_json::Value {
    expose(events.iter().find(|e| e.is_done()).unwrap(), policy)
}

#[tokio::test]
async fn done_keeps_only_identity_by_default_and_each_flag_adds_its_part() {
    let agent = Agent::new(ReferenceDriver::scripted(
        Script::new(vec![Step::Stdout("raw out\n".into()), Step::text("answer")]).with_usage(1, 2),
    ));
    let events = events_of(&agent, "k", "x").await;
    let d = done_json(&events, &ExposurePolicy::default());
    let result = d["result"].as_object().unwrap();
    let keys: Vec<&str> = result.keys().map(String::as_str).collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec!["run_id", "summary", "text", "turns"]
            .into_iter()
            .filter(|k| keys.contains(k))
            .collect::<Vec<_>>()
    );
    assert!(result.contains_key("text") && result.contains_key("turns") && result.contains_key("run_id"));
    for hidden in [
        "usage",
        "metadata",
        "raw",
        "transcript",
        "services",
        "model",
        "provider",
    ] {
        assert!(
            !result.contains_key(hidden),
            "{hidden} must be withheld by default"
        );
    }
    let flags: [(ExposurePolicy, &str); 5] = [
        (
            ExposurePolicy {
                include_usage: true,
                ..Default::default()
            },
            "usage",
        ),
        (
            ExposurePolicy {
                include_metadata: true,
                ..Default::default()
            },
            "metadata",
        ),
        (
            ExposurePolicy {
                include_transcript: true,
                ..Default::default()
            },
            "transcript",
        ),
        (
            ExposurePolicy {
                include_raw_streams: true,
                ..Default::default()
            },
            "raw",
        ),
        (
            ExposurePolicy {
                include_provider_result: true,
                ..Default::default()
            },
            "raw",
        ),
    ];
    for (policy, field) in flags {
        let d = done_json(&events, &policy);
        assert!(d["result"].get(field).is_some(), "{field} appears with its flag");
    }
    let raw_only = done_json(
        &events,
        &ExposurePolicy {
            include_raw_streams: true,
            ..Default::default()
        },
    );
    assert!(
        raw_only["result"]["raw"].get("terminal").is_none(),
        "the terminal payload needs its own flag"
    );
    assert_eq!(raw_only["result"]["raw"]["stdout"], "raw out\n");
    // stdout chunks are withheld unless raw streams are opted in.
    let chunk = events
        .iter()
        .find(|e| matches!(&e.payload, Payload::ProcessInfo(p) if p.kind == ProcessKind::Stdout))
        .unwrap();
    assert!(expose(chunk, &ExposurePolicy::default()).get("text").is_none());
    assert_eq!(expose(chunk, &ExposurePolicy::all())["text"], "raw out\n");
}

#[tokio::test]
async fn failures_keep_only_error_identity() {
    let agent = Agent::new(ReferenceDriver::new(ReferenceConfig::default()));
    let events = events_of(&agent, "k", "please fail").await;
    let d = done_json(&events, &ExposurePolicy::default());
    let e = d["error"].as_object().unwrap();
    let mut keys: Vec<&str> = e.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, vec!["code", "message", "reason"]);
    assert_eq!(e["reason"], "agent_error");
}

#[tokio::test]
async fn secrets_are_redacted_in_every_event_type_that_can_carry_them() {
    let secret_env =
        json!({ "env": { "OPENAI_API_KEY": "sk-live-aaaaaaaaaaaaaaaaaaaa" }, "api_key": "plain" });
    let script = Script::new(vec![
        Step::Notice(Notice::new("custom", "token Bearer abc.def.ghi").with_data("password", "hunter2")),
        Step::Tool {
            name: "run".into(),
            args: secret_env.clone(),
            result: json!({ "authorization": "Bearer zzz" }),
        },
        Step::Subagent(SubagentUpdate {
            task: "t".into(),
            kind: SubagentKind::Message,
            summary: "used sk-abcdefghijklmnopqrstuv".into(),
            ..Default::default()
        }),
        Step::Approval {
            kind: DecisionKind::Permission,
            title: "run it".into(),
            choices: vec![],
        },
        Step::text("the key is sk-abcdefghijklmnopqrstuv ok"),
    ]);
    let agent = Agent::builder(ReferenceDriver::scripted(script))
        .policy(agent_adaptor::driver::Policy {
            approvals: agent_adaptor::driver::ApprovalPolicy::auto_approve(),
            ..Default::default()
        })
        .build();
    let events = events_of(&agent, "k", "x").await;
    let mut process = ProcessInfo {
        kind: ProcessKind::Spawn,
        text: "spawned".into(),
        bytes: None,
        metadata: Default::default(),
        data: Default::default(),
    };
    process
        .metadata
        .insert("ANTHROPIC_API_KEY".into(), "secret-value".into());
    let mut all: Vec<serde_json::Value> = events.iter().map(|e| expose(e, &ExposurePolicy::all())).collect();
    let spawn = Event {
        meta: events[0].meta.clone(),
        payload: Payload::ProcessInfo(process),
    };
    all.push(expose(&spawn, &ExposurePolicy::all()));
    let text = serde_json::to_string(&all).unwrap();
    for secret in [
        "sk-live-aaaaaaaaaaaaaaaaaaaa",
        "plain",
        "hunter2",
        "abc.def.ghi",
        "zzz",
        "sk-abcdefghijklmnopqrstuv",
        "secret-value",
    ] {
        assert!(!text.contains(secret), "{secret} leaked into a record");
    }
    assert!(text.contains("[redacted]"));
}

#[tokio::test]
async fn replay_is_loss_free_and_duplicate_free_from_any_cursor() {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let agent = Agent::builder(ReferenceDriver::new(ReferenceConfig::default()))
        .thread_store(store.clone())
        .build();
    let rec = Recorder::new(store, "t", ExposurePolicy::default());
    let mut total = 0;
    for prompt in ["one", "two", "three"] {
        let events = events_of(&agent, "hist", prompt).await;
        total += events.len();
        rec.record(&events).await.unwrap();
    }
    let view = ExposurePolicy::default();
    let all = rec.since("hist", None, 10_000, &view).await.unwrap();
    assert_eq!(all.len(), total);
    assert!(
        all.windows(2).all(|w| w[0].cursor < w[1].cursor),
        "the host cursor strictly increases across runs"
    );
    for (i, r) in all.iter().enumerate() {
        let rest = rec.since("hist", Some(r.cursor), 10_000, &view).await.unwrap();
        assert_eq!(rest.len(), all.len() - i - 1);
        assert_eq!(rest.first().map(|x| x.cursor), all.get(i + 1).map(|x| x.cursor));
    }
    let tail = rec.tail("hist", 5, &view).await.unwrap();
    assert_eq!(
        tail.iter().map(|r| r.cursor).collect::<Vec<_>>(),
        all[all.len() - 5..].iter().map(|r| r.cursor).collect::<Vec<_>>()
    );
    let mid = rec
        .range("hist", all[3].cursor, all[9].cursor, &view)
        .await
        .unwrap();
    assert_eq!(mid.len(), 6);
    // Every record replays as a typed event with its coordinates.
    for r in &all {
        let e = r.replay().unwrap();
        assert_eq!(e.meta.sequence, r.sequence);
    }
}

#[tokio::test]
async fn replayed_approvals_have_no_live_responder_and_views_only_narrow() {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let script = Script::new(vec![Step::Approval {
        kind: DecisionKind::Permission,
        title: "t".into(),
        choices: vec![],
    }]);
    let agent = Agent::builder(ReferenceDriver::scripted(script))
        .thread_store(store.clone())
        .build();
    let opts = CallOptions::new().identity(Identity {
        tenant: "t".into(),
        ..Default::default()
    });
    let stream = agent.thread("a").send("x", opts);
    let mut events = Vec::new();
    let mut ev = stream.events();
    while let Some(e) = ev.next().await {
        if let Payload::ApprovalRequest(r) = &e.payload {
            r.approve().unwrap();
        }
        events.push(e);
    }
    let rec = Recorder::new(store, "t", ExposurePolicy::all());
    rec.record(&events).await.unwrap();
    let replayed = rec.since("a", None, 1000, &ExposurePolicy::all()).await.unwrap();
    let approval = replayed
        .iter()
        .find(|r| r.kind == "approval_request")
        .unwrap()
        .replay()
        .unwrap();
    let Payload::ApprovalRequest(req) = approval.payload else {
        unreachable!()
    };
    assert!(!req.is_live());
    assert_eq!(req.approve(), Err(ApprovalError::Unavailable));
    let narrowed = rec
        .since("a", None, 1000, &ExposurePolicy::default())
        .await
        .unwrap();
    let done = narrowed.iter().find(|r| r.kind == "done").unwrap();
    assert!(
        done.json["result"].get("usage").is_none(),
        "a view never shows more than the reader may see"
    );
}
