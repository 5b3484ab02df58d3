//! Runs the real Codex CLI against the Responses mock in an isolated temp dir: one-shot
//! `codex exec` runs and an interactive `codex app-server` session with a timestamped transcript.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::codex_env::{CodexEnv, CodexEnvOptions};
use agent_adaptor::testkit::mock::responses::{MockResponses, Script};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::Notify;

/// Generous bound for one scenario; Codex retries an unreachable provider forever.
pub const SCENARIO_TIMEOUT: Duration = Duration::from_secs(40);

/// A temp dir + mock + config, ready to launch Codex.
pub struct Lab {
    pub dir: tempfile::TempDir,
    pub mock: MockResponses,
    pub env: CodexEnv,
    pub bin: PathBuf,
}

/// The outcome of a one-shot `codex exec`.
#[derive(Debug)]
pub struct ExecRun {
    pub argv: Vec<String>,
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
    pub elapsed: Duration,
}

impl ExecRun {
    /// stdout lines parsed as JSON (non-JSON lines are a test failure).
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON stdout line {l:?}: {e}")))
            .collect()
    }
}

impl Lab {
    /// Starts the mock with `script`; `None` (after a loud SKIPPED line) when Codex is absent.
    pub async fn new(script: Script) -> Option<Lab> {
        Self::with_options(script, CodexEnvOptions::default()).await
    }

    /// Same, with custom config options.
    pub async fn with_options(script: Script, opts: CodexEnvOptions) -> Option<Lab> {
        let bin = require(Cli::Codex)?;
        let dir = tempfile::Builder::new().prefix("codex-lab-").tempdir().unwrap();
        let mock = MockResponses::start(script).await.unwrap();
        let env = CodexEnv::create(dir.path(), &mock.base_url(), &opts).unwrap();
        Some(Lab { dir, mock, env, bin })
    }

    fn command(&self, args: &[String]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args)
            .env_clear()
            .envs(self.env.env())
            .current_dir(&self.env.cwd)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        cmd
    }

    /// Runs `codex exec --json … <extra>` with stdin closed, bounded by [`SCENARIO_TIMEOUT`].
    pub async fn exec(&self, extra: &[&str]) -> ExecRun {
        let mut argv = self.env.exec_args();
        argv.extend(extra.iter().map(|s| (*s).to_owned()));
        let mut cmd = self.command(&argv);
        cmd.stdin(Stdio::null());
        let t0 = Instant::now();
        let child = cmd.spawn().unwrap();
        let pid = child.id();
        let out = match tokio::time::timeout(SCENARIO_TIMEOUT, child.wait_with_output()).await {
            Ok(r) => r.unwrap(),
            Err(_) => {
                kill_group(pid);
                panic!("codex exec {argv:?} timed out after {SCENARIO_TIMEOUT:?}");
            }
        };
        ExecRun {
            argv,
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
            elapsed: t0.elapsed(),
        }
    }

    /// Spawns `codex app-server --listen stdio://`.
    pub fn app_server(&self) -> AppServer {
        let mut cmd = self.command(&self.env.app_server_args());
        cmd.stdin(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let t0 = Instant::now();
        let shared = Arc::new(Transcript::default());
        let notify = Arc::new(Notify::new());
        let (s2, n2) = (shared.clone(), notify.clone());
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let ms = t0.elapsed().as_millis() as u64;
                s2.out.lock().unwrap().push((ms, line));
                n2.notify_waiters();
            }
            *s2.eof.lock().unwrap() = true;
            n2.notify_waiters();
        });
        let s3 = shared.clone();
        tokio::spawn(async move {
            let mut buf = String::new();
            let _ = stderr.read_to_string(&mut buf).await;
            *s3.stderr.lock().unwrap() = buf;
        });
        AppServer {
            child,
            stdin: Some(stdin),
            t0,
            shared,
            notify,
        }
    }
}

/// Kills a process group by the leader's pid.
pub fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", "--", &format!("-{pid}")])
            .status();
    }
}

#[derive(Default)]
pub struct Transcript {
    pub out: Mutex<Vec<(u64, String)>>,
    pub sent: Mutex<Vec<(u64, String)>>,
    pub stderr: Mutex<String>,
    pub eof: Mutex<bool>,
}

/// A live `codex app-server` child with its transcript.
pub struct AppServer {
    child: Child,
    stdin: Option<ChildStdin>,
    t0: Instant,
    pub shared: Arc<Transcript>,
    notify: Arc<Notify>,
}

/// The finished session.
#[derive(Debug, Clone)]
pub struct Session {
    /// (ms since spawn, line) received on stdout.
    pub out: Vec<(u64, String)>,
    /// (ms since spawn, line) written to stdin.
    pub sent: Vec<(u64, String)>,
    pub stderr: String,
    pub code: Option<i32>,
}

impl Session {
    pub fn values(&self) -> Vec<Value> {
        self.out
            .iter()
            .map(|(_, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("non-JSON line {l:?}: {e}")))
            .collect()
    }
    pub fn methods(&self) -> Vec<String> {
        self.values()
            .iter()
            .filter_map(|v| v.get("method").and_then(Value::as_str).map(str::to_owned))
            .collect()
    }
}

impl AppServer {
    /// Milliseconds since spawn.
    pub fn now_ms(&self) -> u64 {
        self.t0.elapsed().as_millis() as u64
    }

    /// Writes one frame (compact JSON + `\n`) and records it.
    pub async fn send_line(&mut self, line: &str) {
        let line = line.trim_end_matches('\n');
        let ms = self.now_ms();
        self.shared.sent.lock().unwrap().push((ms, line.to_owned()));
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Waits for the first stdout line at index >= `from` matching `pred`; returns (index, value).
    pub async fn wait_from(&self, from: usize, what: &str, pred: impl Fn(&Value) -> bool) -> (usize, Value) {
        let deadline = Instant::now() + SCENARIO_TIMEOUT;
        loop {
            let notified = self.notify.notified();
            {
                let out = self.shared.out.lock().unwrap();
                for (i, (_, line)) in out.iter().enumerate().skip(from) {
                    if let Ok(v) = serde_json::from_str::<Value>(line)
                        && pred(&v)
                    {
                        return (i, v);
                    }
                }
                if *self.shared.eof.lock().unwrap() {
                    panic!(
                        "app-server exited while waiting for {what}; stderr: {}",
                        self.shared.stderr.lock().unwrap()
                    );
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                let out = self.shared.out.lock().unwrap();
                let tail: Vec<_> = out
                    .iter()
                    .rev()
                    .take(15)
                    .map(|(_, l)| l.chars().take(300).collect::<String>())
                    .collect();
                panic!("timed out waiting for {what}; last lines (newest first): {tail:#?}");
            }
        }
    }

    /// Waits for a notification or server request with this method, from `from`.
    pub async fn wait_method(&self, from: usize, method: &str) -> (usize, Value) {
        self.wait_from(from, method, |v| {
            v.get("method").and_then(Value::as_str) == Some(method)
        })
        .await
    }

    /// Waits for the response (result or error) to request `id`.
    pub async fn wait_response(&self, id: &Value) -> Value {
        self.wait_from(0, &format!("response {id}"), |v| {
            v.get("method").is_none() && v.get("id") == Some(id)
        })
        .await
        .1
    }

    /// Closes stdin, waits (bounded) for exit, kills the group if needed, returns the transcript.
    pub async fn close(mut self) -> Session {
        drop(self.stdin.take());
        let pid = self.child.id();
        let code = match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(Ok(st)) => st.code(),
            _ => {
                kill_group(pid);
                let _ = self.child.wait().await;
                None
            }
        };
        // Let the reader tasks drain.
        for _ in 0..100 {
            if *self.shared.eof.lock().unwrap() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        Session {
            out: self.shared.out.lock().unwrap().clone(),
            sent: self.shared.sent.lock().unwrap().clone(),
            stderr: self.shared.stderr.lock().unwrap().clone(),
            code,
        }
    }
}

impl Drop for AppServer {
    fn drop(&mut self) {
        if self.stdin.is_some() {
            kill_group(self.child.id());
        }
    }
}
