//! SIGHUP reloads the tenants of `agent-adaptor serve`: new keys work and removed keys stop working at
//! once, a stream opened before the reload goes on to its `done`, and a configuration that does not load
//! (bad TOML, no key at all) leaves the running tenants in place. Before SIGHUP was handled, the signal's
//! default action killed the service.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::Duration;

use serde_json::{Value, json};

use super::{all_frames, client, listening_url, serve_command};

const OLD: &str = "alpha-key-0123456789-old";
const NEW: &str = "alpha-key-0123456789-new";
const BETA: &str = "beta-key-0123456789-beta";

fn tenants(entries: &[(&str, &str)]) -> String {
    entries
        .iter()
        .map(|(name, key)| format!("[[tenants]]\nname = \"{name}\"\nkeys = [\"{key}\"]\n\n"))
        .collect()
}

async fn status_with(base: &str, key: &str) -> u16 {
    client()
        .get(format!("{base}/v1/agents"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn hangup(child: &Child) {
    let ok = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(ok.success());
}

/// Waits until `base` answers `key` with `want` (a reload is applied by a task, not synchronously).
async fn until_status(base: &str, key: &str, want: u16) {
    for _ in 0..100 {
        if status_with(base, key).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{key} never answered {want}");
}

/// The stderr lines of `serve` collected by a thread, to read the reload's log line.
fn collect_stderr(child: &mut Child) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = lines.clone();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

async fn until_logged(lines: &std::sync::Mutex<Vec<String>>, needle: &str, nth: usize) {
    for _ in 0..100 {
        if lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .count()
            >= nth
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no {nth}th {needle:?} on stderr: {:?}", lines.lock().unwrap());
}

#[tokio::test]
async fn sighup_reloads_tenants_and_keys_without_dropping_a_stream_and_keeps_them_on_a_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("serve.toml");
    std::fs::write(&file, tenants(&[("alpha", OLD)])).unwrap();
    let mut child = serve_command()
        .args([
            "--config",
            file.to_str().unwrap(),
            "--reference-chunk-delay-ms",
            "40",
        ])
        .spawn()
        .unwrap();
    let stderr = collect_stderr(&mut child);
    let base = listening_url(&mut BufReader::new(child.stdout.take().unwrap()));
    assert_eq!(status_with(&base, OLD).await, 200);
    assert_eq!(status_with(&base, NEW).await, 401);

    // A slow run whose stream is open across the reload.
    let started: Value = client()
        .post(format!("{base}/v1/agents/reference/runs"))
        .bearer_auth(OLD)
        .json(&json!({"prompt": "a slow answer with many many words that outlives the reload"}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let run = started["run_id"].as_str().expect("a run id").to_owned();
    let stream = client()
        .get(format!("{base}/v1/runs/{run}/events"))
        .bearer_auth(OLD)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);

    // Rotate alpha's key and add beta.
    std::fs::write(&file, tenants(&[("alpha", NEW), ("beta", BETA)])).unwrap();
    hangup(&child);
    until_status(&base, NEW, 200).await;
    assert_eq!(
        status_with(&base, OLD).await,
        401,
        "the removed key stops working"
    );
    assert_eq!(
        status_with(&base, BETA).await,
        200,
        "the added tenant's key works"
    );
    until_logged(&stderr, "reloaded 2 tenant(s), 2 key(s)", 1).await;
    let frames = all_frames(stream).await;
    assert_eq!(
        frames.last().and_then(|f| f.event.as_deref()),
        Some("done"),
        "the stream opened before the reload ends normally"
    );

    // A file that does not parse, then one without any key: both refused, the running tenants stay.
    std::fs::write(&file, "[[tenants]\nname = ").unwrap();
    hangup(&child);
    until_logged(&stderr, "reload refused", 1).await;
    std::fs::write(&file, "").unwrap();
    hangup(&child);
    until_logged(&stderr, "reload refused", 2).await;
    assert!(
        stderr
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("never turns authentication off")),
        "{:?}",
        stderr.lock().unwrap()
    );
    assert_eq!(status_with(&base, NEW).await, 200);
    assert_eq!(status_with(&base, BETA).await, 200);
    assert_eq!(status_with(&base, OLD).await, 401);
    assert_eq!(
        client()
            .get(format!("{base}/v1/agents"))
            .send()
            .await
            .unwrap()
            .status(),
        401,
        "authentication is still on"
    );

    super::sigterm(&child);
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0), "still a clean shutdown after reloads");
}
