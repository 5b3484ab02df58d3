//! The argv the fake accepts: the subset of the real `cursor-agent` flags the Go original passes.

use std::path::PathBuf;

use clap::Parser;

/// `cursor-agent -p --output-format stream-json --workspace <dir> [--resume <chatId>] [--model M] [--mode M]
/// [--force] [--plugin-dir D] [prompt…]` (prompt on stdin when no positional words are given), and
/// `cursor-agent --version`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "cursor-agent",
    about = "A fake Cursor agent CLI for tests",
    disable_help_subcommand = true
)]
pub struct Args {
    /// Print mode (required by the fake).
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// `stream-json` (frames) or `json` (the result object only).
    #[arg(long = "output-format", default_value = "text")]
    pub output_format: String,
    /// The workspace (default: the current directory).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Continue this chat.
    #[arg(long)]
    pub resume: Option<String>,
    /// The model.
    #[arg(short = 'm', long)]
    pub model: Option<String>,
    /// `agent`, `ask` or `plan`.
    #[arg(long)]
    pub mode: Option<String>,
    /// Allow commands without asking.
    #[arg(short = 'f', long)]
    pub force: bool,
    /// The older spelling of `--force`.
    #[arg(long)]
    pub yolo: bool,
    /// Extra plugin directories.
    #[arg(long = "plugin-dir")]
    pub plugin_dir: Vec<PathBuf>,
    /// Print the version and exit.
    #[arg(short = 'v', long = "version")]
    pub version: bool,
    /// API key (as `CURSOR_API_KEY`).
    #[arg(long = "api-key")]
    pub api_key: Option<String>,
    /// The prompt words.
    pub prompt: Vec<String>,
}
