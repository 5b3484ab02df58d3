//! Throughput of `providers::claude::wire::parse_line` over the recorded Claude Code streams
//! (`tests/fixtures/claude/*.jsonl`, stdout only). Run: `cargo bench --bench claude_parse`.
//! Target: at least 300,000 lines/s on one core for the mixed stream.

use std::hint::black_box;
use std::path::PathBuf;

use agent_adaptor::providers::claude::wire::{Frame, parse_line};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};

fn main() {
    divan::main();
}

/// Every stdout line of every fixture, in file order.
fn all_lines() -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| {
        let name = p.to_string_lossy();
        name.ends_with(".jsonl") && !name.ends_with(".stdin.jsonl")
    });
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read(&f).unwrap_or_default();
        out.extend(
            text.split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec),
        );
    }
    out
}

fn run(bencher: Bencher, lines: Vec<Vec<u8>>) {
    assert!(!lines.is_empty(), "no fixtures found");
    let bytes: usize = lines.iter().map(Vec::len).sum();
    bencher
        .counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes))
        .bench(|| {
            let mut known = 0usize;
            for l in &lines {
                if let Ok(f) = parse_line(black_box(l))
                    && !matches!(f, Frame::Unknown(_))
                {
                    known += 1;
                }
            }
            black_box(known)
        });
}

/// The whole recorded corpus: init/result-heavy (big lines) plus stream events.
#[divan::bench]
fn all_fixtures(bencher: Bencher) {
    run(bencher, all_lines());
}

/// Only `stream_event` lines: what dominates a long streamed answer.
#[divan::bench]
fn stream_events(bencher: Bencher) {
    let lines = all_lines()
        .into_iter()
        .filter(|l| l.starts_with(br#"{"type":"stream_event""#))
        .collect();
    run(bencher, lines);
}

/// Reference point: serde_json only validating the same corpus (`IgnoredAny`), no frame decoding.
/// `all_fixtures` cannot be much faster than this.
#[divan::bench]
fn baseline_validate_only(bencher: Bencher) {
    let lines = all_lines();
    let bytes: usize = lines.iter().map(Vec::len).sum();
    bencher
        .counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes))
        .bench(|| {
            for l in &lines {
                let _ = black_box(serde_json::from_slice::<serde::de::IgnoredAny>(black_box(l)));
            }
        });
}
