//! The command line: `agent-adaptor run` streams a run with the built-in reference agent, prints
//! events as JSON lines with `--json`, and reports the outcome in its exit code.

use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_agent-adaptor"))
}

#[test]
fn run_json_prints_every_event_as_a_json_line() {
    let out = bin().args(["run", "--json", "hello cli"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "run_started");
    assert_eq!(lines.last().unwrap()["type"], "done");
    assert_eq!(
        lines.last().unwrap()["result"]["text"],
        "Reference reply: hello cli"
    );
    let seqs: Vec<u64> = lines
        .iter()
        .map(|l| l["meta"]["sequence"].as_u64().unwrap())
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn run_text_mode_streams_text_and_failures_exit_nonzero() {
    let out = bin().args(["run", "hi there"]).output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Reference reply: hi there"));
    let failed = bin().args(["run", "please fail"]).output().unwrap();
    assert_eq!(failed.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failed.stderr).contains("agent_error"));
    let unknown = bin().args(["run", "--agent", "nope", "x"]).output().unwrap();
    assert_eq!(unknown.status.code(), Some(2));
}

#[test]
fn without_a_terminal_approvals_follow_the_flags() {
    // Not a TTY: approvals are denied unless --approve-all.
    let denied = bin()
        .args(["run", "--json", "permission please"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&denied.stdout);
    assert!(text.contains("permission denied"), "{text}");
    let approved = bin()
        .args(["run", "--json", "--approve-all", "permission please"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&approved.stdout);
    assert!(
        text.contains("permission approved") && text.contains("write_file"),
        "{text}"
    );
}

#[test]
fn serve_refuses_a_zero_record_backlog_before_binding() {
    let out = bin()
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--record-backlog",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "clap refuses the value");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--record-backlog"), "{err}");
    assert!(out.stdout.is_empty(), "nothing was served");
}
