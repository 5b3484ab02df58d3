//! The handful of raw Unix calls the supervisor needs, each behind a small safe function with its
//! own `#[allow(unsafe_code)]` and SAFETY note: signalling a process group, watching a pidfd, the
//! pre-exec hook that sets the parent-death signal, and reading a child's CPU time (`cpu.rs`).

use std::io;
use std::os::fd::OwnedFd;

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A signal we send to a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Polite: "clean up and exit".
    Term,
    /// Final: cannot be caught or ignored.
    Kill,
}

impl Signal {
    fn raw(self) -> libc::c_int {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        }
    }
}

/// Sends `signal` to every process in group `pgid`. `Ok(false)` means the group is already empty
/// (ESRCH). Refuses pgids 0 and 1, which would target our own group or init's.
pub(crate) fn signal_group(pgid: i32, signal: Signal) -> io::Result<bool> {
    if pgid <= 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("refusing to signal process group {pgid}"),
        ));
    }
    #[allow(unsafe_code)]
    // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
    // addresses the process group `pgid` (checked > 1 above).
    let rc = unsafe { libc::kill(-pgid, signal.raw()) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ESRCH) => Ok(false),
        _ => Err(err),
    }
}

/// This process's own process group id (never signalled as a straggler's group).
pub(crate) fn own_pgid() -> i32 {
    #[allow(unsafe_code)]
    // SAFETY: getpgrp(2) takes no arguments, touches no memory and cannot fail.
    unsafe {
        libc::getpgrp()
    }
}

/// Whether any process (zombies included) still has process group id `pgid`.
pub fn group_exists(pgid: i32) -> bool {
    if pgid <= 1 {
        return false;
    }
    #[allow(unsafe_code)]
    // SAFETY: kill(2) with signal 0 only checks existence and permission; no memory is touched.
    let rc = unsafe { libc::kill(-pgid, 0) };
    // EPERM means the group exists but belongs to someone else.
    rc == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A pidfd for `pid` registered with the current tokio runtime (Linux 5.3+). It becomes readable
/// when the process exits, BEFORE it is reaped, which lets us kill the rest of its group while the
/// zombie still pins the pgid. Must be called inside a runtime.
pub(crate) fn exit_watch(pid: u32) -> io::Result<AsyncFd<OwnedFd>> {
    let fd = pidfd_open(pid)?;
    #[allow(unsafe_code)]
    // SAFETY: `fd` is an open descriptor owned by the OwnedFd we move into the AsyncFd; it stays
    // open and unchanged until the AsyncFd is dropped, and nothing else closes it.
    let registered = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) };
    registered.map_err(|e| e.into_parts().1)
}

#[cfg(target_os = "linux")]
pub(crate) fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    #[allow(unsafe_code)]
    // SAFETY: pidfd_open(2) takes a pid and flags and returns a new fd or -1; no memory is passed.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, libc::PIDFD_NONBLOCK) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let fd = libc::c_int::try_from(fd).map_err(|_| io::Error::other("pidfd out of range"))?;
    #[allow(unsafe_code)]
    // SAFETY: `fd` was just returned by pidfd_open, is open, and nothing else owns it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    Ok(owned)
}

/// Sends SIGKILL to the process a pidfd refers to. `Ok(false)` when it has already exited. Unlike
/// `kill(pid)`, this can never hit an unrelated process that reused the pid.
#[cfg(target_os = "linux")]
pub(crate) fn pidfd_kill(pidfd: &OwnedFd) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    #[allow(unsafe_code)]
    // SAFETY: pidfd_send_signal(2) takes an open pidfd (borrowed for the call), a signal number,
    // a null siginfo pointer (allowed: the kernel fills in a default) and zero flags.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::ESRCH) => Ok(false),
        _ => Err(err),
    }
}

/// Without pidfd support we fall back to reaping first (see the supervisor's docs).
#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_open(_pid: u32) -> io::Result<OwnedFd> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Pidfds are Linux-only.
#[cfg(not(target_os = "linux"))]
pub(crate) fn pidfd_kill(_pidfd: &OwnedFd) -> io::Result<bool> {
    Err(io::Error::from(io::ErrorKind::Unsupported))
}

/// Arranges for the child to receive SIGKILL when the thread that spawned it dies (Linux
/// `PR_SET_PDEATHSIG`). See `spawn.rs` for why that thread is a dedicated, immortal one.
///
/// What it covers: the server being SIGKILLed, crashing, or exiting without stopping its
/// children — the DIRECT child dies. What it does not cover: the child's own descendants
/// (they only get the signal if they set PDEATHSIG themselves); a child that execs a setuid
/// binary (the kernel clears the setting); and it does not reap anything.
#[cfg(target_os = "linux")]
pub(crate) fn set_parent_death_signal(cmd: &mut tokio::process::Command) {
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the forked child before exec. It only makes the
    // async-signal-safe syscalls prctl(2) and getppid(2); it allocates nothing, takes no lock
    // and touches no shared state.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died between fork and prctl: then nobody will ever signal us.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// The CPU time (user + system) of an exited, not yet reaped child `pid` and of the descendants it
/// waited for: its rusage, read with `waitid(WEXITED | WNOWAIT | WNOHANG)`, which leaves the zombie in
/// place for the supervisor to reap. `None` when it cannot be read (not a zombie child of ours, not
/// Linux).
#[cfg(target_os = "linux")]
pub(crate) fn zombie_cpu(pid: u32) -> Option<std::time::Duration> {
    let pid = libc::id_t::try_from(pid).ok()?;
    #[allow(unsafe_code)]
    // SAFETY: all-zero bytes are a valid `siginfo_t` and `rusage` (plain C structs of integers).
    let (mut info, mut usage): (libc::siginfo_t, libc::rusage) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
    #[allow(unsafe_code)]
    // SAFETY: the raw waitid(2) syscall (whose fifth argument is the rusage glibc's wrapper hides)
    // writes into the two structs we own for the duration of the call; WNOWAIT leaves the child
    // waitable, so the supervisor still reaps it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_waitid,
            libc::P_PID,
            pid,
            &mut info as *mut libc::siginfo_t,
            libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            &mut usage as *mut libc::rusage,
        )
    };
    #[allow(unsafe_code)]
    // SAFETY: reading the pid of a siginfo the kernel filled (or left zeroed) is always valid.
    let found = unsafe { info.si_pid() } != 0;
    if rc != 0 || !found {
        return None;
    }
    Some(timeval(usage.ru_utime) + timeval(usage.ru_stime))
}

#[cfg(target_os = "linux")]
fn timeval(t: libc::timeval) -> std::time::Duration {
    let secs = u64::try_from(t.tv_sec).unwrap_or(0);
    let micros = u64::try_from(t.tv_usec).unwrap_or(0);
    std::time::Duration::from_secs(secs) + std::time::Duration::from_micros(micros)
}

/// Rusage of zombies is read on Linux only.
#[cfg(not(target_os = "linux"))]
pub(crate) fn zombie_cpu(_pid: u32) -> Option<std::time::Duration> {
    None
}

/// The CPU time (user + system, its own plus that of the children it waited for) a live process has
/// used so far, from `/proc/<pid>/stat`; `None` when that cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn process_cpu(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything: the fields follow the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state (field 3) is index 0, so utime (14), stime, cutime, cstime are 11..=14.
    let ticks: u64 = fields
        .get(11..=14)?
        .iter()
        .map(|f| f.parse::<i64>().ok().and_then(|v| u64::try_from(v).ok()))
        .sum::<Option<u64>>()?;
    let hz = clock_ticks()?;
    Some(std::time::Duration::from_micros(
        ticks.saturating_mul(1_000_000) / hz,
    ))
}

#[cfg(target_os = "linux")]
fn clock_ticks() -> Option<u64> {
    static HZ: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *HZ.get_or_init(|| {
        #[allow(unsafe_code)]
        // SAFETY: sysconf(3) reads a constant of the system; no memory is passed.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        u64::try_from(hz).ok().filter(|h| *h > 0)
    })
}

/// `/proc` is read on Linux only.
#[cfg(not(target_os = "linux"))]
pub(crate) fn process_cpu(_pid: u32) -> Option<std::time::Duration> {
    None
}

/// Parent-death signals are Linux-only; elsewhere the process group and kill-on-drop remain.
#[cfg(not(target_os = "linux"))]
pub(crate) fn set_parent_death_signal(_cmd: &mut tokio::process::Command) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_dangerous_pgids() {
        assert!(signal_group(0, Signal::Term).is_err());
        assert!(signal_group(1, Signal::Kill).is_err());
        assert!(!group_exists(0));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn our_own_process_has_a_cpu_reading_and_a_missing_one_none() {
        // Burn a little CPU so the reading is above zero at any clock-tick resolution.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        while start.elapsed() < std::time::Duration::from_millis(50) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let own = process_cpu(std::process::id()).expect("/proc/self/stat");
        assert!(own > std::time::Duration::ZERO, "{own:?}");
        assert_eq!(process_cpu(u32::MAX), None);
        assert_eq!(zombie_cpu(u32::MAX), None);
    }

    #[test]
    fn missing_group_is_not_an_error() {
        // pid_max is at most 2^22 on Linux, so this group cannot exist.
        assert!(!signal_group(i32::MAX - 7, Signal::Term).unwrap());
        assert!(!group_exists(i32::MAX - 7));
    }
}
