//! Fuzz target for the REST and AG-UI request bodies, through the real router of an in-process server
//! (reference agent, memory store): every `/v1` operation of the served OpenAPI document is called with
//! a mutated body (its documented example or a sample, changed at random JSON paths, sometimes
//! byte-damaged or sent with another content type) and random path segments, among them a live run
//! that waits for an approval and its approval id. Every answer must arrive (a handler that panics
//! drops the connection), be below 500, be a status the document lists for the operation, and, for an
//! error, carry the JSON error shape with a code.

use std::collections::BTreeMap;
use std::time::Duration;

use agent_adaptor::server::{Server, ServerConfig, openapi};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Value, json};

use super::{Damage, Mutation, damage, fuzz, json as arbitrary_json, mutate, mutations, vocabulary, word};
use crate::server::client;

/// One documented operation.
#[derive(Debug, Clone)]
struct Operation {
    method: reqwest::Method,
    path: String,
    statuses: Vec<u16>,
    body: Option<Value>,
}

/// A sample body for each operation that takes one (the document's example when it has one).
fn sample(path: &str, example: Option<&Value>) -> Value {
    if let Some(e) = example {
        return e.clone();
    }
    match path {
        p if p.ends_with("/agui") => json!({
            "threadId": "fz-agui", "runId": "r1",
            "messages": [
                {"id": "u1", "role": "user", "content": "hello"},
                {"id": "a1", "role": "assistant", "content": "ok",
                 "toolCalls": [{"id": "dec-1", "type": "function", "function": {"name": "dec.permission", "arguments": "{}"}}]},
                {"id": "t1", "role": "tool", "content": "{\"decision\":\"approve\"}", "toolCallId": "dec-1"}
            ],
            "tools": [], "context": [], "state": {},
            "forwardedProps": {"approvals": "interrupt"},
            "resume": [{"interruptId": "int-1", "status": "resolved", "payload": {"decision": "approve"}}],
            "protocolVersion": "1.0"
        }),
        p if p.ends_with("/threads") => json!({
            "key": "fz-declared", "model": "m",
            "metadata": {"a": "b"},
            "approvals": {"permission": "ask", "timeout": 1000, "on_timeout": "retry", "max_retries": 2}
        }),
        p if p.ends_with("/fork") => json!({"key": "fz-fork"}),
        p if p.ends_with("/messages") => json!({"id": "m1", "text": "more", "timing": "soon"}),
        _ => json!({}),
    }
}

/// The `/v1` operations of the document.
fn operations(doc: &Value) -> Vec<Operation> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !path.starts_with("/v1/") {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = method.to_uppercase().parse::<reqwest::Method>() else {
                continue;
            };
            let statuses = op["responses"]
                .as_object()
                .unwrap()
                .keys()
                .map(|s| s.parse().unwrap())
                .collect();
            let body = op
                .pointer("/requestBody/content/application~1json")
                .map(|c| sample(path, c.get("example")));
            out.push(Operation {
                method,
                path: path.clone(),
                statuses,
                body,
            });
        }
    }
    out
}

/// How one path parameter is filled.
#[derive(Debug, Clone)]
enum Param {
    /// The known value (the `reference` agent, the live run, its approval, a fixed key).
    Known,
    /// A word from the vocabulary.
    Word(String),
}

/// One request.
#[derive(Debug, Clone)]
struct Case {
    op: usize,
    params: Vec<Param>,
    mutations: Vec<Mutation>,
    damage: Option<Damage>,
    /// Replace the body with this arbitrary JSON.
    replace: Option<Value>,
    /// Send `text/plain` instead of `application/json`.
    plain: bool,
    /// Extra query parameters.
    query: Vec<(String, String)>,
}

fn cases(n_ops: usize, vocab: &[String]) -> BoxedStrategy<Case> {
    let param = prop_oneof![
        3 => Just(Param::Known),
        1 => word(vocab).prop_map(Param::Word),
    ];
    (
        0..n_ops,
        prop::collection::vec(param, 2),
        mutations(vocab),
        damage(),
        prop::option::weighted(0.1, arbitrary_json(vocab)),
        prop::bool::weighted(0.05),
        prop::collection::vec((word(vocab), word(vocab)), 0..2).prop_map(|q| {
            // Mostly none: a query string of an operation that takes none is a plain 400.
            q.into_iter().take(1).collect::<Vec<_>>()
        }),
    )
        .prop_map(|(op, params, mutations, damage, replace, plain, query)| Case {
            op,
            params,
            mutations,
            damage,
            replace,
            plain,
            query: if plain { Vec::new() } else { query },
        })
        .boxed()
}

/// Fills the path template: `{agent}`, `{key}`, `{run_id}` and `{id}` from the case's params.
fn url(base: &str, op: &Operation, case: &Case, known: &BTreeMap<&str, String>) -> reqwest::Url {
    let mut url = reqwest::Url::parse(base).unwrap();
    let mut params = case.params.iter().cycle();
    {
        let mut segs = url.path_segments_mut().unwrap();
        segs.clear();
        for seg in op.path.trim_start_matches('/').split('/') {
            match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                Some(name) => match params.next().unwrap() {
                    Param::Known => segs.push(known.get(name).map(String::as_str).unwrap_or("x")),
                    // An empty or dot segment would route to another operation (`/v1/runs//cancel`,
                    // `/v1/runs/./cancel`): NUL instead, an identifier no route accepts.
                    Param::Word(w) if matches!(w.as_str(), "" | "." | "..") => segs.push("\0"),
                    Param::Word(w) => segs.push(w),
                },
                None => segs.push(seg),
            };
        }
    }
    for (k, v) in &case.query {
        url.query_pairs_mut().append_pair(k, v);
    }
    url
}

/// The body bytes of a case.
fn body(op: &Operation, case: &Case) -> Option<Vec<u8>> {
    let sample = op.body.clone()?;
    let doc = case
        .replace
        .clone()
        .unwrap_or_else(|| mutate(sample, &case.mutations));
    let text = serde_json::to_string(&doc).unwrap();
    Some(super::mutate_line(&text, &[], &case.damage))
}

#[test]
fn fuzz_rest_and_agui_bodies_through_the_router() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = rt
        .block_on(Server::start(ServerConfig::for_tests()))
        .expect("starts");
    let base = server.url();
    let http = client();
    let doc = serde_json::to_value(openapi::document()).unwrap();
    let ops = operations(&doc);
    assert!(ops.len() >= 20, "the document lists the /v1 operations");
    let mut vocab = vocabulary([&doc]);
    vocab.extend(
        [
            "hello",
            "permission please",
            "plan",
            "question",
            "notice",
            "fail",
            "slow",
            "approve",
            "deny",
            "answer",
            "-1",
            "0",
            "soon",
            "interrupt",
            "after_turn",
            "reference",
            "fz-parked",
        ]
        .map(String::from),
    );

    // A run that waits for its approval, so the run and approval routes meet a live one.
    let (run, approval) = rt.block_on(async {
        let resp = http
            .post(format!("{base}/v1/agents/reference/threads/fz-parked/runs"))
            .json(&json!({"prompt": "permission please", "approvals": {"permission": "ask", "timeout": -1}}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 201);
        let run = resp.json::<Value>().await.unwrap()["run_id"]
            .as_str()
            .unwrap()
            .to_owned();
        for _ in 0..200 {
            let list: Value = http
                .get(format!("{base}/v1/runs/{run}/approvals?pending=true"))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            if let Some(id) = list["approvals"][0]["id"].as_str() {
                return (run, id.to_owned());
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("the run asked for its approval");
    });
    let known = BTreeMap::from([
        ("agent", "reference".to_owned()),
        ("key", "fz-parked".to_owned()),
        ("run_id", run),
        ("id", approval),
    ]);

    fuzz("rest", cases(ops.len(), &vocab), |case: Case| {
        let op = &ops[case.op];
        let url = url(&base, op, &case, &known);
        let mut req = http.request(op.method.clone(), url.clone());
        if let Some(bytes) = body(op, &case) {
            let ct = if case.plain {
                "text/plain"
            } else {
                "application/json"
            };
            req = req.header("content-type", ct).body(bytes);
        }
        let what = format!("{} {url}", op.method);
        let (status, text) = rt.block_on(async {
            let resp = tokio::time::timeout(Duration::from_secs(10), req.send())
                .await
                .map_err(|_| TestCaseError::fail(format!("{what}: no answer within 10 s")))?
                .map_err(|e| TestCaseError::fail(format!("{what}: the connection failed: {e}")))?;
            let status = resp.status().as_u16();
            // Streams (SSE) are not read: the status is the answer.
            let text = if status >= 400 {
                resp.text().await.unwrap_or_default()
            } else {
                String::new()
            };
            Ok::<_, TestCaseError>((status, text))
        })?;
        prop_assert!(status < 500, "{what}: {status} {text}");
        prop_assert!(
            op.statuses.contains(&status),
            "{what}: {status} is not documented (documented: {:?}): {text}",
            op.statuses
        );
        if status >= 400 {
            let body: Value = serde_json::from_str(&text).map_err(|e| {
                TestCaseError::fail(format!("{what}: {status} body is not JSON ({e}): {text}"))
            })?;
            prop_assert!(
                body["error"]["code"].as_str().is_some_and(|c| !c.is_empty()),
                "{what}: {status} without an error code: {text}"
            );
        }
        Ok(())
    });
    rt.block_on(async move {
        let _ = tokio::time::timeout(Duration::from_secs(15), server.shutdown()).await;
    });
}
