//! The `fake-cursor-agent` binary, run as a process the way the Cursor driver will run the real CLI:
//! every scenario is checked live (the binary is always built), and its sanitized output must equal the
//! fixture in `tests/fixtures/cursor/` (`RECORD_FIXTURES=1` rewrites them).
//!
//! Sanitizing: the temporary workspace path becomes `/workspace` and `duration_ms` / `duration_api_ms`
//! become 0, so recordings are stable.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_adaptor::providers::cursor::wire::{Violation, validate_lines};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_fake-cursor-agent");
const CHAT_ID: &str = "5e1c7a2b-0c4d-4e8f-9a6b-000000000001";

struct Profile {
    root: tempfile::TempDir,
}

impl Profile {
    fn new() -> Profile {
        let root = tempfile::tempdir().unwrap();
        for d in ["ws", "home", "cursor-home", "cursor-config", "cursor-data"] {
            std::fs::create_dir_all(root.path().join(d)).unwrap();
        }
        std::fs::write(root.path().join("ws/README.md"), "# Demo\n").unwrap();
        std::fs::write(
            root.path().join("cursor-home/mcp.json"),
            r#"{"mcpServers":{"agent-adaptor-tools":{"url":"http://127.0.0.1:9/mcp"}}}"#,
        )
        .unwrap();
        Profile { root }
    }

    fn ws(&self) -> PathBuf {
        self.root.path().join("ws")
    }

    fn command(&self, scenario: Option<&str>, extra: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.args(["-p", "--output-format", "stream-json", "--workspace"])
            .arg(self.ws())
            .args(extra)
            .env_clear()
            .env("HOME", self.root.path().join("home"))
            .env("CURSOR_HOME", self.root.path().join("cursor-home"))
            .env("CURSOR_CONFIG_DIR", self.root.path().join("cursor-config"))
            .env("CURSOR_DATA_DIR", self.root.path().join("cursor-data"))
            .env("FAKE_CURSOR_CHAT_ID", CHAT_ID)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(s) = scenario {
            c.env("FAKE_CURSOR_SCENARIO", s);
        }
        c
    }

    /// Runs to completion with `prompt` on stdin; (exit code, signal, stdout lines, stderr).
    async fn run(
        &self,
        scenario: Option<&str>,
        extra: &[&str],
        prompt: &str,
    ) -> (Option<i32>, Option<i32>, Vec<String>, String) {
        let mut child = self.command(scenario, extra).spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(prompt.as_bytes()).await.unwrap();
        drop(stdin);
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
            .await
            .unwrap()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        let lines = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect();
        (
            out.status.code(),
            out.status.signal(),
            lines,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn sanitize(&self, lines: &[String]) -> Vec<String> {
        let ws = self.ws().to_string_lossy().into_owned();
        lines
            .iter()
            .map(|l| {
                zero_number(
                    &zero_number(&l.replace(&ws, "/workspace"), "duration_ms"),
                    "duration_api_ms",
                )
            })
            .collect()
    }
}

/// Replaces the number after `"<key>":` with 0, keeping the line's key order.
fn zero_number(line: &str, key: &str) -> String {
    let pat = format!("\"{key}\":");
    let Some(i) = line.find(&pat) else {
        return line.to_owned();
    };
    let start = i + pat.len();
    let end = start + line[start..].chars().take_while(char::is_ascii_digit).count();
    format!("{}0{}", &line[..start], &line[end..])
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/cursor/{name}.jsonl"))
}

/// Records (with `RECORD_FIXTURES=1`) or compares the sanitized lines with the fixture.
fn check_fixture(name: &str, lines: &[String]) {
    let path = fixture(name);
    let text = lines.join("\n") + "\n";
    if std::env::var("RECORD_FIXTURES").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; record with RECORD_FIXTURES=1", path.display()));
    assert_eq!(
        text, want,
        "{name}: the fake's output drifted from its fixture; re-record with RECORD_FIXTURES=1"
    );
}

#[tokio::test]
async fn scenarios_match_their_fixtures_and_rules() {
    let p = Profile::new();
    let cases: &[(&str, Option<&str>, &[&str], i32)] = &[
        ("text", None, &[], 0),
        ("tools", Some("tools"), &["--force"], 0),
        ("tools_no_force", Some("tools"), &[], 0),
        ("mcp", Some("mcp"), &[], 0),
        ("task", Some("task"), &[], 0),
        ("error", Some("error"), &[], 1),
        ("fail", Some("fail"), &[], 1),
        ("malformed", Some("malformed"), &[], 0),
        ("inconsistent_session", Some("inconsistent-session"), &[], 0),
        ("no_terminal", Some("no-terminal"), &[], 0),
    ];
    for (name, scenario, extra, code) in cases {
        let (c, _, lines, err) = p.run(*scenario, extra, "Summarize the workspace\n").await;
        assert_eq!(c, Some(*code), "{name}: {err}");
        let r = validate_lines(lines.iter().map(String::as_str));
        match *name {
            "error" => assert!(r.is_valid() && !r.is_success()),
            "fail" => assert_eq!(r.violations, [Violation::NoTerminal]),
            "malformed" => assert!(matches!(r.violations[0], Violation::Unparseable { .. })),
            "inconsistent_session" => assert!(matches!(r.violations[0], Violation::SessionMismatch { .. })),
            "no_terminal" => assert_eq!(r.violations, [Violation::NoTerminal]),
            _ => assert!(r.is_success(), "{name}: {:?}", r.violations),
        }
        check_fixture(name, &p.sanitize(&lines));
    }
}

#[tokio::test]
async fn resume_across_invocations_and_unknown_chat() {
    let p = Profile::new();
    let (c, _, first, _) = p.run(None, &[], "first prompt").await;
    assert_eq!(c, Some(0));
    let (c, _, second, _) = p.run(None, &["--resume", CHAT_ID], "second prompt").await;
    assert_eq!(c, Some(0));
    let r = validate_lines(second.iter().map(String::as_str));
    assert_eq!(r.session_id.as_deref(), Some(CHAT_ID));
    assert!(r.terminal.unwrap().result.unwrap().contains("turn 2, 1 earlier"));
    check_fixture("resume_first", &p.sanitize(&first));
    check_fixture("resume_second", &p.sanitize(&second));
    let (c, _, out, err) = p
        .run(None, &["--resume", "00000000-dead-beef-0000-000000000000"], "x")
        .await;
    assert_eq!(c, Some(1));
    assert!(out.is_empty());
    assert_eq!(
        err.trim(),
        "Error: chat 00000000-dead-beef-0000-000000000000 not found"
    );
}

#[tokio::test]
async fn crash_dies_by_signal_mid_stream() {
    let p = Profile::new();
    let (c, sig, lines, _) = p.run(Some("crash"), &[], "go").await;
    assert_eq!((c, sig), (None, Some(libc::SIGABRT)));
    let r = validate_lines(lines.iter().map(String::as_str));
    assert_eq!(r.violations, [Violation::NoTerminal]);
    assert!(lines.last().unwrap().contains(r#""subtype":"started""#));
    check_fixture("crash", &p.sanitize(&lines));
}

#[tokio::test]
async fn slow_is_paced_and_hang_needs_a_kill() {
    let p = Profile::new();
    let t = Instant::now();
    let (c, _, lines, _) = p.run(Some("slow"), &[], "go").await;
    assert_eq!(c, Some(0));
    assert!(t.elapsed() >= Duration::from_millis(300 * 7), "{:?}", t.elapsed());
    check_fixture("slow", &p.sanitize(&lines));

    let mut child = p.command(Some("hang"), &[]).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go").await.unwrap();
    drop(stdin);
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    while let Ok(Ok(Some(l))) = tokio::time::timeout(Duration::from_secs(5), out.next_line()).await {
        let working = l.contains("Working...");
        seen.push(l);
        if working {
            break;
        }
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        tokio::time::timeout(Duration::from_millis(500), child.wait())
            .await
            .is_err(),
        "still running"
    );
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert!(!status.success());
}
