//! The handful of raw Unix calls the supervisor needs, each behind a small safe function with its
//! own `#[allow(unsafe_code)]` and SAFETY note: signalling a process group, watching a pidfd, and
//! the pre-exec hook that sets the parent-death signal.

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

    #[test]
    fn missing_group_is_not_an_error() {
        // pid_max is at most 2^22 on Linux, so this group cannot exist.
        assert!(!signal_group(i32::MAX - 7, Signal::Term).unwrap());
        assert!(!group_exists(i32::MAX - 7));
    }
}
