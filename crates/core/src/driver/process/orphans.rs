//! The boot-time reaper: kills what a previous, SIGKILLed server instance left behind.
//!
//! PR_SET_PDEATHSIG kills a server's DIRECT children when it dies, but not their descendants
//! (a CLI's MCP servers, tool subprocesses, background jobs): those are re-parented to init and
//! live on. So every child is spawned with [`OWNER_ENV`] = `<server pid>.<server start time>`,
//! which descendants inherit. [`reap_orphans`] scans `/proc` for processes carrying a tag whose
//! owner is no longer running (the pid is gone, is a zombie, or now belongs to a process with a
//! different start time) and kills them. Owners that are alive (this server, other replicas on
//! the same host) are never touched.
//!
//! Limits: a descendant that scrubs its environment is invisible here; processes of other users
//! are skipped (their environ is unreadable); Linux only (elsewhere it finds nothing).

use std::sync::OnceLock;

use tracing::{info, warn};

use super::sys;

/// The environment variable that tags every spawned child (and, by inheritance, its descendants)
/// with the server instance that owns it.
pub const OWNER_ENV: &str = "AGENT_ADAPTOR_OWNER";

/// What [`reap_orphans`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrphanReport {
    /// Tagged processes whose owner is gone.
    pub found: usize,
    /// Of those, how many were sent SIGKILL (the others exited meanwhile or could not be signalled).
    pub killed: usize,
}

/// This server instance's tag, `<pid>.<start time in clock ticks>`.
pub(crate) fn owner_tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let pid = std::process::id();
        let start = start_time(pid).unwrap_or(0);
        format!("{pid}.{start}")
    })
}

/// Field 22 of `/proc/<pid>/stat` (start time since boot), or `None` if the process is gone or a zombie.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is parenthesised and may contain anything: fields resume after the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // fields[0] is field 3 (state), so field 22 is fields[19].
    if fields.first() == Some(&"Z") {
        return None;
    }
    fields.get(19)?.parse().ok()
}

/// Whether the owner named by `tag` is still running.
fn owner_alive(tag: &str) -> bool {
    let Some((pid, start)) = tag.split_once('.') else {
        return false;
    };
    let (Ok(pid), Ok(start)) = (pid.parse::<u32>(), start.parse::<u64>()) else {
        return false;
    };
    start_time(pid) == Some(start)
}

/// The owner tag in `/proc/<pid>/environ`, if any.
fn tag_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{OWNER_ENV}=");
    environ
        .split(|&b| b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// Kills every process left by a dead server instance; see the module docs. Call once at startup,
/// before serving. Synchronous and quick (it only reads `/proc`).
pub fn reap_orphans() -> OrphanReport {
    let mut report = OrphanReport::default();
    let me = std::process::id();
    let mine = owner_tag();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return report;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        // Pin the process first: if `pid` is recycled after this, the pidfd still names the old
        // process and the kill below fails harmlessly instead of hitting the newcomer.
        let Ok(pidfd) = sys::pidfd_open(pid) else { continue };
        let Some(tag) = tag_of(pid) else { continue };
        if tag == mine || owner_alive(&tag) {
            continue;
        }
        report.found += 1;
        match sys::pidfd_kill(&pidfd) {
            Ok(true) => {
                report.killed += 1;
                info!(pid, owner = %tag, "Killed a process left behind by a dead server instance.");
            }
            Ok(false) => {}
            Err(e) => warn!(pid, owner = %tag, error = %e, "Could not kill an orphaned process."),
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_tag_is_alive_and_bogus_tags_are_not() {
        let tag = owner_tag();
        assert!(tag.starts_with(&format!("{}.", std::process::id())));
        assert!(owner_alive(tag));
        let (pid, start) = tag.split_once('.').unwrap();
        let older: u64 = start.parse::<u64>().unwrap().wrapping_sub(1);
        assert!(
            !owner_alive(&format!("{pid}.{older}")),
            "same pid, other start time: a different process"
        );
        assert!(!owner_alive("not-a-tag"));
        assert!(!owner_alive(&format!("{}.1", i32::MAX - 7)));
    }
}
