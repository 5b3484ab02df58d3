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
    let rec = Recorder::new(store, "t", "", ExposurePolicy::default());
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
    let rec = Recorder::new(store, "t", "", ExposurePolicy::all());
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

/// The durable log keeps what it is given: usage counts stay numbers, every event keeps its thread key,
/// and the stored `done` replays into a typed result with the same usage.
#[tokio::test]
async fn usage_counts_and_thread_keys_survive_recording_and_replay_typed() {
    let store: Arc<dyn ThreadStore> = Arc::new(MemoryStore::new());
    let agent = Agent::builder(ReferenceDriver::scripted(
        Script::new(vec![Step::text("answer")]).with_usage(11, 22),
    ))
    .thread_store(store.clone())
    .build();
    let events = events_of(&agent, "usage-thread", "x").await;
    let policy = ExposurePolicy {
        include_usage: true,
        ..Default::default()
    };
    let rec = Recorder::new(store, "t", "", policy);
    rec.record(&events).await.unwrap();
    let stored = rec.since("usage-thread", None, 1000, &policy).await.unwrap();
    assert_eq!(stored.len(), events.len());
    let text = serde_json::to_string(&stored.iter().map(|r| &r.json).collect::<Vec<_>>()).unwrap();
    assert!(
        !text.contains("[redacted]"),
        "nothing in this run is a secret, yet the log redacted: {text}"
    );
    for r in &stored {
        assert_eq!(r.json["meta"]["thread_key"], "usage-thread", "{}", r.json);
    }
    let done = stored.iter().find(|r| r.kind == "done").unwrap();
    assert_eq!(done.json["result"]["usage"]["input_tokens"], 11, "{}", done.json);
    let Payload::Done(d) = done.replay().expect("the stored done replays").payload else {
        unreachable!()
    };
    let usage = d.outcome.expect("success").usage.expect("usage observed");
    assert_eq!((usage.input_tokens, usage.output_tokens), (11, 22));
}

/// Generators for the round-trip property: the JSON of every event type, with strings that are never
/// credential-shaped and keys that are never secret names, so redaction must change nothing.
mod arb {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    /// Plain text: no `r`, `-` or `_`, so it can spell neither `bearer` nor a key prefix.
    pub fn text() -> impl Strategy<Value = String> {
        "[a-q0-9 .]{0,12}"
    }

    fn word() -> impl Strategy<Value = String> {
        "[a-q]{1,8}".prop_filter("not a secret or env key", |k| {
            !agent_adaptor::recorder::redact::secret_key(k) && k != "env"
        })
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            text().prop_map(Value::String),
            any::<i32>().prop_map(|n| json!(n)),
            any::<bool>().prop_map(Value::Bool),
            Just(Value::Null),
        ]
    }

    pub fn map() -> impl Strategy<Value = Map<String, Value>> {
        let leaf = scalar();
        let value = leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map(word(), inner, 0..3)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        prop::collection::btree_map(word(), value, 0..3).prop_map(|m| m.into_iter().collect())
    }

    fn strings() -> impl Strategy<Value = Map<String, Value>> {
        prop::collection::btree_map(word(), text().prop_map(Value::String), 0..3)
            .prop_map(|m| m.into_iter().collect())
    }

    fn time() -> impl Strategy<Value = Value> {
        (1_600_000_000_000i64..1_900_000_000_000)
            .prop_map(|ms| json!(chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms).expect("a time")))
    }

    fn phase() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("content"), Just("start"), Just("end")]
    }

    fn usage() -> impl Strategy<Value = Value> {
        (any::<u32>(), any::<u32>(), any::<u32>(), -1000i64..1000).prop_map(|(i, o, c, cost)| {
            json!({"input_tokens": i, "output_tokens": o, "cached_input_tokens": c, "estimated_cost_milli": cost})
        })
    }

    fn opt<S: Strategy<Value = Value>>(s: S) -> impl Strategy<Value = Value> {
        prop_oneof![Just(Value::Null), s]
    }

    /// Inserts `v` under `k` unless it is JSON `null` (an absent optional field).
    fn put(obj: &mut Value, k: &str, v: Value) {
        if !v.is_null() {
            obj[k] = v;
        }
    }

    fn transcript_item() -> impl Strategy<Value = Value> {
        (text(), text(), opt(usage()), strings()).prop_map(|(t, session, usage, data)| {
            let mut v = json!({"kind": "assistant", "text": t, "session_id": session, "data": data});
            put(&mut v, "usage", usage);
            v
        })
    }

    fn result() -> impl Strategy<Value = Value> {
        (
            (any::<u16>(), text(), text(), text(), text(), opt(usage())),
            (
                prop::collection::btree_map(word(), text(), 0..3),
                text(),
                text(),
                prop::collection::vec(transcript_item(), 0..2),
                prop::collection::vec(text(), 0..2),
            ),
        )
            .prop_map(
                |((turns, model, provider, t, summary, usage), (metadata, stdout, stderr, transcript, services))| {
                    let services: Vec<Value> = services
                        .into_iter()
                        .map(|n| json!({"name": n, "state": "released", "origin": "manager"}))
                        .collect();
                    json!({
                        "turns": turns, "run_id": "run-1", "model": model, "provider": provider, "text": t,
                        "summary": summary, "usage": usage, "metadata": metadata,
                        "raw": {"stdout": stdout, "stderr": stderr, "terminal": {"event": "result", "json": {"ok": true}}},
                        "transcript": transcript, "services": services,
                    })
                },
            )
    }

    fn error() -> impl Strategy<Value = Value> {
        (text(), prop_oneof![Just("agent_error"), Just("cancelled")])
            .prop_map(|(message, reason)| json!({"code": "run_failed", "reason": reason, "message": message}))
    }

    fn payload() -> impl Strategy<Value = Value> {
        prop_oneof![
            (text(), text(), prop_oneof![Just("assistant"), Just("user")], phase()).prop_map(
                |(id, t, role, phase)| json!({"type": "text_delta", "message_id": id, "text": t, "role": role, "phase": phase})
            ),
            (text(), text(), phase()).prop_map(
                |(id, t, phase)| json!({"type": "thinking", "message_id": id, "text": t, "phase": phase})
            ),
            (text(), text(), map(), text(), map(), phase()).prop_map(|(id, name, args, delta, result, phase)| {
                json!({"type": "tool_call", "id": id, "name": name, "args": args, "args_delta": delta, "result": result, "phase": phase})
            }),
            (text(), map()).prop_map(|(id, result)| json!({"type": "tool_result", "id": id, "result": result})),
            text().prop_map(|t| json!({"type": "run_started", "run_id": "run-1", "thread_id": t})),
            (opt(usage()), any::<bool>(), text()).prop_map(|(usage, failed, message)| {
                let mut v = json!({"type": "run_finished", "run_id": "run-1", "thread_id": "t", "failed": failed, "message": message});
                put(&mut v, "usage", usage);
                v
            }),
            (text(), prop_oneof![Just("accepted"), Just("delivered"), Just("failed")], any::<u16>(), text())
                .prop_map(|(id, state, turn, t)| {
                    json!({"type": "message_update", "id": id, "state": state, "turn": turn, "boundary": "turn", "reason": "timeout", "text": t})
                }),
            (any::<u16>(), opt(result()), opt(error()), prop::collection::vec(text(), 0..2)).prop_map(
                |(turn, result, error, ids)| {
                    let mut v = json!({"type": "turn_end", "turn": turn, "message_ids": ids});
                    put(&mut v, "result", result);
                    put(&mut v, "error", error);
                    v
                }
            ),
            prop_oneof![
                result().prop_map(|r| json!({"type": "done", "result": r})),
                error().prop_map(|e| json!({"type": "done", "error": e})),
            ],
            (prop_oneof![Just("spawn"), Just("stdout"), Just("stderr")], text(), prop::collection::btree_map(word(), text(), 0..3), strings())
                .prop_map(|(kind, t, metadata, data)| {
                    json!({"type": "process_info", "kind": kind, "text": t, "metadata": metadata, "data": data})
                }),
            (text(), text(), opt(transcript_item()), prop::collection::btree_map(word(), text(), 0..3), map())
                .prop_map(|(kind, t, item, metadata, data)| {
                    let mut v = json!({"type": "notice", "kind": kind, "text": t, "metadata": metadata, "data": data});
                    put(&mut v, "item", item);
                    v
                }),
            (any::<u32>(), prop::collection::btree_map(word(), any::<u32>(), 0..3), text(), map()).prop_map(
                |(count, by_kind, reason, details)| {
                    json!({"type": "dropped", "count": count, "by_kind": by_kind, "first_sequence": 1, "last_sequence": 9, "reason": reason, "details": details})
                }
            ),
            (text(), prop_oneof![Just("permission"), Just("plan_review"), Just("question")], text(), map(), time(), opt(time()), any::<u8>())
                .prop_map(|(id, kind, title, details, created, deadline, attempt)| {
                    let mut v = json!({
                        "type": "approval_request", "id": id, "run_id": "run-1", "kind": kind, "title": title,
                        "source": "reference", "tool_call_id": "c1",
                        "choices": [{"key": "a", "label": "A"}], "details": details, "created_at": created,
                        "attempt": attempt,
                    });
                    put(&mut v, "deadline", deadline);
                    v
                }),
            (text(), prop_oneof![Just("started"), Just("delta"), Just("message"), Just("state"), Just("finished")], text(), map())
                .prop_map(|(task, kind, delta, data)| {
                    json!({"type": "subagent_update", "task": task, "kind": kind, "delta": delta, "data": data})
                }),
        ]
    }

    /// One event's JSON: the envelope (with a thread key) and a payload of any type.
    pub fn event() -> impl Strategy<Value = Value> {
        (1u64..1_000_000, time(), "[a-q0-9]{1,10}", payload()).prop_map(|(seq, time, key, mut payload)| {
            payload["meta"] = json!({
                "run_id": "run-1", "thread_key": key, "sequence": seq, "time": time, "turn_id": "1",
            });
            payload
        })
    }
}

/// Every exposure flag combination (2^6).
fn every_policy() -> Vec<ExposurePolicy> {
    (0u8..64)
        .map(|bits| ExposurePolicy {
            include_metadata: bits & 1 != 0,
            include_usage: bits & 2 != 0,
            include_raw_streams: bits & 4 != 0,
            include_provider_result: bits & 8 != 0,
            include_transcript: bits & 16 != 0,
            include_services: bits & 32 != 0,
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(64))]

    /// Every event type, recorded under every exposure flag combination, replays into an equal event:
    /// the record decodes, and exposing the replayed event again gives the same record. Under every
    /// flag nothing that is not a secret is lost (the full exposure replays into the original event).
    #[test]
    fn every_event_type_round_trips_under_every_exposure(json in arb::event()) {
        let event: Event = serde_json::from_value(json.clone())
            .unwrap_or_else(|e| panic!("the generated event decodes ({e}): {json}"));
        let original = serde_json::to_value(&event).unwrap();
        for policy in every_policy() {
            let record = expose(&event, &policy);
            let replayed: Event = serde_json::from_value(record.clone())
                .unwrap_or_else(|e| panic!("{policy:?}: the record replays ({e}): {record}"));
            proptest::prop_assert_eq!(&expose(&replayed, &policy), &record, "{:?}", policy);
            proptest::prop_assert_eq!(&replayed.meta, &event.meta);
        }
        let full = expose(&event, &ExposurePolicy::all());
        let replayed: Event = serde_json::from_value(full).unwrap();
        proptest::prop_assert_eq!(serde_json::to_value(&replayed).unwrap(), original);
    }
}
