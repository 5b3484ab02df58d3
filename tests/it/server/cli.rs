//! `agent-adaptor serve`: prints exactly one listening line on stdout, serves, and exits 0 on SIGTERM (also
//! one sent the moment the line appears).

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

#[tokio::test]
async fn serve_prints_one_listening_line_serves_and_stops_cleanly_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--no-discover",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url = line
        .trim_end()
        .strip_prefix("agent-adaptor listening on http://127.0.0.1:")
        .map(|port| format!("http://127.0.0.1:{port}"))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let port: u16 = url.rsplit(':').next().unwrap().parse().unwrap();
    assert_ne!(port, 0);
    let health = super::client()
        .get(format!("{url}/healthz"))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
    let agents: serde_json::Value = super::client()
        .get(format!("{url}/v1/agents"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(agents["agents"][0]["name"], "reference");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(
        rest.is_empty(),
        "exactly one line on stdout, then nothing: {rest:?}"
    );
}

/// A SIGTERM sent the moment the listening line appears still shuts `serve` down gracefully (exit 0):
/// the handler is installed before the line is printed. With a lazily installed handler this died by
/// the signal in 4 of 5 tries.
#[test]
fn serve_handles_a_sigterm_sent_right_after_the_listening_line() {
    for attempt in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--store",
                "memory",
                "--no-discover",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert!(line.starts_with("agent-adaptor listening on "), "{line:?}");
        let kill = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "attempt {attempt}: {status:?}");
    }
}
