//! [`spawn`]: the crate's single call site of `Command::spawn`.
//!
//! Every child gets: its own process group (`process_group(0)`), `kill_on_drop(true)` as a
//! backstop, an environment built only from its spec plus the owner tag `AGENT_ADAPTOR_OWNER`
//! (see `orphans.rs`), and on Linux `PR_SET_PDEATHSIG(SIGKILL)`.
//!
//! The parent-death signal is tied to the THREAD that forked the child, not to the process: if a
//! child were forked on a tokio blocking-pool thread (which exits after 10 s idle) or on a
//! short-lived runtime's thread, it would be killed when that thread ends. So the fork happens on
//! one dedicated thread that lives as long as the server process; a spawn request is handed to it
//! together with the caller's runtime handle (so pipes and the exit watcher are registered with
//! the caller's runtime), and the result comes back over a oneshot.

use std::io;
use std::process::Stdio;
use std::sync::OnceLock;
use std::sync::mpsc as std_mpsc;
use std::time::{Instant, SystemTime};

use tokio::runtime::Handle;
use tokio::sync::{mpsc, oneshot, watch};
use tracing::{debug, warn};

use super::child::Child;
use super::error::ProcessError;
use super::lines::JsonLines;
use super::orphans::{OWNER_ENV, owner_tag};
use super::registry::{ProcessId, ProcessInfo, ProcessRegistry};
use super::spec::ProcessSpec;
use super::stderr::{self, StderrCapture};
use super::stdin::StdinWriter;
use super::supervise::Supervisor;
use super::sys;

type Job = Box<dyn FnOnce() + Send>;

/// The immortal spawner thread's queue (or why it could not be started).
fn spawner() -> Result<&'static std_mpsc::Sender<Job>, ProcessError> {
    static SPAWNER: OnceLock<Result<std_mpsc::Sender<Job>, String>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = std_mpsc::channel::<Job>();
            std::thread::Builder::new()
                .name("agent-adaptor-spawner".into())
                .spawn(move || {
                    while let Ok(job) = rx.recv() {
                        // A panic must not kill the thread every child's PDEATHSIG is tied to.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                })
                .map(|_| tx)
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| ProcessError::SpawnerUnavailable(e.clone()))
}

/// Runs `cmd.spawn()` on the spawner thread, inside `runtime`'s context.
async fn spawn_on_spawner(
    runtime: Handle,
    mut cmd: tokio::process::Command,
) -> Result<io::Result<tokio::process::Child>, ProcessError> {
    let (reply, result) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let _ = reply.send(cmd.spawn());
    });
    spawner()?
        .send(job)
        .map_err(|_| ProcessError::SpawnerUnavailable("its queue is closed".into()))?;
    result
        .await
        .map_err(|_| ProcessError::SpawnerUnavailable("it dropped the request".into()))
}

fn command(spec: &ProcessSpec) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(&spec.program);
    cmd.args(&spec.args)
        .env_clear()
        .envs(spec.resolve_env(std::env::vars_os()))
        .env(OWNER_ENV, owner_tag())
        .envs(super::traceparent::env())
        .stdin(if spec.stdin_piped {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(dir) = &spec.cwd {
        cmd.current_dir(dir);
    }
    sys::set_parent_death_signal(&mut cmd);
    cmd
}

/// Starts `spec` as a supervised child registered in `registry`.
///
/// Must be called inside a tokio runtime (with I/O and time enabled); the child's owner task,
/// stdin writer and stderr reader run on that runtime.
pub async fn spawn(registry: &ProcessRegistry, spec: ProcessSpec) -> Result<Child, ProcessError> {
    if registry.is_closed() {
        return Err(ProcessError::ShuttingDown);
    }
    let runtime = Handle::try_current().map_err(|_| ProcessError::NoRuntime)?;
    let mut child = spawn_on_spawner(runtime, command(&spec))
        .await?
        .map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                ProcessError::NotFound {
                    program: spec.program.clone(),
                }
            } else {
                ProcessError::Spawn {
                    program: spec.program.clone(),
                    source,
                }
            }
        })?;
    let started = Instant::now();
    // A spawned child always has a pid until it is reaped, and nobody reaps it before us.
    let pid = child.id().unwrap_or_default();
    let pgid = i32::try_from(pid).unwrap_or_default();
    let exit_fd = match sys::exit_watch(pid) {
        Ok(fd) => Some(fd),
        Err(e) => {
            debug!(error = %e, "No pidfd; group cleanup after natural exit falls back to reap-then-kill.");
            None
        }
    };

    let stdin = child.stdin.take().map(StdinWriter::start);
    let stdout = child
        .stdout
        .take()
        .map(|out| JsonLines::new(out, spec.max_line_len, spec.stdout_cap));
    let stderr = StderrCapture::new(spec.stderr_tail, spec.stderr_cap);
    let stderr_task = child
        .stderr
        .take()
        .map(|err| tokio::spawn(stderr::drain(err, stderr.clone(), spec.on_stderr_line.clone())));

    let id = ProcessId::next();
    // Charged to the execution whose meter is in scope (`cpu.rs`).
    let cpu = super::cpu::ChildCpu::spawned(pid);
    let (control_tx, control_rx) = mpsc::unbounded_channel();
    let (exit_tx, exit_rx) = watch::channel(None);
    let label = spec.label.clone();
    let registered = registry.insert(
        ProcessInfo {
            id,
            pid,
            pgid,
            label: label.clone(),
            started_at: SystemTime::now(),
        },
        control_tx.downgrade(),
        exit_rx.clone(),
    );
    debug!(label = %label, pid, "Spawned child in its own process group.");
    if pgid <= 1 {
        warn!(label = %label, pid, "Spawned child reports no usable pid; group signals are disabled.");
    }
    let supervisor = Supervisor {
        child,
        id,
        pid,
        pgid,
        label: label.clone(),
        exit_fd,
        control: control_rx,
        registry: registry.clone(),
        stderr: stderr.clone(),
        stderr_task,
        exit_tx,
        started,
        cpu: cpu.clone(),
    };
    // In the spawning execution's span, so supervision logs name the run.
    tokio::spawn(tracing::Instrument::in_current_span(supervisor.run()));
    if !registered {
        // Shutdown began while we were forking: dropping the handle kills and reaps it.
        drop(control_tx);
        return Err(ProcessError::ShuttingDown);
    }
    Ok(Child {
        id,
        pid,
        pgid,
        label,
        control: control_tx,
        exit: exit_rx,
        stdin,
        stdout,
        stderr,
        cpu,
    })
}
