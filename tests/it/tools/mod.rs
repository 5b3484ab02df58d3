//! Host tools: the Agent-owned loopback MCP server spoken to directly over HTTP (`server.rs`), the
//! Agent's launch checks (`agent.rs`), and end to end through the REAL CLIs with the mock model scripted
//! to call the tool (`claude.rs`, `codex.rs`; skipped loudly without the CLI).

mod agent;
mod claude;
mod codex;
mod server;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use agent_adaptor::tools::{Tool, define, reject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The weather tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct City {
    /// The city.
    pub city: String,
}

/// The weather tool's output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Weather {
    /// Degrees Celsius.
    pub celsius: i32,
    /// A marker the tests look for in the model's request log.
    pub marker: String,
}

/// A tool that answers for Paris, rejects Atlantis and fails internally (with a secret) for Mordor.
pub fn weather() -> Tool {
    define("weather", "The weather in a city", |c: City| async move {
        match c.city.as_str() {
            "Atlantis" => Err(reject("not_found", "Atlantis is not on any map")),
            "Mordor" => Err(agent_adaptor::tools::ToolError::internal(
                "db password hunter2 rejected",
            )),
            "Panic" => panic!("secret panic detail"),
            _ => Ok(Weather {
                celsius: 21,
                marker: format!("WEATHER-OK-{}", c.city),
            }),
        }
    })
    .read_only()
    .idempotent()
    .revision("1")
}

/// The `add` tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddArgs {
    /// Left operand.
    pub a: i64,
    /// Right operand.
    pub b: i64,
}

/// The arguments every `add` call received, in order.
pub type Calls = Arc<Mutex<Vec<(i64, i64)>>>;

/// `add(a, b)`: records its arguments; `a == 13` is rejected (model-visible), `a == 666` panics with a
/// secret (the model must see only a sanitized sentence).
pub fn add(calls: Calls) -> Tool {
    define("add", "Adds two integers", move |x: AddArgs| {
        let calls = calls.clone();
        async move {
            calls.lock().unwrap().push((x.a, x.b));
            match x.a {
                13 => Err(reject("unlucky", "13 is not a number I add")),
                666 => panic!("secret panic detail hunter2"),
                _ => Ok(x.a + x.b),
            }
        }
    })
    .revision("1")
}

/// The two integers after `add ` in `prompt` (`"please add 2 40"` → `(2, 40)`).
pub fn operands(prompt: &str) -> Option<(i64, i64)> {
    let rest = prompt.split("add ").nth(1)?;
    let mut it = rest.split_whitespace().filter_map(|w| w.parse::<i64>().ok());
    Some((it.next()?, it.next()?))
}

/// A wrapper around a real CLI that records, under `dir`, every argument (`argv.log`), the content of
/// every file passed after `--mcp-config` (`mcp-files.log`) and the environment (`env.log`), then
/// `exec`s the CLI: what the child really received.
pub fn recording_wrapper(dir: &Path, real: &Path) -> PathBuf {
    let script = dir.join("record-cli.sh");
    let d = dir.display();
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
for a in "$@"; do printf '%s\n' "$a" >> "{d}/argv.log"; done
prev=""
for a in "$@"; do
  if [ "$prev" = "--mcp-config" ]; then cat "$a" >> "{d}/mcp-files.log"; fi
  prev="$a"
done
env >> "{d}/env.log"
exec "{real}" "$@"
"#,
            real = real.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What [`recording_wrapper`] wrote to `name` under `dir` (empty when absent).
pub fn recorded(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}
