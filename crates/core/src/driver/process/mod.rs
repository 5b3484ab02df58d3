//! Child-process supervision and JSON-lines framing, shared by every CLI driver.
//!
//! **Invariant:** this module is the only code in the crate that spawns processes (the single
//! `Command::spawn` call is in `spawn.rs`). Drivers describe a child with a [`ProcessSpec`] and get
//! back a [`Child`]; they never touch `tokio::process` themselves.
//!
//! **Invariant:** no child outlives its run, its Agent or the server:
//! - every child leads its own process group, and every signal goes to the whole group;
//! - stopping escalates (driver's protocol interrupt → SIGTERM → SIGKILL, see [`StopPlan`]) and
//!   always ends with the child reaped;
//! - when the leader exits on its own, whatever is left in its group is killed;
//! - a stopped leader's descendants that moved to groups of their own are found while it lives and
//!   killed once it is gone (`tree`);
//! - dropping a [`Child`] without stopping it kills the group and still reaps it;
//! - [`ProcessRegistry::shutdown_all`] stops everything that is left, and refuses new spawns;
//! - on Linux the child gets `PR_SET_PDEATHSIG(SIGKILL)`, so it dies even if the server is
//!   SIGKILLed. That covers the direct child only; its descendants carry an owner tag in their
//!   environment and [`reap_orphans`], run at the next start, kills them.
//!
//! # Parts
//!
//! | file | owns |
//! |---|---|
//! | `spec.rs` | [`ProcessSpec`]: program, args, cwd, explicit env, limits, label; redacting `Debug` |
//! | `spawn.rs` | [`spawn`]: the dedicated spawner thread, group, PDEATHSIG |
//! | `child.rs` | [`Child`]: the handle (`stdin`, `take_stdout`, `stderr`, `wait`, `stop`) |
//! | `supervise.rs` | the owner task: the only code that waits on a child |
//! | `stop.rs` | [`StopPlan`], [`ExitInfo`], [`Escalation`] |
//! | `stdin.rs` | [`StdinWriter`]: whole frames, never interleaved, byte-accurate delivery tracking |
//! | `lines.rs` | [`JsonLines`] / [`Line`]: stdout framing that never stops on bad input |
//! | `stderr.rs` | [`StderrCapture`]: bounded tail, complete bytes, line forwarding |
//! | `capture.rs` | [`Captured`]: complete output with a cap, for `Result.Raw` |
//! | `cpu.rs` | [`CpuMeter`]: the CPU time of an execution's children (rusage at exit, `/proc` while kept) |
//! | `registry.rs` | [`ProcessRegistry`]: live children, metrics, shutdown backstop |
//! | `pool.rs` | [`ProcessPool`]: persistent processes per thread (lease, signature, idle eviction, close) |
//! | `kept.rs` | [`KeptLimit`]: one LRU cap on idle kept processes across every pool |
//! | `memory.rs` | `MemAvailable` from `/proc/meminfo` and the capacity defaults derived from it |
//! | `orphans.rs` | [`reap_orphans`]: boot-time cleanup after a server that was SIGKILLed |
//! | `sys.rs` | the raw syscalls (signals, pidfd, prctl), each in a minimal `unsafe` block |
//!
//! # Example
//!
//! ```
//! use agent_adaptor::driver::process::{spawn, Line, ProcessRegistry, ProcessSpec, StopPlan};
//! use futures::StreamExt;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = ProcessRegistry::new();
//! let spec = ProcessSpec::new("sh")
//!     .args(["-c", "echo banner; while read l; do echo \"{\\\"echo\\\":$l}\"; done"])
//!     .inherit_base_env()
//!     .stdin_piped(true)
//!     .label("example");
//! let mut child = spawn(&registry, spec).await?;
//! let stdin = child.stdin().expect("stdin is piped");
//! let mut stdout = child.take_stdout().expect("stdout is always piped");
//!
//! stdin.send_line("42").await?;
//! assert!(matches!(stdout.next().await, Some(Ok(Line::Invalid { .. })))); // the banner
//! match stdout.next().await {
//!     Some(Ok(Line::Json { value, .. })) => assert_eq!(value["echo"], 42),
//!     other => panic!("unexpected {other:?}"),
//! }
//! assert!(stdin.wrote_anything());
//!
//! // Polite first: closing stdin ends the loop; SIGTERM/SIGKILL only if that is not enough.
//! let plan = StopPlan::new().interrupt(async move { stdin.close().await });
//! let exit = child.stop(plan).await;
//! assert!(exit.success());
//! assert_eq!(&stdout.take_raw().bytes[..], b"banner\n{\"echo\":42}\n");
//! assert_eq!(registry.live_count(), 0);
//! # Ok(())
//! # }
//! ```

mod capture;
mod child;
mod cpu;
mod error;
mod kept;
mod lines;
pub mod memory;
mod orphans;
mod pool;
mod probe;
mod registry;
mod spawn;
mod spec;
mod stderr;
mod stdin;
mod stop;
mod supervise;
mod sys;
mod traceparent;
mod tree;

pub use capture::Captured;
pub use child::{Child, StdoutLines};
pub use cpu::CpuMeter;
pub use error::ProcessError;
pub use kept::KeptLimit;
pub use lines::{JsonLines, JsonLinesCodec, Line, TOO_LONG_PREFIX};
pub use orphans::{OWNER_ENV, OrphanReport, reap_orphans};
pub use pool::{DEFAULT_IDLE_TIMEOUT, Lease, PoolKey, Pooled, ProcessPool, Taken};
pub use probe::{probe_stdout, read_text};
pub use registry::{ProcessId, ProcessInfo, ProcessRegistry, ShutdownReport};
pub use spawn::spawn;
pub use spec::{
    BASE_ENV_ALLOWLIST, DEFAULT_MAX_LINE_LEN, DEFAULT_RAW_CAP, DEFAULT_STDERR_TAIL, EnvFilter, ProcessSpec,
    StderrLineFn,
};
pub use stderr::StderrCapture;
pub use stdin::{StdinError, StdinWriter};
pub use stop::{DEFAULT_INTERRUPT_GRACE, DEFAULT_TERM_GRACE, Escalation, ExitInfo, StopPlan};
pub use sys::group_exists;
