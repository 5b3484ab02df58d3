//! `201 Created` answers carry `Location`, the created resource's path (percent-encoded segments), which
//! answers `GET` with the same resource; and the OpenAPI document declares the header on those answers.

use serde_json::{Value, json};

use super::{client, post_json, start};

/// The `Location` of a 201 answer to `POST path` with `body`, and the answer's JSON.
async fn created(base: &str, path: &str, body: Value) -> (String, Value) {
    let resp = post_json(base, path, body).await;
    assert_eq!(resp.status(), 201, "POST {path}");
    let location = resp
        .headers()
        .get("location")
        .unwrap_or_else(|| panic!("POST {path}: 201 without Location"))
        .to_str()
        .unwrap()
        .to_owned();
    (location, resp.json().await.unwrap())
}

/// `GET base + location` as JSON (200 expected).
async fn follow(base: &str, location: &str) -> Value {
    let resp = client().get(format!("{base}{location}")).send().await.unwrap();
    assert_eq!(resp.status(), 200, "GET {location}");
    resp.json().await.unwrap()
}

#[tokio::test]
async fn location_201_answers_name_the_created_resource() {
    let server = start().await;
    let base = server.url();

    let (loc, run) = created(&base, "/v1/agents/reference/runs", json!({"prompt": "hi"})).await;
    assert_eq!(loc, format!("/v1/runs/{}", run["run_id"].as_str().unwrap()));
    assert_eq!(follow(&base, &loc).await["run_id"], run["run_id"]);

    // A key that needs encoding: the Location still names exactly that thread.
    let key = "loc key/é?";
    let (loc, thread) = created(&base, "/v1/agents/reference/threads", json!({"key": key})).await;
    assert_eq!(loc, "/v1/agents/reference/threads/loc%20key%2F%C3%A9%3F");
    assert_eq!(thread["key"], key);
    assert_eq!(follow(&base, &loc).await["key"], key);
    // Declaring it again with the same defaults is 200, not a creation: no Location.
    let again = post_json(&base, "/v1/agents/reference/threads", json!({"key": key})).await;
    assert_eq!(again.status(), 200);
    assert!(again.headers().get("location").is_none());

    let (loc, run) = created(
        &base,
        "/v1/agents/reference/threads/loc-parent/runs",
        json!({"prompt": "hi"}),
    )
    .await;
    assert_eq!(follow(&base, &loc).await["run_id"], run["run_id"]);
    super::finished_state(&base, run["run_id"].as_str().unwrap()).await;
    let (loc, fork) = created(
        &base,
        "/v1/agents/reference/threads/loc-parent/fork",
        json!({"key": "loc-child"}),
    )
    .await;
    assert_eq!(loc, "/v1/agents/reference/threads/loc-child");
    assert_eq!(follow(&base, &loc).await["key"], fork["key"]);
    server.shutdown().await.unwrap();
}

#[test]
fn location_is_documented_on_the_201_answers() {
    let doc = serde_json::to_value(agent_adaptor::server::openapi::document()).unwrap();
    for path in [
        "/v1/agents/{agent}/runs",
        "/v1/agents/{agent}/threads/{key}/runs",
        "/v1/agents/{agent}/threads",
        "/v1/agents/{agent}/threads/{key}/fork",
    ] {
        let created = &doc["paths"][path]["post"]["responses"]["201"];
        assert!(
            created["headers"]["Location"]["schema"].is_object(),
            "POST {path}: 201 declares no Location header: {created}"
        );
    }
}
