//! Descendants that left the leader's process group: found through `/proc`, pinned by pidfd, killed
//! when the leader is stopped.
//!
//! Signalling the leader's group reaches everything that stayed in it. A CLI may however start
//! work in a group or session of its own (Codex runs shell commands that way), and such a
//! process survives the group signal and is re-parented to init once the leader exits. The stop
//! ladder therefore takes a [`Stragglers`] snapshot of the leader's descendants in *other* groups
//! while the leader is still alive (at the stop request and before each signal rung), and kills
//! them — each by pidfd, plus their whole group — once the leader is gone. Pidfds make the kill
//! safe against pid reuse; a process that exits meanwhile is simply skipped.
//!
//! Limits: only descendants that exist at a snapshot are found (one started after the last snapshot
//! and before the leader's exit is missed); Linux only (elsewhere the snapshot is empty).

use std::collections::{BTreeSet, HashMap};
use std::os::fd::OwnedFd;

use tracing::{debug, warn};

use super::sys::{self, Signal};

/// One process of the tree, as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ProcStat {
    pid: u32,
    ppid: u32,
    pgid: i32,
}

/// Parses `/proc/<pid>/stat`: the command name is parenthesised and may contain anything, so the
/// fields resume after the last `)` (field 3 = state, 4 = ppid, 5 = pgrp).
fn parse_stat(pid: u32, stat: &str) -> Option<ProcStat> {
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let _state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcStat { pid, ppid, pgid })
}

/// Every process visible in `/proc`.
fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| parse_stat(pid, &std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?))
        .collect()
}

/// The descendants of `root` (not `root` itself) among `procs`, breadth first.
fn descendants(root: u32, procs: &[ProcStat]) -> Vec<ProcStat> {
    let mut children: HashMap<u32, Vec<ProcStat>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(*p);
    }
    let mut out = Vec::new();
    let mut queue = vec![root];
    while let Some(parent) = queue.pop() {
        for c in children.get(&parent).into_iter().flatten() {
            if c.pid != root && !out.iter().any(|o: &ProcStat| o.pid == c.pid) {
                out.push(*c);
                queue.push(c.pid);
            }
        }
    }
    out
}

/// Descendants of a leader that live outside its process group, pinned by pidfd.
#[derive(Debug, Default)]
pub(crate) struct Stragglers {
    pinned: Vec<(u32, i32, OwnedFd)>,
}

impl Stragglers {
    /// Adds the current descendants of `leader` that are not in `leader_pgid` (nor in our own group).
    pub(crate) fn snapshot(&mut self, leader: u32, leader_pgid: i32) {
        let own_pgid = sys::own_pgid();
        for p in descendants(leader, &all_processes()) {
            if p.pgid == leader_pgid
                || p.pgid == own_pgid
                || self.pinned.iter().any(|(pid, ..)| *pid == p.pid)
            {
                continue;
            }
            // Pin first, then confirm it is still the same child of the tree (not a recycled pid).
            let Ok(fd) = sys::pidfd_open(p.pid) else { continue };
            let still = std::fs::read_to_string(format!("/proc/{}/stat", p.pid))
                .ok()
                .and_then(|s| parse_stat(p.pid, &s));
            if still.is_some_and(|s| s.ppid == p.ppid) {
                self.pinned.push((p.pid, p.pgid, fd));
            }
        }
    }

    /// How many processes are pinned.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.pinned.len()
    }

    /// SIGKILLs every pinned process and its group; returns how many were still alive.
    pub(crate) fn kill(self, label: &str) -> usize {
        let own_pgid = sys::own_pgid();
        let groups: BTreeSet<i32> = self.pinned.iter().map(|(_, g, _)| *g).collect();
        let mut killed = 0;
        for (pid, _, fd) in &self.pinned {
            match sys::pidfd_kill(fd) {
                Ok(true) => killed += 1,
                Ok(false) => {}
                Err(e) => warn!(label, pid, error = %e, "Killing a descendant outside the group failed."),
            }
        }
        for g in groups.into_iter().filter(|g| *g != own_pgid) {
            // The pinned members keep the group id from being recycled while they are zombies.
            if let Err(e) = sys::signal_group(g, Signal::Kill) {
                warn!(label, pgid = g, error = %e, "Killing a straggler's process group failed.");
            }
        }
        if killed > 0 {
            debug!(
                label,
                killed, "Killed descendants that had left the process group."
            );
        }
        killed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: u32, ppid: u32, pgid: i32) -> ProcStat {
        ProcStat { pid, ppid, pgid }
    }

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let s = "4242 (we ird) name)) S 17 99 99 0 -1 4194560 0 0";
        assert_eq!(parse_stat(4242, s), Some(p(4242, 17, 99)));
        assert_eq!(parse_stat(1, "garbage"), None);
        assert_eq!(parse_stat(1, "1 (x) S notanumber 3"), None);
    }

    #[test]
    fn descendants_are_the_whole_subtree_and_nothing_else() {
        let procs = [
            p(10, 1, 10),
            p(11, 10, 10),
            p(12, 11, 12),
            p(13, 12, 12),
            p(20, 1, 20),
            p(21, 20, 20),
        ];
        let mut d: Vec<u32> = descendants(10, &procs).iter().map(|p| p.pid).collect();
        d.sort_unstable();
        assert_eq!(d, vec![11, 12, 13]);
        assert!(descendants(13, &procs).is_empty());
    }

    #[test]
    fn a_snapshot_of_a_live_tree_pins_only_foreign_groups() {
        use std::os::unix::process::CommandExt;
        // A group leader `sh` whose background child moves to a session (and group) of its own.
        let mut leader = std::process::Command::new("sh")
            .args(["-c", "setsid sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .expect("sh");
        let pid = leader.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut s = Stragglers::default();
        while s.len() == 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
            s.snapshot(pid, pid as i32);
        }
        assert_eq!(s.len(), 1, "the setsid'd sleep is the one foreign descendant");
        let started = std::time::Instant::now();
        assert_eq!(s.kill("test"), 1);
        // With the sleep gone, `wait` returns and the leader exits long before the sleep's 30 s.
        loop {
            if leader.try_wait().expect("try_wait").is_some() {
                break;
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "the straggler survived"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}
