//! The lab bench: a mock Anthropic server, an isolated offline environment, the real CLI as a child
//! process with a line-by-line transcript of what was written to stdin and read from stdout, and the
//! record-or-check step that writes `tests/fixtures/claude/<name>.jsonl`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_adaptor::providers::claude::wire::{Frame, InputFrame, parse_line};
use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::cli::{Cli, require};
use agent_adaptor::testkit::mock::anthropic::{MockAnthropic, Script};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

/// What the fixtures use instead of the per-run temp dir.
pub const ROOT_PLACEHOLDER: &str = "/tmp/claude-lab";
/// What the fixtures use instead of the mock's address (it appears in some error texts).
pub const ADDR_PLACEHOLDER: &str = "127.0.0.1:9";
/// Default timeout for one expected frame.
pub const STEP: Duration = Duration::from_secs(30);

/// A mock, an environment and the CLI binary.
pub struct Lab {
    pub mock: MockAnthropic,
    pub env: ClaudeEnv,
    bin: PathBuf,
    _dir: tempfile::TempDir,
}

impl Lab {
    /// `None` (after a loud SKIPPED line) when the CLI is not installed.
    pub async fn new(script: Script) -> Option<Lab> {
        let bin = require(Cli::Claude)?;
        let mock = MockAnthropic::start(script).await.unwrap();
        let dir = tempfile::Builder::new().prefix("cl").tempdir().unwrap();
        let env = ClaudeEnv::new(dir.path(), &mock.base_url()).unwrap();
        Some(Lab {
            mock,
            env,
            bin,
            _dir: dir,
        })
    }

    /// Overrides one environment variable for later spawns.
    pub fn set_var(&mut self, key: &str, value: &str) {
        self.env = self.env.clone().with_var(key, value);
    }

    /// Starts the CLI with `args`.
    pub fn spawn(&self, args: &[String]) -> Run {
        let mut child = command(&self.env, &self.bin, args).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let t0 = Instant::now();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if tx.send((t0.elapsed(), line)).is_err() {
                    break;
                }
            }
        });
        let err_task = tokio::spawn(async move {
            let mut s = String::new();
            let _ = stderr.read_to_string(&mut s).await;
            s
        });
        Run {
            child,
            stdin,
            rx,
            t0,
            out: Vec::new(),
            inp: Vec::new(),
            err_task: Some(err_task),
        }
    }

    /// `<args> <prompt>` in print mode, stdin closed, run to the end.
    pub async fn print(&self, extra: &[&str], prompt: &str) -> Transcript {
        let mut args = ClaudeEnv::print_args();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        args.push(prompt.to_owned());
        let mut run = self.spawn(&args);
        run.close_stdin();
        run.finish(Duration::from_secs(60)).await
    }

    /// Normalizes machine-specific values, writes the fixture when `RECORD_FIXTURES=1`, and checks that
    /// every stdout line parses to a known frame.
    pub fn record(&self, name: &str, t: &Transcript) {
        let root = self.env.root.to_string_lossy().into_owned();
        let slug_from = root.replace(['/', '.'], "-");
        let slug_to = ROOT_PLACEHOLDER.replace(['/', '.'], "-");
        let addr = self.mock.addr().to_string();
        let norm = |l: &String| {
            l.replace(&root, ROOT_PLACEHOLDER)
                .replace(&slug_from, &slug_to)
                .replace(&addr, ADDR_PLACEHOLDER)
        };
        for line in &t.stdout {
            match parse_line(line.as_bytes()) {
                Ok(Frame::Unknown(v)) => panic!("{name}: unknown frame {v}"),
                Ok(_) => {}
                Err(e) => panic!("{name}: undecodable line {line:?}: {e}"),
            }
        }
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude");
        if std::env::var("RECORD_FIXTURES").as_deref() != Ok("1") {
            // Replay check: the live run shows the same kinds of frames as the recording (a coarse
            // drift detector; the exact recorded lines are asserted by the wire unit tests).
            let recorded = std::fs::read_to_string(dir.join(format!("{name}.jsonl")))
                .unwrap_or_else(|e| panic!("{name}: no fixture ({e}); run with RECORD_FIXTURES=1"));
            let recorded: Vec<String> = recorded.lines().map(str::to_owned).collect();
            // Timing-sensitive scenarios: how much streamed before a kill or a cut depends on load.
            if !name.starts_with("killed") && name != "stream_cut" {
                assert_eq!(
                    kind_set(&t.stdout),
                    kind_set(&recorded),
                    "{name}: the CLI's frames changed; re-record with RECORD_FIXTURES=1 and review the diff"
                );
            }
            return;
        }
        std::fs::create_dir_all(&dir).unwrap();
        let join = |ls: &[String]| ls.iter().map(|l| norm(l) + "\n").collect::<String>();
        std::fs::write(dir.join(format!("{name}.jsonl")), join(&t.stdout)).unwrap();
        if !t.stdin.is_empty() {
            std::fs::write(dir.join(format!("{name}.stdin.jsonl")), join(&t.stdin)).unwrap();
        }
        eprintln!(
            "RECORDED {name}: {} stdout lines, rc {:?}",
            t.stdout.len(),
            t.code
        );
        for (at, dir, line) in &t.timeline {
            let short: String = norm(line).chars().take(200).collect();
            eprintln!("  {:>6} {dir} {short}", at.as_millis());
        }
    }
}

/// The distinct `type` or `type/subtype` values of some stdout lines.
fn kind_set(lines: &[String]) -> std::collections::BTreeSet<String> {
    lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| match (v["type"].as_str(), v["subtype"].as_str()) {
            (Some(t), Some(s)) => format!("{t}/{s}"),
            (Some(t), None) => t.to_owned(),
            _ => "?".to_owned(),
        })
        .collect()
}

/// A running CLI.
pub struct Run {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: mpsc::UnboundedReceiver<(Duration, String)>,
    t0: Instant,
    out: Vec<(Duration, String)>,
    inp: Vec<(Duration, String)>,
    err_task: Option<tokio::task::JoinHandle<String>>,
}

impl Run {
    /// Writes one frame to stdin, serialized by the wire types exactly as a driver would.
    pub async fn send(&mut self, frame: InputFrame) {
        let line = frame.to_line();
        self.inp.push((self.t0.elapsed(), line.trim_end().to_owned()));
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    /// Closes stdin (the CLI exits after its current work in bidirectional mode).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next stdout line as JSON, or `None` at EOF or timeout.
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        let (at, line) = tokio::time::timeout(timeout, self.rx.recv()).await.ok()??;
        self.out.push((at, line.clone()));
        Some(serde_json::from_str(&line).unwrap_or(Value::String(line)))
    }

    /// Reads until a frame satisfies `pred` and returns it; panics with the transcript on timeout/EOF.
    pub async fn until(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + STEP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(left).await {
                Some(v) if pred(&v) => return v,
                Some(_) => {}
                None => {
                    let lines: Vec<_> = self.out.iter().map(|(_, l)| l.as_str()).collect();
                    panic!(
                        "waiting for {what}: stream ended or timed out; got:\n{}",
                        lines.join("\n")
                    );
                }
            }
        }
    }

    /// Reads until the next `result` frame.
    pub async fn until_result(&mut self) -> Value {
        self.until("result", |v| v["type"] == "result").await
    }

    /// Kills the CLI (SIGKILL) and collects what it printed.
    pub async fn kill(mut self) -> Transcript {
        let _ = self.child.start_kill();
        self.finish(Duration::from_secs(10)).await
    }

    /// Closes stdin, reads stdout to EOF and waits for the exit.
    pub async fn finish(mut self, timeout: Duration) -> Transcript {
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        while self
            .next(deadline.saturating_duration_since(Instant::now()))
            .await
            .is_some()
        {}
        let code = match tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await {
            Ok(Ok(status)) => status.code(),
            _ => {
                let _ = self.child.start_kill();
                None
            }
        };
        let stderr = match self.err_task.take() {
            Some(t) => t.await.unwrap_or_default(),
            None => String::new(),
        };
        let mut timeline: Vec<(Duration, &'static str, String)> = self
            .out
            .iter()
            .map(|(t, l)| (*t, "out", l.clone()))
            .chain(self.inp.iter().map(|(t, l)| (*t, "in ", l.clone())))
            .collect();
        timeline.sort_by_key(|(t, _, _)| *t);
        Transcript {
            frames: self
                .out
                .iter()
                .map(|(_, l)| serde_json::from_str(l).unwrap_or(Value::Null))
                .collect(),
            stdout: self.out.into_iter().map(|(_, l)| l).collect(),
            stdin: self.inp.into_iter().map(|(_, l)| l).collect(),
            stderr,
            code,
            timeline,
        }
    }
}

/// Everything one CLI run produced.
pub struct Transcript {
    pub stdout: Vec<String>,
    pub stdin: Vec<String>,
    pub frames: Vec<Value>,
    pub stderr: String,
    pub code: Option<i32>,
    pub timeline: Vec<(Duration, &'static str, String)>,
}

impl Transcript {
    /// Frames whose `type` (and `subtype`, when given) match.
    pub fn of(&self, ty: &str, subtype: Option<&str>) -> Vec<&Value> {
        self.frames
            .iter()
            .filter(|f| f["type"] == ty && subtype.is_none_or(|s| f["subtype"] == s))
            .collect()
    }

    /// The results, in order.
    pub fn results(&self) -> Vec<&Value> {
        self.of("result", None)
    }

    /// The last result; panics if none.
    pub fn result(&self) -> &Value {
        self.results()
            .pop()
            .unwrap_or_else(|| panic!("no result; stderr: {}", self.stderr))
    }
}

/// A command for `bin` with an emptied environment plus the env's variables, its cwd, piped stdio and
/// `kill_on_drop` (the lab drives the CLI directly to record exactly what it prints).
fn command(env: &ClaudeEnv, bin: &std::path::Path, args: &[String]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args)
        .env_clear()
        .envs(env.vars())
        .current_dir(&env.cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    cmd
}
