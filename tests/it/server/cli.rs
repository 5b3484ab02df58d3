//! `agent-adaptor serve`: prints exactly one listening line on stdout, serves, and exits 0 on SIGTERM.

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
