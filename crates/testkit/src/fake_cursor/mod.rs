//! A faithful fake of the Cursor agent CLI (`cursor-agent` / `agent`) for driver tests, since the real CLI
//! cannot be installed here. The binary `fake-cursor-agent` (`src/bin/fake-cursor-agent.rs`) is a thin
//! wrapper around [`run`], which is testable in-process.
//!
//! It accepts the real argv (see [`Args`]), reads the prompt from the positional words or stdin, honours the
//! profile directories (`CURSOR_HOME` for `mcp.json`, `CURSOR_CONFIG_DIR` for `cli-config.json`,
//! `CURSOR_DATA_DIR` for chats, so `--resume` works across invocations), and writes exactly the documented
//! stream-json frames (`providers::cursor::wire`). Behaviour comes from `FAKE_CURSOR_SCENARIO` or a
//! `scenario=<name>` word in the prompt ([`SCENARIOS`]). Which facts are documented and which are the fake's
//! own choices: `docs/providers/cursor.md`.

mod args;
pub mod plugins;
mod scenario;
mod store;
pub mod stream;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Parser;

pub use args::Args;
pub use scenario::{Outcome, SCENARIOS};
pub use store::{Chat, Turn, chats_dir, load as load_chat};

/// What `--version` prints (one line). Cursor's CLI documents only "print the version"; the date-and-hash
/// shape follows versions seen in third-party reports (e.g. `2026.10.22-27dcf5f`), the value is the fake's.
pub const VERSION: &str = "2026.06.26-fake000";

/// The environment the fake reads (captured once, so tests can pass their own).
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `HOME`.
    pub home: Option<PathBuf>,
    /// `CURSOR_HOME`: resources (`mcp.json`, agents, hooks).
    pub cursor_home: Option<PathBuf>,
    /// `CURSOR_CONFIG_DIR`: `cli-config.json`.
    pub config_dir: Option<PathBuf>,
    /// `CURSOR_DATA_DIR`: chats.
    pub data_dir: Option<PathBuf>,
    /// `CURSOR_API_KEY`.
    pub api_key: Option<String>,
    /// `FAKE_CURSOR_SCENARIO`.
    pub scenario: Option<String>,
    /// `FAKE_CURSOR_CHAT_ID`: the id of a new chat (random otherwise).
    pub chat_id: Option<String>,
    /// `FAKE_CURSOR_DELAY_MS`: pause between frames (default 0; 300 for `slow`).
    pub delay_ms: Option<u64>,
}

impl Env {
    /// Reads the process environment.
    pub fn from_process() -> Env {
        let path = |k: &str| std::env::var_os(k).map(PathBuf::from);
        let string = |k: &str| std::env::var(k).ok();
        Env {
            home: path("HOME"),
            cursor_home: path("CURSOR_HOME"),
            config_dir: path("CURSOR_CONFIG_DIR"),
            data_dir: path("CURSOR_DATA_DIR"),
            api_key: string("CURSOR_API_KEY"),
            scenario: string("FAKE_CURSOR_SCENARIO"),
            chat_id: string("FAKE_CURSOR_CHAT_ID"),
            delay_ms: string("FAKE_CURSOR_DELAY_MS").and_then(|s| s.parse().ok()),
        }
    }

    /// `CURSOR_DATA_DIR`, else `$HOME/.cursor`.
    pub fn data_dir(&self) -> Option<PathBuf> {
        self.data_dir
            .clone()
            .or_else(|| self.home.as_ref().map(|h| h.join(".cursor")))
    }
}

/// Picks the scenario: the env var first, then a `scenario=<name>` word in the prompt, else `text`.
pub fn scenario_name(env: &Env, prompt: &str) -> String {
    env.scenario
        .clone()
        .or_else(|| {
            prompt
                .split_whitespace()
                .find_map(|w| w.strip_prefix("scenario="))
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "text".to_owned())
}

fn first_mcp_server(cursor_home: Option<&Path>) -> Option<String> {
    let text = std::fs::read_to_string(cursor_home?.join("mcp.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v.get("mcpServers")?.as_object()?.keys().next().cloned()
}

/// When `argv` asks for ACP mode (`agent [options] acp [options]`, as Cursor documents it), the other
/// options (`--workspace`, `--model`, `--api-key`, …, accepted and unused: the session's `cwd` rules);
/// the binary then serves [`crate::fake_acp`] in its Cursor flavour.
pub fn acp_mode(argv: &[String]) -> Option<Args> {
    if argv.iter().any(|a| a == "-p" || a == "--print") {
        return None; // print mode: `acp` is a prompt word
    }
    let at = argv.iter().position(|a| a == "acp")?;
    let rest: Vec<String> = argv
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, a)| a.clone())
        .collect();
    Args::try_parse_from(std::iter::once("cursor-agent".to_owned()).chain(rest)).ok()
}

/// Runs the fake CLI: `argv` without the program name. Returns how the process must end.
pub fn run(
    argv: &[String],
    env: &Env,
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Outcome {
    let args =
        match Args::try_parse_from(std::iter::once("cursor-agent".to_owned()).chain(argv.iter().cloned())) {
            Ok(a) => a,
            Err(e) => {
                let _ = write!(err, "{e}");
                return Outcome::Exit(1);
            }
        };
    if args.version {
        let _ = writeln!(out, "{VERSION}");
        return Outcome::Exit(0);
    }
    if !args.print || args.output_format != "stream-json" {
        let _ = writeln!(
            err,
            "Error: the fake cursor-agent only supports --print --output-format stream-json"
        );
        return Outcome::Exit(1);
    }
    let workspace = match args.workspace.clone().map_or_else(std::env::current_dir, Ok) {
        Ok(w) if w.is_dir() => w,
        _ => {
            let _ = writeln!(err, "Error: workspace directory does not exist");
            return Outcome::Exit(1);
        }
    };
    let Some(data_dir) = env.data_dir() else {
        let _ = writeln!(err, "Error: no data directory (set CURSOR_DATA_DIR or HOME)");
        return Outcome::Exit(1);
    };
    let mut prompt = args.prompt.join(" ");
    if prompt.is_empty() {
        let _ = stdin.read_to_string(&mut prompt);
    }
    let prompt = prompt.trim_end_matches('\n').to_owned();
    if prompt.trim().is_empty() {
        let _ = writeln!(err, "Error: no prompt given (pass it as an argument or on stdin)");
        return Outcome::Exit(1);
    }
    let mut chat = match &args.resume {
        Some(id) => match store::load(&data_dir, id) {
            Some(c) => c,
            None => {
                let _ = writeln!(err, "Error: chat {id} not found");
                return Outcome::Exit(1);
            }
        },
        None => Chat {
            chat_id: env
                .chat_id
                .clone()
                .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
            workspace: workspace.to_string_lossy().into_owned(),
            turns: Vec::new(),
        },
    };
    let name = scenario_name(env, &prompt);
    let default_delay = if name == "slow" { 300 } else { 0 };
    let ctx = scenario::Ctx {
        session_id: chat.chat_id.clone(),
        workspace: &workspace,
        prompt: prompt.clone(),
        previous_turns: chat.turns.len(),
        force: args.force || args.yolo,
        model: args.model.clone().unwrap_or_else(|| "Auto".to_owned()),
        api_key_source: if args.api_key.is_some() || env.api_key.is_some() {
            "env"
        } else {
            "login"
        }
        .to_owned(),
        mcp_server: first_mcp_server(env.cursor_home.as_deref()),
        skills: plugins::skills(&args.plugin_dir, err),
        delay: Duration::from_millis(env.delay_ms.unwrap_or(default_delay)),
        started: Instant::now(),
    };
    let mut w = scenario::Out::new(out, ctx.delay);
    let (outcome, reply) = scenario::play(&name, &ctx, &mut w, err);
    if let Some(reply) = reply {
        chat.turns.push(Turn { prompt, reply });
        if let Err(e) = store::save(&data_dir, &chat) {
            let _ = writeln!(err, "Error: could not save the chat: {e}");
            return Outcome::Exit(1);
        }
    }
    outcome
}

#[cfg(test)]
mod tests;
