//! The real CodeBuddy Code CLI against the mock Chat Completions server. Each test is one scenario:
//!
//! * default: replays `tests/fixtures/codebuddy/<scenario>*.jsonl` (+ `.meta.json`) and asserts what the
//!   scenario must show — no CLI needed;
//! * `LIVE_FIXTURES=1`: runs the real CLI and asserts the same on the live output (writes nothing);
//! * `RECORD_FIXTURES=1`: runs the real CLI, asserts, and rewrites the fixtures.
//!
//! Live runs skip loudly when the CLI is absent (`testkit::cli::require`).

pub mod brain;
mod control;
mod headless;
mod session;
mod turns;

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::codebuddy_env::CodeBuddyEnv;
use agent_adaptor::testkit::mock::chat::{MockChat, RequestLog};
use serde_json::{Value, json};
use tokio::process::Command;

pub use session::{Run, Session, kind};

/// Where the fixtures live.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codebuddy")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Replay,
    Live,
    Record,
}

fn mode() -> Mode {
    let on = |k: &str| std::env::var(k).is_ok_and(|v| v == "1");
    if on("RECORD_FIXTURES") {
        Mode::Record
    } else if on("LIVE_FIXTURES") {
        Mode::Live
    } else {
        Mode::Replay
    }
}

/// The isolated environment one live scenario runs in.
pub struct Lab {
    /// The CLI.
    pub bin: PathBuf,
    /// Its environment.
    pub env: CodeBuddyEnv,
    _dir: tempfile::TempDir,
}

impl Lab {
    /// `--print --output-format stream-json --verbose <extra…> <prompt>`.
    pub fn headless_args(extra: &[&str], prompt: &str) -> Vec<String> {
        let mut a = CodeBuddyEnv::headless_args();
        a.extend(extra.iter().map(|s| (*s).to_owned()));
        a.push(prompt.to_owned());
        a
    }

    /// The control transport args plus `extra`.
    pub fn control_args(extra: &[&str]) -> Vec<String> {
        let mut a = CodeBuddyEnv::control_args();
        a.extend(extra.iter().map(|s| (*s).to_owned()));
        a
    }

    /// A headless command.
    pub fn headless(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .env_clear()
            .envs(self.env.vars())
            .current_dir(&self.env.cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    /// A control-transport command.
    pub fn control(&self, args: &[String]) -> Command {
        let mut cmd = self.headless(args);
        cmd.env("CODEBUDDY_CODE_ENTRYPOINT", "sdk-py");
        cmd
    }

    /// Runs a headless command to completion (stdin closed at once, 60 s cap).
    pub async fn run_headless(&self, suffix: &str, args: Vec<String>) -> Named {
        self.run_headless_capped(suffix, args, Duration::from_secs(60))
            .await
    }

    /// Runs a headless command, killing it after `cap`.
    pub async fn run_headless_capped(&self, suffix: &str, args: Vec<String>, cap: Duration) -> Named {
        let s = Session::spawn(self.headless(&args));
        let run = s.finish(cap).await;
        Named::new(suffix, args, run)
    }
}

/// One process of a scenario, named by a suffix ("" for the only one).
pub struct Named {
    /// File suffix: `<scenario>.<suffix>.jsonl`, or `<scenario>.jsonl` when empty.
    pub suffix: String,
    /// The argv after the binary.
    pub args: Vec<String>,
    /// What it did.
    pub run: Run,
    /// The stdout file extension (`jsonl`, or `json` for `--output-format json`).
    pub ext: &'static str,
}

impl Named {
    /// A JSON-lines run.
    pub fn new(suffix: &str, args: Vec<String>, run: Run) -> Named {
        Named {
            suffix: suffix.to_owned(),
            args,
            run,
            ext: "jsonl",
        }
    }
}

/// A scenario's recording, live or loaded.
pub struct Recorded {
    /// Per process: suffix, stdout lines, parsed frames (`Null` for non-JSON), exit code, killed, timeline.
    pub runs: Vec<RecordedRun>,
    /// One summary per completion request the mock saw.
    pub requests: Vec<Value>,
}

/// One process of a [`Recorded`] scenario.
pub struct RecordedRun {
    /// The suffix ("" for the only one).
    pub suffix: String,
    /// Stdout, verbatim.
    pub lines: Vec<String>,
    /// Stdout lines parsed (`Null` when not JSON).
    pub frames: Vec<Value>,
    /// The exit code.
    pub exit_code: Option<i32>,
    /// Whether the harness had to kill it.
    pub killed: bool,
    /// The timeline (see `session::Run`).
    pub timeline: Vec<Value>,
}

impl RecordedRun {
    /// The kinds of all frames, in order.
    pub fn kinds(&self) -> Vec<String> {
        self.frames.iter().map(kind).collect()
    }

    /// All frames of kind `k`.
    pub fn of(&self, k: &str) -> Vec<&Value> {
        self.frames.iter().filter(|f| kind(f) == k).collect()
    }

    /// The `result` frames.
    pub fn results(&self) -> Vec<&Value> {
        self.frames.iter().filter(|f| f["type"] == "result").collect()
    }

    /// The concatenated `text_delta`s of all `stream_event`s.
    pub fn delta_text(&self) -> String {
        self.of("stream_event/content_block_delta")
            .iter()
            .filter_map(|f| f.pointer("/event/delta/text").and_then(Value::as_str))
            .collect()
    }

    /// The time (ms) of the first timeline entry matching `pred`.
    pub fn t(&self, pred: impl Fn(&Value) -> bool) -> Option<u64> {
        self.timeline
            .iter()
            .find(|e| pred(e))
            .and_then(|e| e["t"].as_u64())
    }

    /// The time of the first stdout line of kind `k`.
    pub fn t_out(&self, k: &str) -> Option<u64> {
        self.t(|e| e["dir"] == "out" && e["kind"] == k)
    }
}

impl Recorded {
    /// The only (or first) run.
    pub fn run(&self) -> &RecordedRun {
        &self.runs[0]
    }

    /// The run with this suffix.
    pub fn named(&self, suffix: &str) -> &RecordedRun {
        self.runs
            .iter()
            .find(|r| r.suffix == suffix)
            .unwrap_or_else(|| panic!("no run {suffix:?}"))
    }
}

fn summarize(r: &RequestLog) -> Value {
    json!({
        "n": r.n, "t_ms": r.at.as_millis() as u64, "status": r.status, "roles": r.roles(),
        "queries": r.user_queries(), "last_role": r.last_role(), "model": r.model(),
        "conversation_id": r.header("x-conversation-id"), "tools": r.tool_names(),
        "tool_results": r.tool_results(),
    })
}

fn file_name(scenario: &str, suffix: &str, ext: &str) -> String {
    if suffix.is_empty() {
        format!("{scenario}.{ext}")
    } else {
        format!("{scenario}.{suffix}.{ext}")
    }
}

fn parse_lines(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or(Value::Null))
        .collect()
}

fn save(scenario: &str, named: &[Named], requests: &[Value]) {
    let dir = fixture_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let mut runs = Vec::new();
    for n in named {
        let file = file_name(scenario, &n.suffix, n.ext);
        let mut text = n.run.lines.join("\n");
        if !text.is_empty() {
            text.push('\n');
        }
        std::fs::write(dir.join(&file), text).unwrap();
        runs.push(
            json!({"suffix": n.suffix, "file": file, "args": n.args, "exit_code": n.run.exit_code,
            "killed": n.run.killed, "stderr_tail": n.run.stderr_tail, "timeline": n.run.timeline}),
        );
    }
    let meta = json!({"scenario": scenario, "cli": "CodeBuddy Code 2.117.0 (@tencent-ai/agent-sdk 0.3.201)",
        "mock": "testkit::mock::chat, brain in tests/it/codebuddy_lab/brain.rs", "runs": runs, "requests": requests});
    let text = serde_json::to_string_pretty(&meta).unwrap() + "\n";
    std::fs::write(dir.join(format!("{scenario}.meta.json")), text).unwrap();
}

fn load(scenario: &str) -> Recorded {
    let dir = fixture_dir();
    let meta_path = dir.join(format!("{scenario}.meta.json"));
    let meta: Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; record it with RECORD_FIXTURES=1 (needs the CodeBuddy CLI)",
            meta_path.display()
        )
    }))
    .unwrap();
    let runs = meta["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let file = dir.join(r["file"].as_str().unwrap());
            let text = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<String> = if file.extension().is_some_and(|e| e == "json") {
                vec![text]
            } else {
                text.lines().map(str::to_owned).collect()
            };
            RecordedRun {
                suffix: r["suffix"].as_str().unwrap_or("").to_owned(),
                frames: parse_lines(&lines),
                lines,
                exit_code: r["exit_code"].as_i64().map(|c| c as i32),
                killed: r["killed"].as_bool().unwrap_or(false),
                timeline: r["timeline"].as_array().cloned().unwrap_or_default(),
            }
        })
        .collect();
    Recorded {
        runs,
        requests: meta["requests"].as_array().cloned().unwrap_or_default(),
    }
}

/// Replays the fixture, or runs `scenario` against the real CLI (and records it when asked).
/// `None` when a live run is asked for but the CLI is absent (a loud SKIPPED line was printed).
pub async fn obtain(name: &str, scenario: impl AsyncFnOnce(&Lab) -> Vec<Named>) -> Option<Recorded> {
    let mode = mode();
    if mode == Mode::Replay {
        return Some(load(name));
    }
    let bin = require(Cli::CodeBuddy)?;
    let mock = MockChat::start(brain::script()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let env = CodeBuddyEnv::new(dir.path(), &mock.base_url()).unwrap();
    let lab = Lab { bin, env, _dir: dir };
    let named = scenario(&lab).await;
    let requests: Vec<Value> = mock.completion_requests().iter().map(summarize).collect();
    assert!(
        mock.unknown_requests().is_empty(),
        "unexpected routes: {:?}",
        mock.unknown_requests()
    );
    mock.shutdown().await;
    if mode == Mode::Record {
        save(name, &named, &requests);
    }
    let runs = named
        .into_iter()
        .map(|n| {
            let lines = if n.ext == "json" {
                vec![n.run.lines.join("\n")]
            } else {
                n.run.lines
            };
            RecordedRun {
                suffix: n.suffix,
                frames: parse_lines(&lines),
                lines,
                exit_code: n.run.exit_code,
                killed: n.run.killed,
                timeline: n.run.timeline,
            }
        })
        .collect();
    Some(Recorded { runs, requests })
}

/// Asserts that every frame with a `session_id` in `run` carries `sid`.
pub fn assert_one_session(run: &RecordedRun) -> String {
    let sids: Vec<&str> = run
        .frames
        .iter()
        .filter_map(|f| f.get("session_id").and_then(Value::as_str))
        .filter(|s| !s.is_empty())
        .collect();
    let first = sids.first().copied().unwrap_or_default().to_owned();
    assert!(!first.is_empty(), "no session_id at all");
    assert!(sids.iter().all(|s| *s == first), "mixed session ids: {sids:?}");
    first
}
