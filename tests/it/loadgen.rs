//! The service load generator (`src/bin/loadgen`) at a tiny scale, so it cannot rot: each scenario runs
//! against the real `agent-adaptor serve` binary and the fake Cursor CLI, and its report must be sane
//! (every stamped message delivered once, sequences without gaps or repeats, latency figures present,
//! subscribers held, memory figures read from the server process).

use std::process::Command;

use serde_json::Value;

fn loadgen(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_loadgen"))
        .args(args)
        .args([
            "--server-bin",
            env!("CARGO_BIN_EXE_agent-adaptor"),
            "--fake-cli",
            env!("CARGO_BIN_EXE_fake-cursor-agent"),
        ])
        .output()
        .expect("loadgen runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "loadgen {args:?} failed: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("UTF-8 report");
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("a JSON report ({e}): {stdout:?}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} is a count in {v:#}"))
}

/// No gap, no repeat, no duplicate; a lost message only when the runtime reported a drop.
fn assert_complete(r: &Value) {
    assert_eq!(u(r, "seq_breaks"), 0, "sequences step by exactly 1: {r:#}");
    assert_eq!(u(r, "duplicated_frames"), 0, "{r:#}");
    assert!(
        u(r, "lost_frames") == 0 || u(r, "dropped_events") > 0,
        "a message is lost only with a `dropped` report: {r:#}"
    );
}

#[test]
fn loadgen_throughput_delivers_every_event_to_one_client() {
    let r = loadgen(&["throughput", "--frames", "200"]);
    assert_eq!(r["scenario"], "throughput");
    assert_eq!(r["run_state"], "succeeded", "{r:#}");
    assert_complete(&r);
    assert_eq!(u(&r, "stamped_received") + u(&r, "lost_frames"), 200, "{r:#}");
    // Each message is start/content/end text deltas; plus run_started, the transcript and done.
    assert!(u(&r, "events") >= 3 * u(&r, "stamped_received") + 2, "{r:#}");
    assert!(r["events_per_s"].as_f64().unwrap() > 0.0, "{r:#}");
}

#[test]
fn loadgen_latency_times_every_live_delta_of_concurrent_runs() {
    let r = loadgen(&["latency", "--runs", "3", "--frames", "20", "--rate", "100"]);
    assert_eq!(r["scenario"], "latency");
    assert_eq!(u(&r, "runs_done"), 3, "{r:#}");
    assert_eq!(u(&r, "runs_succeeded"), 3, "{r:#}");
    assert_complete(&r);
    assert_eq!(u(&r, "lost_frames"), 0, "paced runs never drop: {r:#}");
    let lat = &r["latency"];
    assert_eq!(
        u(lat, "count") + u(&r, "replayed_untimed"),
        60,
        "every delta is timed or counted as replayed: {r:#}"
    );
    assert!(u(lat, "count") > 0, "{r:#}");
    let (p50, p99, max) = (
        lat["p50_us"].as_f64().unwrap(),
        lat["p99_us"].as_f64().unwrap(),
        lat["max_us"].as_f64().unwrap(),
    );
    assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{lat}");
    assert!(max < 60e6, "a latency is below a minute: {lat}");
    assert!(r["target_p99_under_1ms"].is_boolean(), "{r:#}");
}

#[test]
fn loadgen_subscribers_are_held_and_all_see_the_end() {
    let r = loadgen(&["subscribers", "--subscribers", "25", "--hold-secs", "1"]);
    assert_eq!(r["scenario"], "subscribers");
    assert_eq!(u(&r, "connected"), 25, "{r:#}");
    assert_eq!(u(&r, "closed_early"), 0, "{r:#}");
    assert_eq!(u(&r, "received_done_after_cancel"), 25, "{r:#}");
    assert_eq!(r["held"], true, "{r:#}");
    assert!(u(&r, "server_gauge_open") >= 25, "the server counts them: {r:#}");
    assert!(u(&r, "server_rss_connected_kib") > 0, "{r:#}");
    assert!(r["server_kib_per_subscriber"].is_number(), "{r:#}");
    assert_eq!(
        r["target_10k_under_64kib_each"], false,
        "25 is not the 10k target: {r:#}"
    );
}

#[test]
fn loadgen_memory_parks_runs_and_cancels_them() {
    let r = loadgen(&["memory", "--runs", "3"]);
    assert_eq!(r["scenario"], "memory");
    assert_eq!(u(&r, "runs_cancelled"), 3, "{r:#}");
    assert!(u(&r, "server_rss_before_kib") > 1000, "a real RSS in KiB: {r:#}");
    assert!(r["server_kib_per_active_run"].is_number(), "{r:#}");
}

#[test]
fn loadgen_standby_subscribers_are_held_and_all_see_the_end() {
    let r = loadgen(&["standby-subscribers", "--subscribers", "25", "--hold-secs", "1"]);
    assert_eq!(r["scenario"], "standby_subscribers");
    assert_eq!(u(&r, "connected"), 25, "{r:#}");
    assert_eq!(u(&r, "closed_early"), 0, "{r:#}");
    assert_eq!(u(&r, "received_done_after_cancel"), 25, "{r:#}");
    assert_eq!(r["held"], true, "{r:#}");
    assert!(u(&r, "server_gauge_open") >= 25, "the server counts them: {r:#}");
    assert!(r["server_kib_per_subscriber"].is_number(), "{r:#}");
}

#[test]
fn loadgen_agui_streams_are_held_and_each_ends_cancelled() {
    let r = loadgen(&["agui-streams", "--streams", "4", "--hold-secs", "1"]);
    assert_eq!(r["scenario"], "agui_streams");
    assert_eq!(u(&r, "connected"), 4, "{r:#}");
    assert_eq!(u(&r, "closed_early"), 0, "{r:#}");
    assert_eq!(u(&r, "terminal_after_cancel"), 4, "{r:#}");
    assert_eq!(
        u(&r, "run_error_cancelled"),
        4,
        "a cancelled run ends in RUN_ERROR: {r:#}"
    );
    assert_eq!(r["held"], true, "{r:#}");
    assert!(r["server_kib_per_stream_with_its_run"].is_number(), "{r:#}");
}
