//! `GET /v1/agents/{agent}/inspect`: the reference driver's report (environment, models, config schema),
//! a probe the driver does not offer reported as `unavailable`, and typed refusals.

use super::{error_code, get, get_json, start};

#[tokio::test]
async fn inspect_reports_the_drivers_probes_and_names_the_ones_that_did_not_answer() {
    let server = start().await;
    let base = server.url();
    let report = get_json(&base, "/v1/agents/reference/inspect").await;
    assert_eq!(report["agent"], "reference");
    assert_eq!(report["provider"], "reference");
    assert_eq!(report["environment"]["healthy"], true, "{report}");
    assert_eq!(report["environment"]["checks"][0]["code"], "in_memory");
    assert_eq!(report["models"][0]["id"], "reference-1");
    assert_eq!(report["models"][0]["default"], true);
    assert_eq!(report["config_schema"]["fields"][0]["name"], "model");
    // The reference driver takes no skills: the skills probe says so.
    assert_eq!(report["skills"]["supported"], false, "{report}");
    // No quota probe and no profile family: null, and named in `errors`.
    assert!(report["quota"].is_null());
    assert!(report["profile"].is_null());
    let errors = report["errors"].as_array().unwrap();
    let named: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e["probe"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(named, [("quota", "unavailable"), ("profile", "unavailable")]);
    // Typed refusals.
    let (status, code, _) = error_code(get(&base, "/v1/agents/nope/inspect").await).await;
    assert_eq!((status, code.as_str()), (404, "not_found"));
    for bad in ["0", "60001", "soon"] {
        let resp = get(&base, &format!("/v1/agents/reference/inspect?timeout_ms={bad}")).await;
        let status = resp.status().as_u16();
        assert!(matches!(status, 400 | 422), "timeout_ms={bad}: {status}");
    }
    let (status, _, body) = error_code(get(&base, "/v1/agents/reference/inspect?timeout_ms=0").await).await;
    assert_eq!(
        (status, body["error"]["field"].as_str()),
        (422, Some("timeout_ms"))
    );
    let quick = get_json(&base, "/v1/agents/reference/inspect?timeout_ms=5000").await;
    assert_eq!(quick["models"], report["models"]);
    server.shutdown().await.unwrap();
}
