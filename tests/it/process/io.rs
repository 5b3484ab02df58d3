//! Pipes: stdout framing survives bad input and loses nothing, stdin frames never interleave,
//! write errors are typed, stderr is bounded and complete.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_adaptor::driver::process::{Line, ProcessRegistry, StdinError, spawn};
use bytes::Bytes;
use futures::StreamExt;

use super::sh;

#[tokio::test]
async fn reading_goes_on_past_long_lines_banners_and_invalid_utf8_and_loses_nothing() {
    let mut payload = Vec::new();
    payload.extend_from_slice(b"Welcome banner, not JSON\n");
    payload.extend_from_slice(b"{\"type\":\"system\",\"n\":1}\n");
    payload.extend_from_slice(b"{\"type\":\"huge\",\"blob\":\"");
    payload.extend(std::iter::repeat_n(b'x', 300_000));
    payload.extend_from_slice(b"\"}\n");
    payload.extend_from_slice(b"\xff\xfe\xfd not utf-8\n");
    // Enough ordinary frames to cycle the pipe buffer many times.
    for n in 0..2_000 {
        payload.extend_from_slice(
            format!(
                "{{\"type\":\"delta\",\"n\":{n},\"text\":\"{}\"}}\n",
                "y".repeat(250)
            )
            .as_bytes(),
        );
    }
    payload.extend_from_slice(b"{\"type\":\"result\",\"unterminated\":true}");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &payload).unwrap();

    let registry = ProcessRegistry::new();
    let spec = sh(&format!("cat '{}'", file.path().display())).max_line_len(64 * 1024);
    let mut child = spawn(&registry, spec).await.unwrap();
    let mut out = child.take_stdout().unwrap();
    let mut kinds = Vec::new();
    let mut deltas = 0;
    while let Some(line) = out.next().await {
        match line.unwrap() {
            Line::Json { value, .. } if value["type"] == "delta" => deltas += 1,
            Line::Json { value, .. } => kinds.push(format!("json:{}", value["type"].as_str().unwrap())),
            Line::Invalid { .. } => kinds.push("invalid".into()),
            Line::TooLong { len, prefix } => {
                assert!(prefix.starts_with(b"{\"type\":\"huge\""));
                kinds.push(format!("too_long:{len}"));
            }
        }
    }
    assert!(child.wait().await.success());
    assert_eq!(
        kinds,
        [
            "invalid",
            "json:system",
            "too_long:300025",
            "invalid",
            "json:result"
        ]
    );
    assert_eq!(deltas, 2_000);
    let raw = out.take_raw();
    assert!(!raw.truncated);
    assert_eq!(raw.bytes.len(), payload.len());
    assert!(
        raw.bytes == payload,
        "raw stdout differs from what the child wrote"
    );
}

#[tokio::test]
async fn concurrent_writers_never_interleave_frames() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("cat").stdin_piped(true)).await.unwrap();
    let stdin = child.stdin().unwrap();
    let mut out = child.take_stdout().unwrap();
    let reader = tokio::spawn(async move {
        let mut got = BTreeSet::new();
        while let Some(line) = out.next().await {
            match line.unwrap() {
                Line::Json { value, .. } => {
                    let (w, n) = (value["w"].as_u64().unwrap(), value["n"].as_u64().unwrap());
                    assert_eq!(
                        value["pad"].as_str().unwrap().len() as u64,
                        (w * 997 + n * 31) % 9_000
                    );
                    assert!(got.insert((w, n)), "duplicate frame {w}/{n}");
                }
                other => panic!("a frame was torn: {other:?}"),
            }
        }
        got
    });
    let writers: Vec<_> = (0..16u64)
        .map(|w| {
            let stdin = stdin.clone();
            tokio::spawn(async move {
                let mut sent = 0u64;
                for n in 0..40u64 {
                    let pad = "p".repeat(usize::try_from((w * 997 + n * 31) % 9_000).unwrap());
                    let frame = serde_json::json!({"w": w, "n": n, "pad": pad});
                    sent += serde_json::to_vec(&frame).unwrap().len() as u64 + 1;
                    stdin.send_json(&frame).await.unwrap();
                }
                sent
            })
        })
        .collect();
    let mut total = 0;
    for w in writers {
        total += w.await.unwrap();
    }
    stdin.close().await;
    let got = tokio::time::timeout(Duration::from_secs(5), reader)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.len(), 16 * 40);
    assert_eq!(stdin.bytes_written(), total);
    assert!(child.wait().await.success(), "cat exits on EOF after close()");
}

#[tokio::test]
async fn writing_after_the_child_died_is_a_typed_error() {
    let registry = ProcessRegistry::new();
    let child = spawn(&registry, sh("exit 0").stdin_piped(true)).await.unwrap();
    let stdin = child.stdin().unwrap();
    child.wait().await;
    assert_eq!(stdin.send_line("too late").await, Err(StdinError::BrokenPipe));
    assert!(!stdin.wrote_anything(), "nothing reached the child");
    assert_eq!(
        stdin.send_json(&1).await,
        Err(StdinError::BrokenPipe),
        "the error is sticky"
    );
}

#[tokio::test]
async fn wrote_anything_counts_delivered_bytes() {
    let registry = ProcessRegistry::new();
    let mut child = spawn(&registry, sh("read l; echo \"got $l\"").stdin_piped(true))
        .await
        .unwrap();
    let stdin = child.stdin().unwrap();
    let mut out = child.take_stdout().unwrap();
    assert!(!stdin.wrote_anything());
    stdin.send_line("hello").await.unwrap();
    assert_eq!(stdin.bytes_written(), 6);
    assert!(stdin.wrote_anything());
    assert!(matches!(out.next().await, Some(Ok(Line::Invalid { raw, .. })) if raw == "got hello"));
    child.wait().await;
}

#[tokio::test]
async fn stderr_tail_is_bounded_full_is_complete_and_lines_are_forwarded() {
    let registry = ProcessRegistry::new();
    let lines = Arc::new(Mutex::new(Vec::<Bytes>::new()));
    let sink = Arc::clone(&lines);
    let script = "i=0; while [ $i -lt 3000 ]; do echo \"err line $i\" >&2; i=$((i+1)); done";
    let spec = sh(script)
        .stderr_tail(1024)
        .on_stderr_line(move |l| sink.lock().unwrap().push(l));
    let child = spawn(&registry, spec).await.unwrap();
    assert!(child.wait().await.success());
    let expected: String = (0..3000).map(|i| format!("err line {i}\n")).collect();
    let stderr = child.stderr();
    assert!(stderr.is_finished(), "wait() returns after stderr is drained");
    let full = stderr.full();
    assert!(!full.truncated);
    assert_eq!(full.bytes, expected.as_bytes());
    let tail = stderr.tail();
    assert_eq!(tail.len(), 1024);
    assert!(expected.as_bytes().ends_with(&tail));
    assert!(stderr.tail_lossy().ends_with("err line 2999"));
    let lines = lines.lock().unwrap();
    assert_eq!(lines.len(), 3000);
    assert_eq!(lines[1234], "err line 1234");
}

#[tokio::test]
async fn stderr_beyond_the_cap_is_reported_truncated() {
    let registry = ProcessRegistry::new();
    let child = spawn(&registry, sh("echo 0123456789abcdef >&2").stderr_cap(10))
        .await
        .unwrap();
    child.wait().await;
    let full = child.stderr().take_full();
    assert_eq!(
        (&full.bytes[..], full.total, full.truncated),
        (&b"0123456789"[..], 17, true)
    );
    assert_eq!(child.stderr().tail_lossy(), "0123456789abcdef");
}
