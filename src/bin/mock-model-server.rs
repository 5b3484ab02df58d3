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
//!
//! For benchmarks (`benches/peers`): `--deltas <n>` answers every conversation request with one text of
//! exactly `n` text deltas (`d0001 `, `d0002 `, …) whatever the prompt, and `--instant` sends every SSE
//! event without a pause (by default a streamed reply waits 60 ms between events). `--print-env <dir>`
//! creates the same offline environment under `<dir>` and prints it as one line,
//! `claude-env {"cwd":…,"config_dir":…,"env":{…}}` (before the listening line), so a process that is
//! not `agent-adaptor serve` (the CLI alone, a peer adapter) runs the CLI exactly as the service does.
//! `--responses` also serves the mock OpenAI Responses API (`testkit::mock::responses`, for Codex) with
//! the same replies (`--deltas`: the numbered deltas; else an echo) and prints
//! `mock-responses listening on http://127.0.0.1:<port>/v1`; `--print-codex-env <dir>` creates
//! `testkit::codex_env` under `<dir>` for it and prints `codex-env {"cwd":…,"codex_home":…,"env":{…}}`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use agent_adaptor::testkit::claude_env::ClaudeEnv;
use agent_adaptor::testkit::codex_env::{CodexEnv, CodexEnvOptions};
use agent_adaptor::testkit::mock::anthropic::{Block, MockAnthropic, Reply, RequestLog, Script};
use agent_adaptor::testkit::mock::responses;
use serde_json::json;

/// The command the scripted Bash call runs; its output is what the browser test looks for. It writes a
/// file, so the CLI asks for permission (read-only commands such as a bare `echo` run unasked).
const BASH_COMMAND: &str = "echo hello-from-claude-bash > greeting.txt && cat greeting.txt";
/// The pause between SSE events of a streamed text, so a browser sees the reply grow.
const EVENT_DELAY: Duration = Duration::from_millis(60);

/// The usage line.
const USAGE: &str = "usage: mock-model-server [--serve-config <file> --root <dir>] [--print-env <dir>] \
                     [--deltas <n>] [--instant] [--responses [--print-codex-env <dir>]]";

/// What the command line asked for.
#[derive(Debug, Default, PartialEq)]
struct Args {
    serve_config: Option<PathBuf>,
    root: Option<PathBuf>,
    /// `--print-env <dir>`: print the offline CLI environment created under `dir`.
    print_env: Option<PathBuf>,
    /// `--deltas <n>`: every conversation reply is one text of exactly `n` deltas.
    deltas: Option<usize>,
    /// `--instant`: no pause between SSE events.
    instant: bool,
    /// `--responses`: also serve the mock Responses API (Codex).
    responses: bool,
    /// `--print-codex-env <dir>`: print the offline Codex environment created under `dir`.
    print_codex_env: Option<PathBuf>,
}

fn parse_args(argv: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut args = Args::default();
    let mut it = argv.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--serve-config" => args.serve_config = Some(PathBuf::from(value()?)),
            "--root" => args.root = Some(PathBuf::from(value()?)),
            "--print-env" => args.print_env = Some(PathBuf::from(value()?)),
            "--deltas" => {
                let v = value()?;
                match v.parse::<usize>() {
                    Ok(n) if (1..=MAX_DELTAS).contains(&n) => args.deltas = Some(n),
                    _ => {
                        return Err(format!(
                            "--deltas takes a count from 1 to {MAX_DELTAS}, got {v:?}"
                        ));
                    }
                }
            }
            "--instant" => args.instant = true,
            "--responses" => args.responses = true,
            "--print-codex-env" => args.print_codex_env = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err(USAGE.into()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    if args.serve_config.is_some() != args.root.is_some() {
        return Err("--serve-config and --root go together".into());
    }
    if args.print_codex_env.is_some() && !args.responses {
        return Err("--print-codex-env needs --responses".into());
    }
    Ok(args)
}

/// The most text deltas `--deltas` streams in one reply.
const MAX_DELTAS: usize = 1_000_000;

/// How the scripted model answers: the default script, or a fixed number of deltas.
#[derive(Debug, Clone, Copy)]
struct Model {
    deltas: Option<usize>,
    delay: Duration,
}

impl Model {
    fn from_args(args: &Args) -> Model {
        Model {
            deltas: args.deltas,
            delay: if args.instant { Duration::ZERO } else { EVENT_DELAY },
        }
    }

    /// The reply to one conversation request.
    fn reply(self, req: &RequestLog) -> Reply {
        match self.deltas {
            Some(n) => Reply::blocks(vec![Block::text_chunks(numbered_deltas(n))]).slow(self.delay),
            None => scripted(req, self.delay),
        }
    }
}

impl Model {
    /// The Responses API script: the numbered deltas for every request, else an echo.
    fn responses_script(self) -> responses::Script {
        match self.deltas {
            Some(n) => responses::Script::new()
                .otherwise(move |_| responses::Reply::new().text_paced(numbered_deltas(n), self.delay)),
            None => responses::Script::echo(),
        }
    }
}

/// The offline Codex environment under `dir` for the Responses mock at `base_url` (`…/v1`).
fn codex_env_json(dir: &std::path::Path, base_url: &str) -> Result<serde_json::Value, String> {
    let env = CodexEnv::create(dir, base_url, &CodexEnvOptions::default())
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let vars: std::collections::BTreeMap<String, String> = env.env().into_iter().collect();
    Ok(json!({
        "cwd": env.cwd,
        "codex_home": env.codex_home,
        "env": vars,
    }))
}

/// `n` short text pieces, `d0001 ` … , each its own `text_delta`.
fn numbered_deltas(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("d{i:04} ")).collect()
}

/// The offline environment under `dir` as one JSON object: the working directory, the config dir and
/// every variable (`IS_SANDBOX=1` added when running as root, so `bypassPermissions` works there too).
fn env_json(dir: &std::path::Path, base_url: &str) -> Result<serde_json::Value, String> {
    let env = ClaudeEnv::new(dir, base_url)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .allow_bypass_as_root();
    Ok(json!({
        "cwd": env.cwd,
        "config_dir": env.config_dir,
        "env": env.vars(),
    }))
}

/// The default scripted model.
fn scripted(req: &RequestLog, delay: Duration) -> Reply {
    if let Some(r) = req.tool_results().first() {
        let first = r.content.lines().next().unwrap_or_default();
        let verb = if r.is_error { "fail with" } else { "say" };
        return Reply::text(format!("Claude saw the tool {verb}: {first}")).slow(delay);
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
    Reply::text(format!("Claude (mock model) answers: {}", prompt.trim())).slow(delay)
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
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mock-model-server: {e}");
            return ExitCode::from(2);
        }
    };
    let model = Model::from_args(&args);
    let mock = match MockAnthropic::start(Script::from_fn(move |r| model.reply(r))).await {
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
    let codex = if args.responses {
        match responses::MockResponses::start(model.responses_script()).await {
            Ok(m) => Some(m),
            Err(e) => {
                eprintln!("mock-model-server: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    if let (Some(dir), Some(m)) = (&args.print_codex_env, &codex) {
        match codex_env_json(dir, &m.base_url()) {
            Ok(v) => println!("codex-env {v}"),
            Err(e) => {
                eprintln!("mock-model-server: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Some(m) = &codex {
        println!("mock-responses listening on {}", m.base_url());
    }
    if let Some(dir) = &args.print_env {
        match env_json(dir, &mock.base_url()) {
            Ok(v) => println!("claude-env {v}"),
            Err(e) => {
                eprintln!("mock-model-server: {e}");
                return ExitCode::FAILURE;
            }
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
    if let Some(m) = codex {
        m.shutdown().await;
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Result<Args, String> {
        parse_args(a.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn bench_flags_parse_and_bad_counts_are_refused() {
        let a = args(&["--deltas", "200", "--instant", "--print-env", "/x"]).unwrap();
        assert_eq!(a.deltas, Some(200));
        assert!(a.instant);
        assert_eq!(a.print_env, Some(PathBuf::from("/x")));
        for bad in ["0", "-1", "many", "1000001"] {
            let e = args(&["--deltas", bad]).unwrap_err();
            assert!(e.contains("--deltas takes a count"), "{bad}: {e}");
        }
        assert!(args(&["--deltas"]).unwrap_err().contains("needs a value"));
        assert!(
            args(&["--serve-config", "/f"])
                .unwrap_err()
                .contains("go together")
        );
        assert!(args(&["--bogus"]).unwrap_err().contains("unknown argument"));
        assert!(
            args(&["--print-codex-env", "/c"])
                .unwrap_err()
                .contains("needs --responses")
        );
        let c = args(&["--responses", "--print-codex-env", "/c"]).unwrap();
        assert!(c.responses && c.print_codex_env == Some(PathBuf::from("/c")));
        assert_eq!(args(&[]).unwrap(), Args::default());
    }

    #[test]
    fn deltas_mode_streams_exactly_n_text_deltas_without_a_pause() {
        use agent_adaptor::testkit::mock::anthropic::{ReplyBody, message_events};
        let model = Model::from_args(&args(&["--deltas", "200", "--instant"]).unwrap());
        let req = RequestLog {
            n: 1,
            method: "POST".into(),
            path: "/v1/messages".into(),
            query: None,
            headers: Default::default(),
            body: Some(json!({"model": "m", "stream": true,
                "messages": [{"role": "user", "content": "run bash please"}]})),
            body_len: 0,
            at: Duration::ZERO,
            status: 0,
        };
        let reply = model.reply(&req);
        assert_eq!(reply.event_delay, Duration::ZERO);
        let ReplyBody::Message(m) = reply.body else {
            panic!("expected a message")
        };
        let deltas: Vec<String> = message_events(&m, 1, "m")
            .iter()
            .filter_map(|e| e.data["delta"]["text"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(deltas.len(), 200, "the prompt does not matter");
        assert_eq!(deltas[0], "d0001 ");
        assert_eq!(deltas[199], "d0200 ");

        let slow = Model::from_args(&args(&["--deltas", "3"]).unwrap());
        assert_eq!(slow.reply(&req).event_delay, EVENT_DELAY);
    }

    #[test]
    fn codex_env_points_the_cli_at_the_responses_mock() {
        let dir = tempfile::tempdir().unwrap();
        let v = codex_env_json(dir.path(), "http://127.0.0.1:7/v1").unwrap();
        let home = v["codex_home"].as_str().unwrap();
        assert_eq!(v["env"]["CODEX_HOME"], home);
        let config = std::fs::read_to_string(std::path::Path::new(home).join("config.toml")).unwrap();
        assert!(config.contains("http://127.0.0.1:7/v1"), "{config}");
    }

    #[tokio::test]
    async fn the_responses_mock_streams_the_numbered_deltas() {
        let model = Model::from_args(&args(&["--deltas", "5", "--instant"]).unwrap());
        let mock = responses::MockResponses::start(model.responses_script())
            .await
            .unwrap();
        let body = json!({"model": "m", "stream": true, "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]});
        let text = reqwest::Client::new()
            .post(format!("{}/responses", mock.base_url()))
            .json(&body)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let deltas: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<serde_json::Value>(d).ok())
            .filter(|v| v["type"] == "response.output_text.delta")
            .filter_map(|v| v["delta"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(deltas, numbered_deltas(5), "{text}");
        mock.shutdown().await;
    }

    #[test]
    fn print_env_is_the_offline_environment_with_the_mock_url() {
        let dir = tempfile::tempdir().unwrap();
        let v = env_json(dir.path(), "http://127.0.0.1:7").unwrap();
        assert_eq!(v["env"]["ANTHROPIC_BASE_URL"], "http://127.0.0.1:7");
        assert_eq!(v["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"], "1");
        let cwd = v["cwd"].as_str().unwrap();
        assert!(std::path::Path::new(cwd).is_dir(), "{cwd}");
        assert_eq!(v["env"]["CLAUDE_CONFIG_DIR"], v["config_dir"]);
    }
}
