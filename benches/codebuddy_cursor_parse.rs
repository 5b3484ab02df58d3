//! Parser throughput for the CodeBuddy and Cursor stream-json wire types over the recorded fixtures.
//!
//! Run: `CARGO_TARGET_DIR=/work/target cargo bench --bench codebuddy_cursor_parse`. Each benchmark parses the
//! whole corpus once per iteration and reports lines per second (`items/s`).

use std::path::Path;

use agent_adaptor::providers::{codebuddy, cursor};
use divan::counter::{BytesCount, ItemsCount};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

fn corpus(dir: &str, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|l| keep(l))
        .collect()
}

fn bytes(lines: &[String]) -> usize {
    lines.iter().map(String::len).sum()
}

/// Every CodeBuddy fixture line (system/init lines are ~3 KB, deltas ~300 B).
#[divan::bench]
fn codebuddy_all_lines(b: Bencher) {
    let lines = corpus("tests/fixtures/codebuddy", |_| true);
    b.counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes(&lines)))
        .bench(|| {
            for l in &lines {
                let _ = black_box(codebuddy::wire::parse_line(black_box(l)));
            }
        });
}

/// Only `stream_event` lines: the hot path of a streaming turn.
#[divan::bench]
fn codebuddy_stream_events(b: Bencher) {
    let lines = corpus("tests/fixtures/codebuddy", |l| {
        l.starts_with(r#"{"type":"stream_event""#)
    });
    b.counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes(&lines)))
        .bench(|| {
            for l in &lines {
                let _ = black_box(codebuddy::wire::parse_line(black_box(l)));
            }
        });
}

/// Every Cursor fixture line (fake CLI output, including the malformed ones).
#[divan::bench]
fn cursor_all_lines(b: Bencher) {
    let lines = corpus("tests/fixtures/cursor", |_| true);
    b.counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes(&lines)))
        .bench(|| {
            for l in &lines {
                let _ = black_box(cursor::wire::parse_line(black_box(l)));
            }
        });
}

/// Parse and validate (the strict rules) every Cursor fixture line.
#[divan::bench]
fn cursor_parse_and_validate(b: Bencher) {
    let lines = corpus("tests/fixtures/cursor", |_| true);
    b.counter(ItemsCount::new(lines.len())).bench(|| {
        let mut v = cursor::wire::Validator::new();
        for l in &lines {
            let _ = black_box(v.push_line(black_box(l)));
        }
        black_box(v.finish())
    });
}
