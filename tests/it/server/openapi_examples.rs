//! The document's examples: the main operations (start a run, follow its events, answer an approval,
//! send a message, cancel) carry request and response examples, and every JSON example validates
//! against the schema it illustrates (an SSE example is frames whose `data` is the event its `event:`
//! names), so a generator's sample code and mocks are real.

use serde_json::Value;

/// Validates `example` against `schema` (with the document's components); the errors.
fn invalid(doc: &Value, schema: &Value, example: &Value) -> Vec<String> {
    let mut root = schema.as_object().cloned().unwrap_or_default();
    root.insert("components".into(), doc["components"].clone());
    let validator = jsonschema::draft202012::new(&Value::Object(root)).expect("the schema compiles");
    validator.iter_errors(example).map(|e| e.to_string()).collect()
}

/// The problems of an SSE example: each frame has an `id:`, an `event:` and JSON `data:` of that type.
fn bad_frames(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for frame in text.split("\n\n").filter(|f| !f.trim().is_empty()) {
        let field = |name: &str| {
            frame
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name}: ")).map(str::to_owned))
        };
        let (Some(_), Some(event), Some(data)) = (field("id"), field("event"), field("data")) else {
            out.push(format!("frame without id/event/data: {frame:?}"));
            continue;
        };
        match serde_json::from_str::<Value>(&data) {
            Ok(v) if v["type"] == event.as_str() => {}
            other => out.push(format!("frame {event}: data is not a {event} event: {other:?}")),
        }
    }
    out
}

#[test]
fn openapi_examples_of_the_main_operations_exist_and_match_their_schemas() {
    let doc = serde_json::to_value(agent_adaptor::server::openapi::document()).unwrap();
    let mut problems = Vec::new();
    let mut examples = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let mut contents = Vec::new();
            if let Some(c) = op["requestBody"]["content"].as_object() {
                contents.extend(c.iter().map(|(m, c)| (format!("request {m}"), c)));
            }
            for (status, response) in op["responses"].as_object().into_iter().flatten() {
                if let Some(c) = response["content"].as_object() {
                    contents.extend(c.iter().map(|(m, c)| (format!("{status} {m}"), c)));
                }
            }
            for (what, content) in contents {
                let Some(example) = content.get("example") else {
                    continue;
                };
                examples += 1;
                let errors = if what.ends_with("text/event-stream") {
                    bad_frames(example.as_str().unwrap_or_default())
                } else {
                    invalid(&doc, &content["schema"], example)
                };
                if !errors.is_empty() {
                    problems.push(format!("{method} {path} {what}: {errors:?}"));
                }
            }
        }
    }
    for (method, path, request, status) in [
        ("post", "/v1/agents/{agent}/runs", true, "201"),
        ("post", "/v1/agents/{agent}/threads/{key}/runs", true, "201"),
        ("get", "/v1/runs/{run_id}/events", false, "200"),
        ("post", "/v1/runs/{run_id}/approvals/{id}", true, "200"),
        ("post", "/v1/runs/{run_id}/messages", true, "202"),
        ("post", "/v1/runs/{run_id}/cancel", false, "202"),
    ] {
        let op = &doc["paths"][path][method];
        if request && op["requestBody"]["content"]["application/json"]["example"].is_null() {
            problems.push(format!("{method} {path}: no request example"));
        }
        let has = op["responses"][status]["content"]
            .as_object()
            .is_some_and(|c| c.values().any(|c| c.get("example").is_some()));
        if !has {
            problems.push(format!("{method} {path}: no {status} example"));
        }
    }
    assert!(
        problems.is_empty(),
        "{examples} examples, problems:\n{}",
        problems.join("\n")
    );
}
