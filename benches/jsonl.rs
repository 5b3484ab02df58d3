//! Throughput of the stdout JSON-lines reader (`driver::process::JsonLines`) on typical CLI
//! frames (~300-byte stream-json lines).
//!
//! Run with: `CARGO_TARGET_DIR=/work/target cargo bench --bench jsonl`
//!
//! `in_memory` measures framing + JSON parsing alone on one core (current-thread runtime over a
//! byte slice). `through_child_pipe` adds the real path: `cat` writes the frames into a pipe and
//! the reader consumes them from a spawned, supervised child (spawn and reap included).

use agent_adaptor::driver::process::{JsonLines, Line, ProcessRegistry, ProcessSpec, spawn};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};
use futures::StreamExt;

fn main() {
    divan::main();
}

/// `n` frames shaped like Claude Code's `stream_event` text deltas, each close to 300 bytes.
fn frames(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 310);
    for i in 0..n {
        let line = serde_json::json!({
            "type": "stream_event",
            "event": {"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": format!("token {i} of a longer streamed answer, ")}},
            "session_id": "0b9f2d1c-6a55-4a8e-9f57-2f1a3c4d5e6f",
            "parent_tool_use_id": null,
            "uuid": format!("8c1e4f0a-1b2c-4d3e-8f9a-{i:012}"),
        });
        serde_json::to_writer(&mut out, &line).unwrap();
        out.push(b'\n');
    }
    out
}

async fn count_json<R: tokio::io::AsyncRead + Unpin>(lines: &mut JsonLines<R>) -> usize {
    let mut n = 0;
    while let Some(line) = lines.next().await {
        if matches!(line, Ok(Line::Json { .. })) {
            n += 1;
        }
    }
    n
}

const LINES: usize = 10_000;

#[divan::bench]
fn in_memory(bencher: Bencher) {
    let data = frames(LINES);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    bencher
        .counter(ItemsCount::new(LINES))
        .counter(BytesCount::of_slice(&data))
        .bench_local(|| {
            rt.block_on(async {
                let mut lines = JsonLines::new(&data[..], 16 << 20, 64 << 20);
                assert_eq!(count_json(&mut lines).await, LINES);
                lines.take_raw().total
            })
        });
}

#[divan::bench(sample_count = 20)]
fn through_child_pipe(bencher: Bencher) {
    const N: usize = 100_000;
    let data = frames(N);
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &data).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = ProcessRegistry::new();
    bencher
        .counter(ItemsCount::new(N))
        .counter(BytesCount::of_slice(&data))
        .bench_local(|| {
            rt.block_on(async {
                let spec = ProcessSpec::new("/bin/cat").arg(file.path());
                let mut child = spawn(&registry, spec).await.unwrap();
                let mut lines = child.take_stdout().unwrap();
                assert_eq!(count_json(&mut lines).await, N);
                child.wait().await
            })
        });
}
