//! Writing and checking the recorded Codex fixtures under `tests/fixtures/codex/`.
//!
//! `RECORD_FIXTURES=1` rewrites them from the live run. Otherwise the live run's *skeleton* (the
//! ordered list of event kinds, minus frames whose count or position is timing-dependent) must
//! equal the skeleton of the committed fixture, so a CLI upgrade that changes the protocol fails
//! loudly instead of silently drifting from the parser tests.

use std::path::{Path, PathBuf};

use agent_adaptor::testkit::mock::responses::RecordedRequest;
use serde_json::{Value, json};

use super::harness::{ExecRun, Session};

/// The placeholder the temp root is replaced with, so fixtures do not depend on the run.
pub const ROOT_PLACEHOLDER: &str = "/tmp/codex-lab-ROOT";

pub fn recording() -> bool {
    std::env::var("RECORD_FIXTURES").as_deref() == Ok("1")
}

pub fn dir(kind: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(kind)
}

fn normalize(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), ROOT_PLACEHOLDER)
}

/// Summary of the mock's request log, stored next to a fixture.
pub fn mock_summary(reqs: &[RecordedRequest], root: &Path) -> Value {
    let v: Vec<Value> = reqs
        .iter()
        .map(|r| {
            json!({
                "at_ms": r.at_ms,
                "path": r.path,
                "outcome": format!("{:?}", r.outcome),
                "originator": r.headers.get("originator"),
                "tools": r.tool_names(),
                "input": r.input_summary(),
                "text_format": r.text_format(),
            })
        })
        .collect();
    serde_json::from_str(&normalize(&Value::Array(v).to_string(), root)).unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn read_fixture(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "missing fixture {} ({e}); record it with RECORD_FIXTURES=1",
            path.display()
        )
    })
}

/// Exec skeleton: `type` plus `item.type` for item events.
pub fn exec_skeleton(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| {
            let t = v["type"].as_str().unwrap_or("?").to_owned();
            match v["item"]["type"].as_str() {
                Some(it) => format!("{t}:{it}"),
                None => t,
            }
        })
        .collect()
}

/// Notifications whose presence, count or position depends on timing, not on the protocol.
const NOISY: &[&str] = &[
    "account/rateLimits/updated",
    "thread/tokenUsage/updated",
    "thread/status/changed",
    "remoteControl/status/changed",
    "configWarning",
    "mcpServer/startupStatus/updated",
    "item/agentMessage/delta",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/textDelta",
    "item/reasoning/summaryPartAdded",
    "item/commandExecution/outputDelta",
    "serverRequest/resolved",
    "thread/settings/updated",
    "skills/changed",
    "warning",
];

/// App-server skeleton: `method[:item type]` for notifications and server requests, in order,
/// noisy methods dropped; then `response:<id>` / `error:<id>` sorted, because where a response
/// lands between notifications is a race.
pub fn rpc_skeleton(lines: &[String]) -> Vec<String> {
    let values: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    let mut out: Vec<String> = values
        .iter()
        .filter_map(|v| match v.get("method").and_then(Value::as_str) {
            Some(m) if NOISY.contains(&m) => None,
            Some(m) => match v["params"]["item"]["type"].as_str() {
                Some(it) => Some(format!("{m}:{it}")),
                None => match v["params"]["turn"]["status"].as_str() {
                    Some(st) if m == "turn/completed" => Some(format!("{m}:{st}")),
                    _ => Some(m.to_owned()),
                },
            },
            None => None,
        })
        .collect();
    let mut responses: Vec<String> = values
        .iter()
        .filter(|v| v.get("method").is_none())
        .map(|v| {
            if v.get("error").is_some() {
                format!("error:{}", v["id"])
            } else {
                format!("response:{}", v["id"])
            }
        })
        .collect();
    responses.sort();
    out.extend(responses);
    out
}

/// Records or checks one exec scenario (`exec/<name>.stdout.jsonl` + `.meta.json`).
pub fn exec(name: &str, run: &ExecRun, reqs: &[RecordedRequest], root: &Path) {
    let base = dir("exec");
    let stdout_path = base.join(format!("{name}.stdout.jsonl"));
    let stdout = normalize(&run.stdout, root);
    if recording() {
        write(&stdout_path, &stdout);
        let meta = json!({
            "scenario": name,
            "argv": run.argv.iter().map(|a| normalize(a, root)).collect::<Vec<_>>(),
            "exit_code": run.code,
            "elapsed_ms": run.elapsed.as_millis() as u64,
            "stderr": normalize(&run.stderr, root),
            "mock_requests": mock_summary(reqs, root),
        });
        write(
            &base.join(format!("{name}.meta.json")),
            &(serde_json::to_string_pretty(&meta).unwrap() + "\n"),
        );
        eprintln!("recorded exec/{name}");
    } else {
        let want = exec_skeleton(&read_fixture(&stdout_path));
        assert_eq!(
            exec_skeleton(&stdout),
            want,
            "exec/{name}: live skeleton differs from the fixture"
        );
    }
}

/// Records or checks one app-server scenario (`app-server/<name>.{stdout,stdin}.jsonl` + meta
/// with a timeline).
pub fn app_server(name: &str, s: &Session, reqs: &[RecordedRequest], root: &Path) {
    let base = dir("app-server");
    let out: Vec<String> = s.out.iter().map(|(_, l)| normalize(l, root)).collect();
    let stdout_path = base.join(format!("{name}.stdout.jsonl"));
    if recording() {
        write(&stdout_path, &(out.join("\n") + "\n"));
        let sent: Vec<String> = s.sent.iter().map(|(_, l)| normalize(l, root)).collect();
        write(
            &base.join(format!("{name}.stdin.jsonl")),
            &(sent.join("\n") + "\n"),
        );
        // Timeline: every frame in time order, "in" = written to stdin, "out" = read from stdout.
        let mut timeline: Vec<(u64, &str, String)> = Vec::new();
        for (ms, l) in &s.sent {
            timeline.push((*ms, "in ", short(l)));
        }
        for (ms, l) in &s.out {
            timeline.push((*ms, "out", short(l)));
        }
        timeline.sort_by_key(|t| t.0);
        let timeline: Vec<String> = timeline
            .into_iter()
            .map(|(ms, d, l)| normalize(&format!("{ms:>6} {d} {l}"), root))
            .collect();
        let meta = json!({
            "scenario": name,
            "exit_code": s.code,
            "stderr": normalize(&s.stderr, root),
            "timeline": timeline,
            "mock_requests": mock_summary(reqs, root),
        });
        write(
            &base.join(format!("{name}.meta.json")),
            &(serde_json::to_string_pretty(&meta).unwrap() + "\n"),
        );
        eprintln!("recorded app-server/{name}");
    } else {
        let want_lines: Vec<String> = read_fixture(&stdout_path).lines().map(str::to_owned).collect();
        assert_eq!(
            rpc_skeleton(&out),
            rpc_skeleton(&want_lines),
            "app-server/{name}: live skeleton differs from the fixture"
        );
    }
}

fn short(line: &str) -> String {
    let mut s: String = line.chars().take(240).collect();
    if line.chars().count() > 240 {
        s.push('…');
    }
    s
}
