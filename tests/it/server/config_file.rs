//! The TOML configuration file: the committed example parses and applies (so it cannot rot), unknown
//! keys are errors naming the key, keys come from the file or the environment, and `serve --config`
//! serves what the file says with flags overriding it.

use std::io::BufReader;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_adaptor::server::budget::{BudgetPeriod, BudgetScope};
use agent_adaptor::server::{BusyPolicy, ConfigError, FileConfig, LogFormat, Server, ServerConfig};

use super::client;

fn example() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/serve.toml")
}

fn parse(text: &str) -> Result<FileConfig, ConfigError> {
    FileConfig::parse(text, Path::new("test.toml"))
}

#[test]
fn config_file_the_committed_example_parses_and_applies() {
    let file = FileConfig::load(&example()).expect("examples/serve.toml parses");
    let env = |var: &str| match var {
        "ACME_API_KEY" => Some("acme-key-from-the-environment".to_owned()),
        "OPS_API_KEY" => Some("ops-key-from-the-environment".to_owned()),
        _ => None,
    };
    let config = file.apply(ServerConfig::default(), env).expect("and applies");
    assert_eq!(config.bind.to_string(), "0.0.0.0:8080");
    assert!(config.store_url.starts_with("sqlite://"));
    assert!(!config.discover_clis);
    assert_eq!(config.cors_origins, vec!["https://app.example.com".to_owned()]);
    assert_eq!(config.busy_policy, BusyPolicy::Refuse);
    assert_eq!(config.approval_timeout, Duration::from_secs(300));
    assert_eq!(config.keep_alive, Duration::from_secs(15));
    let agents: Vec<_> = config
        .agents
        .iter()
        .map(|a| (a.name.as_str(), a.provider.as_str()))
        .collect();
    assert_eq!(agents, [("reference", "reference"), ("claude", "claude")]);
    assert!(config.agents[1].exposure.include_usage);
    assert_eq!(config.agents[0].config["chunk_delay_ms"], 20);
    assert_eq!(config.limits.max_concurrent_runs, Some(8));
    assert_eq!(config.limits.burst, Some(40));
    let tenants: Vec<_> = config
        .tenants
        .iter()
        .map(|t| (t.name.as_str(), t.keys.len()))
        .collect();
    assert_eq!(tenants, [("acme", 1), ("globex", 1), ("ops", 1)]);
    assert_eq!(config.tenants[1].limits.max_concurrent_runs, Some(2));
    assert!(config.tenants[2].admin && !config.tenants[0].admin);
    assert_eq!(config.prices.len(), 1);
    assert_eq!(config.prices[0].model.as_deref(), Some("claude-sonnet-*"));
    assert_eq!(config.prices[0].cached_input_per_mtok, Some(0.3));
    let budgets: Vec<_> = config
        .budgets
        .iter()
        .map(|b| (b.per, b.period, b.max_tokens, b.max_cost_usd))
        .collect();
    assert_eq!(
        budgets,
        [
            (BudgetScope::Tenant, BudgetPeriod::Month, None, Some(50.0)),
            (BudgetScope::Thread, BudgetPeriod::Day, Some(2_000_000), None),
        ]
    );
    assert_eq!(config.retention.max_age, Some(Duration::from_secs(30 * 86_400)));
    assert_eq!(config.retention.max_events_per_tenant, Some(1_000_000));
    assert_eq!(config.retention.interval, Duration::from_secs(3600));
    assert_eq!(config.log_format, LogFormat::Json);
    assert_eq!(config.record_backlog, 8192);
    assert_eq!(config.live_window, 2048);
    assert_eq!(config.ip_limits.requests_per_second, Some(5.0));
    assert_eq!(config.ip_limits.burst, Some(20));
    assert_eq!(config.ip_limits.max_clients, Some(10_000));

    // Without the environment variable the file is refused, naming it.
    let err = FileConfig::load(&example())
        .unwrap()
        .apply(ServerConfig::default(), |_| None)
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::MissingKeyEnv { var, .. } if var == "ACME_API_KEY"),
        "{err}"
    );
}

#[test]
fn config_file_unknown_keys_and_bad_values_are_errors_that_name_them() {
    let cases = [
        ("bnd = \"127.0.0.1:1\"", "bnd"),
        ("[limits]\nmax_runs = 3", "max_runs"),
        ("[[tenants]]\nname = \"a\"\nkey = \"x\"", "key"),
        ("[retention]\nmax_age_days = 3", "max_age_days"),
        (
            "[[agents]]\nname = \"r\"\nprovider = \"reference\"\nexposure = { include_usag = true }",
            "include_usag",
        ),
        (
            "[[agents]]\nname = \"r\"\nprovider = \"reference\"\nmodel = \"x\"",
            "model",
        ),
        ("approval_timeout = \"5 minutes\"", "unit"),
        ("approval_timeout = 300", "string"),
        ("busy_policy = \"queue\"", "queue"),
        ("bind = \"localhost\"", "bind"),
        ("[[budgets]]\nmax_tokens = 1\nper = \"planet\"", "planet"),
        ("[[prices]]\ninput_per_mtok = 1.0", "output_per_mtok"),
    ];
    for (text, needle) in cases {
        let err = parse(text).expect_err(text).to_string();
        assert!(err.contains(needle), "{text:?}: {err}");
        assert!(err.starts_with("test.toml:"), "the error names the file: {err}");
    }
    let short = parse("[[tenants]]\nname = \"a\"\nkeys = [\"short\"]").unwrap();
    let err = short.apply(ServerConfig::default(), |_| None).unwrap_err();
    assert!(err.to_string().contains("at least 16 bytes"), "{err}");
    let dup = parse(
        "[[tenants]]\nname = \"a\"\nkeys = [\"same-key-0123456789\"]\n\
         [[tenants]]\nname = \"b\"\nkeys = [\"same-key-0123456789\"]",
    )
    .unwrap();
    assert!(dup.apply(ServerConfig::default(), |_| None).is_err());
    let rate = parse("[limits]\nrequests_per_second = -1.0").unwrap();
    let err = rate.apply(ServerConfig::default(), |_| None).unwrap_err();
    assert!(err.to_string().contains("requests_per_second"), "{err}");
    let interval = parse("[retention]\ninterval = \"0s\"").unwrap();
    assert!(interval.apply(ServerConfig::default(), |_| None).is_err());
    for (text, needle) in [
        ("[[budgets]]\nper = \"tenant\"", "budgets[0]"),
        ("[[budgets]]\nmax_cost_usd = -1.0", "max_cost_usd"),
        (
            "[[prices]]\ninput_per_mtok = -1.0\noutput_per_mtok = 1.0",
            "prices[0]",
        ),
    ] {
        let err = parse(text)
            .unwrap()
            .apply(ServerConfig::default(), |_| None)
            .unwrap_err();
        assert!(err.to_string().contains(needle), "{text:?}: {err}");
    }
    let backlog = parse("record_backlog = 0").unwrap();
    let err = backlog.apply(ServerConfig::default(), |_| None).unwrap_err();
    assert!(err.to_string().contains("record_backlog"), "{err}");
    assert!(matches!(
        FileConfig::load(Path::new("/nonexistent/serve.toml")),
        Err(ConfigError::Read { .. })
    ));
}

#[tokio::test]
async fn config_file_a_server_started_from_toml_requires_its_keys() {
    let text = r#"
        bind = "127.0.0.1:0"
        store = "memory"
        [[agents]]
        name = "echo"
        provider = "reference"
        config = { chunk_delay_ms = 0 }
        [[tenants]]
        name = "t1"
        keys = ["t1-key-0123456789abcdef"]
    "#;
    let config = parse(text)
        .unwrap()
        .apply(ServerConfig::for_tests(), |_| None)
        .unwrap();
    let server = Server::start(config).await.unwrap();
    let url = format!("{}/v1/agents", server.url());
    assert_eq!(client().get(&url).send().await.unwrap().status(), 401);
    let agents: serde_json::Value = client()
        .get(&url)
        .bearer_auth("t1-key-0123456789abcdef")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(agents["agents"][0]["name"], "echo");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn config_file_serve_reads_config_from_the_environment_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("serve.toml");
    std::fs::write(
        &path,
        r#"
        bind = "127.0.0.1:1"
        store = "memory"
        discover_clis = false
        [[tenants]]
        name = "cli"
        keys_env = ["CLI_TENANT_KEY"]
        "#,
    )
    .unwrap();
    // `--bind` overrides the file's (unusable) port 1.
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env("AGENT_ADAPTOR_CONFIG", &path)
        .env("CLI_TENANT_KEY", "cli-tenant-key-0123456789")
        .env_remove("AGENT_ADAPTOR_BIND")
        .env_remove("AGENT_ADAPTOR_STORE")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let url = super::listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    let anon = client().get(format!("{url}/v1/agents")).send().await.unwrap();
    let keyed = client()
        .get(format!("{url}/v1/agents"))
        .bearer_auth("cli-tenant-key-0123456789")
        .send()
        .await
        .unwrap();
    super::sigterm(&child);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(anon.status(), 401);
    assert_eq!(keyed.status(), 200);
    assert_eq!(status.code(), Some(0));

    // A bad file stops `serve` with exit code 2 and the file's error on stderr.
    std::fs::write(&path, "bnd = \"127.0.0.1:0\"\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bnd"), "{stderr}");
}

#[test]
fn config_file_durations_and_counts_out_of_range_are_errors_naming_the_key() {
    for (text, key) in [
        ("keep_alive = \"99999999999999d\"", "keep_alive"),
        ("keep_alive = \"2h\"", "keep_alive"),
        ("approval_timeout = \"99999999999999d\"", "approval_timeout"),
        ("approval_timeout = \"0ms\"", "approval_timeout"),
        ("shutdown_grace = \"400d\"", "shutdown_grace"),
        ("body_limit = 0", "body_limit"),
        ("body_limit = 9223372036854775807", "body_limit"),
        ("record_backlog = 9223372036854775807", "record_backlog"),
        ("[retention]\nmax_age = \"99999999999999d\"", "retention.max_age"),
        ("[retention]\ninterval = \"400d\"", "retention.interval"),
        (
            "[retention]\nmax_events_per_tenant = 0",
            "retention.max_events_per_tenant",
        ),
    ] {
        let file = parse(text).unwrap_or_else(|e| panic!("{text:?} parses: {e}"));
        match file.apply(ServerConfig::default(), |_| None) {
            Err(ConfigError::Invalid { field, message }) => {
                assert_eq!(field, key, "{text:?}: {message}");
            }
            other => panic!("{text:?} is refused naming {key}: {other:?}"),
        }
    }
    // The edges are accepted.
    let file = parse(
        "keep_alive = \"1h\"\napproval_timeout = \"7d\"\nshutdown_grace = \"0s\"\nbody_limit = 1073741824",
    )
    .unwrap();
    file.apply(ServerConfig::default(), |_| None)
        .expect("the edges apply");
}
