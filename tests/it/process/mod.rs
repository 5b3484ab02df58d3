//! Integration tests for `driver::process`: real children (`sh`, `sleep`, `cat`, and this test
//! binary re-executed as a helper), checked through `/proc`.

mod cpu;
mod crash;
mod io;
mod lifecycle;
mod pool;
mod tidy;

use std::time::{Duration, Instant};

use agent_adaptor::driver::process::{Line, ProcessSpec, StdoutLines};
use futures::StreamExt;

/// `sh -c script` with PATH and friends inherited.
pub(crate) fn sh(script: &str) -> ProcessSpec {
    ProcessSpec::new("sh")
        .args(["-c", script])
        .inherit_base_env()
        .label("test-sh")
}

/// A process's state letter from `/proc/<pid>/stat` (`R`, `S`, `Z`, …), `None` once it is gone.
pub(crate) fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: the state follows the last ')'.
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Running (not gone, not a zombie).
pub(crate) fn alive(pid: u32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

/// Every `(pid, ppid, state)` whose process group is `pgid`.
pub(crate) fn group_members(pgid: i32) -> Vec<(u32, u32, char)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state ppid pgrp ...
        if fields.len() > 2 && fields[2].parse::<i32>().ok() == Some(pgid) {
            let state = fields[0].chars().next().unwrap_or('?');
            out.push((pid, fields[1].parse().unwrap_or(0), state));
        }
    }
    out
}

/// Members of `pgid` that are still running. Zombies do not count: once our child is reaped its
/// orphans belong to init, which on this machine reaps them lazily (seconds later).
pub(crate) fn live_group_members(pgid: i32) -> Vec<(u32, u32, char)> {
    group_members(pgid).into_iter().filter(|m| m.2 != 'Z').collect()
}

/// Polls `cond` until it holds or `within` passes; returns whether it held.
pub(crate) async fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Reads lines until a non-JSON line equal to `marker` (a readiness banner).
pub(crate) async fn wait_for_marker(lines: &mut StdoutLines, marker: &str) {
    let found = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(line) = lines.next().await {
            if let Ok(Line::Invalid { raw, .. }) = line
                && raw == marker.as_bytes()
            {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(found, Ok(true), "child never printed {marker:?}");
}
