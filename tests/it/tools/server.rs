//! The hosted MCP server spoken to directly: initialize, list, call; a wrong or missing token is 401;
//! a foreign Host or any Origin is refused; a rejection reaches the model, an internal error or a panic
//! only as a sanitized sentence; shutdown stops the listener.

use std::time::Duration;

use agent_adaptor::tools::HostedTools;
use serde_json::{Value, json};

use super::weather;

/// A minimal streamable-HTTP MCP client (JSON or SSE answers).
struct Client {
    http: reqwest::Client,
    url: String,
    auth: String,
    session: Option<String>,
    next: u64,
}

impl Client {
    fn new(h: &HostedTools, token: &str) -> Client {
        Client {
            http: reqwest::Client::new(),
            url: h.url(),
            auth: format!("Bearer {token}"),
            session: None,
            next: 1,
        }
    }

    async fn post(&mut self, body: Value) -> reqwest::Response {
        let mut req = self
            .http
            .post(&self.url)
            .header("authorization", &self.auth)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .json(&body);
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        req.send().await.unwrap()
    }

    /// Sends a request and returns its JSON-RPC response.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let resp = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        assert_eq!(resp.status(), 200, "{method}");
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = Some(s.to_str().unwrap().to_owned());
        }
        let text = resp.text().await.unwrap();
        let msgs: Vec<Value> = if text.trim_start().starts_with('{') {
            vec![serde_json::from_str(&text).unwrap()]
        } else {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect()
        };
        msgs.into_iter()
            .find(|m| m["id"] == json!(id))
            .unwrap_or_else(|| panic!("no response to {method}: {text}"))
    }

    async fn initialize(&mut self) {
        let r = self
            .call(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "it", "version": "0"}}),
            )
            .await;
        assert_eq!(r["result"]["serverInfo"]["name"], "agent_adaptor_tools", "{r}");
        let n = self
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(n.status().is_success(), "{}", n.status());
    }
}

#[tokio::test]
async fn lists_and_calls_with_schemas_hints_and_sanitized_errors() {
    let h = HostedTools::start(vec![weather()]).await.unwrap();
    assert_eq!(h.addr().ip().to_string(), "127.0.0.1");
    let mut c = Client::new(&h, h.token());
    c.initialize().await;

    let list = c.call("tools/list", json!({})).await;
    let tools = list["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    let t = &tools[0];
    assert_eq!(t["name"], "weather");
    assert_eq!(t["inputSchema"]["properties"]["city"]["type"], "string");
    assert_eq!(t["outputSchema"]["properties"]["celsius"]["type"], "integer");
    assert_eq!(t["annotations"]["readOnlyHint"], true);
    assert_eq!(t["annotations"]["idempotentHint"], true);

    let ok = c
        .call(
            "tools/call",
            json!({"name": "weather", "arguments": {"city": "Paris"}}),
        )
        .await;
    assert_eq!(ok["result"]["structuredContent"]["celsius"], 21, "{ok}");
    assert_ne!(ok["result"]["isError"], true);

    let rejected = c
        .call(
            "tools/call",
            json!({"name": "weather", "arguments": {"city": "Atlantis"}}),
        )
        .await;
    assert_eq!(rejected["result"]["isError"], true);
    assert_eq!(
        rejected["result"]["content"][0]["text"],
        "not_found: Atlantis is not on any map"
    );

    for city in ["Mordor", "Panic"] {
        let failed = c
            .call(
                "tools/call",
                json!({"name": "weather", "arguments": {"city": city}}),
            )
            .await;
        assert_eq!(failed["result"]["isError"], true);
        let text = failed["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.starts_with("internal_error"), "{text}");
        assert!(!text.contains("hunter2") && !text.contains("secret"), "{text}");
    }

    let bad_args = c
        .call("tools/call", json!({"name": "weather", "arguments": {"town": 3}}))
        .await;
    assert!(
        bad_args["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .starts_with("invalid_arguments")
            || bad_args.get("error").is_some(),
        "{bad_args}"
    );
    h.shutdown().await.expect("a clean shutdown");
}

#[tokio::test]
async fn a_wrong_or_missing_token_is_401_and_foreign_hosts_or_origins_are_refused() {
    let h = HostedTools::start(vec![weather()]).await.unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "0"}}});
    let http = reqwest::Client::new();
    let send = |auth: Option<String>, host: Option<&'static str>, origin: Option<&'static str>| {
        let mut r = http
            .post(h.url())
            .header("accept", "application/json, text/event-stream")
            .json(&init);
        if let Some(a) = auth {
            r = r.header("authorization", a);
        }
        if let Some(x) = host {
            r = r.header("host", x);
        }
        if let Some(o) = origin {
            r = r.header("origin", o);
        }
        r.send()
    };
    let good = format!("Bearer {}", h.token());
    let wrong = send(Some("Bearer not-the-token".into()), None, None)
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    assert_eq!(wrong.headers()["www-authenticate"], "Bearer");
    assert_eq!(send(None, None, None).await.unwrap().status(), 401);
    let other_agent = HostedTools::start(vec![weather()]).await.unwrap();
    let foreign = send(Some(format!("Bearer {}", other_agent.token())), None, None)
        .await
        .unwrap();
    assert_eq!(foreign.status(), 401, "another Agent's token is refused");
    let rebound = send(Some(good.clone()), Some("evil.example:80"), None)
        .await
        .unwrap();
    assert_eq!(rebound.status(), 403);
    let browser = send(Some(good.clone()), None, Some("http://127.0.0.1:3000"))
        .await
        .unwrap();
    assert_eq!(browser.status(), 403);
    let fine = send(Some(good), None, None).await.unwrap();
    assert_eq!(fine.status(), 200, "the control request is accepted");

    assert_ne!(h.token(), other_agent.token());
    assert_ne!(h.token_env(), other_agent.token_env());
    assert!(h.token_env().starts_with(agent_adaptor::tools::TOKEN_ENV_PREFIX));
    let decl = serde_json::to_string(&h.declaration()).unwrap();
    assert!(
        !decl.contains(h.token()),
        "the declaration names the variable, never the token"
    );
    assert!(decl.contains(h.token_env()));

    tokio::time::timeout(Duration::from_secs(5), h.shutdown())
        .await
        .unwrap()
        .expect("a clean shutdown");
    let after = http.post(h.url()).json(&init).send().await;
    assert!(after.is_err(), "the listener is closed after shutdown");
}

#[tokio::test]
async fn invalid_and_duplicate_tools_are_refused_before_binding() {
    let dup = HostedTools::bind(vec![weather(), weather()]).unwrap_err();
    assert!(dup.to_string().contains("duplicate"), "{dup}");
    let bad = HostedTools::bind(vec![weather().input_schema_json(json!({"type": "array"}))]).unwrap_err();
    assert!(bad.to_string().contains("input schema"), "{bad}");
}
