//! `mock-model-server`: the mock Anthropic Messages API (`testkit::mock::anthropic`) as a process, for
//! tests outside Rust (the web demo's browser e2e drives the real Claude CLI against it).
//!
//! It binds 127.0.0.1 on a free port, serves a small scripted "model" and prints
//! `mock-model-server listening on http://127.0.0.1:<port>`, then one `request <n> <METHOD> <path>` line
//! per request it receives. With `--serve-config <file> --root <dir>` it also writes an
//! `agent-adaptor serve --config` file whose `claude` agent runs the CLI named by
//! `AGENT_ADAPTOR_CLAUDE_BIN` in the offline environment of `testkit::claude_env` under `<dir>` (own
//! HOME, TMPDIR, config dir and project; base URL = this mock). It runs until SIGTERM/SIGINT.
//!
//! The script (prompt keywords, last user message):
//! * a `tool_result` came back → `Claude saw the tool say: <first line>`;
//! * `run bash` → a `Bash` tool_use writing `greeting.txt` and printing `hello-from-claude-bash` (a
//!   write, so it needs permission);
//! * anything else → `Claude (mock model) answers: <prompt>`, streamed slowly in small pieces.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::mock::anthropic::{Block, MockAnthropic, Reply, RequestLog, Script};
use serde_json::json;

/// The command the scripted Bash call runs; its output is what the browser test looks for. It writes a
/// file, so the CLI asks for permission (read-only commands such as a bare `echo` run unasked).
const BASH_COMMAND: &str = "echo hello-from-claude-bash > greeting.txt && cat greeting.txt";
/// The pause between SSE events of a streamed text, so a browser sees the reply grow.
const EVENT_DELAY: Duration = Duration::from_millis(60);

/// What the command line asked for.
struct Args {
    serve_config: Option<PathBuf>,
    root: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        serve_config: None,
        root: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--serve-config" => args.serve_config = Some(PathBuf::from(value()?)),
            "--root" => args.root = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err("usage: mock-model-server [--serve-config <file> --root <dir>]".into());
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.serve_config.is_some() != args.root.is_some() {
        return Err("--serve-config and --root go together".into());
    }
    Ok(args)
}

/// The scripted model.
fn reply(req: &RequestLog) -> Reply {
    if let Some(r) = req.tool_results().first() {
        let first = r.content.lines().next().unwrap_or_default();
        let verb = if r.is_error { "fail with" } else { "say" };
        return Reply::text(format!("Claude saw the tool {verb}: {first}")).slow(EVENT_DELAY);
    }
    let prompt = req.last_user_texts().join("\n");
    if prompt.to_lowercase().contains("run bash") {
        return Reply::blocks(vec![
            Block::text("I will run a command."),
            Block::tool_use(
                "Bash",
                json!({"command": BASH_COMMAND, "description": "Print a greeting"}),
            ),
        ]);
    }
    Reply::text(format!("Claude (mock model) answers: {}", prompt.trim())).slow(EVENT_DELAY)
}

/// The `serve --config` file with one `claude` agent running offline against `base_url`.
fn serve_config(root: &std::path::Path, base_url: &str) -> Result<String, String> {
    let bin = std::env::var("AGENT_ADAPTOR_CLAUDE_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .ok_or("AGENT_ADAPTOR_CLAUDE_BIN is not set (the real Claude CLI to run)")?;
    let env = ClaudeEnv::new(root, base_url).map_err(|e| format!("{}: {e}", root.display()))?;
    let config = json!({
        "store": "memory",
        "agents": [{
            "name": "claude",
            "provider": "claude",
            "config": {
                "command": bin,
                "directory": env.cwd,
                "config_dir": env.config_dir,
                "env": env.vars(),
            },
        }],
    });
    let value = toml::Value::try_from(&config).map_err(|e| e.to_string())?;
    toml::to_string(&value).map_err(|e| e.to_string())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mock-model-server: {e}");
            return ExitCode::from(2);
        }
    };
    let mock = match MockAnthropic::start(Script::from_fn(reply)).await {
        Ok(m) => m,
        Err(e) => {
            eprintln!("mock-model-server: cannot bind 127.0.0.1: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let (Some(file), Some(root)) = (&args.serve_config, &args.root) {
        let written = serve_config(root, &mock.base_url())
            .and_then(|text| std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display())));
        if let Err(e) = written {
            eprintln!("mock-model-server: {e}");
            return ExitCode::FAILURE;
        }
    }
    println!("mock-model-server listening on {}", mock.base_url());

    let mut seen = 0;
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mock-model-server: no SIGTERM handler: {e}");
            return ExitCode::FAILURE;
        }
    };
    loop {
        tokio::select! {
            _ = tick.tick() => {
                let log = mock.requests();
                for r in log.iter().skip(seen) {
                    println!("request {} {} {}", r.n, r.method, r.path);
                }
                seen = log.len();
            }
            _ = term.recv() => break,
            _ = tokio::signal::ctrl_c() => break,
        }
    }
    mock.shutdown().await;
    ExitCode::SUCCESS
}
