//! Parser throughput for the Codex wire types over the recorded real-CLI streams in
//! `tests/fixtures/codex/`: lines per second for `parse_exec_line` and `parse_rpc_line`.
//!
//! Run: `CARGO_TARGET_DIR=/work/target cargo bench --bench codex_parse`.

use std::path::PathBuf;

use agent_adaptor::providers::codex::wire::{parse_exec_line, parse_rpc_line};
use divan::Bencher;
use divan::counter::{BytesCount, ItemsCount};

fn main() {
    divan::main();
}

/// Every stdout line of every fixture of `kind` (`exec` or `app-server`).
fn lines(kind: &str) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(kind);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".stdout.jsonl"))
        .collect();
    paths.sort();
    paths
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .expect("read")
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

fn run(bencher: Bencher, lines: &[String], parse: fn(&str) -> bool) {
    let bytes: usize = lines.iter().map(String::len).sum();
    bencher
        .counter(ItemsCount::new(lines.len()))
        .counter(BytesCount::new(bytes))
        .bench(|| lines.iter().filter(|l| parse(divan::black_box(l))).count());
}

/// All exec events (`thread.started` … `turn.completed`).
#[divan::bench]
fn exec_lines(bencher: Bencher) {
    run(bencher, &lines("exec"), |l| parse_exec_line(l).is_ok());
}

/// All app-server frames, including large responses (`thread/start`, `model/list`).
#[divan::bench]
fn rpc_lines(bencher: Bencher) {
    run(bencher, &lines("app-server"), |l| parse_rpc_line(l).is_ok());
}

/// Only the streaming hot path: `item/agentMessage/delta` and other delta notifications.
#[divan::bench]
fn rpc_delta_lines(bencher: Bencher) {
    let deltas: Vec<String> = lines("app-server")
        .into_iter()
        .filter(|l| l.contains("Delta\""))
        .collect();
    run(bencher, &deltas, |l| parse_rpc_line(l).is_ok());
}
