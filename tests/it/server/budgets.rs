//! Budgets through the real router with the reference agent's scripted usage (`usage:<n>` streams a
//! turn's usage mid-turn): a `limit.approaching` notice at 80 %, a running run that crosses its budget
//! stopped at that event with the typed failure (`limit_exceeded`, `details.code = "budget_exceeded"`)
//! and its partial result and usage kept, and a new run that cannot fit refused with 402
//! `budget_exceeded` — per tenant in tokens, per thread, per agent in cost; on memory and SQLite; and the
//! real Claude CLI stopped by the usage the mock model streams, its process reaped.

use agent_adaptor::server::ServerConfig;
use agent_adaptor::server::budget::{BudgetPeriod, BudgetScope, BudgetSpec};
use serde_json::{Value, json};

use super::usage::priced;
use super::{all_frames, error_code, finished_state, get, post_json, run_id, start_run, start_with};

fn budget(per: BudgetScope, max_tokens: Option<u64>, max_cost_usd: Option<f64>) -> BudgetSpec {
    BudgetSpec {
        per,
        tenant: None,
        agent: None,
        period: BudgetPeriod::Day,
        max_tokens,
        max_cost_usd,
    }
}

/// The notices of a finished run's events.
async fn notices(base: &str, id: &str) -> Vec<Value> {
    all_frames(get(base, &format!("/v1/runs/{id}/events")).await)
        .await
        .iter()
        .filter(|f| f.event.as_deref() == Some("notice"))
        .map(|f| f.json())
        .collect()
}

fn budget_notices(notices: &[Value]) -> Vec<&Value> {
    notices
        .iter()
        .filter(|n| n["kind"] == "limit.approaching" && n["data"]["limit"] == "budget")
        .collect()
}

async fn run_to_end(base: &str, path: &str, prompt: &str) -> Value {
    let run = start_run(base, path, json!({ "prompt": prompt })).await;
    finished_state(base, &run_id(&run)).await
}

/// Asserts `run` was stopped by a budget, with its partial result and usage kept.
fn assert_stopped(run: &Value, input_tokens: u64) {
    assert_eq!(run["state"], "failed", "{run}");
    assert_eq!(run["error"]["reason"], "limit_exceeded", "{run}");
    assert_eq!(run["error"]["details"]["code"], "budget_exceeded", "{run}");
    assert!(
        run["result"]["text"].is_string(),
        "the partial result is kept: {run}"
    );
    assert_eq!(run["result"]["usage"]["input_tokens"], input_tokens, "{run}");
    // Stopped at the usage event, not after the slow answer.
    let text = run["result"]["text"].as_str().unwrap_or_default();
    assert!(!text.ends_with("slow"), "the answer was cut short: {text:?}");
}

async fn tenant_budget_walk(base: &str) {
    let stateless = "/v1/agents/reference/runs";
    // 850 + 34 of 1000 tokens: warned once at 85 %, and it finishes.
    let first = run_to_end(base, stateless, "first usage:850 slow").await;
    assert_eq!(first["state"], "succeeded", "{first}");
    let all = notices(base, &run_id(&first)).await;
    // The streamed usage notice keeps its counts only where the exposure policy lets usage go.
    let streamed = all.iter().find(|n| n["kind"] == "usage").expect("a usage notice");
    assert!(streamed.get("data").is_none(), "{streamed}");
    let warned = budget_notices(&all);
    assert_eq!(
        warned.len(),
        1,
        "{warned:?} of {:?}",
        notices(base, &run_id(&first)).await
    );
    assert_eq!(warned[0]["data"]["code"], "budget_approaching", "{warned:?}");
    assert_eq!(warned[0]["data"]["max_tokens"], 1000, "{warned:?}");

    // 884 spent: it starts, and is stopped when it streams 200 more.
    let second = run_to_end(base, stateless, "second usage:200 slow").await;
    assert_stopped(&second, 200);
    assert_eq!(second["error"]["details"]["max_tokens"], 1000, "{second}");

    // Spent: every new run of the tenant is refused before it starts, stateless or on a thread.
    for path in [stateless, "/v1/agents/reference/threads/t/runs"] {
        let resp = post_json(base, path, json!({"prompt": "third"})).await;
        let (status, code, body) = error_code(resp).await;
        assert_eq!((status, code.as_str()), (402, "budget_exceeded"), "{body}");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("1000 tokens"),
            "{body}"
        );
    }
    // AG-UI too, before any stream starts.
    let input = json!({
        "threadId": "ag", "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": "third"}],
    });
    let (status, code, body) = error_code(post_json(base, "/v1/agents/reference/agui", input).await).await;
    assert_eq!((status, code.as_str()), (402, "budget_exceeded"), "{body}");
}

#[tokio::test]
async fn a_tenant_budget_warns_stops_the_crossing_run_and_refuses_new_runs_on_memory() {
    let mut config = ServerConfig::for_tests();
    config.budgets = vec![budget(BudgetScope::Tenant, Some(1000), None)];
    let server = start_with(config).await;
    tenant_budget_walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_tenant_budget_warns_stops_the_crossing_run_and_refuses_new_runs_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::for_tests();
    config.store_url = format!("sqlite://{}", dir.path().join("s.db").display());
    config.budgets = vec![budget(BudgetScope::Tenant, Some(1000), None)];
    let server = start_with(config).await;
    tenant_budget_walk(&server.url()).await;
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_thread_budget_counts_only_its_thread() {
    let mut config = ServerConfig::for_tests();
    config.budgets = vec![budget(BudgetScope::Thread, Some(100), None)];
    let server = start_with(config).await;
    let base = server.url();
    let t1 = "/v1/agents/reference/threads/t1/runs";
    let stopped = run_to_end(&base, t1, "big usage:150 slow").await;
    assert_stopped(&stopped, 150);
    let (status, code, _) = error_code(post_json(&base, t1, json!({"prompt": "again"})).await).await;
    assert_eq!((status, code.as_str()), (402, "budget_exceeded"));
    // Another thread, and a run without a thread, are not counted against t1.
    let other = run_to_end(&base, "/v1/agents/reference/threads/t2/runs", "small").await;
    assert_eq!(other["state"], "succeeded", "{other}");
    let free = run_to_end(&base, "/v1/agents/reference/runs", "big usage:150").await;
    assert_eq!(free["state"], "succeeded", "{free}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_cost_budget_stops_a_run_by_its_estimated_cost() {
    // $2 / $10 per million tokens: 600 input tokens are $0.0012, over a $0.001 budget.
    let mut config = priced(ServerConfig::for_tests());
    config.budgets = vec![budget(BudgetScope::Agent, None, Some(0.001))];
    let server = start_with(config).await;
    let base = server.url();
    let path = "/v1/agents/reference/runs";
    let stopped = run_to_end(&base, path, "pricey usage:600 slow").await;
    assert_stopped(&stopped, 600);
    assert_eq!(stopped["error"]["details"]["max_cost_usd"], 0.001, "{stopped}");
    assert!(
        stopped["result"]["usage"]["cost_usd"]
            .as_f64()
            .is_some_and(|c| c >= 0.0012),
        "{stopped}"
    );
    let (status, code, _) = error_code(post_json(&base, path, json!({"prompt": "more"})).await).await;
    assert_eq!((status, code.as_str()), (402, "budget_exceeded"));
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_real_claude_run_crossing_its_budget_is_stopped_mid_answer_and_its_cli_reaped() {
    use agent_adaptor::testkit::mock::anthropic::{Block, Reply, Script, Usage};
    // A slow answer whose `message_start` already reports 5000 input tokens, over a 1000-token budget.
    let script = Script::from_fn(|_| {
        Reply::blocks(vec![Block::text_chunks(vec!["word "; 60])])
            .usage(Usage {
                input_tokens: 5000,
                ..Usage::default()
            })
            .slow(std::time::Duration::from_millis(100))
    });
    let Some(cl) = crate::claude_driver::Cl::scripted(script, |_| {}).await else {
        return;
    };
    let mut config = ServerConfig::for_tests();
    config.agents = vec![super::resources::claude_spec(&cl, json!({}))];
    config.budgets = vec![budget(BudgetScope::Tenant, Some(1000), None)];
    let server = start_with(config).await;
    let base = server.url();
    let run = super::resources::claude_run(&base, "tell me a long story").await;
    assert_stopped(&run, 5000);
    let text = run["result"]["text"].as_str().unwrap();
    assert!(
        text.len() < "word ".len() * 60,
        "stopped before the answer ended: {text:?}"
    );
    assert!(
        run["result"]["usage"]["cpu_seconds"]
            .as_f64()
            .is_some_and(|s| s > 0.0),
        "the CLI's CPU time is metered: {run}"
    );
    let reaped = crate::process::eventually(std::time::Duration::from_secs(10), || {
        super::inspect_cli::claude_children().is_empty()
    })
    .await;
    assert!(reaped, "no CLI left: {:?}", super::inspect_cli::claude_children());
    let resp = post_json(&base, "/v1/agents/claude/runs", json!({"prompt": "again"})).await;
    let (status, code, _) = error_code(resp).await;
    assert_eq!((status, code.as_str()), (402, "budget_exceeded"));
    server.shutdown().await.unwrap();
}
