//! The README runs as written: its walkthrough block is pasted into `bash -euo pipefail` against a live
//! `serve` (the real binary, memory store), and every HTTP status it gets is the one the walkthrough
//! promises, in order. Also: an `approvals` policy that names no deadline keeps the service's
//! `approval_timeout` instead of the library's 30 s default.

use std::io::BufReader;
use std::process::{Command, Stdio};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use agent_adaptor::server::ServerConfig;

use super::{get_json, listening_url, serve_command, sigterm, start_run, start_with};

/// The fenced block after the `<!-- walkthrough` marker in README.md.
fn walkthrough() -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let at = readme
        .find("<!-- walkthrough")
        .expect("README.md has a walkthrough marker");
    let body = &readme[at..];
    let start = body.find("```sh\n").expect("a ```sh block follows the marker") + "```sh\n".len();
    let end = body[start..].find("```\n").expect("the block ends") + start;
    body[start..end].to_owned()
}

fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `https://host:port/v1/runs/run-…/approvals/apr-…?x` → `/v1/runs/{run}/approvals/{approval}?x`.
fn template(url: &str, base: &str) -> String {
    let path = url.strip_prefix(base).unwrap_or(url);
    path.split('/')
        .map(|seg| {
            if seg.starts_with("run-") {
                "{run}".to_owned()
            } else if seg.starts_with("apr-") {
                "{approval}".to_owned()
            } else {
                seg.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What each request of the walkthrough answers, in the order the block sends them.
const EXPECTED: &[(&str, u16, &str)] = &[
    ("GET", 200, "/healthz"),
    ("GET", 200, "/readyz"),
    ("GET", 200, "/metrics"),
    ("GET", 200, "/v1/agents"),
    ("GET", 200, "/v1/agents/reference/inspect?timeout_ms=5000"),
    ("POST", 201, "/v1/agents/reference/runs"),
    ("POST", 201, "/v1/agents/reference/threads/demo/runs"),
    ("GET", 200, "/v1/runs/{run}"),
    ("GET", 200, "/v1/runs/{run}/approvals?pending=true"),
    ("POST", 202, "/v1/runs/{run}/messages"),
    ("POST", 200, "/v1/runs/{run}/approvals/{approval}"),
    ("GET", 200, "/v1/runs/{run}/events"),
    ("GET", 200, "/v1/runs/{run}"),
    ("POST", 201, "/v1/agents/reference/threads/quiz/runs"),
    ("GET", 200, "/v1/runs/{run}/approvals?pending=true"),
    ("POST", 202, "/v1/runs/{run}/cancel"),
    ("GET", 200, "/v1/runs/{run}/events"),
    ("GET", 200, "/v1/agents/reference/threads?limit=20"),
    ("GET", 200, "/v1/agents/reference/threads/demo"),
    (
        "GET",
        200,
        "/v1/agents/reference/threads/demo/events?after=0&limit=100",
    ),
    ("GET", 400, "/v1/agents/reference/threads?limit=-1"),
    ("POST", 201, "/v1/agents/reference/threads"),
    ("POST", 201, "/v1/agents/reference/threads/demo/fork"),
    ("POST", 200, "/v1/agents/reference/threads/demo/archive"),
    ("POST", 201, "/v1/agents/reference/threads/sb/standby"),
    ("POST", 202, "/v1/agents/reference/threads/sb/standby/messages"),
    ("GET", 200, "/v1/agents/reference/threads/sb/standby/events"),
    ("POST", 202, "/v1/agents/reference/threads/sb/standby/cancel"),
    ("DELETE", 200, "/v1/agents/reference/threads/sb/standby"),
    ("POST", 200, "/v1/agents/reference/agui"),
    ("POST", 200, "/v1/agents/reference/agui"),
    ("POST", 200, "/v1/agents/reference/agui"),
];

#[tokio::test]
async fn the_readme_walkthrough_runs_verbatim_and_every_status_is_as_promised() {
    let missing: Vec<_> = ["bash", "curl", "jq"].into_iter().filter(|t| !have(t)).collect();
    if !missing.is_empty() {
        let why = format!("SKIPPED: the README walkthrough needs {missing:?} (apt-get install -y jq curl)");
        assert!(std::env::var_os("AGENT_ADAPTOR_REQUIRE_CLIS").is_none(), "{why}");
        eprintln!("{why}");
        return;
    }
    let mut server = serve_command().stderr(Stdio::null()).spawn().unwrap();
    let base = listening_url(&mut BufReader::new(server.stdout.take().unwrap()));
    // Every curl also reports `STATUS <code> <method> <url>` on stderr; the block itself is untouched.
    let script = format!(
        "curl() {{ command curl -w '%{{stderr}}STATUS %{{http_code}} %{{method}} %{{url_effective}}\\n' \"$@\"; }}\n{}",
        walkthrough()
    );
    let out = tokio::task::spawn_blocking({
        let base = base.clone();
        move || {
            Command::new("timeout")
                .args(["120", "bash", "-euo", "pipefail", "-c", &script])
                .env("B", &base)
                .output()
                .unwrap()
        }
    })
    .await
    .unwrap();
    sigterm(&server);
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the walkthrough failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
    let got: Vec<(String, u16, String)> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("STATUS "))
        .map(|l| {
            let mut parts = l.splitn(3, ' ');
            let code = parts.next().unwrap().parse().unwrap();
            let method = parts.next().unwrap().to_owned();
            (method, code, template(parts.next().unwrap(), &base))
        })
        .collect();
    let want: Vec<(String, u16, String)> = EXPECTED
        .iter()
        .map(|(m, c, p)| ((*m).to_owned(), *c, (*p).to_owned()))
        .collect();
    assert_eq!(got, want, "statuses differ; the walkthrough printed:\n{stdout}");
    // What the steps show: the approved run succeeded with the supplemental message delivered, the
    // cancelled one ended with `done`, the bad query names its field, the interrupt was answered.
    for needle in [
        "[permission approved] (noted: also add tests)",
        "\"succeeded\"",
        "event: done",
        "\"field\":\"limit\"",
        "RUN_FINISHED",
    ] {
        assert!(
            stdout.contains(needle),
            "the walkthrough output lacks {needle:?}:\n{stdout}"
        );
    }
}

/// The deadline of the first pending approval of `run`, minus its creation time.
async fn deadline_of(base: &str, run: &str) -> Duration {
    let approval = super::eventually(|| async move {
        let list = get_json(base, &format!("/v1/runs/{run}/approvals?pending=true")).await;
        list["approvals"].get(0).cloned()
    })
    .await;
    let at = |k: &str| {
        approval[k]
            .as_str()
            .and_then(|s| s.parse::<DateTime<Utc>>().ok())
            .unwrap_or_else(|| panic!("{k} is a timestamp: {approval}"))
    };
    (at("deadline") - at("created_at")).to_std().unwrap()
}

#[tokio::test]
async fn an_approvals_policy_without_a_deadline_keeps_the_services_approval_timeout() {
    let mut config = ServerConfig::for_tests();
    config.approval_timeout = Duration::from_secs(600);
    let server = start_with(config).await;
    let base = server.url();
    let cases: [(Value, Duration); 3] = [
        (json!({"permission": "ask"}), Duration::from_secs(600)),
        (
            json!({"permission": "ask", "timeout": 0}),
            Duration::from_secs(600),
        ),
        (
            json!({"permission": "ask", "timeout": 5000}),
            Duration::from_secs(5),
        ),
    ];
    for (i, (approvals, want)) in cases.into_iter().enumerate() {
        let path = format!("/v1/agents/reference/threads/deadline-{i}/runs");
        let run = start_run(
            &base,
            &path,
            json!({"prompt": "permission please", "approvals": approvals}),
        )
        .await;
        let got = deadline_of(&base, run["run_id"].as_str().unwrap()).await;
        assert_eq!(got, want, "case {i}: {approvals}");
        super::cancel(&base, run["run_id"].as_str().unwrap()).await;
    }
}
