//! `GET /v1/agents/{agent}/inspect` on the real Claude CLI (skipped loudly when absent): skills and a
//! dedicated profile reported without a server path anywhere in the body, path-free profile warnings
//! and check messages, and a timeout that cuts the CLI probes (typed per probe, the route still answers,
//! no CLI process left).

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_adaptor::profile::Family;
use agent_adaptor::server::{AgentSpec, ServerConfig};
use agent_adaptor::testkit::cli::{Cli, find};
use agent_adaptor::vocab::SkillRef;
use serde_json::{Value, json};

use super::resources::claude_spec;
use super::{get, start_with};
use crate::claude_driver::Cl;
use crate::process::eventually;

/// Every probe of the report.
const PROBES: [&str; 6] = [
    "environment",
    "models",
    "quota",
    "config_schema",
    "skills",
    "profile",
];

/// A test server with these agents.
async fn serve(agents: Vec<AgentSpec>) -> agent_adaptor::server::RunningServer {
    let mut config = ServerConfig::for_tests();
    config.agents = agents;
    start_with(config).await
}

/// `GET …/inspect{query}` of `agent`, asserting 200: the raw body and its JSON.
async fn inspect(base: &str, agent: &str, query: &str) -> (String, Value) {
    let resp = get(base, &format!("/v1/agents/{agent}/inspect{query}")).await;
    assert_eq!(resp.status(), 200, "inspect {agent}{query}");
    let text = resp.text().await.unwrap();
    let json = serde_json::from_str(&text).expect("a JSON body");
    (text, json)
}

/// The `errors` entry of `probe`, if listed.
fn error_of<'a>(report: &'a Value, probe: &str) -> Option<&'a Value> {
    report["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .find(|e| e["probe"] == probe)
}

/// Asserts the route's contract for every probe: it answered (non-null) or it is listed in `errors`,
/// never both, never neither.
fn assert_each_probe_answered_or_listed(report: &Value) {
    for name in PROBES {
        let listed = error_of(report, name).is_some();
        assert_ne!(report[name].is_null(), !listed, "{name}: {report}");
    }
    assert_eq!(
        report["errors"].as_array().unwrap().len(),
        PROBES.iter().filter(|p| report[**p].is_null()).count()
    );
}

/// Asserts `body` names none of `paths`.
fn assert_no_path(body: &str, paths: &[&Path]) {
    for p in paths {
        let p = p.to_string_lossy();
        assert!(!body.contains(p.as_ref()), "{p} occurs in the body: {body}");
    }
}

#[tokio::test]
async fn inspect_shows_skills_and_a_dedicated_profile_without_any_server_path() {
    let Some(cl) = Cl::new().await else { return };
    let root = cl.env.root.clone();
    let mut spec = claude_spec(
        &cl,
        json!({
            "profile": {"kind": "dedicated", "dir": root.join("inspected-profile")},
            "profile_resources": {"instructions": "INSPECT-MARKER: answer briefly."},
        }),
    );
    spec.skills = vec![
        SkillRef::inline(
            "good",
            "---\nname: good\ndescription: GOOD-MARKER notes\n---\n# good\n",
        ),
        SkillRef::dir("broken", root.join("no-such-skill")),
    ];
    let server = serve(vec![spec]).await;
    let (body, report) = inspect(&server.url(), "claude", "").await;
    assert_no_path(&body, &[&root]);
    assert_each_probe_answered_or_listed(&report);

    let skills = &report["skills"];
    assert_eq!(skills["supported"], true, "{report}");
    let listed = skills["skills"].as_array().unwrap();
    let keys: Vec<&str> = listed.iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["good", "broken"], "{skills}");
    assert_eq!(listed[0]["source"], "inline");
    assert_eq!(listed[0]["description"], "GOOD-MARKER notes");
    assert!(listed[0].get("error").is_none(), "{skills}");
    assert_eq!(listed[1]["source"], "dir");
    assert_eq!(
        listed[1]["error"],
        json!({"code": "skill_source_missing", "message": "skill_source_missing"})
    );

    let profile = &report["profile"];
    let identity = profile["profile"].as_object().expect("the profile identity");
    assert!(
        !identity.contains_key("dir") && !identity.contains_key("source"),
        "{profile}"
    );
    assert_eq!(identity["selection"], json!({"kind": "dedicated"}), "{profile}");
    assert!(!profile["fingerprint"].as_str().unwrap().is_empty(), "{profile}");
    let instructions = profile["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "instructions")
        .expect("the instructions family");
    assert_eq!(instructions["managed"], true, "{profile}");
    assert!(
        !root.join("inspected-profile").exists(),
        "inspection only observes the profile"
    );
    server.shutdown().await.unwrap();
}

/// The HOME the service resolves the native profile under.
fn service_home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(std::env::temp_dir, PathBuf::from)
}

#[tokio::test]
async fn profile_warnings_and_check_messages_on_the_route_are_path_free() {
    let Some(cl) = Cl::new().await else { return };
    let native = Family::Claude.native_dir(&service_home());
    // The real CLI on the native profile (whose warning names its dir), and an agent whose CLI is
    // missing (whose failed check names the command).
    let on_native = claude_spec(&cl, json!({"profile": {"kind": "native"}}));
    let mut missing = claude_spec(&cl, json!({}));
    missing.name = "missing".into();
    missing.config["command"] = json!(cl.env.root.join("no-such-bin").join("claude"));
    let server = serve(vec![on_native, missing]).await;
    let base = server.url();

    let (body, report) = inspect(&base, "claude", "").await;
    assert_no_path(&body, &[&native, &cl.env.root]);
    let warnings = report["profile"]["warnings"].as_array().unwrap();
    assert!(
        warnings.contains(&json!(
            "<profile dir> is the native profile: the SDK never writes into it"
        )),
        "the warning stays, its path does not: {warnings:?}"
    );
    assert!(!native.join(agent_adaptor::profile::sync::MANIFEST).exists());

    let (body, report) = inspect(&base, "missing", "").await;
    assert_no_path(&body, &[&cl.env.root]);
    let env = &report["environment"];
    assert_eq!(env["healthy"], false, "{report}");
    assert_eq!(env["checks"][0]["status"], "fail", "{report}");
    assert!(
        env["checks"][0]["message"].as_str().unwrap().contains("<path>"),
        "the check says a path was involved: {report}"
    );
    assert_each_probe_answered_or_listed(&report);
    server.shutdown().await.unwrap();
}

/// Live (non-zombie) children of this test process running the Claude CLI.
pub(super) fn claude_children() -> Vec<u32> {
    let bin = find(Cli::Claude).map(|p| p.to_string_lossy().into_owned());
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let (Ok(stat), Ok(cmdline)) = (
            std::fs::read_to_string(entry.path().join("stat")),
            std::fs::read(entry.path().join("cmdline")),
        ) else {
            continue;
        };
        // After the parenthesized name: state ppid …
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(vec![], |(_, r)| r.split_whitespace().collect());
        let argv0 = cmdline.split(|b| *b == 0).next().map(String::from_utf8_lossy);
        if fields.get(1) == Some(&me.as_str())
            && fields.first() != Some(&"Z")
            && argv0.is_some_and(|a| Some(a.as_ref()) == bin.as_deref())
        {
            out.push(pid);
        }
    }
    out
}

#[tokio::test]
async fn a_probe_cut_by_the_timeout_is_typed_the_route_answers_and_no_cli_is_left() {
    let Some(cl) = Cl::new().await else { return };
    let server = serve(vec![claude_spec(&cl, json!({}))]).await;
    let base = server.url();
    // The CLI probes (`claude --version`, the `initialize` answer) cannot answer in 1 ms.
    let (_, report) = inspect(&base, "claude", "?timeout_ms=1").await;
    for name in ["environment", "models"] {
        assert!(report[name].is_null(), "{name}: {report}");
        assert_eq!(
            error_of(&report, name),
            Some(&json!({"probe": name, "code": "timeout", "message": "no answer within 1 ms"})),
            "{report}"
        );
    }
    assert!(
        !report["config_schema"].is_null(),
        "a probe that needs no process answers: {report}"
    );
    assert_each_probe_answered_or_listed(&report);
    assert!(
        eventually(Duration::from_secs(10), || claude_children().is_empty()).await,
        "a cut probe's CLI is stopped and reaped: {:?}",
        claude_children()
    );

    // Control: with time to answer, the same probes run the CLI as a child (which the scan sees) and
    // answer; afterwards nothing is left either.
    let full = tokio::spawn({
        let base = base.clone();
        async move { inspect(&base, "claude", "").await.1 }
    });
    assert!(
        eventually(Duration::from_secs(10), || !claude_children().is_empty()).await,
        "the scan sees the probe's CLI"
    );
    let report = full.await.unwrap();
    assert!(report["environment"]["version"].is_string(), "{report}");
    assert!(error_of(&report, "environment").is_none(), "{report}");
    assert!(
        eventually(Duration::from_secs(10), || claude_children().is_empty()).await,
        "{:?}",
        claude_children()
    );
    server.shutdown().await.unwrap();
}
